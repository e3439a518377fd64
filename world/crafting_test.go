package world_test

import (
	"fmt"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// The built-in crafting scenario, played through the tool registry exactly as
// an agent would.

func craftingWorld(t *testing.T, agents int) (*world.World, *tools.Registry) {
	t.Helper()
	sc, err := scenarios.Load("crafting")
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: 1, Agents: agents})
	require.NoError(t, err)
	reg, err := tools.ForWorld(w)
	require.NoError(t, err)
	return w, reg
}

func call(w *world.World, reg *tools.Registry, id, tool string, params map[string]any) world.ActionResult {
	return reg.Decide(w, id, w.Tick(), world.Decision{Tool: tool, Params: params})
}

// nearestResource is the nearest resource of a type that is there now.
func nearestResource(t *testing.T, w *world.World, a *world.Agent, typ string) *world.Resource {
	t.Helper()
	var best *world.Resource
	for _, r := range w.Resources() {
		if r.ResourceType == typ && !r.Collected && (best == nil || world.GroundDist(a.Pos, r.Pos) < world.GroundDist(a.Pos, best.Pos)) {
			best = r
		}
	}
	require.NotNil(t, best, "no %s left", typ)
	return best
}

func stationOf(t *testing.T, w *world.World, typ string) *world.Station {
	t.Helper()
	for _, s := range w.Stations() {
		if s.StationType == typ {
			return s
		}
	}
	t.Fatalf("no %s in the world", typ)
	return nil
}

func stationView(t *testing.T, obs *world.Observation, name string) world.EntityView {
	t.Helper()
	for _, s := range obs.NearbyStations {
		if s.Name == name {
			require.NotNil(t, s.InUse, "stations always carry in_use")
			return s
		}
	}
	t.Fatalf("%s is not in %s's nearby_stations", name, obs.AgentID)
	return world.EntityView{}
}

// recipe is one step of the chain: what to gather, where to craft and how long
// it takes (the reference's seconds × 10 ticks per second).
var chain = []struct {
	item    string
	gather  []string
	station string
	ticks   int
	inputs  map[string]int
}{
	{"wooden_handle", []string{"wood", "wood"}, "workbench", 20, map[string]int{"wood": 2}},
	{"iron_ingot", []string{"iron_ore", "coal"}, "furnace", 30, map[string]int{"iron_ore": 1, "coal": 1}},
	{"iron_rod", nil, "anvil", 20, map[string]int{"iron_ingot": 1}},
	{"iron_sword", nil, "anvil", 40, map[string]int{"iron_rod": 1, "wooden_handle": 1}},
}

func TestCraftingRecipesAreVisibleInObservations(t *testing.T) {
	w, _ := craftingWorld(t, 1)
	obs := w.Observe(w.Agents()[0])
	require.Len(t, obs.AvailableRecipes, len(chain))
	for _, step := range chain {
		t.Run(step.item, func(t *testing.T) {
			r, ok := obs.AvailableRecipes[step.item]
			require.True(t, ok)
			require.Equal(t, world.RecipeView{Inputs: step.inputs, StationType: step.station, Ticks: step.ticks, OutputCount: 1}, r)
			// A station of every recipe's type is placed.
			stationOf(t, w, step.station)
		})
	}
}

