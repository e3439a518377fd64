package server_test

import (
	"context"
	"fmt"
	"github.com/arena-sim/arena/internal/ipcbench"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/server"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

// frameOf decodes a frame message.
func frameOf(t *testing.T, raw []byte) ipc.Frame {
	t.Helper()
	var f ipc.Frame
	require.NoError(t, cbor.Unmarshal(raw, &f))
	require.Equal(t, "frame", f.Type)
	return f
}

// nextFrame reads the spectator's messages up to its next frame.
func (c *client) nextFrame() ipc.Frame {
	c.t.Helper()
	for {
		m, raw := c.recv()
		if m["type"] == "frame" {
			return frameOf(c.t, raw)
		}
		require.Contains(c.t, []any{"episode_start", "welcome"}, m["type"], "%v", m)
	}
}

// observe reads the agent's messages up to its next observation.
func (c *client) observe() (int, world.Observation) {
	c.t.Helper()
	for {
		m, raw := c.recv()
		if m["type"] != "observation" {
			require.Contains(c.t, []any{"episode_start", "welcome"}, m["type"], "%v", m)
			continue
		}
		var msg struct {
			Tick        int               `cbor:"tick"`
			Observation world.Observation `cbor:"observation"`
		}
		require.NoError(c.t, cbor.Unmarshal(raw, &msg))
		return msg.Tick, msg.Observation
	}
}

func TestSpectatorsNeedTheirTokenAndSeeTheWholeWorld(t *testing.T) {
	addr, _, cancel := start(t, server.Options{Seed: 1, Agents: 1, DecisionTimeout: 5 * time.Second,
		Tokens: map[string]string{"agent_001": "a", "spectator": "eye"}})
	defer cancel()

	peek := dial(t, addr)
	peek.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator"})
	m, _ := peek.recv()
	require.Equal(t, ipc.CodeUnauthorized, m["code"], "with tokens, spectators need theirs")
	require.Equal(t, true, m["fatal"])

	spec := dial(t, addr)
	spec.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator", "token": "eye"})
	m, _ = spec.recv()
	require.Equal(t, "welcome", m["type"])
	require.Nil(t, m["agent_id"], "a spectator plays no agent")

	agent := dial(t, addr)
	agent.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "token": "a"})
	m, _ = agent.recv()
	require.Equal(t, "agent_001", m["agent_id"])
	agent.send(map[string]any{"type": "control", "command": "pause"})
	for m, _ = agent.recv(); m["type"] != "error"; m, _ = agent.recv() {
		require.Contains(t, []any{"episode_start", "observation"}, m["type"])
	}
	require.Equal(t, ipc.CodeUnauthorized, m["code"], "agents may not pause the world")
	require.Equal(t, false, m["fatal"])

	m, _ = spec.recv()
	require.Equal(t, "episode_start", m["type"])
	agent.send(map[string]any{"type": "decision", "tick": 0, "tool": "move_to", "params": map[string]any{"target": []any{4, 0, 4}}})

	first := spec.nextFrame()
	require.Equal(t, 1, first.Tick)
	kinds := map[string]int{}
	for _, e := range first.Entities {
		kinds[e.Type]++
	}
	require.Equal(t, map[string]int{"obstacle": 18, "resource": 30, "station": 2, "hazard": 5}, kinds,
		"the first frame carries the obstacles too")
	require.Len(t, first.Agents, 1)
	require.Equal(t, "move_to", first.Agents[0].Action.Tool)
	require.NotEmpty(t, first.Agents[0].Action.Path, "the agent's path is shown")

	tick, _ := agent.observe()
	require.Equal(t, 1, tick)
	agent.send(map[string]any{"type": "decision", "tick": 1, "tool": "idle"})
	second := spec.nextFrame()
	require.Equal(t, 2, second.Tick)
	for _, e := range second.Entities {
		require.NotEqual(t, "obstacle", e.Type, "obstacles are sent once")
	}
}

