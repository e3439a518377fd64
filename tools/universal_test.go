package tools_test

import (
	"math"
	"strings"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

func setup(t *testing.T) (*world.World, *tools.Registry) {
	t.Helper()
	w := testutil.World(t, testutil.Config())
	reg, err := tools.ForWorld(w)
	require.NoError(t, err)
	return w, reg
}

func decide(w *world.World, reg *tools.Registry, id, tool string, params map[string]any) world.ActionResult {
	return reg.Decide(w, id, w.Tick(), world.Decision{Tool: tool, Params: params})
}

func requireFail(t *testing.T, res world.ActionResult, code, msgPart string) {
	t.Helper()
	require.False(t, res.Success, "expected %s, got success %+v", code, res)
	require.Equal(t, code, res.ErrorCode, res.ErrorMessage)
	require.Contains(t, res.ErrorMessage, msgPart)
}

func TestUniversalToolsAreRegisteredWithSchemas(t *testing.T) {
	_, reg := setup(t)
	var names []string
	for _, tl := range reg.Tools() {
		names = append(names, tl.Name)
		require.Equal(t, "object", tl.Parameters.Type)
		require.NotEmpty(t, tl.Description)
	}
	require.Equal(t, []string{"collect", "craft", "idle", "move_to", "query_inventory", "query_world", "send_message"}, names)
	q, _ := reg.Lookup("query_world")
	require.True(t, q.Query)
	m, _ := reg.Lookup("move_to")
	require.False(t, m.Query)

	fns := reg.OpenAI()
	require.Len(t, fns, 7)
	for _, f := range fns {
		require.Equal(t, "function", f.Type)
		require.NotEmpty(t, f.Function.Name)
		require.Equal(t, "object", f.Function.Parameters.Type)
	}
}

func TestMoveTo(t *testing.T) {
	w, reg := setup(t)
	a := w.Agent("a1")

	res := decide(w, reg, "a1", "move_to", map[string]any{"target_x": 6.0, "target_y": 0.0, "target_z": 6.0})
	require.True(t, res.Success, res.ErrorMessage)
	require.Equal(t, "moving", res.Data["status"])
	obs := w.Observe(a)
	require.Equal(t, "moving", obs.CurrentAction.Status)
	require.NotEmpty(t, obs.CurrentAction.Path)
	require.Equal(t, res, *obs.LastActionResult)

	// The shorthand, and a speed above the cap, which is capped.
	res = decide(w, reg, "a1", "move_to", map[string]any{"target": []any{6, 0, -2}, "speed": 10})
	require.True(t, res.Success, res.ErrorMessage)
	require.Equal(t, 2.0, res.Data["speed_capped_at"])
	for i := 0; i < 100 && w.Observe(a).CurrentAction.Status == "moving"; i++ {
		w.Step()
	}
	obs = w.Observe(a)
	require.Equal(t, "arrived", obs.CurrentAction.Status)
	require.LessOrEqual(t, math.Hypot(obs.Position[0]-6, obs.Position[2]+2), 0.5)
	// Double speed: 10 units/s, so about 6.3 units take well under 2 s (20 ticks).
	require.Less(t, w.Tick(), 20)
}

func TestMoveToErrors(t *testing.T) {
	cases := []struct {
		name   string
		params map[string]any
		code   string
		msg    string
	}{
		{"no target", map[string]any{}, world.CodeInvalidParams, "a target is required"},
		{"both forms", map[string]any{"target": []any{1.0, 0.0, 1.0}, "target_x": 1.0, "target_z": 1.0}, world.CodeInvalidParams, "not both"},
		{"missing z", map[string]any{"target_x": 1.0}, world.CodeInvalidParams, "target_x and target_z"},
		{"NaN", map[string]any{"target_x": math.NaN(), "target_z": 1.0}, world.CodeInvalidParams, "finite"},
		{"Inf", map[string]any{"target": []any{math.Inf(1), 0.0, 0.0}}, world.CodeInvalidParams, "finite"},
		{"huge", map[string]any{"target_x": 1e300, "target_z": 0.0}, world.CodeInvalidParams, "at most"},
		{"edge of the world is fine", map[string]any{"target_x": 20.0, "target_z": 20.0, "speed": 1}, "", ""},
		{"outside world", map[string]any{"target_x": 25.0, "target_z": 0.0}, world.CodeInvalidParams, "outside the world"},
		{"string coordinate", map[string]any{"target_x": "3", "target_z": 0.0}, world.CodeInvalidParams, "must be a number, got string"},
		{"short array", map[string]any{"target": []any{1.0, 2.0}}, world.CodeInvalidParams, "at least 3 items"},
		{"negative speed", map[string]any{"target": []any{1.0, 0.0, 1.0}, "speed": -1.0}, world.CodeInvalidParams, "at least 0.1"},
		{"zero speed", map[string]any{"target": []any{1.0, 0.0, 1.0}, "speed": 0}, world.CodeInvalidParams, "at least 0.1"},
		{"denormal speed", map[string]any{"target": []any{1.0, 0.0, 1.0}, "speed": 5e-324}, world.CodeInvalidParams, "at least 0.1"},
		{"unknown param", map[string]any{"target": []any{1.0, 0.0, 1.0}, "sped": 1.0}, world.CodeInvalidParams, "'sped' is not a parameter"},
		{"inside an obstacle", map[string]any{"target": []any{0.0, 0.0, -5.0}}, world.CodeNoPath, "Nearest reachable point is"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, reg := setup(t)
			res := decide(w, reg, "a1", "move_to", tc.params)
			if tc.code == "" {
				require.True(t, res.Success, res.ErrorMessage)
				return
			}
			requireFail(t, res, tc.code, tc.msg)
			require.Equal(t, "move_to", res.Tool)
		})
	}
}

