package server_test

import (
	"strconv"
	"testing"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/server"
	"github.com/stretchr/testify/require"
)

// step has the spectator of a paused world run one tick, and waits for it.
func step(spec *client, tick int) {
	spec.t.Helper()
	spec.send(map[string]any{"type": "control", "command": "step"})
	for f := spec.nextFrame(); f.Tick < tick; f = spec.nextFrame() {
	}
}

// Fixed (server/handle.go, decide): in real time, an agent whose decision for
// tick T arrived late (after the observation of T+1 was sent) had it taken,
// and then its decision for T+1, sent in time, refused as DUPLICATE_DECISION
// ("a decision for tick T+1 was already received", which it was not): the
// stale decision was applied. The newest decision for the newest
// observation wins: the decision for T+1 replaces the one for T, and a
// decision older than one taken is refused, naming the tick taken.
func TestRealtimeTheNewestDecisionWins(t *testing.T) {
	addr, _, cancel := start(t, server.Options{OpenSpectators: true, Seed: 1, Agents: 1, Mode: "realtime", TickRate: 20})
	defer cancel()
	spec := dial(t, addr)
	spec.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator"})
	spec.send(map[string]any{"type": "control", "command": "pause"})
	// A spectator's query is refused by the world's goroutine: the pause
	// has been handled, and takes effect after the first tick.
	spec.send(map[string]any{"type": "query", "tool": "query_inventory"})
	for m, _ := spec.recv(); m["type"] != "error"; m, _ = spec.recv() {
	}
	agent := newHandAgent(t, addr, "agent_001", "")
	tick, _ := agent.observe()
	require.Equal(t, 0, tick)
	// Paused before tick 1. The agent lets the observation of tick 0 go
	// unanswered, and the next one.
	const k = 1
	step(spec, k+1)
	tick, _ = agent.observe()
	require.Equal(t, k, tick)

	agent.send(map[string]any{"type": "decision", "tick": k - 1, "tool": "idle"}) // late
	agent.send(map[string]any{"type": "decision", "tick": k, "tool": "query_inventory"})
	require.Empty(t, agent.queryBarrier("handled"), "both decisions are taken, the newest replacing the other")

	agent.send(map[string]any{"type": "decision", "tick": k, "tool": "idle"})
	agent.send(map[string]any{"type": "decision", "tick": k - 1, "tool": "idle"})
	errs := agent.queryBarrier("refused")
	require.Len(t, errs, 2)
	agent.requireError(errs[0].m, ipc.CodeDuplicateDecision, false, "a decision for tick "+strconv.Itoa(k)+" was already received; the first one stands")
	agent.requireError(errs[1].m, ipc.CodeDuplicateDecision, false, "a decision for tick "+strconv.Itoa(k)+", a newer observation, was already received; it stands")

	step(spec, k+2) // the decision for k is applied at tick k+1
	step(spec, k+3)
	for tick, obs := agent.observe(); ; tick, obs = agent.observe() {
		if tick < k+2 {
			continue
		}
		require.Equal(t, k+2, tick)
		r := obs.LastActionResult
		require.NotNil(t, r)
		require.Equal(t, "query_inventory", r.Tool, "the decision for the newest observation is applied, not the late one")
		require.Equal(t, k+1, r.Tick)
		break
	}
}