func TestSpectatorsPauseStepAndResume(t *testing.T) {
	addr, _, cancel := start(t, server.Options{Seed: 1, Agents: 1, DecisionTimeout: 5 * time.Second, SpectatorToken: "eye"})
	defer cancel()
	spec := dial(t, addr)
	spec.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator", "token": "eye"})
	agent := dial(t, addr)
	agent.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent"})

	tick, _ := agent.observe()
	require.Equal(t, 0, tick)
	spec.send(map[string]any{"type": "control", "command": "pause"})
	f := spec.nextFrame()
	if !f.Paused { // the spectator joined after the start: its first frame
		f = spec.nextFrame()
	}
	require.True(t, f.Paused, "a control command is acknowledged with a frame")
	require.Equal(t, 0, f.Tick)

	// The tick being decided finishes; then the world waits.
	agent.send(map[string]any{"type": "decision", "tick": 0, "tool": "idle"})
	f = spec.nextFrame()
	require.Equal(t, 1, f.Tick)
	require.True(t, f.Paused)

	for _, bad := range []map[string]any{
		{"type": "control", "command": "rewind"},
		{"type": "control", "command": "step", "value": 0.5},
		{"type": "control", "command": "speed", "value": 1000},
		{"type": "control", "command": "speed", "value": -1},
	} {
		spec.send(bad)
		m, _ := spec.recv()
		require.Equal(t, ipc.CodeBadMessage, m["code"], "%v", bad)
	}

	// step runs exactly one tick and stays paused.
	spec.send(map[string]any{"type": "control", "command": "step"})
	tick, _ = agent.observe()
	require.Equal(t, 1, tick)
	agent.send(map[string]any{"type": "decision", "tick": 1, "tool": "idle"})
	for f = spec.nextFrame(); f.Tick < 2; f = spec.nextFrame() {
	}
	require.Equal(t, 2, f.Tick)
	require.True(t, f.Paused)

	spec.send(map[string]any{"type": "control", "command": "resume"})
	for want := 2; want < 5; want++ {
		tick, _ = agent.observe()
		require.Equal(t, want, tick)
		agent.send(map[string]any{"type": "decision", "tick": tick, "tool": "idle"})
	}
	for f = spec.nextFrame(); f.Tick < 5; f = spec.nextFrame() {
	}
	require.False(t, f.Paused)
}

func TestRealtimeOverrunsAreCaughtUpOrSkippedWithAWarning(t *testing.T) {
	var logs testutil.SyncBuffer
	// A million ticks a second: every tick overruns its microsecond.
	_, done, cancel := start(t, server.Options{Seed: 1, Agents: 2, Bots: 2, Mode: "realtime", TickRate: 1e6, Ticks: 50,
		Log: slog.New(slog.NewTextHandler(&logs, nil))})
	defer cancel()
	res := <-done
	require.NotNil(t, res)
	require.Equal(t, 50, res.Ticks)
	require.True(t, strings.Contains(logs.String(), "skipping ahead") || strings.Contains(logs.String(), "catching up"), logs.String())
	require.Contains(t, logs.String(), "level=WARN")
}

const deadlyScenario = `{
  "name": "lava",
  "size": [20, 20],
  "tick_rate": 10,
  "hazards": [{"name": "Lava1", "type": "lava", "position": [4, 0, 0], "radius": 1.5, "entry_damage": 500, "damage_per_second": 0}],
  "agents": {"count": 2, "max": 2, "prefix": "agent_", "bot": "idle", "spawns": [[0, 0, 0], [-6, 0, -6]]},
  "objective": {"success_metrics": {"resources_collected": {"target": 1, "required": true}}, "time_limit": 60}
}`

