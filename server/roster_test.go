package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/sdk"
	"github.com/arena-sim/arena/server"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

// dyingScenario has seven agents. Beside each of the first four is a hazard
// that kills at a different pace: an agent that walks into it (dyingMove)
// dies after about 4, 8, 12 or 16 ticks. The last three are safe.
func dyingScenario(t *testing.T) *scenarios.Scenario {
	t.Helper()
	var hazards, spawns []string
	for i := range 7 {
		x := -20 + 8*float64(i)
		spawns = append(spawns, fmt.Sprintf("[%g, 0, 0]", x))
		if i < 4 {
			// 100 health at 10 ticks a second: dead after about 4(i+1) ticks.
			hazards = append(hazards, fmt.Sprintf(`{"name": "Lava%d", "type": "lava", "position": [%g, 0, 0], "radius": 2, "entry_damage": 0, "damage_per_second": %g}`,
				i+1, x+4, 1000/(4*float64(i+1))))
		}
	}
	sc, err := scenarios.Parse("dying.json", []byte(fmt.Sprintf(`{
  "name": "dying", "description": "Agents die one after the other.",
  "size": [60, 20], "tick_rate": 10,
  "hazards": [%s],
  "agents": {"count": 7, "max": 7, "spawns": [%s]},
  "objective": {"description": "Survive.", "success_metrics": {"alive": {"target": 1, "weight": 1}}, "time_limit": 24}
}`, strings.Join(hazards, ", "), strings.Join(spawns, ", "))))
	require.NoError(t, err)
	return sc
}

// dyingMove is agent i's (from 0) decision at tick 0: the first four walk
// into their hazards.
func dyingMove(i, tick int) world.Decision {
	if tick != 0 || i >= 4 {
		return world.Decision{Tool: "idle"}
	}
	return world.Decision{Tool: "move_to", Params: map[string]any{"target_x": -20 + 8*float64(i) + 4, "target_z": 0.0}}
}

// rosterLog is what a client held as the roster at each observation, by
// episode and tick.
type rosterLog map[[2]int][]string

