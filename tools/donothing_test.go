package tools_test

import (
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

func TestSharedDoNothingIsRegisteredOnce(t *testing.T) {
	var r tools.Registry
	require.NoError(t, r.Register(tools.Universal(world.Rules{})...))
	require.NoError(t, r.Register(tools.DoNothing()))
	require.NoError(t, r.Register(tools.DoNothing()), "a second component's copy is skipped")
	require.NoError(t, r.Register(tools.Tool{Name: "do_nothing", Description: tools.DoNothingDescription,
		Handler: func(*tools.Call) world.ActionResult { return world.OK("do_nothing", nil) }}), "so is an identical one built by hand")
	n := 0
	for _, f := range r.OpenAI() {
		if f.Function.Name == "do_nothing" {
			n++
		}
	}
	require.Equal(t, 1, n)
	other := tools.DoNothing()
	other.Description = "something else"
	require.ErrorContains(t, r.Register(other), `"do_nothing": already registered`, "a different tool under the name is refused")

	w := testutil.World(t, testutil.Config())
	res := r.Execute(w, "a1", "do_nothing", nil, false)
	require.True(t, res.Success)
	require.Equal(t, "do_nothing", res.Tool)
	res = r.Execute(w, "a1", "do_nothing", map[string]any{"x": 1}, false)
	require.Equal(t, world.CodeInvalidParams, res.ErrorCode)
}
