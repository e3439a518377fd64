package world

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
)

// Hasher accumulates the state hash: 64-bit FNV-1a over a canonical binary
// encoding. Components write their state through it.
type Hasher struct {
	h   uint64
	buf [8]byte
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// NewHasher returns an empty hasher.
func NewHasher() *Hasher { return &Hasher{h: fnvOffset} }

// Bytes adds raw bytes.
func (h *Hasher) Bytes(b []byte) {
	x := h.h
	for _, c := range b {
		x ^= uint64(c)
		x *= fnvPrime
	}
	h.h = x
}

// Uint adds an unsigned integer.
func (h *Hasher) Uint(v uint64) {
	binary.LittleEndian.PutUint64(h.buf[:], v)
	h.Bytes(h.buf[:])
}

// Int adds an integer.
func (h *Hasher) Int(v int) { h.Uint(uint64(int64(v))) }

// Float adds a float by its exact bits.
func (h *Hasher) Float(v float64) { h.Uint(math.Float64bits(v)) }

// Bool adds a boolean.
func (h *Hasher) Bool(v bool) {
	if v {
		h.Uint(1)
	} else {
		h.Uint(0)
	}
}

// String adds a length-prefixed string.
func (h *Hasher) String(s string) {
	h.Int(len(s))
	x := h.h
	for i := 0; i < len(s); i++ {
		x ^= uint64(s[i])
		x *= fnvPrime
	}
	h.h = x
}

// Vec adds a position.
func (h *Hasher) Vec(v Vec3) {
	h.Float(v[0])
	h.Float(v[1])
	h.Float(v[2])
}

// Counts adds a string→int map in key order.
func (h *Hasher) Counts(m map[string]int) {
	keys := slices.Sorted(maps.Keys(m))
	h.Int(len(keys))
	for _, k := range keys {
		h.String(k)
		h.Int(m[k])
	}
}

// Sum64 returns the hash so far.
func (h *Hasher) Sum64() uint64 { return h.h }

// FormatHash renders a state hash the way results and journals print it.
func FormatHash(v uint64) string { return fmt.Sprintf("%016x", v) }

// StateHash hashes everything that decides the future of the world: the tick,
// every agent's body, inventory, action and mailbox, every entity's state, the
// messages in flight, the random streams and each component's state.
func (w *World) StateHash() uint64 {
	h := NewHasher()
	h.Int(w.tick)
	for _, a := range w.agents {
		h.String(a.ID)
		h.String(a.Team)
		h.Vec(a.Pos)
		h.Vec(a.Vel)
		h.Float(a.Facing)
		h.Float(a.Health)
		h.Bool(a.Alive)
		h.Counts(a.Inventory)
		h.Int(int(a.action.kind))
		h.Vec(a.action.target)
		h.Int(len(a.action.path))
		for _, p := range a.action.path {
			h.Vec(p)
		}
		h.Float(a.action.speed)
		h.Int(a.action.craftLeft)
		if a.action.craftRecipe != nil {
			h.String(a.action.craftRecipe.Output)
		}
		h.Vec(a.action.checkPos)
		h.Int(a.action.checkTick)
		h.Bool(a.action.replanned)
		h.Int(a.action.startedTick)
		h.String(a.status.Status)
		h.String(a.status.Detail)
		h.Bool(a.hasResult)
		if a.hasResult {
			h.String(a.lastResult.Tool)
			h.Bool(a.lastResult.Success)
			h.String(a.lastResult.ErrorCode)
			h.String(a.lastResult.ErrorMessage)
			h.Int(a.lastResult.Tick)
		}
		h.Bool(a.queryResult != nil)
		h.Bool(a.inventoryDetails != nil)
		h.Int(a.Stats.ResourcesCollected)
		h.Counts(a.Stats.Collected)
		h.Int(a.Stats.ItemsCrafted)
		h.Counts(a.Stats.Crafted)
		h.Float(a.Stats.DamageTaken)
		h.Float(a.Stats.Distance)
		h.Int(a.Stats.MessagesSent)
		h.Int(a.Stats.CompletedTick)
		h.Int(a.Stats.DiedTick)
		h.Int(len(a.inbox))
		for _, m := range a.inbox {
			h.String(m.From)
			h.String(m.To)
			h.String(m.Content)
			h.Int(m.Tick)
		}
		h.Int(len(a.inHazards))
		for _, hz := range a.inHazards {
			h.Int(hz)
		}
	}
	for _, r := range w.resources {
		h.Bool(r.Collected)
		h.Int(r.respawnAt)
	}
	for _, s := range w.stations {
		h.String(s.InUseBy)
	}
	for _, p := range w.points {
		h.String(p.Owner)
		h.Float(p.Progress)
	}
	w.hashCapture(h)
	h.Int(len(w.outbox))
	for _, m := range w.outbox {
		h.String(m.from)
		h.String(m.to)
		h.String(m.content)
		h.Int(m.tick)
	}
	w.rng.hash(h)
	w.secret.hash(h)
	w.bridge.hash(h)
	w.hashVariables(h)
	for _, c := range w.components {
		h.String(c.Name())
		c.Hash(h)
	}
	return h.Sum64()
}