// TestCraftingChainFromTheStartState gathers the raw materials and crafts the
// whole chain, iron_ingot → iron_rod, wooden_handle → iron_sword, with the
// universal tools from the scenario's start state: the scenario is solvable.
func TestCraftingChainFromTheStartState(t *testing.T) {
	w, reg := craftingWorld(t, 1)
	a := w.Agents()[0]
	for _, step := range chain {
		for _, typ := range step.gather {
			r := nearestResource(t, w, a, typ)
			testutil.WalkTo(t, w, a.ID, r.Pos[0], r.Pos[2])
			res := call(w, reg, a.ID, "collect", map[string]any{"target_name": r.Name})
			require.True(t, res.Success, "collect %s: %s", r.Name, res.ErrorMessage)
		}
		st := stationOf(t, w, step.station)
		testutil.WalkTo(t, w, a.ID, st.Pos[0]-1, st.Pos[2])
		res := call(w, reg, a.ID, "craft", map[string]any{"item_name": step.item, "station_name": st.Name})
		require.True(t, res.Success, "craft %s: %s", step.item, res.ErrorMessage)
		require.Equal(t, step.ticks, res.Data["ticks"])
		for range step.ticks {
			w.Step()
		}
		require.Equal(t, 1, a.Inventory[step.item], "%s after %d ticks", step.item, step.ticks)
	}
	require.Equal(t, map[string]int{"iron_sword": 1}, a.Inventory)
	obs := w.Observe(a)
	require.Equal(t, 1.0, obs.CurrentProgress["crafted.iron_sword"])
	require.Equal(t, 100.0, obs.Health, "the walk kept clear of every hazard")
	_, passed := w.Score(a)
	require.True(t, passed)
	w.Step()
	done, why := w.Done()
	require.True(t, done)
	require.Equal(t, "completed", why)
}

// TestCraftingTakesTheRecipesTicks checks every recipe of the scenario: the
// materials go when crafting starts, the agent is BUSY for move_to, collect and
// craft (while idle, the queries and send_message still work), and the item
// appears exactly N ticks after the craft was decided.
func TestCraftingTakesTheRecipesTicks(t *testing.T) {
	for _, step := range chain {
		t.Run(step.item, func(t *testing.T) {
			w, reg := craftingWorld(t, 1)
			a := w.Agents()[0]
			st := stationOf(t, w, step.station)
			testutil.WalkTo(t, w, a.ID, st.Pos[0]-1, st.Pos[2])
			for k, n := range step.inputs {
				a.Inventory[k] = n
			}
			wood := nearestResource(t, w, a, "wood")
			start := w.Tick()
			res := call(w, reg, a.ID, "craft", map[string]any{"item_name": step.item, "station_name": st.Name})
			require.True(t, res.Success, res.ErrorMessage)
			require.Equal(t, map[string]any{"item": step.item, "count": 1, "ticks": step.ticks, "status": "crafting"}, res.Data)
			require.Empty(t, a.Inventory, "the materials are used when crafting starts")

			busy := fmt.Sprintf("%s is busy crafting %s at '%s'", a.ID, step.item, st.Name)
			for w.Tick() < start+step.ticks {
				left := start + step.ticks - w.Tick()
				obs := w.Observe(a)
				require.Zero(t, obs.Inventory[step.item], "tick %d", w.Tick())
				require.Equal(t, world.ActionStatus{Tool: "craft", Status: "crafting", Item: step.item, Ticks: left}, obs.CurrentAction)
				require.True(t, a.Busy())
				for _, d := range []world.Decision{
					{Tool: "move_to", Params: map[string]any{"target": []any{0.0, 0.0, 0.0}}},
					{Tool: "collect", Params: map[string]any{"target_name": wood.Name}},
					{Tool: "craft", Params: map[string]any{"item_name": step.item, "station_name": st.Name}},
				} {
					res := reg.Decide(w, a.ID, w.Tick(), d)
					require.Equal(t, world.CodeBusy, res.ErrorCode, d.Tool)
					require.Equal(t, fmt.Sprintf("%s (%d ticks left); wait or choose idle", busy, left), res.ErrorMessage)
				}
				for _, d := range []world.Decision{
					{Tool: "idle"},
					{Tool: "query_world", Params: map[string]any{"radius": 5.0}},
					{Tool: "query_inventory"},
					{Tool: "send_message", Params: map[string]any{"message": "still crafting"}},
				} {
					res := reg.Decide(w, a.ID, w.Tick(), d)
					require.True(t, res.Success, "%s: %s", d.Tool, res.ErrorMessage)
				}
				w.Step()
			}
			obs := w.Observe(a)
			require.Equal(t, start+step.ticks, obs.Tick)
			require.Equal(t, map[string]int{step.item: 1}, obs.Inventory)
			require.Equal(t, world.ActionStatus{Tool: "craft", Status: "completed", Item: step.item}, obs.CurrentAction)
			require.False(t, a.Busy())
			require.Empty(t, st.InUseBy)
		})
	}
}

