package bots_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

func newCrafter() *bots.Crafter {
	return bots.NewCrafter(bots.Info{AgentID: "a1", Seed: 1,
		Bounds: world.Bounds{MinX: -20, MinZ: -20, MaxX: 20, MaxZ: 20},
		Rules:  world.Rules{PerceptionRadius: 10, CollectRange: 2, CraftRange: 2.5, AgentRadius: 0.4, MaxQueryRadius: 50}})
}

// craftObs is an observation of the crafting scenario's recipes and objective.
func craftObs() *world.Observation {
	obs := baseObs()
	obs.InventoryCap = 20
	obs.Inventory = map[string]int{}
	obs.AvailableRecipes = map[string]world.RecipeView{
		"iron_ingot":    {Inputs: map[string]int{"iron_ore": 1, "coal": 1}, StationType: "furnace", Ticks: 30, OutputCount: 1},
		"iron_rod":      {Inputs: map[string]int{"iron_ingot": 1}, StationType: "anvil", Ticks: 20, OutputCount: 1},
		"wooden_handle": {Inputs: map[string]int{"wood": 2}, StationType: "workbench", Ticks: 20, OutputCount: 1},
		"iron_sword":    {Inputs: map[string]int{"iron_rod": 1, "wooden_handle": 1}, StationType: "anvil", Ticks: 40, OutputCount: 1},
	}
	obs.Objective = &world.Objective{SuccessMetrics: map[string]world.MetricTarget{
		"crafted.iron_sword": {Target: 1, Weight: 2, Required: true},
		"health":             {Target: 50, Required: true},
		"time":               {Target: 60, LowerIsBetter: true},
	}}
	obs.CurrentProgress = map[string]float64{"crafted.iron_sword": 0, "health": 100}
	return obs
}

func station(name, typ string, x, z float64, inUse bool) world.EntityView {
	return world.EntityView{Name: name, Type: "station", StationType: typ, Position: world.Vec3{x, 0, z}, Distance: math.Hypot(x, z), InUse: &inUse}
}

func resource(name, typ string, x, z float64) world.EntityView {
	return world.EntityView{Name: name, Type: "resource", ResourceType: typ, Position: world.Vec3{x, 0, z}, Distance: math.Hypot(x, z), Amount: 1}
}

func TestCrafterDecisions(t *testing.T) {
	cases := []struct {
		name      string
		setup     func(o *world.Observation)
		tool      string
		params    map[string]any
		reasoning string // a part of the reasoning
	}{
		{
			name: "scans the world when it knows nothing",
			tool: "query_world", params: map[string]any{"radius": 50.0},
			reasoning: "scanning for stations and resources",
		},
		{
			name: "collects a needed resource in reach and leaves an unneeded one",
			setup: func(o *world.Observation) {
				o.NearbyResources = []world.EntityView{resource("Stone1", "stone", 1, 0), resource("Wood1", "wood", 1.5, 0)}
			},
			tool: "collect", params: map[string]any{"target_name": "Wood1"},
			reasoning: "to gather: 1 coal, 1 iron_ore, 2 wood; to craft: iron_ingot, iron_rod, wooden_handle, iron_sword",
		},
		{
			name: "crafts at a free station in range",
			setup: func(o *world.Observation) {
				o.Inventory = map[string]int{"wood": 2}
				o.NearbyStations = []world.EntityView{station("Workbench1", "workbench", 2, 0, false)}
			},
			tool: "craft", params: map[string]any{"item_name": "wooden_handle", "station_name": "Workbench1"},
		},
		{
			name: "plans through the intermediate items",
			setup: func(o *world.Observation) {
				o.Inventory = map[string]int{"iron_ingot": 1, "wooden_handle": 1}
				o.NearbyStations = []world.EntityView{station("Anvil1", "anvil", 0, 2, false)}
			},
			tool: "craft", params: map[string]any{"item_name": "iron_rod", "station_name": "Anvil1"},
			reasoning: "to craft: iron_rod, iron_sword",
		},
		{
			name: "assembles the goal",
			setup: func(o *world.Observation) {
				o.Inventory = map[string]int{"iron_rod": 1, "wooden_handle": 1, "wood": 3}
				o.NearbyStations = []world.EntityView{station("Anvil1", "anvil", 0, 2, false), station("Workbench1", "workbench", 1, 0, false)}
			},
			tool: "craft", params: map[string]any{"item_name": "iron_sword", "station_name": "Anvil1"},
		},
		{
			name: "walks to a station out of range",
			setup: func(o *world.Observation) {
				o.Inventory = map[string]int{"iron_rod": 1, "wooden_handle": 1}
				o.NearbyStations = []world.EntityView{station("Anvil1", "anvil", 6, 0, false)}
			},
			tool: "move_to", params: map[string]any{"target": []any{5.0, 0.0, 0.0}},
			reasoning: "going to Anvil1 to craft iron_sword",
		},
		{
			name: "waits beside a station in use when nothing else is left",
			setup: func(o *world.Observation) {
				o.Inventory = map[string]int{"iron_rod": 1, "wooden_handle": 1}
				o.NearbyStations = []world.EntityView{station("Anvil1", "anvil", 0, 3, true)}
			},
			tool: "idle", reasoning: "waiting for Anvil1, in use by another agent",
		},
		{
			name: "stops beside a station in use",
			setup: func(o *world.Observation) {
				o.Inventory = map[string]int{"iron_rod": 1, "wooden_handle": 1}
				o.NearbyStations = []world.EntityView{station("Anvil1", "anvil", 0, 3, true)}
				o.CurrentAction = world.ActionStatus{Tool: "move_to", Status: "moving"}
			},
			tool: "move_to", params: map[string]any{"target": []any{0.0, 0.0, 0.0}},
			reasoning: "Anvil1 is in use by another agent; stopping beside it to wait",
		},
		{
			name: "gathers while the station it needs is in use",
			setup: func(o *world.Observation) {
				o.Inventory = map[string]int{"iron_ingot": 1}
				o.NearbyStations = []world.EntityView{station("Anvil1", "anvil", 0, 2, true)}
				o.NearbyResources = []world.EntityView{resource("Wood1", "wood", -6, 0)}
			},
			tool: "move_to", params: map[string]any{"target": []any{-6.0, 0.0, 0.0}},
			reasoning: "going to collect Wood1 (wood)",
		},
		{
			name: "idles while crafting",
			setup: func(o *world.Observation) {
				o.CurrentAction = world.ActionStatus{Tool: "craft", Status: "crafting", Item: "iron_sword", Ticks: 12}
				o.NearbyStations = []world.EntityView{station("Anvil1", "anvil", 0, 1, false)}
			},
			tool: "idle", reasoning: "crafting iron_sword, 12 ticks left",
		},
		{
			name: "steps out of a hazard before anything else",
			setup: func(o *world.Observation) {
				o.Inventory = map[string]int{"wood": 2}
				o.NearbyStations = []world.EntityView{station("Workbench1", "workbench", 2, 0, false)}
				o.NearbyHazards = []world.EntityView{{Name: "Lava1", Type: "hazard", HazardType: "lava", Position: world.Vec3{-1, 0, 0}, Distance: 1, Radius: 1.5}}
			},
			tool: "move_to", params: map[string]any{"target": []any{3.5, 0.0, 0.0}},
			reasoning: "too close to Lava1 (lava), moving away",
		},
		{
			name: "stops making things once the objective is met",
			setup: func(o *world.Observation) {
				o.CurrentProgress["crafted.iron_sword"] = 1
				o.Inventory = map[string]int{"iron_sword": 1, "wood": 2}
				o.NearbyStations = []world.EntityView{station("Workbench1", "workbench", 2, 0, false)}
				o.NearbyResources = []world.EntityView{resource("Wood1", "wood", 1, 0)}
			},
			tool: "move_to", reasoning: "the objective's items are made; moving out of the others' way",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obs := craftObs()
			if c.setup != nil {
				c.setup(obs)
			}
			d := newCrafter().Decide(context.Background(), obs)
			require.Equal(t, c.tool, d.Tool, d.Reasoning)
			if c.params != nil {
				require.Equal(t, c.params, d.Params)
			}
			require.Contains(t, d.Reasoning, c.reasoning)
		})
	}
}

