package world_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// navMargin is the clearance the planner keeps beyond the agent's radius.
const navMargin = 0.05

// obstacleDist is the exact distance from (x, z) to an obstacle's shape.
func obstacleDist(o world.ObstacleSpec, x, z float64) float64 {
	if o.Shape == "box" {
		dx := math.Max(math.Abs(x-o.X)-o.SizeX/2, 0)
		dz := math.Max(math.Abs(z-o.Z)-o.SizeZ/2, 0)
		return math.Hypot(dx, dz)
	}
	return math.Max(math.Hypot(x-o.X, z-o.Z)-o.Radius, 0)
}

// segmentDist is the smallest distance from the obstacle to the segment
// a→b, sampled finely (every 0.002 units) and refined at the minimum.
func segmentDist(o world.ObstacleSpec, a, b world.Vec3) float64 {
	n := int(world.GroundDist(a, b)/0.002) + 1
	best := math.Inf(1)
	for k := 0; k <= n; k++ {
		t := float64(k) / float64(n)
		best = math.Min(best, obstacleDist(o, a[0]+t*(b[0]-a[0]), a[2]+t*(b[2]-a[2])))
	}
	return best
}

// TestMoveToNearObstacles samples move_to targets around obstacles of every
// shape and many sizes, on two cell sizes, and holds the world to the exact
// geometric answer: a target is refused as inside an obstacle exactly when
// an agent standing there would come closer to the obstacle than its radius
// plus the planning margin; every other target gets a path, every segment
// of which keeps at least the agent's radius from the obstacle (so the
// walk never collides), and sampled moves are walked to arrival.
func TestMoveToNearObstacles(t *testing.T) {
	shapes := []world.ObstacleSpec{
		{Shape: "circle", Radius: 0.3}, {Shape: "circle", Radius: 0.8}, {Shape: "circle", Radius: 1.5}, {Shape: "circle", Radius: 3.2},
		{Shape: "box", SizeX: 1, SizeZ: 1}, {Shape: "box", SizeX: 0.5, SizeZ: 3}, {Shape: "box", SizeX: 4, SizeZ: 2.2}, {Shape: "box", SizeX: 0.3, SizeZ: 0.3},
	}
	rng := rand.New(rand.NewPCG(14, 1))
	refused, planned, walked := 0, 0, 0
	for _, cell := range []float64{0.5, 1} {
		for i, o := range shapes {
			o.Name, o.ObstacleType = "Obstacle", "rock"
			o.X, o.Z = 0.37+0.11*float64(i), -0.21+0.07*float64(i) // off the cell grid
			cfg := testutil.Config()
			cfg.CellSize = cell
			cfg.Obstacles = []world.ObstacleSpec{o}
			cfg.Hazards, cfg.Resources, cfg.Stations = nil, nil, nil
			cfg.Agents = []world.AgentSpec{{ID: "a1", X: -9, Z: -9}}
			w := testutil.World(t, cfg)
			reg, err := tools.ForWorld(w)
			require.NoError(t, err)
			r := w.Rules().AgentRadius
			a := w.Agent("a1")
			ex, ez := math.Max(o.SizeX/2, o.Radius)+1, math.Max(o.SizeZ/2, o.Radius)+1
			for k := 0; k < 150; k++ {
				// Targets in a band around the grown shape, half of them
				// within 0.05 of its boundary.
				x, z := o.X+(2*rng.Float64()-1)*ex, o.Z+(2*rng.Float64()-1)*ez
				d := obstacleDist(o, x, z)
				if k%2 == 0 && math.Abs(d-(r+navMargin)) > 0.05 {
					k--
					continue
				}
				if math.Hypot(x-a.Pos[0], z-a.Pos[2]) <= w.Rules().ArrivalTolerance+0.01 {
					continue // "arrived" without planning: not a test of the planner
				}
				name := fmt.Sprintf("cell %g, %s %g/%gx%g, target (%.4f, %.4f) at %.4f", cell, o.Shape, o.Radius, o.SizeX, o.SizeZ, x, z, d)
				res := reg.Decide(w, "a1", w.Tick(), world.Decision{Tool: "move_to", Params: map[string]any{"target": []any{x, 0.0, z}}})
				if d < r+navMargin {
					require.False(t, res.Success, name)
					require.Equal(t, world.CodeNoPath, res.ErrorCode, name)
					require.Contains(t, res.ErrorMessage, "inside an obstacle", name)
					refused++
					continue
				}
				require.True(t, res.Success, "%s: %s", name, res.ErrorMessage)
				planned++
				prev := a.Pos
				for _, p := range a.Action().Path {
					require.GreaterOrEqual(t, segmentDist(o, prev, p), r, "%s: segment %v→%v", name, prev, p)
					prev = p
				}
				if k%15 == 1 {
					for tick := 0; tick < 400 && a.Action().Status == "moving"; tick++ {
						w.Step()
						require.GreaterOrEqual(t, obstacleDist(o, a.Pos[0], a.Pos[2]), r, name)
					}
					require.Equal(t, "arrived", a.Action().Status, name)
					walked++
				}
			}
		}
	}
	t.Logf("%d targets refused, %d planned, %d walked", refused, planned, walked)
	require.Greater(t, refused, 300)
	require.Greater(t, planned, 1000)
}

// TestSeedMoveToForaging is the seed's literal move_to (12, 0, 6) in
// foraging seed 1: 1.41 from Tree2's centre, where an agent needs 0.8 +
// 0.4 + 0.05 = 1.25. It must plan and arrive.
func TestSeedMoveToForaging(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: 1})
	require.NoError(t, err)
	reg, err := tools.ForWorld(w)
	require.NoError(t, err)
	a := w.Agents()[0]
	res := reg.Decide(w, a.ID, w.Tick(), world.Decision{Tool: "move_to", Params: map[string]any{"target": []any{12.0, 0.0, 6.0}}})
	require.True(t, res.Success, res.ErrorMessage)
	for tick := 0; tick < 600 && a.Action().Status == "moving"; tick++ {
		w.Step()
	}
	require.Equal(t, "arrived", a.Action().Status)
	require.InDelta(t, 12, a.Pos[0], w.Rules().ArrivalTolerance+1e-9)
	require.InDelta(t, 6, a.Pos[2], w.Rules().ArrivalTolerance+1e-9)
}