// rosterClient plays slot id with idle decisions over a raw connection and
// rebuilds the roster with ipc.Roster, as the SDKs do. full asks for the
// whole roster in every observation. When dropAt is positive it drops its
// connection on reading the observation of that tick in episode 1, without
// answering, connects again and closes rejoined[dropAt]. Any client waits
// for rejoined[tick], when there is one, before answering the observation
// of that tick in episode 1 (so that lockstep does not run the episode out
// while a client reconnects). A lazy client reads slowly (in real time, the
// server replaces the observations it has not written yet) and answers only
// one observation in three.
func rosterClient(t *testing.T, addr string, i int, full bool, dropAt int, lazy, realtime bool, rejoined map[int]chan struct{}) rosterLog {
	id := fmt.Sprintf("agent_%03d", i+1)
	log := rosterLog{}
	var roster ipc.Roster
	episode := 0
	var c *client
	connect := func() {
		for {
			c = dial(t, addr)
			c.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "agent": id, "full_roster": full})
			m, _ := c.recv()
			if m["code"] != ipc.CodeSlotTaken { // the server has not seen the old connection end yet
				require.Equal(t, "welcome", m["type"], "%v", m)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	connect()
	for {
		if lazy {
			time.Sleep(15 * time.Millisecond)
		}
		m, raw := c.recv()
		switch m["type"] {
		case "welcome", "episode_start":
			var msg struct {
				Episode  int      `cbor:"episode"`
				AgentIDs []string `cbor:"agent_ids"`
			}
			require.NoError(t, cbor.Unmarshal(raw, &msg))
			require.NotEmpty(t, msg.AgentIDs, "%s: %s carries the roster", id, m["type"])
			roster.Reset(msg.AgentIDs)
			episode = msg.Episode
		case "observation":
			var msg ipc.ObservationMsg
			require.NoError(t, cbor.Unmarshal(raw, &msg))
			_, sent := m["observation"].(map[any]any)["agent_ids"]
			require.Equal(t, full, sent, "%s: agent_ids in the observation of tick %d", id, msg.Tick)
			if full {
				require.Empty(t, msg.AgentsLeft)
			}
			roster.Observe(msg.Observation, msg.AgentsLeft)
			log[[2]int{episode, msg.Tick}] = slices.Clone(msg.Observation.AgentIDs)
			if !msg.Observation.Alive {
				continue
			}
			if dropAt > 0 && episode == 1 && msg.Tick == dropAt {
				dropAt = 0
				c.nc.Close()
				connect()
				close(rejoined[msg.Tick])
				continue
			}
			if ch := rejoined[msg.Tick]; ch != nil && episode == 1 {
				select {
				case <-ch:
				case <-time.After(5 * time.Second):
					t.Errorf("%s: nobody rejoined at tick %d", id, msg.Tick)
				}
			}
			if lazy && msg.Tick%3 != 0 {
				continue
			}
			d := dyingMove(i, msg.Tick)
			c.send(map[string]any{"type": "decision", "tick": msg.Tick, "tool": d.Tool, "params": d.Params})
		case "episode_end":
			if m["final"] == true {
				return log
			}
		case "error":
			// In real time a decision may arrive after the agent died.
			if !(realtime && m["code"] == world.CodeDead) {
				t.Errorf("%s: %v", id, m)
			}
		}
	}
}

// TestRosterIsSentAsChanges: clients that keep the roster from welcome,
// episode_start and agents_left hold exactly the roster of the client that
// asked for it whole (the world's) at every observation, and it is the
// living agents of the spectator's frames: while agents die, while one
// reconnects before and one after deaths, through two episodes, and through
// the Go SDK.
func TestRosterIsSentAsChanges(t *testing.T) {
	for _, mode := range []string{"lockstep", "realtime"} {
		t.Run(mode, func(t *testing.T) { testRosterChanges(t, mode) })
	}
}

func testRosterChanges(t *testing.T, mode string) {
	addr, done, cancel := startScenario(t, dyingScenario(t), server.Options{Seed: 3, Episodes: 2, Mode: mode, TickRate: 40,
		DecisionTimeout: 5 * time.Second, OpenSpectators: true})
	defer cancel()

	spec := dial(t, addr)
	spec.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator"})
	m, raw := spec.recv()
	require.Equal(t, "welcome", m["type"])
	var welcome ipc.Welcome
	require.NoError(t, cbor.Unmarshal(raw, &welcome))
	require.Equal(t, []string{"agent_001", "agent_002", "agent_003", "agent_004", "agent_005", "agent_006", "agent_007"}, welcome.AgentIDs)

	logs := make([]rosterLog, 7)
	rejoined := map[int]chan struct{}{2: make(chan struct{}), 13: make(chan struct{})}
	var wg sync.WaitGroup
	for i, plan := range []struct {
		full   bool
		dropAt int
		lazy   bool
	}{{}, {dropAt: 2}, {}, {}, {full: true}, {dropAt: 13}, {lazy: mode == "realtime"}} {
		if i == 2 {
			continue // the Go SDK's
		}
		wg.Go(func() {
			logs[i] = rosterClient(t, addr, i, plan.full, plan.dropAt, plan.lazy, mode == "realtime", rejoined)
		})
	}
	var sdkMu sync.Mutex
	logs[2] = rosterLog{}
	wg.Go(func() {
		ctx := context.Background()
		c, err := sdk.Connect(ctx, addr, sdk.Options{Agent: "agent_003"})
		if !assertNoError(t, err) {
			return
		}
		episode := 0
		_, err = c.Run(ctx, episodeAgent{start: func(e *sdk.EpisodeStart) { episode = e.Episode },
			decide: func(obs *world.Observation) world.Decision {
				sdkMu.Lock()
				logs[2][[2]int{episode, obs.Tick}] = slices.Clone(obs.AgentIDs)
				sdkMu.Unlock()
				return dyingMove(2, obs.Tick)
			}})
		assertNoError(t, err)
	})

	// The spectator's frames: the living agents at each tick.
	alive := rosterLog{}
	episode := 0
	for {
		m, raw := spec.recv()
		if m["type"] == "episode_start" {
			episode++
		}
		if m["type"] == "episode_end" && m["final"] == true {
			break
		}
		if m["type"] != "frame" {
			continue
		}
		f := frameOf(t, raw)
		ids := []string{}
		for _, a := range f.Agents {
			if a.Alive {
				ids = append(ids, a.ID)
			}
		}
		alive[[2]int{episode, f.Tick}] = ids
	}
	wg.Wait()
	<-done

	truth := logs[4]
	rosters := map[string]bool{}
	for k, ids := range truth {
		rosters[strings.Join(ids, ",")] = true
		if want, ok := alive[k]; ok {
			require.Equal(t, want, ids, "episode %d tick %d: the roster is not the living agents", k[0], k[1])
		}
	}
	require.GreaterOrEqual(t, len(rosters), 5, "four agents die, so the roster takes five values: %v", rosters)
	for i, log := range logs {
		require.NotEmpty(t, log, "agent_%03d", i+1)
		compared := 0
		for k, ids := range log {
			want, ok := truth[k]
			// In real time the truth's client may miss a tick too.
			require.True(t, ok || mode == "realtime", "agent_%03d: no truth for episode %d tick %d", i+1, k[0], k[1])
			if ok {
				compared++
				require.Equal(t, want, ids, "agent_%03d: episode %d tick %d", i+1, k[0], k[1])
			}
		}
		require.Greater(t, compared, len(log)/2, "agent_%03d", i+1)
	}
	for _, ep := range []int{1, 2} {
		require.Contains(t, logs[5], [2]int{ep, 20}, "agent_006 played on after its reconnection, in episode %d", ep)
	}
}

// episodeAgent is an sdk.Agent and EpisodeObserver made of functions.
type episodeAgent struct {
	start  func(*sdk.EpisodeStart)
	decide func(*world.Observation) world.Decision
}

func (a episodeAgent) StartEpisode(_ context.Context, e *sdk.EpisodeStart) { a.start(e) }
func (a episodeAgent) EndEpisode(context.Context, *sdk.EpisodeEnd)         {}
func (a episodeAgent) Decide(_ context.Context, obs *world.Observation) sdk.Decision {
	return a.decide(obs)
}

func assertNoError(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}
