package tools_test

import (
	"math"
	"testing"

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
