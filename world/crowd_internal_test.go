package world

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNearbyAgentsAreTheNearestInViewAndCountTheRest checks observations'
// agent lists against a plain reading of the rule: every other living agent
// within the perception radius and in line of sight, nearest first by the
// distance shown, ties by id; the first MaxNearbyAgents listed and the rest
// counted. Worlds are random, with walls and trees hiding agents, ids whose
// order is not the agents' order, agents on a lattice (equal distances),
// dead agents and agents that moved.
func TestNearbyAgentsAreTheNearestInViewAndCountTheRest(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		limit := []int{1, 3, 16, 200}[seed%4]
		cfg := Config{Name: "crowd", Seed: seed, CellSize: 0.5, Bounds: Bounds{MinX: -15, MinZ: -15, MaxX: 15, MaxZ: 15},
			Rules: Rules{MaxNearbyAgents: limit}}
		for i := 0; i < 12; i++ {
			x, z := rng.Float64()*26-13, rng.Float64()*26-13
			if i%2 == 0 {
				cfg.Obstacles = append(cfg.Obstacles, ObstacleSpec{Name: fmt.Sprintf("W%d", i), X: x, Z: z, Shape: "box", SizeX: 0.6, SizeZ: 2 + 5*rng.Float64()})
			} else {
				cfg.Obstacles = append(cfg.Obstacles, ObstacleSpec{Name: fmt.Sprintf("T%d", i), X: x, Z: z, Radius: 0.4 + rng.Float64()})
			}
		}
		for i := 0; i < 90; i++ {
			x, z := float64(rng.IntN(27)-13), float64(rng.IntN(27)-13) // a lattice: many equal distances
			if i%3 == 0 {
				x, z = rng.Float64()*28-14, rng.Float64()*28-14
			}
			cfg.Agents = append(cfg.Agents, AgentSpec{ID: fmt.Sprintf("%c%d", 'z'-rune(rng.IntN(26)), i), X: x, Z: z})
		}
		w, err := New(cfg)
		require.NoError(t, err)
		for i, a := range w.agents {
			switch {
			case i%11 == 0:
				w.kill(a, "test")
			case i%5 == 0:
				a.Pos = w.ground(rng.Float64()*28-14, rng.Float64()*28-14)
				w.agentIdxDirty = true
			}
		}
		crowded := 0
		for _, a := range w.agents {
			if !a.Alive {
				continue
			}
			var want []*Agent
			for _, o := range w.agents {
				if o != a && o.Alive && GroundDist(a.Pos, o.Pos) <= w.rules.PerceptionRadius && w.LineOfSight(a.Pos, o.Pos) {
					want = append(want, o)
				}
			}
			slices.SortFunc(want, func(p, q *Agent) int {
				if c := cmp.Compare(round2(GroundDist(a.Pos, p.Pos)), round2(GroundDist(a.Pos, q.Pos))); c != 0 {
					return c
				}
				return strings.Compare(p.ID, q.ID)
			})
			more := max(0, len(want)-limit)
			want = want[:min(len(want), limit)]
			obs := w.Observe(a)
			var got []string
			for _, v := range obs.NearbyAgents {
				got = append(got, v.Name)
				require.Equal(t, round2(GroundDist(a.Pos, w.agentByID[v.Name].Pos)), v.Distance)
			}
			var wantIDs []string
			for _, o := range want {
				wantIDs = append(wantIDs, o.ID)
			}
			require.Equal(t, wantIDs, got, "seed %d, %s", seed, a.ID)
			require.Equal(t, more, obs.NearbyAgentsMore, "seed %d, %s", seed, a.ID)
			if more > 0 {
				crowded++
			}
		}
		if limit < 16 {
			require.Positive(t, crowded, "seed %d: no observer had more agents in view than listed", seed)
		}
	}
}

func TestSelectSmallestPutsTheNSmallestFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for q := 0; q < 2000; q++ {
		keys := make([]uint64, 1+rng.IntN(80))
		for i := range keys {
			keys[i] = uint64(rng.IntN(40))<<32 | uint64(i) // distinct, many equal distances
		}
		if q%3 == 0 {
			slices.Sort(keys) // sorted and reversed inputs too
			if q%2 == 0 {
				slices.Reverse(keys)
			}
		}
		n := rng.IntN(len(keys) + 1)
		want := slices.Sorted(slices.Values(keys))[:n]
		selectSmallest(keys, n)
		got := slices.Clone(keys[:n])
		slices.Sort(got)
		require.Equal(t, want, got, "n=%d of %d", n, len(keys))
	}
}