func TestMoveToNoPathNamesNearestReachablePoint(t *testing.T) {
	cfg := testutil.Config()
	// A closed square pen of walls around (14, 14).
	cfg.Obstacles = append(cfg.Obstacles,
		world.ObstacleSpec{Name: "PenN", Shape: "box", X: 14, Z: 17, SizeX: 7, SizeZ: 1},
		world.ObstacleSpec{Name: "PenS", Shape: "box", X: 14, Z: 11, SizeX: 7, SizeZ: 1},
		world.ObstacleSpec{Name: "PenE", Shape: "box", X: 17, Z: 14, SizeX: 1, SizeZ: 7},
		world.ObstacleSpec{Name: "PenW", Shape: "box", X: 11, Z: 14, SizeX: 1, SizeZ: 7},
	)
	cfg.Stations = cfg.Stations[:1]
	w := testutil.World(t, cfg)
	reg, err := tools.ForWorld(w)
	require.NoError(t, err)
	res := decide(w, reg, "a1", "move_to", map[string]any{"target": []any{14.0, 0.0, 14.0}})
	requireFail(t, res, world.CodeNoPath, "Nearest reachable point")
	near := res.Data["nearest_reachable"].(world.Vec3)
	// The nearest reachable point is just outside the pen, a few units from its centre.
	d := math.Hypot(near[0]-14, near[2]-14)
	require.Greater(t, d, 3.0)
	require.Less(t, d, 5.5)
	require.Equal(t, "idle", w.Observe(w.Agent("a1")).CurrentAction.Status)
}

