package world

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/arena-sim/arena/internal/fuzzy"
	"github.com/stretchr/testify/require"
)

// suggestByScan is the suggestion as it was first written: every named entity
// of the world is tested. It is the oracle of the indexed suggest.
func (w *World) suggestByScan(a *Agent, name string, kind entityKind) string {
	var names []string
	for n, ref := range w.names {
		if ref.kind == kind && w.canSee(a, ref) {
			names = append(names, n)
		}
	}
	if best := fuzzy.Closest(name, names); best != "" {
		return fmt.Sprintf("; did you mean '%s'?", best)
	}
	return ""
}

// TestSuggestFromIndexesEqualsTheFullScan compares the suggestions built from
// the spatial indexes with the full scan, over random worlds, observers and
// misspelt names of every kind, with dead agents, collected resources and
// agents that moved since the index was built.
func TestSuggestFromIndexesEqualsTheFullScan(t *testing.T) {
	const half = 30.0
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		at := func() (float64, float64) {
			return (rng.Float64()*2 - 1) * (half - 1), (rng.Float64()*2 - 1) * (half - 1)
		}
		cfg := Config{Name: "suggest", Seed: seed, CellSize: 0.5, Bounds: Bounds{MinX: -half, MinZ: -half, MaxX: half, MaxZ: half}}
		for i := 0; i < 25; i++ {
			x, z := at()
			if i%3 == 0 {
				cfg.Obstacles = append(cfg.Obstacles, ObstacleSpec{Name: fmt.Sprintf("Wall%d", i), ObstacleType: "wall", X: x, Z: z, Shape: "box", SizeX: 1, SizeZ: 1 + 6*rng.Float64()})
			} else {
				cfg.Obstacles = append(cfg.Obstacles, ObstacleSpec{Name: fmt.Sprintf("Tree%d", i), ObstacleType: "tree", X: x, Z: z, Radius: 0.3 + 2*rng.Float64()})
			}
		}
		for i := 0; i < 60; i++ {
			x, z := at()
			cfg.Resources = append(cfg.Resources, ResourceSpec{Name: fmt.Sprintf("Berry%d", i), ResourceType: "berry", X: x, Z: z})
		}
		for i := 0; i < 12; i++ {
			x, z := at()
			cfg.Stations = append(cfg.Stations, StationSpec{Name: fmt.Sprintf("Forge%d", i), StationType: "forge", X: x, Z: z})
		}
		for i := 0; i < 10; i++ {
			x, z := at()
			cfg.Hazards = append(cfg.Hazards, HazardSpec{Name: fmt.Sprintf("Pit%d", i), HazardType: "pit", X: x, Z: z, Radius: 0.5 + 4*rng.Float64()})
		}
		for i := 0; i < 4; i++ {
			x, z := at()
			cfg.Points = append(cfg.Points, CapturePointSpec{Name: fmt.Sprintf("Point%d", i), X: x, Z: z})
		}
		for i := 0; i < 40; i++ {
			x, z := at()
			cfg.Agents = append(cfg.Agents, AgentSpec{ID: fmt.Sprintf("agent_%d", i), X: x, Z: z})
		}
		w, err := New(cfg)
		require.NoError(t, err)
		w.refreshAgentIndex()
		for i, r := range w.resources {
			if i%4 == 0 {
				r.Collected = true
				w.resourceIdx.remove(i, r.Pos)
			}
		}
		for i, a := range w.agents {
			switch {
			case i%7 == 0:
				w.kill(a, "test")
			case i%3 == 0: // moved since the index was built
				x, z := at()
				w.setPos(a, x, z)
				w.agentIdxDirty = true
			}
		}
		var all []string
		for n := range w.names {
			all = append(all, n)
		}
		kinds := []entityKind{kindAgent, kindResource, kindStation, kindHazard, kindObstacle, kindPoint}
		suggested := map[entityKind]int{}
		for q := 0; q < 3000; q++ {
			a := w.agents[rng.IntN(len(w.agents))]
			kind := kinds[rng.IntN(len(kinds))]
			name := []byte(all[rng.IntN(len(all))])
			for e := rng.IntN(3); e > 0; e-- { // misspell
				name[rng.IntN(len(name))] = "0123456789aeoBPT"[rng.IntN(16)]
			}
			want := w.suggestByScan(a, string(name), kind)
			require.Equal(t, want, w.suggest(a, string(name), kind), "seed %d, %s at %v, %s %q", seed, a.ID, a.Pos, kind, name)
			if want != "" {
				suggested[kind]++
			}
		}
		for _, k := range kinds {
			require.Positive(t, suggested[k], "seed %d: no query suggested a %s; the comparison proves nothing for it", seed, k)
		}
	}
}
