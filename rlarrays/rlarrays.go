// Package rlarrays computes, on the server, the numeric arrays of the Python
// SDK's "dict" observation encoding (agent_arena_sdk.spaces.Codec), so that a
// reinforcement-learning environment wraps bytes in numpy arrays instead of
// walking every observation in Python.
//
// The client owns the encoding: it sends a Layout (the names of every column,
// the vocabularies, the entity slots and the action mask's parts, in its own
// order) once per connection in an observation_arrays message, and this
// package only interprets it. Every observation the session then receives
// carries Arrays: the float32 features, the int64 codes, the int8 entity
// presence and the int8 action mask, each little-endian and in the layout's
// order. The Python codec keeps its own encoder as the fallback and as the
// oracle: sdk/python's tests hold the two to the same values over whole
// episodes of every built-in scenario.
package rlarrays

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/arena-sim/arena/world"
)

// Limits of a layout, so that a client cannot make every observation huge.
const (
	MaxSlots  = 1024    // entity slots of one kind, and K
	MaxNames  = 1 << 14 // names in one vocabulary or choice
	MaxValues = 1 << 16 // numbers in one observation's arrays together
	MaxParts  = 1024    // entity kinds and mask parts, each
)

// Layout is the client's description of its encoding. Lists are in the
// client's order; a feature or part the package does not know is an error.
type Layout struct {
	// Self names the agent's own features: x y z vx vy vz cos_facing
	// sin_facing health max_health alive inventory_used inventory_capacity
	// score tick messages events.
	Self []string `cbor:"self"`
	// Inventory, Progress and TeamScores are the item, metric and team
	// vocabularies of the float features that follow Self (each may be empty).
	Inventory  []string `cbor:"inventory"`
	Progress   []string `cbor:"progress"`
	TeamScores []string `cbor:"team_scores"`
	// Statuses and ErrorCodes are the code vocabularies (index + 1; 0 unknown,
	// and an error code outside the list is len+1).
	Statuses   []string `cbor:"statuses"`
	ErrorCodes []string `cbor:"error_codes"`
	// Tools are the action space's tools, in order.
	Tools []string `cbor:"tools"`
	Kinds []Kind   `cbor:"kinds"`
	// K is the number of entity slots of an action parameter that names an
	// entity in sight.
	K            int      `cbor:"k"`
	Recipes      []string `cbor:"recipes"`
	CollectRange float64  `cbor:"collect_range"`
	CraftRange   float64  `cbor:"craft_range"`
	// Queries are masked out unless QueriesAllowed.
	Queries        []string `cbor:"queries"`
	QueriesAllowed bool     `cbor:"queries_allowed"`
	// Params are the action mask's parts after the tools, in order.
	Params []Param `cbor:"params"`
}

// Kind is one entity list: its kind (resources, stations, hazards,
// obstacles, agents, teammates, capture_points), its number of slots, the
// features after dx dy dz distance, and the vocabulary of its type column.
type Kind struct {
	Kind     string   `cbor:"kind"`
	Slots    int      `cbor:"slots"`
	Features []string `cbor:"features"`
	Types    []string `cbor:"types"`
}

// Param is one part of the action mask: "slot_resources" and
// "slot_stations" (K entries: the entity can be collected from, or crafted
// at), "craft" (one per recipe in Values: craftable now), "agents" (one per
// value: a living agent, "all", or "team" for a team member), "ones" (Size
// entries, all allowed).
type Param struct {
	Kind   string   `cbor:"kind"`
	Values []string `cbor:"values,omitempty"`
	Size   int      `cbor:"size,omitempty"`
}

// Arrays are one observation's encoding, each a little-endian array.
type Arrays struct {
	F32  []byte `cbor:"f32"`
	I64  []byte `cbor:"i64"`
	I8   []byte `cbor:"i8"`
	Mask []byte `cbor:"mask"`
}

// Encoder is a compiled Layout. Encode may be called from one goroutine at a
// time (it keeps scratch space).
type Encoder struct {
	l        Layout
	self     []func(o *world.Observation) float64
	items    map[string]int
	statuses map[string]int
	codes    map[string]int
	tools    []toolKind
	kinds    []kind
	recipes  []string
	params   []param
	floats   []float32
	ints     []int64
	present  []int8
	mask     []int8
	living   map[string]bool
	craft    map[string]bool
	reach    []bool
	at       []bool
	free     map[string][]int
}

type toolKind uint8

const (
	toolOther toolKind = iota
	toolIdle
	toolMove
	toolCollect
	toolCraft
	toolSend
	toolQuery
)

type kind struct {
	Kind
	list  func(o *world.Observation) []world.EntityView
	typ   func(e *world.EntityView) string
	feats []func(e *world.EntityView, team string) float64
	index map[string]int
}