func TestCollect(t *testing.T) {
	w, reg := setup(t)
	res := decide(w, reg, "a1", "collect", map[string]any{"target_name": "Berry1"})
	require.True(t, res.Success, res.ErrorMessage)
	obs := w.Observe(w.Agent("a1"))
	require.Equal(t, map[string]int{"berry": 1}, obs.Inventory)
	for _, r := range obs.NearbyResources {
		require.NotEqual(t, "Berry1", r.Name, "a collected resource must leave the world")
	}
	require.Equal(t, 1.0, obs.CurrentProgress["resources_collected"])

	requireFail(t, decide(w, reg, "a1", "collect", map[string]any{"target_name": "Berry1"}), world.CodeNotFound, "No resource named 'Berry1' in sight")
	// What the agent cannot see is never described: no distance, no hint.
	res = decide(w, reg, "a1", "collect", map[string]any{"target_name": "Hidden1"})
	requireFail(t, res, world.CodeNotFound, "No resource named 'Hidden1' in sight")
	require.NotContains(t, res.ErrorMessage, "units")
	requireFail(t, decide(w, reg, "a1", "collect", map[string]any{"target_name": "Hiden1"}), world.CodeNotFound, "in sight")
	require.NotContains(t, decide(w, reg, "a1", "collect", map[string]any{"target_name": "Hiden1"}).ErrorMessage, "Hidden1")
	requireFail(t, decide(w, reg, "a1", "collect", map[string]any{"target_name": "Stone1"}), world.CodeOutOfRange,
		"Target 'Stone1' is 5.4 units away, collection range is 2.0")
	requireFail(t, decide(w, reg, "a1", "collect", map[string]any{"target_name": "Bery2"}), world.CodeNotFound, "did you mean 'Berry2'")
	requireFail(t, decide(w, reg, "a1", "collect", map[string]any{"target_name": "Workbench1"}), world.CodeNotFound, "is a station, not a resource")
	requireFail(t, decide(w, reg, "a1", "collect", map[string]any{}), world.CodeInvalidParams, "'target_name' is required")
	requireFail(t, decide(w, reg, "a1", "collect", map[string]any{"target_name": 3}), world.CodeInvalidParams, "must be a string")
}

func TestCollectInventoryFull(t *testing.T) {
	cfg := testutil.Config()
	cfg.Rules.InventoryCapacity = 1
	w := testutil.World(t, cfg)
	reg, err := tools.ForWorld(w)
	require.NoError(t, err)
	require.True(t, decide(w, reg, "a1", "collect", map[string]any{"target_name": "Berry1"}).Success)
	requireFail(t, decide(w, reg, "a1", "collect", map[string]any{"target_name": "Berry2"}), world.CodeInventoryFull, "Inventory is full (1/1 items)")
}

func TestCraft(t *testing.T) {
	w, reg := setup(t)
	a := w.Agent("a1")
	requireFail(t, decide(w, reg, "a1", "craft", map[string]any{"item_name": "meal", "station_name": "Workbench1"}),
		world.CodeMissingMaterials, "berry: need 2, have 0")
	require.True(t, decide(w, reg, "a1", "collect", map[string]any{"target_name": "Berry1"}).Success)
	require.True(t, decide(w, reg, "a1", "collect", map[string]any{"target_name": "Berry2"}).Success)
	requireFail(t, decide(w, reg, "a1", "craft", map[string]any{"item_name": "cake", "station_name": "Workbench1"}), world.CodeNotFound, "known recipes: ingot, meal")
	requireFail(t, decide(w, reg, "a1", "craft", map[string]any{"item_name": "meal", "station_name": "Bench9"}), world.CodeNotFound, "No station named 'Bench9' in sight")
	requireFail(t, decide(w, reg, "a1", "craft", map[string]any{"item_name": "meal", "station_name": "Furnace1"}), world.CodeNotFound, "No station named 'Furnace1' in sight")
	res := decide(w, reg, "a1", "craft", map[string]any{"item_name": "meal", "station_name": "Workbench1"})
	require.True(t, res.Success, res.ErrorMessage)
	obs := w.Observe(a)
	require.Equal(t, map[string]int{"meal": 1}, obs.Inventory)
	require.Equal(t, 1.0, float64(a.Stats.Crafted["meal"]))
	require.Contains(t, obs.AvailableRecipes, "meal")
	require.Equal(t, "workbench", obs.AvailableRecipes["meal"].StationType)
	require.Equal(t, map[string]int{"berry": 2}, obs.AvailableRecipes["meal"].Inputs)
}