func TestADeadAgentIsToldOnceAndItsDecisionsAreRefused(t *testing.T) {
	sc, err := scenarios.Parse("lava.json", []byte(deadlyScenario))
	require.NoError(t, err)
	addr, done, cancel := startScenario(t, sc, server.Options{Seed: 1, Ticks: 30, DecisionTimeout: 5 * time.Second})
	defer cancel()
	doomed, other := dial(t, addr), dial(t, addr)
	doomed.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "agent": "agent_001"})
	other.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "agent": "agent_002"})
	decide := func(c *client, tick int, tool string, params map[string]any) {
		c.send(map[string]any{"type": "decision", "tick": tick, "tool": tool, "params": params})
	}
	tick, obs := doomed.observe()
	require.True(t, obs.Alive)
	decide(doomed, tick, "move_to", map[string]any{"target": []any{4, 0, 0}})
	for obs.Alive {
		otherTick, _ := other.observe()
		decide(other, otherTick, "idle", nil)
		if tick, obs = doomed.observe(); obs.Alive {
			decide(doomed, tick, "idle", nil)
		}
	}
	require.Zero(t, obs.Health)

	// The world waits for the living agent only; the dead one's decisions
	// are refused.
	otherTick, _ := other.observe()
	decide(doomed, tick, "idle", nil)
	m, _ := doomed.recv()
	require.Equal(t, world.CodeDead, m["code"])
	require.Equal(t, false, m["fatal"])
	for {
		decide(other, otherTick, "idle", nil)
		m, raw := other.recv()
		if m["type"] == "episode_end" {
			break
		}
		require.Equal(t, "observation", m["type"])
		var msg ipc.ObservationMsg
		require.NoError(t, cbor.Unmarshal(raw, &msg))
		otherTick = msg.Tick
	}
	// No further observation for the dead agent: its next message is the
	// end of the episode.
	m, _ = doomed.recv()
	require.Equal(t, "episode_end", m["type"])
	require.Equal(t, true, m["final"])
	res := <-done
	require.Equal(t, "time_limit", res.EndReason)
	require.False(t, res.Agents[0].Alive)
	require.True(t, res.Agents[1].Alive)
}

func TestAReconnectingAgentGetsItsUnansweredObservationAgain(t *testing.T) {
	addr, done, cancel := start(t, server.Options{Seed: 1, Agents: 2, Ticks: 3, DecisionTimeout: 5 * time.Second})
	defer cancel()
	// agent_002 holds the world at tick 0 while agent_001 comes back.
	holder := dial(t, addr)
	holder.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "agent": "agent_002"})
	first := dial(t, addr)
	first.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent"})
	tick, obs := first.observe()
	require.Equal(t, 0, tick)
	first.nc.Close() // gone without deciding

	// Until the server has seen the old connection end, the slot is taken: a
	// client retries, as the SDK does.
	var again *client
	var m map[string]any
	for try := 0; try < 100; try++ {
		again = dial(t, addr)
		again.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "agent": "agent_001"})
		if m, _ = again.recv(); m["code"] != ipc.CodeSlotTaken {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.Equal(t, "welcome", m["type"], "%v", m)
	require.Equal(t, "agent_001", m["agent_id"])
	m, _ = again.recv()
	require.Equal(t, "episode_start", m["type"], "a rejoining agent learns which episode it is in")
	m, raw := again.recv()
	require.Equal(t, "observation", m["type"])
	var msg ipc.ObservationMsg
	require.NoError(t, cbor.Unmarshal(raw, &msg))
	require.Equal(t, 0, msg.Tick)
	require.Equal(t, obs.Position, msg.Observation.Position)
	require.Positive(t, msg.DeadlineMS)
	require.LessOrEqual(t, msg.DeadlineMS, 5000, "what is left of the deadline")
	again.send(map[string]any{"type": "decision", "tick": 0, "tool": "idle"})
	for tick := 0; tick < 3; tick++ {
		for _, c := range []*client{holder, again} {
			if c == again && tick == 0 {
				continue // answered above
			}
			got, _ := c.observe()
			require.Equal(t, tick, got)
			c.send(map[string]any{"type": "decision", "tick": tick, "tool": "idle"})
		}
	}
	res := <-done
	require.Equal(t, 3, res.Ticks)
}

