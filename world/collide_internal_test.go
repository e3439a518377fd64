package world

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/solarlune/resolv"
	"github.com/stretchr/testify/require"
)

// TestBodyGridMatchesResolv checks the broad phase against resolv's Space,
// which it replaces: after every tick of random worlds (bounds off the
// origin, boxes and circles of all sizes, agents walking into each other,
// into obstacles and off the edges, some dying), every cell lists the
// obstacles and living agents that a Space holding the same shapes has in it.
func TestBodyGridMatchesResolv(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 5))
		b := Bounds{MinX: -15.3, MinZ: -9.7, MaxX: 14.9 + float64(seed), MaxZ: 17.2}
		cfg := Config{Name: "grid", Seed: seed, CellSize: 0.5, Bounds: b}
		for i := range 14 {
			x, z := b.MinX+rng.Float64()*b.Width(), b.MinZ+rng.Float64()*b.Depth()
			if i%2 == 0 {
				cfg.Obstacles = append(cfg.Obstacles, ObstacleSpec{Name: fmt.Sprintf("W%d", i), X: x, Z: z, Shape: "box",
					SizeX: 0.3 + 9*rng.Float64(), SizeZ: 0.3 + 4*rng.Float64()})
			} else {
				cfg.Obstacles = append(cfg.Obstacles, ObstacleSpec{Name: fmt.Sprintf("T%d", i), X: x, Z: z, Radius: 0.2 + 3*rng.Float64()})
			}
		}
		// Seed 4 is a crowd: agents that start in and keep walking into a
		// few cells, many to a cell.
		crowd := seed == 4
		for i := range 60 {
			x, z := b.MinX+rng.Float64()*b.Width(), b.MinZ+rng.Float64()*b.Depth()
			if crowd {
				x, z = rng.Float64()*6, rng.Float64()*6
			}
			cfg.Agents = append(cfg.Agents, AgentSpec{ID: fmt.Sprintf("a%d", i), X: x, Z: z, Speed: 1 + 2*rng.Float64()})
		}
		w, err := New(cfg)
		require.NoError(t, err)
		crowded := 0
		for tick := range 60 {
			if tick%10 == 0 {
				for _, a := range w.agents {
					to := Vec3{b.MinX - 5 + rng.Float64()*(b.Width()+10), 0, b.MinZ - 5 + rng.Float64()*(b.Depth()+10)}
					if crowd && tick%20 == 0 {
						to = Vec3{2 + rng.Float64(), 0, 2 + rng.Float64()}
					}
					w.ForceStraightMove(a, to)
				}
			}
			if tick%15 == 7 {
				w.Damage(w.agents[rng.IntN(len(w.agents))], 1e9, "test")
			}
			w.Step()
			requireGridIsResolvs(t, w, fmt.Sprintf("seed %d, tick %d", seed, tick))
			for _, c := range w.grid.agents {
				if len(c) > 7 {
					crowded++
				}
			}
		}
		if crowd {
			require.Positive(t, crowded, "no cell held more than 7 agents: the crowd is no crowd")
		}
	}
}

func requireGridIsResolvs(t *testing.T, w *World, at string) {
	t.Helper()
	var want [][]shapeTag
	withResolv(func() {
		sp := w.obstacleSpace()
		for _, a := range w.agents {
			if a.Alive {
				s := resolv.NewCircle(a.Pos[0]-w.bounds.MinX, a.Pos[2]-w.bounds.MinZ, w.rules.AgentRadius)
				s.SetData(shapeTag{kindAgent, a.index})
				sp.Add(s)
			}
		}
		require.Nil(t, sp.Cell(w.grid.cols, 0), "%s: the grid is as wide as the Space", at)
		require.Nil(t, sp.Cell(0, w.grid.rows), "%s: the grid is as deep as the Space", at)
		for cz := range w.grid.rows {
			for cx := range w.grid.cols {
				var tags []shapeTag
				for _, s := range sp.Cell(cx, cz).Shapes {
					tags = append(tags, s.Data().(shapeTag))
				}
				want = append(want, tags)
			}
		}
	})
	less := func(a, b shapeTag) int {
		if a.kind != b.kind {
			return int(a.kind) - int(b.kind)
		}
		return a.index - b.index
	}
	for c, tags := range want {
		var got []shapeTag
		for _, i := range w.grid.obsIdx[w.grid.obsStart[c]:w.grid.obsStart[c+1]] {
			got = append(got, shapeTag{kindObstacle, int(i)})
		}
		for _, i := range w.grid.agents[c] {
			got = append(got, shapeTag{kindAgent, int(i)})
		}
		slices.SortFunc(got, less)
		slices.SortFunc(tags, less)
		require.Equal(t, tags, got, "%s: cell (%d, %d)", at, c%w.grid.cols, c/w.grid.cols)
	}
	// nearBodies against the Space's cells, with each body read from its
	// agent or obstacle as it is now.
	for _, a := range w.agents {
		if !a.Alive {
			continue
		}
		reach := 0.3 + 2*float64(a.index%4)
		x, z := a.Pos[0], a.Pos[2]
		cx0 := int(math.Floor((x - reach - w.bounds.MinX) / physicsCell))
		cz0 := int(math.Floor((z - reach - w.bounds.MinZ) / physicsCell))
		cx1 := int(math.Floor((x + reach - w.bounds.MinX) / physicsCell))
		cz1 := int(math.Floor((z + reach - w.bounds.MinZ) / physicsCell))
		var tags []shapeTag
		for cz := max(cz0, 0); cz <= min(cz1, w.grid.rows-1); cz++ {
			for cx := max(cx0, 0); cx <= min(cx1, w.grid.cols-1); cx++ {
				for _, t := range want[cz*w.grid.cols+cx] {
					if t != (shapeTag{kindAgent, a.index}) {
						tags = append(tags, t)
					}
				}
			}
		}
		slices.SortFunc(tags, less)
		tags = slices.Compact(tags)
		var bodies []body
		for _, t := range tags {
			b := body{tag: t}
			if t.kind == kindAgent {
				o := w.agents[t.index]
				b.x, b.z, b.r = o.Pos[0], o.Pos[2], w.rules.AgentRadius
			} else {
				o := w.obstacles[t.index]
				b.x, b.z = o.Pos[0], o.Pos[2]
				if o.Shape == "box" {
					b.hx, b.hz = o.SizeX/2, o.SizeZ/2
				} else {
					b.r = o.Radius
				}
			}
			bodies = append(bodies, b)
		}
		require.Equal(t, bodies, w.nearBodies(x, z, reach, a.index, nil, &w.walk), "%s: the bodies near %s", at, a.ID)
	}
}

// TestSortShortSortsAndDropsRepeats checks sortShort against the standard
// library on random short lists with many repeats.
func TestSortShortSortsAndDropsRepeats(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		s := make([]int32, rng.IntN(9))
		for i := range s {
			s[i] = int32(rng.IntN(6))
		}
		want := slices.Compact(slices.Sorted(slices.Values(s)))
		require.Equal(t, fmt.Sprint(want), fmt.Sprint(sortShort(slices.Clone(s))), "%v", s)
	}
}