func TestCraftMultiTickMakesAgentBusyAndStationInUse(t *testing.T) {
	w, reg := setup(t)
	a1, a2 := w.Agent("a1"), w.Agent("a2")
	testutil.WalkTo(t, w, "a1", 10, 4)
	requireFail(t, decide(w, reg, "a1", "craft", map[string]any{"item_name": "ingot", "station_name": "Furnace1"}),
		world.CodeOutOfRange, "Station 'Furnace1' is 6.0 units away, crafting range is 2.5")
	testutil.WalkTo(t, w, "a1", 9, 9)
	requireFail(t, decide(w, reg, "a1", "craft", map[string]any{"item_name": "meal", "station_name": "Furnace1"}), world.CodeNotAllowed, "crafted at a workbench, but 'Furnace1' is a furnace")
	testutil.WalkTo(t, w, "a2", 11, 11)
	a1.Inventory["ore"], a1.Inventory["coal"] = 1, 1
	a2.Inventory["ore"], a2.Inventory["coal"] = 1, 1

	res := decide(w, reg, "a1", "craft", map[string]any{"item_name": "ingot", "station_name": "Furnace1"})
	require.True(t, res.Success, res.ErrorMessage)
	require.Equal(t, 3.0, float64(res.Data["ticks"].(int)))
	require.Equal(t, "crafting", w.Observe(a1).CurrentAction.Status)

	requireFail(t, decide(w, reg, "a1", "move_to", map[string]any{"target": []any{0.0, 0.0, 0.0}}), world.CodeBusy, "busy crafting ingot")
	requireFail(t, decide(w, reg, "a1", "craft", map[string]any{"item_name": "ingot", "station_name": "Furnace1"}), world.CodeBusy, "busy crafting")
	// The other agent sees the furnace in use and cannot use it.
	obs2 := w.Observe(a2)
	var furnace *world.EntityView
	for i := range obs2.NearbyStations {
		if obs2.NearbyStations[i].Name == "Furnace1" {
			furnace = &obs2.NearbyStations[i]
		}
	}
	require.NotNil(t, furnace)
	require.True(t, *furnace.InUse)
	requireFail(t, decide(w, reg, "a2", "craft", map[string]any{"item_name": "ingot", "station_name": "Furnace1"}), world.CodeBusy, "in use by a1")
	// idle is allowed while busy and does not interrupt crafting.
	require.True(t, decide(w, reg, "a1", "idle", nil).Success)
	for i := 0; i < 3; i++ {
		w.Step()
	}
	require.Equal(t, 1, a1.Inventory["ingot"])
	require.Zero(t, a1.Inventory["ore"])
	obs2 = w.Observe(a2)
	for _, s := range obs2.NearbyStations {
		if s.Name == "Furnace1" {
			require.False(t, *s.InUse)
		}
	}
	require.True(t, decide(w, reg, "a2", "craft", map[string]any{"item_name": "ingot", "station_name": "Furnace1"}).Success)
}

func TestQueryWorld(t *testing.T) {
	w, reg := setup(t)
	a := w.Agent("a1")
	res := decide(w, reg, "a1", "query_world", nil)
	require.True(t, res.Success, res.ErrorMessage)
	obs := w.Observe(a)
	require.NotNil(t, obs.QueryResult)
	require.Equal(t, 20.0, obs.QueryResult.Radius)
	names := map[string]bool{}
	for _, e := range obs.QueryResult.Entities {
		names[e.Name] = true
		require.LessOrEqual(t, e.Distance, 20.0)
	}
	// A scan is not blocked by the rock, and it lists every kind.
	for _, n := range []string{"Berry1", "Hidden1", "Rock1", "Pit1", "Workbench1", "Furnace1", "a2"} {
		require.True(t, names[n], "query_world should list %s", n)
	}
	require.False(t, names["a1"], "query_world must not list the agent itself")

	res = decide(w, reg, "a1", "query_world", map[string]any{"radius": 30.0, "filter_type": "station"})
	require.True(t, res.Success)
	obs = w.Observe(a)
	require.Len(t, obs.QueryResult.Entities, 2)
	for _, e := range obs.QueryResult.Entities {
		require.Equal(t, "station", e.Type)
		require.NotNil(t, e.InUse)
	}
	// The answer is shown once: the next decision clears it.
	require.True(t, decide(w, reg, "a1", "idle", nil).Success)
	require.Nil(t, w.Observe(a).QueryResult)

	requireFail(t, decide(w, reg, "a1", "query_world", map[string]any{"radius": -5.0}), world.CodeInvalidParams, "greater than 0")
	requireFail(t, decide(w, reg, "a1", "query_world", map[string]any{"radius": 500.0}), world.CodeInvalidParams, "at most 50")
	requireFail(t, decide(w, reg, "a1", "query_world", map[string]any{"filter_type": "tree"}), world.CodeInvalidParams, "must be one of")
}