type param struct {
	Param
	values map[string]bool
}

var selfFeatures = map[string]func(o *world.Observation) float64{
	"x":                  func(o *world.Observation) float64 { return o.Position[0] },
	"y":                  func(o *world.Observation) float64 { return o.Position[1] },
	"z":                  func(o *world.Observation) float64 { return o.Position[2] },
	"vx":                 func(o *world.Observation) float64 { return o.Velocity[0] },
	"vy":                 func(o *world.Observation) float64 { return o.Velocity[1] },
	"vz":                 func(o *world.Observation) float64 { return o.Velocity[2] },
	"cos_facing":         func(o *world.Observation) float64 { return math.Cos(o.Facing) },
	"sin_facing":         func(o *world.Observation) float64 { return math.Sin(o.Facing) },
	"health":             func(o *world.Observation) float64 { return o.Health },
	"max_health":         func(o *world.Observation) float64 { return o.MaxHealth },
	"alive":              func(o *world.Observation) float64 { return b2f(o.Alive) },
	"inventory_used":     func(o *world.Observation) float64 { return float64(o.InventoryUsed) },
	"inventory_capacity": func(o *world.Observation) float64 { return float64(o.InventoryCap) },
	"score":              func(o *world.Observation) float64 { return o.Score },
	"tick":               func(o *world.Observation) float64 { return float64(o.Tick) },
	"messages":           func(o *world.Observation) float64 { return float64(len(o.Messages)) },
	"events":             func(o *world.Observation) float64 { return float64(len(o.Events)) },
}

type entityList struct {
	list func(o *world.Observation) []world.EntityView
	typ  func(e *world.EntityView) string
}

var entityKinds = map[string]entityList{
	"resources": {func(o *world.Observation) []world.EntityView { return o.NearbyResources },
		func(e *world.EntityView) string { return e.ResourceType }},
	"stations": {func(o *world.Observation) []world.EntityView { return o.NearbyStations },
		func(e *world.EntityView) string { return e.StationType }},
	"hazards": {func(o *world.Observation) []world.EntityView { return o.NearbyHazards },
		func(e *world.EntityView) string { return e.HazardType }},
	"obstacles": {func(o *world.Observation) []world.EntityView { return o.NearbyObstacles },
		func(e *world.EntityView) string { return e.ObstacleType }},
	"agents":         {func(o *world.Observation) []world.EntityView { return o.NearbyAgents }, entityName},
	"teammates":      {func(o *world.Observation) []world.EntityView { return o.Teammates }, entityName},
	"capture_points": {func(o *world.Observation) []world.EntityView { return o.CapturePoints }, entityName},
}

func entityName(e *world.EntityView) string { return e.Name }

// side is 1 for the reader's own team, -1 for another, 0 for none.
func side(t, mine string) float64 {
	switch {
	case t == "" || mine == "":
		return 0
	case t == mine:
		return 1
	}
	return -1
}

