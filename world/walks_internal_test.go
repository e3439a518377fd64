package world

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// partRunners run a parallel step's parts: on two goroutines at once, one
// after the other in both orders (a part that depended on the other's walks
// would then differ from Step in one of them), and both on one Worker.
var partRunners = map[string]func(workers [2]*Worker) PartRunner{
	"concurrent": func(workers [2]*Worker) PartRunner {
		return func(n int, fn func(k *Worker, i int)) {
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { fn(workers[i], i) })
			}
			wg.Wait()
		}
	},
	"in order": func(workers [2]*Worker) PartRunner {
		return func(n int, fn func(k *Worker, i int)) {
			for i := range n {
				fn(workers[i], i)
			}
		}
	},
	"one worker for both": func(workers [2]*Worker) PartRunner {
		return func(n int, fn func(k *Worker, i int)) {
			for i := range n {
				fn(workers[0], i) // the engine's pool may give both parts to one goroutine
			}
		}
	},
	"reversed": func(workers [2]*Worker) PartRunner {
		return func(n int, fn func(k *Worker, i int)) {
			for i := n - 1; i >= 0; i-- {
				fn(workers[i], i)
			}
		}
	},
}

// crowdConfig is a world of many agents in crowds around the middle rows of
// its physics grid (where StepWith cuts it), on the edges and corners of
// physics cells, among walls, trees and a pit that kills some of them.
func crowdConfig(seed uint64, agents int) Config {
	rng := rand.New(rand.NewPCG(seed, 19))
	cfg := Config{Name: "walks", Seed: seed, CellSize: 0.5, Bounds: Bounds{MinX: -80, MinZ: -80, MaxX: 80, MaxZ: 80}}
	for i := range 40 {
		x, z := rng.Float64()*150-75, rng.Float64()*150-75
		if i%2 == 0 {
			cfg.Obstacles = append(cfg.Obstacles, ObstacleSpec{Name: fmt.Sprintf("W%d", i), X: x, Z: z, Shape: "box", SizeX: 0.6, SizeZ: 2 + 6*rng.Float64()})
		} else {
			cfg.Obstacles = append(cfg.Obstacles, ObstacleSpec{Name: fmt.Sprintf("T%d", i), X: x, Z: z, Radius: 0.4 + rng.Float64()})
		}
	}
	cfg.Hazards = []HazardSpec{{Name: "pit", HazardType: "pit", X: 6, Z: 1, Radius: 3, EntryDamage: 40, DamagePerSecond: 60}}
	for i := range agents {
		var x, z float64
		switch i % 4 {
		case 0: // on a cell edge or corner
			x, z = float64(4*(rng.IntN(38)-19)), float64(4*(rng.IntN(38)-19))
		case 1: // a crowd across the middle rows
			x, z = rng.NormFloat64()*12, rng.NormFloat64()*4
		default:
			x, z = rng.Float64()*156-78, rng.Float64()*156-78
		}
		cfg.Agents = append(cfg.Agents, AgentSpec{ID: fmt.Sprintf("a%03d", i), X: x, Z: z})
	}
	return cfg
}