func TestQueryToolsAsMidTurnQueries(t *testing.T) {
	w, reg := setup(t)
	res := reg.Execute(w, "a1", "query_world", map[string]any{"radius": 3.0, "filter_type": "resource"}, true)
	require.True(t, res.Success)
	q := res.Data["query_result"].(*world.QueryResult)
	require.Len(t, q.Entities, 2)
	require.Nil(t, w.Observe(w.Agent("a1")).QueryResult, "a mid-turn query answers at once, not in the observation")

	res = reg.Execute(w, "a1", "query_inventory", nil, true)
	require.True(t, res.Success)
	require.Equal(t, 50, res.Data["inventory_details"].(*world.InventoryDetails).Capacity)

	requireFail(t, reg.Execute(w, "a1", "move_to", map[string]any{"target": []any{1.0, 0.0, 1.0}}, true), world.CodeNotAQuery, "must be sent as a decision")
}

func TestQueryInventory(t *testing.T) {
	w, reg := setup(t)
	require.True(t, decide(w, reg, "a1", "collect", map[string]any{"target_name": "Berry1"}).Success)
	require.True(t, decide(w, reg, "a1", "query_inventory", nil).Success)
	d := w.Observe(w.Agent("a1")).InventoryDetails
	require.NotNil(t, d)
	require.Equal(t, []world.InventoryItem{{Name: "berry", Count: 1, Type: "food"}}, d.Items)
	require.Equal(t, 50, d.Capacity)
	require.Equal(t, 1, d.Used)
	requireFail(t, decide(w, reg, "a1", "query_inventory", map[string]any{"all": true}), world.CodeInvalidParams, "not a parameter")
}

func TestSendMessage(t *testing.T) {
	w, reg := setup(t)
	a1, a2 := w.Agent("a1"), w.Agent("a2")
	res := decide(w, reg, "a1", "send_message", map[string]any{"message": "hello"})
	require.True(t, res.Success, res.ErrorMessage)
	require.Equal(t, "all", res.Data["target_agent"])
	require.Empty(t, w.Observe(a2).Messages, "messages are delivered on the next tick, not at once")
	w.Step()
	msgs := w.Observe(a2).Messages
	require.Equal(t, []world.Message{{From: "a1", Content: "hello", Tick: 0, To: "all"}}, msgs)
	require.Empty(t, w.Observe(a1).Messages, "the sender does not receive its own message")

	require.True(t, decide(w, reg, "a1", "send_message", map[string]any{"message": "just you", "target_agent": "a2"}).Success)
	w.Step()
	require.Equal(t, "just you", w.Observe(a2).Messages[len(w.Observe(a2).Messages)-1].Content)

	requireFail(t, decide(w, reg, "a1", "send_message", map[string]any{"message": "x", "target_agent": "a9"}), world.CodeNotFound, "No living agent named 'a9'")
	requireFail(t, decide(w, reg, "a1", "send_message", map[string]any{"message": "x", "target_agent": "a1"}), world.CodeInvalidParams, "itself")
	requireFail(t, decide(w, reg, "a1", "send_message", map[string]any{"message": "   "}), world.CodeInvalidParams, "must not be empty")
	requireFail(t, decide(w, reg, "a1", "send_message", map[string]any{}), world.CodeInvalidParams, "'message' is required")
	requireFail(t, decide(w, reg, "a1", "send_message", map[string]any{"message": strings.Repeat("x", 501)}), world.CodeInvalidParams, "at most 500 characters")
}