func TestCrafterUsesItsScanAndKeepsItsTarget(t *testing.T) {
	c := newCrafter()
	obs := craftObs()
	require.Equal(t, "query_world", c.Decide(context.Background(), obs).Tool)
	// The scan finds a wood pile, a stone and the stations out of sight.
	obs = craftObs()
	obs.Tick++
	obs.QueryResult = &world.QueryResult{Entities: []world.EntityView{
		resource("Stone1", "stone", 3, 0), resource("Wood1", "wood", 0, 12), resource("Ore1", "iron_ore", -15, 0),
		station("Anvil1", "anvil", 14, 0, false),
	}}
	require.Equal(t, world.Vec3{0, 0, 12}, target(t, c.Decide(context.Background(), obs)))
	// On the way, a nearer wood pile comes into view; the crafter keeps going.
	obs = craftObs()
	obs.Tick += 2
	obs.CurrentAction.Status = "moving"
	obs.NearbyResources = []world.EntityView{resource("Wood2", "wood", -8, 0)}
	d := c.Decide(context.Background(), obs)
	require.Equal(t, "idle", d.Tool)
	require.Contains(t, d.Reasoning, "walking to Wood1")
}

func TestCrafterIsDeterministic(t *testing.T) {
	a, b := newCrafter(), newCrafter()
	for i := range 30 {
		obs := craftObs()
		obs.Tick = i
		obs.Position = world.Vec3{float64(i % 7), 0, float64(-i % 5)}
		if i%3 == 0 {
			obs.NearbyResources = []world.EntityView{resource("Wood1", "wood", 4, 4), resource("Coal1", "coal", -4, 4)}
		}
		require.Equal(t, a.Decide(context.Background(), obs), b.Decide(context.Background(), obs))
	}
}

// TestCrafterPassesTheCraftingScenario plays the built-in crafting scenario
// with seed 1 and built-in crafters, as `arena run --scenario crafting` does.
func TestCrafterPassesTheCraftingScenario(t *testing.T) {
	sc, err := scenarios.Load("crafting")
	require.NoError(t, err)
	for _, agents := range []int{1, 4, sc.Agents.Max} {
		t.Run(fmt.Sprintf("%d agents", agents), func(t *testing.T) {
			w, err := sc.NewWorld(scenarios.Options{Seed: 1, Agents: agents})
			require.NoError(t, err)
			ctrls, err := eval.Controllers(sc, w)
			require.NoError(t, err)
			res, err := (&engine.Runner{World: w, Controllers: ctrls, MaxTicks: sc.TimeLimit()}).Run(context.Background())
			require.NoError(t, err)
			t.Logf("%d agents: %s after %d ticks, mean score %.2f", agents, res.Outcome, res.Ticks, res.MeanScore)
			require.True(t, res.Passed, "%d agents: %+v", agents, res.Agents)
			require.Equal(t, "objective_met", res.Outcome)
			for _, a := range res.Agents {
				require.Equal(t, 1.0, a.Metrics["crafted.iron_sword"], a.ID)
				require.Equal(t, 100.0, a.Metrics["health"], a.ID)
			}
		})
	}
}
