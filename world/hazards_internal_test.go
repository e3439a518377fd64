package world

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStepHazardsFindsEveryHazard walks agents at random through worlds of
// small and large hazards and checks, after every tick, that each living
// agent is in exactly the hazards whose disc holds it, found by testing every
// hazard: the buckets stepHazards skips (no hazard near enough) must hold no
// agent that is in a hazard.
func TestStepHazardsFindsEveryHazard(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		// Seeds 1–3 have one large hazard, which widens every query; seeds
		// 4–6 only small ones, so that most buckets are skipped.
		large := seed <= 3
		rng := rand.New(rand.NewPCG(seed, 9))
		b := Bounds{MinX: -40, MinZ: -30, MaxX: 45, MaxZ: 35}
		if !large {
			b = Bounds{MinX: -100, MinZ: -60, MaxX: 110, MaxZ: 90} // most buckets far from any hazard
		}
		cfg := Config{Name: "hazards", Seed: seed, CellSize: 0.5, Bounds: b}
		for i := range 6 {
			r := 0.5 + 2*rng.Float64()
			if i == 0 && large {
				r = 9 + 4*float64(seed)
			}
			cfg.Hazards = append(cfg.Hazards, HazardSpec{Name: fmt.Sprintf("H%d", i), X: b.MinX + 5 + rng.Float64()*(b.Width()-10),
				Z: b.MinZ + 5 + rng.Float64()*(b.Depth()-10), Radius: r, DamagePerSecond: 0.01})
		}
		for i := range 40 {
			cfg.Agents = append(cfg.Agents, AgentSpec{ID: fmt.Sprintf("a%d", i),
				X: b.MinX + rng.Float64()*b.Width(), Z: b.MinZ + rng.Float64()*b.Depth(), Speed: 2 + 3*rng.Float64()})
		}
		w, err := New(cfg)
		require.NoError(t, err)
		if !large {
			far := len(w.hazardNear) - len(slices.DeleteFunc(slices.Clone(w.hazardNear), func(near bool) bool { return !near }))
			require.Greater(t, far, len(w.hazardNear)/3, "seed %d: too few buckets are skipped", seed)
		}
		entered := 0
		for tick := range 200 {
			if tick%25 == 0 {
				for _, a := range w.agents {
					to := Vec3{b.MinX + rng.Float64()*b.Width(), 0, b.MinZ + rng.Float64()*b.Depth()}
					if !large && rng.IntN(2) == 0 { // into a hazard, from wherever it is
						h := w.hazards[rng.IntN(len(w.hazards))]
						to = Vec3{h.Pos[0] + rng.Float64() - 0.5, 0, h.Pos[2] + rng.Float64() - 0.5}
					}
					w.ForceStraightMove(a, to)
				}
			}
			w.Step()
			for _, a := range w.agents {
				if !a.Alive {
					continue
				}
				var want []int
				for i, h := range w.hazards {
					if groundDist2(a.Pos, h.Pos) < h.Radius*h.Radius {
						want = append(want, i)
					}
				}
				require.Equal(t, len(want), len(a.inHazards), "seed %d, tick %d, %s at %v: in %v, want %v", seed, tick, a.ID, a.Pos, a.inHazards, want)
				if len(want) > 0 {
					require.Equal(t, want, a.inHazards, "seed %d, tick %d, %s", seed, tick, a.ID)
				}
			}
			for _, e := range w.TakeEvents() {
				if e.Type == "hazard_entered" {
					entered++
				}
			}
		}
		require.Greater(t, entered, 10, "seed %d: too few entries to test", seed)
	}
}

// TestHazardRadiusMustBeFinite: a hazard's radius must be a positive, finite
// number (an infinite one would overflow the skipping of buckets far from
// every hazard).
func TestHazardRadiusMustBeFinite(t *testing.T) {
	for _, r := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		cfg := Config{Name: "hazards", Seed: 1, CellSize: 0.5, Bounds: Bounds{MinX: -10, MinZ: -10, MaxX: 10, MaxZ: 10},
			Hazards: []HazardSpec{{Name: "H", X: 1, Z: 1, Radius: r}}}
		_, err := New(cfg)
		require.ErrorContains(t, err, "radius must be positive and finite", "radius %g", r)
	}
}

// TestNearCoversAHugeRadius: near, for a radius far past the grid (as a
// hostile scenario may give a hazard; agents cannot spawn inside one, so only
// the index sees it), marks every bucket, rather than overflowing to none.
func TestNearCoversAHugeRadius(t *testing.T) {
	for _, r := range []float64{500, 1e300} {
		g := newBucketGrid(Bounds{MinX: -60, MinZ: -60, MaxX: 60, MaxZ: 60}, 10)
		g.insert(0, Vec3{50, 0, 50})
		near := g.near(r)
		require.NotContains(t, near, false, "radius %g", r)
	}
}

// TestAHazardLeftByAJumpIsLeft moves an agent at once from inside a hazard
// to a bucket far from every hazard (as a component may): the step must
// still see that it left, so that coming back enters the hazard again.
func TestAHazardLeftByAJumpIsLeft(t *testing.T) {
	b := Bounds{MinX: -100, MinZ: -100, MaxX: 100, MaxZ: 100}
	w, err := New(Config{Name: "jump", Seed: 1, CellSize: 0.5, Bounds: b,
		Hazards: []HazardSpec{{Name: "pit", X: -80, Z: -80, Radius: 3, DamagePerSecond: 0.01, EntryDamage: 1}},
		Agents:  []AgentSpec{{ID: "a", X: 80, Z: 80}}})
	require.NoError(t, err)
	a := w.agents[0]
	require.False(t, w.hazardNear[w.hazardIdx.bucket(80, 80)], "the far corner must be far from the hazard")
	entries := func() int {
		n := 0
		for _, e := range w.TakeEvents() {
			if e.Type == "hazard_entered" {
				n++
			}
		}
		return n
	}
	for round := range 2 {
		w.setPos(a, -80, -80)
		w.Step()
		require.Equal(t, []int{0}, a.inHazards, "round %d", round)
		require.Equal(t, 1, entries(), "round %d: entering the pit", round)
		w.setPos(a, 80, 80)
		w.Step()
		require.Empty(t, a.inHazards, "round %d: the agent left the pit", round)
		require.Zero(t, entries(), "round %d", round)
	}
}
