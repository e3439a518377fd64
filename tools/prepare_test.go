package tools_test

import (
	"cmp"
	"math"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// TestDecidePreparedMatchesDecide applies decisions, valid and not, with and
// without Prepare on a worker first: results and state hashes must match.
func TestDecidePreparedMatchesDecide(t *testing.T) {
	cases := []struct {
		name   string
		tool   string
		params map[string]any
	}{
		{"move_to", "move_to", map[string]any{"target_x": 12.0, "target_z": 8.0}},
		{"move_to as an array", "move_to", map[string]any{"target": []any{-6.0, 0.0, 9.0}, "speed": 2}},
		{"move_to both forms", "move_to", map[string]any{"target": []any{1.0, 0.0, 1.0}, "target_x": 1.0, "target_z": 1.0}},
		{"move_to NaN", "move_to", map[string]any{"target_x": math.NaN(), "target_z": 1.0}},
		{"move_to off the map", "move_to", map[string]any{"target_x": 90.0, "target_z": 0.0}},
		{"collect without a name", "collect", map[string]any{}},
		{"collect", "collect", map[string]any{"target_name": "Berry1"}},
		{"query_world too far", "query_world", map[string]any{"radius": 1e9}},
		{"send_message", "send_message", map[string]any{"message": "hi", "target_agent": "team"}},
		{"idle with junk", "idle", map[string]any{"junk": 1}},
		{"unknown tool", "fly", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			play := func(prepare bool) (world.ActionResult, uint64) {
				w, reg := setup(t)
				d := world.Decision{Tool: tc.tool, Params: tc.params}
				w.BeginObserve() // as a tick on workers does
				if !prepare {
					res := reg.Decide(w, "a1", w.Tick(), d)
					w.Step()
					return res, w.StateHash()
				}
				p := reg.Prepare(w.NewWorker(), w, "a1", d)
				res := reg.DecidePrepared(w, w.Agent("a1"), w.Tick(), d, &p)
				w.Step()
				return res, w.StateHash()
			}
			res1, h1 := play(false)
			res2, h2 := play(true)
			require.Equal(t, res1, res2)
			require.Equal(t, h1, h2)
		})
	}
}

// TestDecidePreparedForAnotherToolValidatesAgain: what was prepared for one
// tool is not taken for another.
func TestDecidePreparedForAnotherToolValidatesAgain(t *testing.T) {
	w, reg := setup(t)
	w.BeginObserve()
	p := reg.Prepare(w.NewWorker(), w, "a1", world.Decision{Tool: "idle"})
	res := reg.DecidePrepared(w, w.Agent("a1"), w.Tick(), world.Decision{Tool: "collect"}, &p)
	requireFail(t, res, world.CodeInvalidParams, "target_name")
}

// TestDecideAheadAppliesOnlyPrivateTools: DecideAhead applies idle (the one
// Private universal tool) with the outcome DecidePrepared would give, a
// message in the inbox cleared as the decision's start clears it, and
// applies nothing for any other tool, for a decision that timed out, for
// what was prepared for another tool, or in a world with components.
func TestDecideAheadAppliesOnlyPrivateTools(t *testing.T) {
	cases := []struct {
		name       string
		d          world.Decision
		prepareFor string // the tool Prepare saw, when not d.Tool
		components bool
		applied    bool
	}{
		{name: "idle", d: world.Decision{Tool: "idle"}, applied: true},
		{name: "idle with junk", d: world.Decision{Tool: "idle", Params: map[string]any{"junk": 1}}, applied: true},
		{name: "move_to", d: world.Decision{Tool: "move_to", Params: map[string]any{"target_x": 12.0, "target_z": 8.0}}},
		{name: "collect", d: world.Decision{Tool: "collect", Params: map[string]any{"target_name": "Berry1"}}},
		{name: "query_world", d: world.Decision{Tool: "query_world"}},
		{name: "send_message", d: world.Decision{Tool: "send_message", Params: map[string]any{"message": "hi"}}},
		{name: "timed out", d: world.Decision{Tool: "idle", TimedOut: true}},
		{name: "prepared for another tool", d: world.Decision{Tool: "move_to", Params: map[string]any{"target_x": 12.0, "target_z": 8.0}}, prepareFor: "idle"},
		{name: "components", d: world.Decision{Tool: "idle"}, components: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			play := func(ahead bool) (world.ActionResult, bool, uint64) {
				cfg := testutil.Config()
				if tc.components {
					cfg.Components = []world.Component{&counter{}}
				}
				w := testutil.World(t, cfg)
				reg, err := tools.ForWorld(w)
				require.NoError(t, err)
				require.True(t, decide(w, reg, "a2", "send_message", map[string]any{"message": "hello", "target_agent": "a1"}).Success)
				w.Step() // a1 now holds a2's message
				a := w.Agent("a1")
				require.NotEmpty(t, w.Observe(a).Messages)
				w.BeginObserve()
				p := reg.Prepare(w.NewWorker(), w, "a1", world.Decision{Tool: cmp.Or(tc.prepareFor, tc.d.Tool), Params: tc.d.Params})
				var res world.ActionResult
				applied := false
				if ahead {
					res, applied = reg.DecideAhead(&tools.Call{}, w, a, w.Tick(), tc.d, &p)
				}
				if !applied {
					res = reg.DecidePrepared(w, a, w.Tick(), tc.d, &p)
				}
				w.Step()
				return res, applied, w.StateHash()
			}
			res1, _, h1 := play(false)
			res2, applied, h2 := play(true)
			require.Equal(t, tc.applied, applied)
			require.Equal(t, res1, res2)
			require.Equal(t, h1, h2)
		})
	}
}
