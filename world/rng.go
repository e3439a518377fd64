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
// components use "component:<name>". These streams drive what agents may see
// (layout, message drops, decision order); hidden information is drawn from
// SecretRand instead.
func (w *World) Rand(name string) *rand.Rand { return w.rng.get(name) }

// SecretRand returns a random stream for hidden information (a role deal, a
// private draw), seeded by the world's secret seed, which nothing sent to an
// agent carries or can be derived from. Components draw every secret from
// here, never from Rand. Use one name per system, as for Rand.
func (w *World) SecretRand(name string) *rand.Rand { return w.secret.get(name) }

// SecretSeed is the seed of the hidden-information streams: Config.SecretSeed,
// or one derived from the world's seed when that was zero. Only the operator
// (results, replays) may see it.
func (w *World) SecretSeed() uint64 { return w.secret.seed }

// secretSeed is the secret seed a config gives: its own, or, when that is
// zero, one derived from the world seed (a local run reproduced from one
// number).
func secretSeed(cfg Config) uint64 {
	if cfg.SecretSeed != 0 {
		return cfg.SecretSeed
	}
	return DeriveSeed(cfg.Seed, "secret")
}
