package bots_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/components/debate"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

// The debate scenario played by debater bots, as `arena run --scenario
// debate` plays it: every call succeeds, every phase happens, context_search
// is used, the judge's confidence ends the debate early and a synthesis
// ends the episode.
func TestDebaterBotsPassTheDebateScenario(t *testing.T) {
	sc, err := scenarios.Load("debate")
	require.NoError(t, err)
	for _, agents := range []int{2, sc.Agents.Count, sc.Agents.Max} {
		t.Run(fmt.Sprintf("%d agents", agents), func(t *testing.T) {
			w, err := sc.NewWorld(scenarios.Options{Seed: 1, Agents: agents})
			require.NoError(t, err)
			ctrls := map[string]engine.Controller{}
			for _, a := range w.Agents() {
				b, err := bots.New(sc.Agents.Bot, bots.Info{AgentID: a.ID, Seed: 1})
				require.NoError(t, err)
				ctrls[a.ID] = b
			}
			calls := map[string]int{}
			r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: sc.TimeLimit(), Record: true, OnTick: func(rec *engine.TickRecord) {
				for _, d := range rec.Decisions {
					require.True(t, d.Result.Success, "tick %d %s %s %v: %s", rec.Tick, d.Agent, d.Tool, d.Params, d.Result.ErrorMessage)
					calls[d.Tool]++
				}
			}}
			res, err := r.Run(context.Background())
			require.NoError(t, err)
			t.Logf("%d agents: %s after %d ticks, calls %v", agents, res.Outcome, res.Ticks, calls)
			require.True(t, res.Passed)
			require.Equal(t, "objective_met", res.Outcome)
			for _, tool := range []string{"propose", "refine", "evaluate", "synthesize", "context_search"} {
				require.Positive(t, calls[tool], tool)
			}
			if agents > 2 {
				require.Positive(t, calls["critique"])
			}
			d := w.Component("debate").(*debate.Debate)
			require.NotNil(t, d.Synthesis())
			require.Len(t, d.Rounds(), 2, "confidence 70 after round 1, 90 after round 2: synthesis")
			searched := 0
			for _, r := range d.Rounds() {
				for _, c := range r.Contributions {
					searched += len(c.Metadata.ToolCalls)
				}
			}
			require.Positive(t, searched, "tool calls are kept with the contributions")
		})
	}
}

func TestDebaterBotIsDeterministicAndReadsTheWire(t *testing.T) {
	ctx := context.Background()
	obs := &world.Observation{AgentID: "me", Alive: true, Components: map[string]world.Section{"debate": {
		"text": "…", "participant": true, "phase": "critique", "round": 1.0, "role": "security", "is_judge": false,
		"task": "Design a cache.", "owed": []any{"a2", "a3"}, "tools": []any{"context_search"}, "tool_calls_left": 10.0,
		"contributions": []any{map[string]any{"round": 1.0, "agent_id": "a2", "agent_role": "architect", "type": "proposal", "content": "Use layers."}},
	}}}
	raw, err := cbor.Marshal(obs)
	require.NoError(t, err)
	var wire world.Observation
	require.NoError(t, cbor.Unmarshal(raw, &wire))
	a, b := bots.NewDebater(bots.Info{AgentID: "me"}), bots.NewDebater(bots.Info{AgentID: "me"})
	da, db := a.Decide(ctx, obs), b.Decide(ctx, &wire)
	require.Equal(t, fmt.Sprint(da), fmt.Sprint(db))
	require.Equal(t, "critique", da.Tool)
	require.Equal(t, "a2", da.Params["target_agent_id"])
	require.Contains(t, da.Params["content"], "Use layers.")
	require.Equal(t, "idle", a.Decide(ctx, &world.Observation{Alive: true}).Tool)
}