// TestStepWithWalksAsStep: a world stepped with its walks on two parts
// (StepWith) stays exactly the world stepped by Step, tick after tick:
// agents ordered to walk across one another, into the crowds, through the
// cut, at different speeds, some dying in the pit, some piled on one spot
// and pushed apart. The parts and the walks
// left for later must all be used, or the test would prove nothing.
func TestStepWithWalksAsStep(t *testing.T) {
	for _, name := range stepWithRunners {
		runner := partRunners[name]
		for seed := uint64(1); seed <= stepWithSeeds; seed++ {
			t.Run(fmt.Sprintf("%s/seed %d", name, seed), func(t *testing.T) {
				cfg := crowdConfig(seed, 420)
				want, err := New(cfg)
				require.NoError(t, err)
				got, err := New(cfg)
				require.NoError(t, err)
				run := runner([2]*Worker{got.NewWorker(), got.NewWorker()})
				rng := rand.New(rand.NewPCG(seed, 23))
				var parts [2]int
				later := 0
				for tick := range 120 {
					for range 40 { // the same orders to both
						i := rng.IntN(len(cfg.Agents))
						p := want.agents[i].Pos
						target := Vec3{p[0] + rng.NormFloat64()*8, 0, p[2] + rng.NormFloat64()*8}
						switch rng.IntN(6) {
						case 0: // somebody else's spot
							target = want.agents[rng.IntN(len(want.agents))].Pos
						case 1, 2: // a jam: where many others go, on the cut
							target = Vec3{float64(12*rng.IntN(3) - 12), 0, 0.5}
						case 3: // across the cut
							target[2] = -target[2]
						}
						target[0], target[2] = min(max(target[0], -79), 79), min(max(target[2], -79), 79)
						mul := 0.5 + 1.5*rng.Float64()
						require.Equal(t, want.MoveTo(want.agents[i], target, mul), got.MoveTo(got.agents[i], target, mul))
					}
					if tick%10 == 5 { // a pile: pushes out of deep overlaps, on the cut
						x := rng.Float64()*40 - 20
						for range 12 {
							i := rng.IntN(len(cfg.Agents))
							for _, w := range []*World{want, got} {
								if a := w.agents[i]; a.Alive {
									w.setPos(a, x+0.01*float64(i%5), 0.3)
									w.agentIdxDirty = true
								}
							}
						}
					}
					want.Step()
					got.StepWith(run)
					parts[0] += len(got.walks.parts[0])
					parts[1] += len(got.walks.parts[1])
					later += len(got.walks.later)
					at := fmt.Sprintf("tick %d", tick)
					require.Equal(t, want.TakeEvents(), got.TakeEvents(), at)
					for i, a := range want.agents {
						b := got.agents[i]
						require.Equal(t, a.Pos, b.Pos, "%s: %s", at, a.ID)
						require.Equal(t, a.Vel, b.Vel, "%s: %s", at, a.ID)
						require.Equal(t, a.status, b.status, "%s: %s", at, a.ID)
						require.Equal(t, a.action.path, b.action.path, "%s: %s", at, a.ID)
					}
					require.Equal(t, want.StateHash(), got.StateHash(), at)
				}
				require.Zero(t, got.walks.escapes.Load(), "a walk left its footprint")
				dead := 0
				for _, a := range got.agents {
					if !a.Alive {
						dead++
					}
				}
				t.Logf("walks: parts %d and %d, later %d; %d dead", parts[0], parts[1], later, dead)
				require.Positive(t, parts[0])
				require.Positive(t, parts[1])
				require.Positive(t, later, "no walk was left for later")
				require.Positive(t, dead, "nobody died: the dead are not tried")
			})
		}
	}
}

// TestAWalkGoesNoFurtherThanItsSlack: agents piled on one spot, each pushed
// out of the others one after another, and one put in the middle of a wide
// block, which a push would take out by its nearest face, move no further in
// a tick than their speed, the skin and walkSlack along either axis, which
// is what lets a parallel step know the cells a walk can change.
func TestAWalkGoesNoFurtherThanItsSlack(t *testing.T) {
	cfg := Config{Name: "pile", Seed: 1, CellSize: 0.5, Bounds: Bounds{MinX: -20, MinZ: -20, MaxX: 20, MaxZ: 20},
		Obstacles: []ObstacleSpec{{Name: "block", X: -12, Z: -12, Shape: "box", SizeX: 12, SizeZ: 12}}}
	for i := range 40 {
		cfg.Agents = append(cfg.Agents, AgentSpec{ID: fmt.Sprintf("p%02d", i), X: float64(i%8) - 4, Z: float64(i/8) - 4})
	}
	w, err := New(cfg)
	require.NoError(t, err)
	for _, a := range w.agents {
		w.setPos(a, 0.01*float64(a.index%3), 0) // a pile: deep overlaps
		require.True(t, w.MoveTo(a, Vec3{15, 0, 15}, 2).Success)
	}
	inside := w.agents[0]
	w.setPos(inside, -12, -12.5)
	w.agentIdxDirty = true
	start := make([]Vec3, len(w.agents))
	speed := make([]float64, len(w.agents))
	for i, a := range w.agents {
		start[i], speed[i] = a.Pos, a.action.speed
	}
	w.Step()
	moved := 0
	for i, a := range w.agents {
		lim := speed[i] + collisionSkin + walkSlack(w.rules.AgentRadius)
		require.LessOrEqual(t, math.Abs(a.Pos[0]-start[i][0]), lim, a.ID)
		require.LessOrEqual(t, math.Abs(a.Pos[2]-start[i][2]), lim, a.ID)
		if a.Pos != start[i] {
			moved++
		}
	}
	require.Positive(t, moved, "the pile did not move")
}

// TestSetParallelWalksOff: with the parallel walks turned off, StepWith
// steps as Step does without calling its runner; on again, it calls it.
func TestSetParallelWalksOff(t *testing.T) {
	w, err := New(crowdConfig(1, 300))
	require.NoError(t, err)
	calls := 0
	run := func(n int, fn func(k *Worker, i int)) {
		calls++
		for i := range n {
			fn(w.NewWorker(), i)
		}
	}
	w.SetParallelWalks(false)
	w.StepWith(run)
	require.Zero(t, calls)
	w.SetParallelWalks(true)
	w.StepWith(run)
	require.Positive(t, calls)
}