func TestMessagesOnlyReachAgentsInRange(t *testing.T) {
	cfg := testutil.Config()
	cfg.Rules.CommRange = 5
	cfg.Agents = append(cfg.Agents, world.AgentSpec{ID: "far", X: 15, Z: 15})
	w := testutil.World(t, cfg)
	reg, err := tools.ForWorld(w)
	require.NoError(t, err)
	require.Contains(t, w.Observe(w.Agent("a1")).AgentIDs, "far", "every id send_message takes is readable, seen or not")
	require.True(t, decide(w, reg, "a1", "send_message", map[string]any{"message": "near only"}).Success)
	// Out of range is not revealed: the message is accepted and never arrives.
	require.True(t, decide(w, reg, "a1", "send_message", map[string]any{"message": "x", "target_agent": "far"}).Success)
	w.Step()
	require.Len(t, w.Observe(w.Agent("a2")).Messages, 1)
	require.Empty(t, w.Observe(w.Agent("far")).Messages)
}

func TestMessageDropProbabilityIsSeeded(t *testing.T) {
	run := func(seed uint64) []int {
		cfg := testutil.Config()
		cfg.Seed = seed
		cfg.Rules.MessageDropProb = 0.5
		w := testutil.World(t, cfg)
		reg, err := tools.ForWorld(w)
		require.NoError(t, err)
		var got []int
		for i := 0; i < 40; i++ {
			require.True(t, decide(w, reg, "a1", "send_message", map[string]any{"message": "m"}).Success)
			w.Step()
			got = append(got, len(w.Observe(w.Agent("a2")).Messages))
			w.BeginDecision(w.Agent("a2"))
		}
		return got
	}
	a, b := run(1), run(1)
	require.Equal(t, a, b, "the same seed drops the same messages")
	delivered := 0
	for _, n := range a {
		delivered += n
	}
	require.Greater(t, delivered, 5)
	require.Less(t, delivered, 35)
}

func TestTeamMessagesStayInTeam(t *testing.T) {
	cfg := testutil.Config()
	cfg.Agents = append(cfg.Agents, world.AgentSpec{ID: "r2", Team: "red", X: -3, Z: 0})
	w := testutil.World(t, cfg)
	reg, err := tools.ForWorld(w)
	require.NoError(t, err)
	require.True(t, decide(w, reg, "a1", "send_message", map[string]any{"message": "red plan", "target_agent": "team"}).Success)
	w.Step()
	require.Len(t, w.Observe(w.Agent("r2")).Messages, 1)
	require.Empty(t, w.Observe(w.Agent("a2")).Messages, "an enemy never sees a team message")
}

func TestUnknownToolAndDeadAgent(t *testing.T) {
	w, reg := setup(t)
	requireFail(t, decide(w, reg, "a1", "mvoe_to", nil), world.CodeUnknownTool, "did you mean 'move_to'")
	requireFail(t, decide(w, reg, "nobody", "idle", nil), world.CodeNotFound, "No agent named 'nobody'")
	a := w.Agent("a1")
	w.Damage(a, 1000, "test")
	require.False(t, a.Alive)
	require.NotContains(t, w.Observe(w.Agent("a2")).AgentIDs, "a1", "the dead leave the roster")
	for _, tool := range []string{"idle", "move_to", "collect", "query_world"} {
		requireFail(t, decide(w, reg, "a1", tool, nil), world.CodeDead, "a1 is dead")
	}
	require.False(t, w.Observe(a).Alive)
}

func TestIdleKeepsAMoveGoing(t *testing.T) {
	w, reg := setup(t)
	a := w.Agent("a1")
	require.True(t, decide(w, reg, "a1", "move_to", map[string]any{"target": []any{6.0, 0.0, 6.0}}).Success)
	w.Step()
	before := a.Pos
	require.True(t, decide(w, reg, "a1", "idle", nil).Success)
	w.Step()
	require.NotEqual(t, before, a.Pos, "idle takes no new action; the move goes on")
	// move_to one's own position stops.
	require.True(t, decide(w, reg, "a1", "move_to", map[string]any{"target": []any{a.Pos[0], 0.0, a.Pos[2]}}).Success)
	stopped := a.Pos
	w.Step()
	require.Equal(t, stopped, a.Pos)
}