func TestEpisodesFollowEachOtherOnTheSameSession(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	srv, err := server.New(server.Options{Scenario: sc, Seed: 9, Agents: 2, Bots: 1, Ticks: 5, Episodes: 3})
	require.NoError(t, err)
	addr, l := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan []*engine.Results, 1)
	go func() {
		all, err := srv.Serve(ctx, l)
		require.NoError(t, err)
		done <- all
	}()
	c := dial(t, addr)
	c.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent"})
	var ids []string
	for ep := 1; ep <= 3; ep++ {
		var start ipc.EpisodeStart
		for m, raw := c.recv(); ; m, raw = c.recv() {
			if m["type"] == "episode_start" {
				require.NoError(t, cbor.Unmarshal(raw, &start))
				break
			}
			require.Equal(t, "welcome", m["type"])
		}
		require.Equal(t, ep, start.Episode)
		require.Equal(t, engine.AgentSeed(engine.EpisodeSeed(9, ep), "agent_001"), start.Seed, "an agent's own seed, never the world's")
		require.Len(t, start.EpisodeID, 16)
		require.NotContains(t, ids, start.EpisodeID, "every episode has its own id")
		ids = append(ids, start.EpisodeID)
		require.Equal(t, 0, start.Tick)
		for tick := 0; tick < 5; tick++ {
			got, _ := c.observe()
			require.Equal(t, tick, got, "episode %d starts again at tick 0", ep)
			c.send(map[string]any{"type": "decision", "tick": tick, "tool": "idle"})
		}
		m, raw := c.recv()
		require.Equal(t, "episode_end", m["type"])
		var end ipc.EpisodeEnd
		require.NoError(t, cbor.Unmarshal(raw, &end))
		require.Equal(t, ep, end.Episode)
		require.Equal(t, ep == 3, end.Final)
		require.Equal(t, engine.EpisodeSeed(9, ep), end.Results.Seed)
	}
	all := <-done
	require.Len(t, all, 3)
	require.NotEqual(t, all[0].FinalStateHash, all[1].FinalStateHash)
}

func TestSpectatorInspectsAnAgent(t *testing.T) {
	addr, _, cancel := start(t, server.Options{Seed: 1, Agents: 1, DecisionTimeout: 5 * time.Second, SpectatorToken: "eye"})
	defer cancel()
	spec := dial(t, addr)
	spec.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator", "token": "eye"})
	other := dial(t, addr)
	other.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator", "token": "eye"})
	agent := dial(t, addr)
	agent.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent"})
	tick, obs := agent.observe()
	require.Equal(t, 0, tick)
	id := obs.AgentID

	spec.send(map[string]any{"type": "control", "command": "inspect", "agent": "nobody"})
	m, _ := spec.recv()
	for m["type"] != "error" {
		m, _ = spec.recv()
	}
	require.Equal(t, ipc.CodeBadMessage, m["code"])
	require.Equal(t, false, m["fatal"])
	spec.send(map[string]any{"type": "control", "command": "inspect", "agent": id})
	agent.send(map[string]any{"type": "decision", "tick": 0, "tool": "move_to", "params": map[string]any{"target": []any{3.0, 0.0, 3.0}}, "reasoning": "look around"})
	// (The inspect may be applied before or after tick 0: either way a frame
	// of tick 1 carries the observation.)
	f := spec.nextFrame()
	for f.Tick < 1 || f.Inspect == nil {
		f = spec.nextFrame()
	}
	// The frame after tick 0: the decision with its reasoning and result, and
	// the observation it answered, for this spectator only.
	require.Len(t, f.Decisions, 1)
	require.Equal(t, "look around", f.Decisions[0].Reasoning)
	require.True(t, f.Decisions[0].Result.Success)
	require.NotNil(t, f.Inspect)
	require.Equal(t, id, f.Inspect.Agent)
	// Its latest observation: tick 0's, or tick 1's when the inspect came
	// while the agent was deciding on it.
	require.LessOrEqual(t, f.Inspect.Tick, 1)
	var seen world.Observation
	require.NoError(t, cbor.Unmarshal(f.Inspect.Observation, &seen))
	require.Equal(t, f.Inspect.Tick, seen.Tick)
	require.Equal(t, id, seen.AgentID)
	require.Equal(t, obs.Health, seen.Health)
	for g := other.nextFrame(); g.Tick < 1; g = other.nextFrame() {
		require.Nil(t, g.Inspect)
	}

	// The first frame of a spectator describes the world.
	late := dial(t, addr)
	late.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator", "token": "eye"})
	lf := late.nextFrame()
	require.NotNil(t, lf.World)
	require.Equal(t, "lockstep", lf.World.Mode)
	require.Greater(t, lf.World.Perception, 0.0)
}