var entityFeatures = map[string]func(e *world.EntityView, team string) float64{
	"amount":            func(e *world.EntityView, _ string) float64 { return float64(e.Amount) },
	"in_use":            func(e *world.EntityView, _ string) float64 { return b2f(e.InUse != nil && *e.InUse) },
	"radius":            func(e *world.EntityView, _ string) float64 { return e.Radius },
	"entry_damage":      func(e *world.EntityView, _ string) float64 { return e.EntryDamage },
	"damage_per_second": func(e *world.EntityView, _ string) float64 { return e.DamagePerSecond },
	"health":            func(e *world.EntityView, _ string) float64 { return e.Health },
	"ally":              func(e *world.EntityView, team string) float64 { return side(e.Team, team) },
	"owner":             func(e *world.EntityView, team string) float64 { return side(e.Owner, team) },
	"capturing":         func(e *world.EntityView, team string) float64 { return side(e.Capturing, team) },
	"contested":         func(e *world.EntityView, _ string) float64 { return b2f(e.Contested) },
	"progress": func(e *world.EntityView, _ string) float64 {
		if e.Progress == nil {
			return 0
		}
		return *e.Progress
	},
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Compile checks a layout and prepares its encoder.
func Compile(l *Layout) (*Encoder, error) {
	if l == nil {
		return nil, fmt.Errorf("no layout")
	}
	e := &Encoder{l: *l, items: index(l.Inventory, 0), statuses: index(l.Statuses, 1), codes: index(l.ErrorCodes, 1),
		recipes: l.Recipes, living: map[string]bool{}, craft: map[string]bool{}, free: map[string][]int{}}
	for _, list := range [][]string{l.Self, l.Inventory, l.Progress, l.TeamScores, l.Statuses, l.ErrorCodes, l.Tools, l.Recipes, l.Queries} {
		if len(list) > MaxNames {
			return nil, fmt.Errorf("a list of %d names (at most %d)", len(list), MaxNames)
		}
	}
	if l.K < 1 || l.K > MaxSlots {
		return nil, fmt.Errorf("k = %d: it is between 1 and %d", l.K, MaxSlots)
	}
	if bad := math.IsNaN(l.CollectRange) || math.IsNaN(l.CraftRange); bad {
		return nil, fmt.Errorf("collect_range and craft_range are numbers")
	}
	for _, f := range l.Self {
		fn := selfFeatures[f]
		if fn == nil {
			return nil, fmt.Errorf("unknown self feature %q", f)
		}
		e.self = append(e.self, fn)
	}
	if len(l.Kinds) > MaxParts || len(l.Params) > MaxParts {
		// Each costs a step of every observation's encoding, even empty.
		return nil, fmt.Errorf("%d entity kinds and %d mask parts (at most %d each)", len(l.Kinds), len(l.Params), MaxParts)
	}
	values := len(l.Self) + len(l.Inventory) + len(l.Progress) + len(l.TeamScores) + len(l.Tools)
	for _, k := range l.Kinds {
		src, ok := entityKinds[k.Kind]
		if !ok {
			return nil, fmt.Errorf("unknown entity kind %q", k.Kind)
		}
		if k.Slots < 0 || k.Slots > MaxSlots || len(k.Types) > MaxNames || len(k.Features) > 16 {
			return nil, fmt.Errorf("entity kind %q: %d slots, %d types, %d features (at most %d, %d, 16)", k.Kind, k.Slots, len(k.Types), len(k.Features), MaxSlots, MaxNames)
		}
		kk := kind{Kind: k, list: src.list, typ: src.typ, index: index(k.Types, 1)}
		for _, f := range k.Features {
			fn := entityFeatures[f]
			if fn == nil {
				return nil, fmt.Errorf("entity kind %q: unknown feature %q", k.Kind, f)
			}
			kk.feats = append(kk.feats, fn)
		}
		e.kinds = append(e.kinds, kk)
		values += k.Slots * (6 + len(k.Features))
	}
	queries := map[string]bool{}
	for _, q := range l.Queries {
		queries[q] = true
	}
	for _, t := range l.Tools {
		tk := map[string]toolKind{"idle": toolIdle, "move_to": toolMove, "collect": toolCollect, "craft": toolCraft,
			"send_message": toolSend}[t]
		if tk == toolOther && queries[t] {
			tk = toolQuery
		}
		e.tools = append(e.tools, tk)
	}
	for _, p := range l.Params {
		pp := param{Param: p}
		switch p.Kind {
		case "slot_resources", "slot_stations":
			values += l.K
		case "craft", "agents":
			if len(p.Values) > MaxNames {
				return nil, fmt.Errorf("a %s part of %d values (at most %d)", p.Kind, len(p.Values), MaxNames)
			}
			values += len(p.Values)
		case "ones":
			if p.Size < 0 || p.Size > MaxNames {
				return nil, fmt.Errorf("a ones part of size %d (0 to %d)", p.Size, MaxNames)
			}
			values += p.Size
		default:
			return nil, fmt.Errorf("unknown mask part %q (slot_resources, slot_stations, craft, agents, ones)", p.Kind)
		}
		e.params = append(e.params, pp)
	}
	if values > MaxValues {
		return nil, fmt.Errorf("the arrays would hold %d values (at most %d)", values, MaxValues)
	}
	return e, nil
}

// index maps names to their positions plus base; a name listed twice takes
// its last position, as a Python dict built from the list does.
func index(names []string, base int) map[string]int {
	m := make(map[string]int, len(names))
	for i, n := range names {
		m[n] = i + base
	}
	return m
}

// Encode fills dst with o's arrays, reusing dst's buffers.
func (e *Encoder) Encode(o *world.Observation, dst *Arrays) {
	fl, in, pr := e.floats[:0], e.ints[:0], e.present[:0]
	for _, f := range e.self {
		fl = append(fl, float32(f(o)))
	}
	if len(e.l.Inventory) > 0 {
		n := len(fl)
		fl = append(fl, make([]float32, len(e.l.Inventory))...)
		for item, c := range o.Inventory {
			if i, ok := e.items[item]; ok {
				fl[n+i] = float32(c)
			}
		}
	}
	for _, m := range e.l.Progress {
		fl = append(fl, float32(o.CurrentProgress[m]))
	}
	for _, t := range e.l.TeamScores {
		fl = append(fl, float32(o.TeamScores[t]))
	}
	in = append(in, int64(e.statuses[o.CurrentAction.Status]))
	if r := o.LastActionResult; r != nil {
		code := int64(0)
		if r.ErrorCode != "" {
			code = int64(len(e.l.ErrorCodes) + 1)
			if c, ok := e.codes[r.ErrorCode]; ok {
				code = int64(c)
			}
		}
		outcome := int64(2)
		if r.Success {
			outcome = 1
		}
		in = append(in, int64(slices.Index(e.l.Tools, r.Tool)+1), outcome, code)
	} else {
		in = append(in, 0, 0, 0)
	}
	pos := o.Position
	for i := range e.kinds {
		k := &e.kinds[i]
		list := k.list(o)
		m := min(len(list), k.Slots)
		for j := range list[:m] {
			v := &list[j]
			fl = append(fl, float32(v.Position[0]-pos[0]), float32(v.Position[1]-pos[1]), float32(v.Position[2]-pos[2]), float32(v.Distance))
			for _, f := range k.feats {
				fl = append(fl, float32(f(v, o.Team)))
			}
			in = append(in, int64(k.index[k.typ(v)]))
			pr = append(pr, 1)
		}
		for range k.Slots - m {
			fl = append(fl, make([]float32, 4+len(k.feats))...)
			in = append(in, 0)
			pr = append(pr, 0)
		}
	}
	e.floats, e.ints, e.present = fl, in, pr
	e.mask = e.masks(o, e.mask[:0])
	dst.F32 = appendF32(dst.F32[:0], fl)
	dst.I64 = appendI64(dst.I64[:0], in)
	dst.I8 = appendI8(dst.I8[:0], pr)
	dst.Mask = appendI8(dst.Mask[:0], e.mask)
}

// masks is the action mask, as agent_arena_sdk.spaces.Codec.mask computes it.
func (e *Encoder) masks(o *world.Observation, buf []int8) []int8 {
	k := e.l.K
	busy := o.CurrentAction.Status == "crafting"
	res := o.NearbyResources[:min(len(o.NearbyResources), k)]
	stations := o.NearbyStations[:min(len(o.NearbyStations), k)]
	full := o.InventoryUsed >= o.InventoryCap
	reach, anyReach := e.reach[:0], false
	for i := range res {
		reach = append(reach, !full && res[i].Distance <= e.l.CollectRange)
		anyReach = anyReach || reach[i]
	}
	at := append(e.at[:0], make([]bool, len(stations))...)
	e.reach, e.at = reach, at
	clear(e.craft)
	if len(e.recipes) > 0 && len(stations) > 0 {
		free := e.free
		clear(free)
		for j := range stations {
			st := &stations[j]
			if st.Distance <= e.l.CraftRange && (st.InUse == nil || !*st.InUse) {
				free[st.StationType] = append(free[st.StationType], j)
			}
		}
		for _, r := range e.recipes {
			rec, ok := o.AvailableRecipes[r]
			if !ok || free[rec.StationType] == nil {
				continue
			}
			have := true
			for item, n := range rec.Inputs {
				have = have && o.Inventory[item] >= n
			}
			if have {
				e.craft[r] = true
				for _, j := range free[rec.StationType] {
					at[j] = true
				}
			}
		}
	}
	clear(e.living)
	for _, id := range o.AgentIDs {
		if id != o.AgentID {
			e.living[id] = true
		}
	}
	for _, t := range e.tools {
		ok := true
		switch t {
		case toolMove:
			ok = !busy
		case toolCollect:
			ok = !busy && anyReach
		case toolCraft:
			ok = !busy && len(e.craft) > 0
		case toolSend:
			ok = len(e.living) > 0
		case toolQuery:
			ok = e.l.QueriesAllowed
		}
		buf = appendBool(buf, o.Alive && ok)
	}
	for _, p := range e.params {
		switch p.Kind {
		case "slot_resources", "slot_stations":
			got := reach
			if p.Kind == "slot_stations" {
				got = at
			}
			for i := range k {
				buf = appendBool(buf, i < len(got) && got[i])
			}
		case "craft":
			for _, r := range p.Values {
				buf = appendBool(buf, e.craft[r])
			}
		case "agents":
			for _, v := range p.Values {
				buf = appendBool(buf, e.living[v] || v == "all" || (v == "team" && o.Team != ""))
			}
		case "ones":
			for range p.Size {
				buf = append(buf, 1)
			}
		}
	}
	return buf
}

func appendBool(b []int8, v bool) []int8 {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendF32(b []byte, v []float32) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func appendI64(b []byte, v []int64) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	return b
}

func appendI8(b []byte, v []int8) []byte {
	for _, x := range v {
		b = append(b, byte(x))
	}
	return b
}
