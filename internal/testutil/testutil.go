// Package testutil builds small worlds for tests across packages.
package testutil

import (
	"bytes"
	"sync"
	"testing"

	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// Config is a 40×40 flat world centred on 0 with two agents (a1 at the origin,
// a2 at (3, 0)), a berry beside a1, a stone further away, a rock, a pit, a
// furnace and a workbench, and three recipes (one of them takes 3 ticks).
func Config() world.Config {
	return world.Config{
		Name: "test", Seed: 7, TickRate: 10, CellSize: 0.5,
		Bounds: world.Bounds{MinX: -20, MinZ: -20, MaxX: 20, MaxZ: 20},
		Items:  []world.ItemDef{{Name: "berry", Type: "food"}, {Name: "stone", Type: "material"}},
		Recipes: []world.Recipe{
			{Output: "meal", Inputs: map[string]int{"berry": 2}, StationType: "workbench", Ticks: 1},
			{Output: "ingot", Inputs: map[string]int{"ore": 1, "coal": 1}, StationType: "furnace", Ticks: 3},
		},
		Resources: []world.ResourceSpec{
			{Name: "Berry1", ResourceType: "berry", X: 1, Z: 1},
			{Name: "Berry2", ResourceType: "berry", X: -1, Z: 1},
			{Name: "Stone1", ResourceType: "stone", X: 5, Z: 2},
			{Name: "Hidden1", ResourceType: "stone", X: 0, Z: -9}, // behind Rock1, seen from a1
		},
		Stations: []world.StationSpec{
			{Name: "Workbench1", StationType: "workbench", X: -2, Z: -1},
			{Name: "Furnace1", StationType: "furnace", X: 10, Z: 10},
		},
		Obstacles: []world.ObstacleSpec{
			{Name: "Rock1", ObstacleType: "rock", X: 0, Z: -5, Shape: "circle", Radius: 1.5},
			{Name: "Wall1", ObstacleType: "wall", X: -10, Z: 0, Shape: "box", SizeX: 1, SizeZ: 12},
		},
		Hazards: []world.HazardSpec{
			{Name: "Pit1", HazardType: "pit", X: 8, Z: -8, Radius: 1.5, EntryDamage: 25, DamagePerSecond: 5},
		},
		Agents: []world.AgentSpec{{ID: "a1", Team: "red", X: 0, Z: 0}, {ID: "a2", Team: "blue", X: 3, Z: 0}},
		Objective: world.Objective{TimeLimit: 500, SuccessMetrics: map[string]world.MetricTarget{
			"resources_collected": {Target: 2, Weight: 1, Required: true},
		}},
	}
}

// World builds a world from cfg, failing the test on error.
func World(t testing.TB, cfg world.Config) *world.World {
	t.Helper()
	w, err := world.New(cfg)
	require.NoError(t, err)
	return w
}

// WalkTo walks an agent to (x, z) at double speed, stepping the world.
// It fails the test if the agent does not arrive within the tick budget.
func WalkTo(t testing.TB, w *world.World, id string, x, z float64) {
	t.Helper()
	a := w.Agent(id)
	require.NotNil(t, a)
	res := w.MoveTo(a, world.Vec3{x, 0, z}, 2)
	require.True(t, res.Success, "move_to: %+v", res)
	for i := 0; i < 2000 && w.GroundDistTo(a, x, z) > w.Rules().ArrivalTolerance; i++ {
		w.Step()
	}
	require.LessOrEqual(t, w.GroundDistTo(a, x, z), w.Rules().ArrivalTolerance, "agent %s did not reach (%g, %g)", id, x, z)
}

// SyncBuffer is a bytes.Buffer safe for a writer and a reader at once: a
// log or a command's output that a test reads while it is written.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
