package world_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// requireNoOverlaps checks that no two living agents overlap and that no agent
// overlaps an obstacle or leaves the world.
func requireNoOverlaps(t *testing.T, w *world.World) {
	t.Helper()
	r := w.Rules().AgentRadius
	const tol = 2e-4 // collision resolves to within its skin (1e-4)
	ag := w.Agents()
	for i, a := range ag {
		if !a.Alive {
			continue
		}
		b := w.Bounds()
		require.True(t, a.Pos[0] >= b.MinX+r-tol && a.Pos[0] <= b.MaxX-r+tol && a.Pos[2] >= b.MinZ+r-tol && a.Pos[2] <= b.MaxZ-r+tol,
			"tick %d: %s left the world at %v", w.Tick(), a.ID, a.Pos)
		for _, o := range ag[i+1:] {
			if o.Alive {
				require.GreaterOrEqual(t, world.GroundDist(a.Pos, o.Pos), 2*r-tol, "tick %d: %s and %s overlap", w.Tick(), a.ID, o.ID)
			}
		}
		for _, o := range w.Obstacles() {
			if o.Shape == "box" {
				qx := math.Max(o.Pos[0]-o.SizeX/2, math.Min(a.Pos[0], o.Pos[0]+o.SizeX/2))
				qz := math.Max(o.Pos[2]-o.SizeZ/2, math.Min(a.Pos[2], o.Pos[2]+o.SizeZ/2))
				require.GreaterOrEqual(t, math.Hypot(a.Pos[0]-qx, a.Pos[2]-qz), r-tol, "tick %d: %s inside %s at %v", w.Tick(), a.ID, o.Name, a.Pos)
			} else {
				require.GreaterOrEqual(t, world.GroundDist(a.Pos, o.Pos), o.Radius+r-tol, "tick %d: %s inside %s at %v", w.Tick(), a.ID, o.Name, a.Pos)
			}
		}
	}
}

func TestAgentsSharingASpawnPointAreSeparated(t *testing.T) {
	cfg := testutil.Config()
	cfg.Agents = []world.AgentSpec{{ID: "a1"}, {ID: "a2"}, {ID: "a3"}, {ID: "a4"}}
	w := testutil.World(t, cfg)
	requireNoOverlaps(t, w)
}

func TestSpawnsAvoidHazards(t *testing.T) {
	cfg := testutil.Config()
	cfg.Agents = []world.AgentSpec{{ID: "a1", X: 8, Z: -8}} // the centre of Pit1
	w := testutil.World(t, cfg)
	w.Step()
	require.Zero(t, w.Agent("a1").Stats.DamageTaken)
}

func TestFastAgentsDoNotPassThroughEachOther(t *testing.T) {
	cfg := testutil.Config()
	cfg.Obstacles, cfg.Hazards = nil, nil
	cfg.Agents = []world.AgentSpec{{ID: "a1", X: -0.65, Z: 15, Speed: 2}, {ID: "a2", X: 0.65, Z: 15, Speed: 2}}
	w := testutil.World(t, cfg)
	a1, a2 := w.Agent("a1"), w.Agent("a2")
	w.ForceStraightMove(a1, world.Vec3{10, 0, 15})
	w.ForceStraightMove(a2, world.Vec3{-10, 0, 15})
	for i := 0; i < 5; i++ {
		w.Step()
		requireNoOverlaps(t, w)
		require.Less(t, a1.Pos[0], a2.Pos[0], "tick %d: the agents swapped sides", w.Tick())
	}
}

func TestFastAgentsDoNotTunnelThroughThinWalls(t *testing.T) {
	for _, thick := range []float64{0.1, 0.2, 0.5, 1.0} {
		t.Run(fmt.Sprint(thick), func(t *testing.T) {
			cfg := testutil.Config()
			cfg.Obstacles = []world.ObstacleSpec{{Name: "Wall", Shape: "box", X: 0, Z: 10, SizeX: 30, SizeZ: thick}}
			cfg.Hazards = nil
			cfg.Agents = []world.AgentSpec{{ID: "a1", X: 0, Z: 8, Speed: 2}}
			w := testutil.World(t, cfg)
			a := w.Agent("a1")
			w.ForceStraightMove(a, world.Vec3{0.3, 0, 14})
			for i := 0; i < 10; i++ {
				w.Step()
				requireNoOverlaps(t, w)
				require.Less(t, a.Pos[2], 10.0, "tick %d: tunnelled through a %g-thick wall", w.Tick(), thick)
			}
		})
	}
}

func TestCrowdAtDoubleSpeedNeverOverlaps(t *testing.T) {
	cfg := testutil.Config()
	cfg.Agents = nil
	for i := 0; i < 16; i++ {
		cfg.Agents = append(cfg.Agents, world.AgentSpec{ID: fmt.Sprintf("a%02d", i), X: float64(i%4)*3 - 15, Z: float64(i/4)*3 - 15, Speed: 2})
	}
	w := testutil.World(t, cfg)
	// Everybody heads for the same few points across the map, through each other.
	targets := []world.Vec3{{12, 0, 12}, {-12, 0, 12}, {12, 0, -2}, {0, 0, 15}}
	for i, a := range w.Agents() {
		w.MoveTo(a, targets[i%len(targets)], 2)
	}
	for i := 0; i < 150; i++ {
		w.Step()
		requireNoOverlaps(t, w)
	}
}
