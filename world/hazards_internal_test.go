package world

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStepHazardsFindsEveryHazard walks agents at random through worlds of
// small and large hazards and checks, after every tick, that each living
// agent is in exactly the hazards whose disc holds it, found by testing every
// hazard: the buckets stepHazards skips (no hazard near enough) must hold no
// agent that is in a hazard.
func TestStepHazardsFindsEveryHazard(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 9))
		b := Bounds{MinX: -40, MinZ: -30, MaxX: 45, MaxZ: 35}
		cfg := Config{Name: "hazards", Seed: seed, CellSize: 0.5, Bounds: b}
		for i := range 6 {
			r := 0.5 + 2*rng.Float64()
			if i == 0 {
				r = 9 + 4*float64(seed) // one large hazard widens every query
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
		entered := 0
		for tick := range 200 {
			if tick%25 == 0 {
				for _, a := range w.agents {
					w.ForceStraightMove(a, Vec3{b.MinX + rng.Float64()*b.Width(), 0, b.MinZ + rng.Float64()*b.Depth()})
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
		require.Greater(t, entered, 20, "seed %d: too few entries to test", seed)
	}
}
