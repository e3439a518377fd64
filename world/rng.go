package world

import (
	"maps"
	"math/rand/v2"
	"slices"
)

// streams hands out one seeded random stream per system ("messages", "spawn",
// "component:social", ...), so that adding randomness to one system never shifts
// the numbers another one sees.
type streams struct {
	seed uint64
	pcg  map[string]*rand.PCG
	rand map[string]*rand.Rand
}

func newStreams(seed uint64) *streams {
	return &streams{seed: seed, pcg: map[string]*rand.PCG{}, rand: map[string]*rand.Rand{}}
}

// DeriveSeed mixes a seed with a name into a new seed (FNV-1a, then SplitMix64).
func DeriveSeed(seed uint64, name string) uint64 {
	h := NewHasher()
	h.Uint(seed)
	h.String(name)
	z := h.Sum64() + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (s *streams) get(name string) *rand.Rand {
	if r, ok := s.rand[name]; ok {
		return r
	}
	p := rand.NewPCG(DeriveSeed(s.seed, name), DeriveSeed(s.seed^0x5bd1e995, name))
	r := rand.New(p)
	s.pcg[name] = p
	s.rand[name] = r
	return r
}

func (s *streams) hash(h *Hasher) {
	for _, n := range slices.Sorted(maps.Keys(s.pcg)) {
		h.String(n)
		b, _ := s.pcg[n].MarshalBinary()
		h.Bytes(b)
	}
}

// Rand returns the world's random stream for a system. Use one name per system;
// components use "component:<name>".
func (w *World) Rand(name string) *rand.Rand { return w.rng.get(name) }
