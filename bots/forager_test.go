package bots_test

import (
	"context"
	"testing"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

func newForager() *bots.Forager {
	return bots.NewForager(bots.Info{AgentID: "a1", Seed: 1,
		Bounds: world.Bounds{MinX: -25, MinZ: -25, MaxX: 25, MaxZ: 25},
		Rules:  world.Rules{PerceptionRadius: 10, CollectRange: 2, AgentRadius: 0.4}})
}

func baseObs() *world.Observation {
	return &world.Observation{Tick: 5, AgentID: "a1", Alive: true, Position: world.Vec3{0, 0, 0},
		PerceptionRadius: 10, InventoryCap: 50, CurrentAction: world.ActionStatus{Status: "idle"}}
}

func target(t *testing.T, d world.Decision) world.Vec3 {
	t.Helper()
	require.Equal(t, "move_to", d.Tool)
	arr := d.Params["target"].([]any)
	return world.Vec3{arr[0].(float64), arr[1].(float64), arr[2].(float64)}
}

func TestForagerCollectsWhatIsInReach(t *testing.T) {
	obs := baseObs()
	obs.NearbyResources = []world.EntityView{{Name: "Berry1", Type: "resource", ResourceType: "berry", Position: world.Vec3{1, 0, 1}, Distance: 1.41}}
	d := newForager().Decide(context.Background(), obs)
	require.Equal(t, "collect", d.Tool)
	require.Equal(t, "Berry1", d.Params["target_name"])
	require.NotEmpty(t, d.Reasoning)
}

func TestForagerWalksToTheNearestResource(t *testing.T) {
	obs := baseObs()
	obs.NearbyResources = []world.EntityView{
		{Name: "Near", Type: "resource", Position: world.Vec3{4, 0, 0}, Distance: 4},
		{Name: "Far", Type: "resource", Position: world.Vec3{0, 0, 8}, Distance: 8},
	}
	f := newForager()
	require.Equal(t, world.Vec3{4, 0, 0}, target(t, f.Decide(context.Background(), obs)))
	// While walking there it keeps the move going instead of re-planning.
	obs.Tick++
	obs.CurrentAction.Status = "moving"
	require.Equal(t, "idle", f.Decide(context.Background(), obs).Tool)
}

func TestForagerLeavesAnotherAgentsCloserResource(t *testing.T) {
	obs := baseObs()
	obs.NearbyResources = []world.EntityView{
		{Name: "Contested", Type: "resource", Position: world.Vec3{5, 0, 0}, Distance: 5},
		{Name: "Free", Type: "resource", Position: world.Vec3{-7, 0, 0}, Distance: 7},
	}
	obs.NearbyAgents = []world.EntityView{{Name: "a2", Type: "agent", Position: world.Vec3{5.5, 0, 0}, Distance: 5.5}}
	require.Equal(t, world.Vec3{-7, 0, 0}, target(t, newForager().Decide(context.Background(), obs)))
}

func TestForagerFleesHazards(t *testing.T) {
	obs := baseObs()
	obs.NearbyHazards = []world.EntityView{{Name: "Pit1", Type: "hazard", HazardType: "pit", Position: world.Vec3{1, 0, 0}, Distance: 1, Radius: 1.5}}
	obs.NearbyResources = []world.EntityView{{Name: "Berry1", Type: "resource", Position: world.Vec3{1.5, 0, 0}, Distance: 1.5}}
	to := target(t, newForager().Decide(context.Background(), obs))
	require.Less(t, to[0], -3.0, "it moves away from the pit, even with a berry in reach")
}

func TestForagerExploresAndUsesTheNearestReachablePoint(t *testing.T) {
	f := newForager()
	obs := baseObs()
	d := f.Decide(context.Background(), obs)
	goal := target(t, d)
	require.Equal(t, "no resource in sight, exploring unseen ground", d.Reasoning)
	// The exploration point turns out to be inside a rock.
	obs.Tick++
	obs.LastActionResult = &world.ActionResult{Tool: "move_to", Tick: obs.Tick - 1, ErrorCode: world.CodeNoPath,
		ErrorMessage: "No path", Data: map[string]any{"nearest_reachable": []any{goal[0] + 1, 0.0, goal[2]}}}
	require.Equal(t, world.Vec3{goal[0] + 1, 0, goal[2]}, target(t, f.Decide(context.Background(), obs)))
}

func TestForagerIsDeterministic(t *testing.T) {
	a, b := newForager(), newForager()
	for i := 0; i < 20; i++ {
		obs := baseObs()
		obs.Tick = i
		obs.Position = world.Vec3{float64(i), 0, float64(-i)}
		require.Equal(t, a.Decide(context.Background(), obs), b.Decide(context.Background(), obs))
	}
}

func TestDeadOrBusyForagerIdles(t *testing.T) {
	obs := baseObs()
	obs.Alive = false
	require.Equal(t, "idle", newForager().Decide(context.Background(), obs).Tool)
	obs = baseObs()
	obs.CurrentAction.Status = "crafting"
	require.Equal(t, "idle", newForager().Decide(context.Background(), obs).Tool)
}

func TestNewKnowsTheBuiltInKinds(t *testing.T) {
	// Kinds are sorted; the components' bots (economist, trader, ...) join
	// the list as they are added.
	require.Subset(t, bots.Kinds(), []string{"capture_team", "crafter", "economist", "forager", "idle"})
	require.IsIncreasing(t, bots.Kinds())
	_, err := bots.New("wizard", bots.Info{})
	require.ErrorContains(t, err, `unknown bot kind "wizard"`)
}
