package tools_test

import (
	"fmt"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// counter is a minimal, non-spatial component: a tool to add to a private
// tally, a section in each agent's observation, a metric and events.
type counter struct {
	tally map[string]int
	ticks int
}

func (c *counter) Name() string { return "counter" }

func (c *counter) Attach(*world.World) error {
	c.tally = map[string]int{}
	return nil
}

func (c *counter) Tick(w *world.World) {
	c.ticks++
	if c.ticks%5 == 0 {
		w.Publish(world.Event{Source: c.Name(), Type: "five_ticks", Data: map[string]any{"ticks": c.ticks}})
	}
}

func (c *counter) Observe(_ *world.World, agentID string) world.Section {
	return world.Section{"text": fmt.Sprintf("Your tally is %d.", c.tally[agentID]), "tally": c.tally[agentID]}
}

func (c *counter) Hash(h *world.Hasher) {
	h.Counts(c.tally)
	h.Int(c.ticks)
}

func (c *counter) Metric(_ *world.World, agentID, name string) (float64, bool) {
	if name == "tally" {
		return float64(c.tally[agentID]), true
	}
	return 0, false
}

func (c *counter) Tools() []tools.Tool {
	return []tools.Tool{{
		Name:        "add",
		Description: "Add to your tally.",
		Parameters:  tools.Object(map[string]*tools.Schema{"n": {Type: "integer", Minimum: tools.Ptr(1.0), Maximum: tools.Ptr(10.0)}}, "n"),
		Handler: func(call *tools.Call) world.ActionResult {
			c.tally[call.Agent.ID] += int(call.Float("n", 0))
			call.World.Publish(world.Event{Source: c.Name(), Type: "added", Agent: call.Agent.ID, To: []string{call.Agent.ID}})
			return world.OK("add", map[string]any{"tally": c.tally[call.Agent.ID]})
		},
	}}
}

func TestComponentContract(t *testing.T) {
	cfg := testutil.Config()
	c := &counter{}
	cfg.Components = []world.Component{c}
	cfg.Objective.SuccessMetrics["tally"] = world.MetricTarget{Target: 6, Required: true}
	w := testutil.World(t, cfg)
	reg, err := tools.ForWorld(w)
	require.NoError(t, err)
	_, ok := reg.Lookup("add")
	require.True(t, ok, "the component's tool joins the one registry")
	require.Len(t, reg.OpenAI(), 8)

	require.True(t, decide(w, reg, "a1", "add", map[string]any{"n": 4}).Success)
	requireFail(t, decide(w, reg, "a1", "add", map[string]any{"n": 2.5}), world.CodeInvalidParams, "whole number")
	requireFail(t, decide(w, reg, "a1", "add", map[string]any{"n": 11}), world.CodeInvalidParams, "at most 10")
	ev := w.TakeEvents()
	require.Len(t, ev, 1)
	require.True(t, ev[0].VisibleTo("a1"))
	require.False(t, ev[0].VisibleTo("a2"), "a private event is hidden from other agents")

	obs := w.Observe(w.Agent("a1"))
	require.Equal(t, world.Section{"text": "Your tally is 4.", "tally": 4}, obs.Components["counter"])
	require.Equal(t, 4.0, obs.CurrentProgress["tally"])
	require.Equal(t, "Your tally is 0.", w.Observe(w.Agent("a2")).Components["counter"]["text"])

	h := w.StateHash()
	for i := 0; i < 5; i++ {
		w.Step()
	}
	require.NotEqual(t, h, w.StateHash())
	var types []string
	for _, e := range w.TakeEvents() {
		types = append(types, e.Source+"/"+e.Type)
	}
	require.Contains(t, types, "counter/five_ticks")
}

func TestDuplicateToolNamesAreRefused(t *testing.T) {
	var r tools.Registry
	require.NoError(t, r.Register(tools.Universal(world.Rules{})...))
	err := r.Register(tools.Tool{Name: "idle", Handler: func(*tools.Call) world.ActionResult { return world.OK("idle", nil) }})
	require.ErrorContains(t, err, `"idle": already registered`)
}