// TestACompactObservationIsResentAsSent: a lockstep server builds its
// remote agents' observations compact (the agents in view as references,
// see Server.Compact); one resent to a client that rejoins during the
// decision point is the same observation, agents in view included.
func TestACompactObservationIsResentAsSent(t *testing.T) {
	sc, err := ipcbench.Scenario(6, 2) // six agents 2 units apart: each sees the others
	require.NoError(t, err)
	addr, _, cancel := startScenario(t, sc, server.Options{Seed: 1, Agents: 6, Ticks: 2, DecisionTimeout: 5 * time.Second})
	defer cancel()
	for i := 2; i <= 6; i++ { // they hold the decision point open
		dial(t, addr).send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "agent": fmt.Sprintf("agent_%03d", i)})
	}
	first := dial(t, addr)
	first.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "agent": "agent_001"})
	// The observation's bytes, as the server encoded them.
	observation := func(c *client) cbor.RawMessage {
		for {
			m, raw := c.recv()
			if m["type"] == "observation" {
				var msg struct {
					Observation cbor.RawMessage `cbor:"observation"`
				}
				require.NoError(t, cbor.Unmarshal(raw, &msg))
				return msg.Observation
			}
		}
	}
	sent := observation(first)
	var o world.Observation
	require.NoError(t, cbor.Unmarshal(sent, &o))
	require.Len(t, o.NearbyAgents, 5)
	first.nc.Close()
	var again *client
	for try := 0; try < 100; try++ {
		again = dial(t, addr)
		again.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "agent": "agent_001"})
		if m, _ := again.recv(); m["type"] == "welcome" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.Equal(t, sent, observation(again))
}

// TestAnInspectedCompactObservationListsItsAgents: a spectator inspecting
// an agent whose observations the server builds compact sees the agents
// in view in the observation its frames carry.
func TestAnInspectedCompactObservationListsItsAgents(t *testing.T) {
	sc, err := ipcbench.Scenario(3, 2)
	require.NoError(t, err)
	addr, _, cancel := startScenario(t, sc, server.Options{Seed: 1, Agents: 3, Ticks: 6, DecisionTimeout: 5 * time.Second, SpectatorToken: "eye"})
	defer cancel()
	spec := dial(t, addr)
	spec.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator", "token": "eye"})
	spec.send(map[string]any{"type": "control", "command": "inspect", "agent": "agent_001"})
	agents := make([]*client, 3)
	for i := range agents {
		agents[i] = dial(t, addr)
		agents[i].send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "agent": fmt.Sprintf("agent_%03d", i+1)})
	}
	for tick := 0; tick < 3; tick++ {
		for _, c := range agents {
			got, o := c.observe()
			require.Equal(t, tick, got)
			require.Len(t, o.NearbyAgents, 2)
			c.send(map[string]any{"type": "decision", "tick": tick, "tool": "idle"})
		}
	}
	f := spec.nextFrame()
	for f.Inspect == nil {
		f = spec.nextFrame()
	}
	var seen world.Observation
	require.NoError(t, cbor.Unmarshal(f.Inspect.Observation, &seen))
	require.Equal(t, "agent_001", seen.AgentID)
	require.Len(t, seen.NearbyAgents, 2)
}