// TestBusyStationIsInUseForOthers has agent_001 draw an iron rod at the anvil
// while agent_002, beside it, sees the anvil in use and is refused until the
// rod is done.
func TestBusyStationIsInUseForOthers(t *testing.T) {
	w, reg := craftingWorld(t, 2)
	a1, a2 := w.Agent("agent_001"), w.Agent("agent_002")
	anvil := stationOf(t, w, "anvil")
	testutil.WalkTo(t, w, a1.ID, anvil.Pos[0]-1, anvil.Pos[2])
	testutil.WalkTo(t, w, a2.ID, anvil.Pos[0]+1, anvil.Pos[2]+0.5)
	a1.Inventory["iron_ingot"], a2.Inventory["iron_ingot"] = 1, 1
	rod := map[string]any{"item_name": "iron_rod", "station_name": anvil.Name}
	require.True(t, call(w, reg, a1.ID, "craft", rod).Success)
	w.Step()

	cases := []struct {
		name  string
		agent *world.Agent
		inUse bool
	}{
		{"the crafting agent does not see its own station as in use", a1, false},
		{"another agent sees it in use", a2, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.inUse, *stationView(t, w.Observe(c.agent), anvil.Name).InUse)
		})
	}
	obs2 := w.Observe(a2)
	require.Equal(t, "crafting", obs2.NearbyAgents[0].Action, "the crafting agent shows as crafting")
	res := call(w, reg, a2.ID, "craft", rod)
	require.Equal(t, world.CodeBusy, res.ErrorCode)
	require.Equal(t, "Station 'Anvil1' is in use by agent_001; try again later or use another anvil", res.ErrorMessage)
	require.Equal(t, 1, a2.Inventory["iron_ingot"], "a refused craft takes nothing")

	for a1.Busy() {
		w.Step()
	}
	require.False(t, *stationView(t, w.Observe(a2), anvil.Name).InUse)
	require.True(t, call(w, reg, a2.ID, "craft", rod).Success)
	require.True(t, *stationView(t, w.Observe(a1), anvil.Name).InUse)
}

// TestCraftingScenarioMatchesTheIssue: one agent finds everything it needs at
// the start, every resource comes back (so that several agents can each
// finish; the crafter bots' tests play up to agents.max), and the objective is
// one sword within 1200 ticks.
func TestCraftingScenarioMatchesTheIssue(t *testing.T) {
	sc, err := scenarios.Load("crafting")
	require.NoError(t, err)
	w, _ := craftingWorld(t, sc.Agents.Max)
	require.Equal(t, world.Bounds{MinX: -20, MinZ: -20, MaxX: 20, MaxZ: 20}, w.Bounds())
	count := map[string]int{}
	for _, r := range w.Resources() {
		require.Positive(t, r.RespawnTicks, r.Name)
		count[r.ResourceType] += r.Amount
	}
	for typ, n := range map[string]int{"iron_ore": 1, "coal": 1, "wood": 2} {
		require.GreaterOrEqual(t, count[typ], n, typ)
	}
	require.NotEmpty(t, w.Obstacles())
	require.NotEmpty(t, w.Hazards())
	require.Equal(t, 1200, sc.TimeLimit())
	require.Equal(t, 1, sc.Agents.Count)
	require.Equal(t, 8, sc.Agents.Max)
	require.Equal(t, "crafter", sc.Agents.Bot)
	require.Equal(t, world.MetricTarget{Target: 1, Weight: 2, Required: true}, sc.Objective.SuccessMetrics["crafted.iron_sword"])
}
