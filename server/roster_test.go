package server_test

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
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

// dyingMove is agent i's (from 0) decision: the first four walk into their
// hazards with their first decision of an episode (in real time a client
// may never see the observation of tick 0).
func dyingMove(i int, first bool) world.Decision {
	if !first || i >= 4 {
		return world.Decision{Tool: "idle"}
	}
	return world.Decision{Tool: "move_to", Params: map[string]any{"target_x": -20 + 8*float64(i) + 4, "target_z": 0.0}}
}

// rosterLog is what a client held as the roster at each observation, by
// episode and tick.
type rosterLog map[[2]int][]string

// rosterPlan is how a rosterClient plays.
type rosterPlan struct {
	full     bool          // ask for the whole roster in every observation
	dropAt   int           // drop the connection at this tick of episode 1
	lazy     time.Duration // wait this long before each read
	realtime bool
}

// rosterClient plays agent i over raw connections (from dial) and rebuilds
// the roster with ipc.Roster, as the SDKs do. When plan.dropAt is positive
// it drops its connection on reading the observation of that tick in
// episode 1, without answering, connects again and closes
// rejoined[dropAt]. Any client waits for rejoined[tick], when there is one,
// before answering the observation of that tick in episode 1 (so that
// lockstep does not run the episode out while a client reconnects). A lazy
// client reads slowly (in real time, the server replaces the observations
// it has not written yet) and answers only one observation in three.
func rosterClient(t *testing.T, dial func() *client, i int, plan rosterPlan, rejoined map[int]chan struct{}) rosterLog {
	full, dropAt := plan.full, plan.dropAt
	id := fmt.Sprintf("agent_%03d", i+1)
	log := rosterLog{}
	var roster ipc.Roster
	// moved: the episode of the last first decision; ended: the last
	// episode whose end was read; decidedAt: by tick, the episode of the
	// last decision for that tick.
	episode, moved, ended := 0, 0, 0
	decidedAt := map[int]int{}
	var c *client
	connect := func() {
		for {
			c = dial()
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
		time.Sleep(plan.lazy)
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
			if plan.lazy > 0 && msg.Tick%3 != 0 {
				continue
			}
			d := dyingMove(i, moved != episode)
			moved = episode
			b, err := cbor.Marshal(map[string]any{"type": "decision", "tick": msg.Tick, "tool": d.Tool, "params": d.Params})
			require.NoError(t, err)
			// In real time a slow reader may answer after the last episode
			// ended and the server hung up; what it sent before is still
			// there to read.
			if err := ipc.WriteFrame(c.nc, b); err != nil && !plan.realtime {
				t.Errorf("%s: %v", id, err)
			}
			decidedAt[msg.Tick] = episode
		case "episode_end":
			if m["final"] == true {
				return log
			}
			ended = episode
		case "error":
			// In real time a decision may arrive after the agent died, or (a slow
			// reader's) after its episode ended: the error then follows the
			// episode's end, and perhaps decisions of the next episode.
			late := false
			if n, ok := errorTick(m); ok && m["code"] == ipc.CodeUnknownTick {
				e, sent := decidedAt[n]
				late = sent && ended >= e
			}
			if !(plan.realtime && (m["code"] == world.CodeDead || late)) {
				t.Errorf("%s: %v", id, m)
			}
		}
	}
}

// tickInMessage finds the first tick an error message names.
var tickInMessage = regexp.MustCompile(`tick (\d+)`)

// errorTick is the tick an error message is about ("... tick 21 ...").
func errorTick(m map[string]any) (int, bool) {
	msg, _ := m["message"].(string)
	sub := tickInMessage.FindStringSubmatch(msg)
	if sub == nil {
		return 0, false
	}
	n, err := strconv.Atoi(sub[1])
	return n, err == nil
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
	rt := mode == "realtime"
	lazy := time.Duration(0)
	if rt {
		lazy = 15 * time.Millisecond
	}
	for i, plan := range []rosterPlan{{}, {dropAt: 2}, {}, {}, {full: true}, {dropAt: 13}, {lazy: lazy}} {
		if i == 2 {
			continue // the Go SDK's
		}
		plan.realtime = rt
		wg.Go(func() { logs[i] = rosterClient(t, func() *client { return dial(t, addr) }, i, plan, rejoined) })
	}
	var sdkMu sync.Mutex
	logs[2] = rosterLog{}
	wg.Go(func() {
		ctx := context.Background()
		c, err := sdk.Connect(ctx, addr, sdk.Options{Agent: "agent_003"})
		if !assertNoError(t, err) {
			return
		}
		episode, moved := 0, 0
		_, err = c.Run(ctx, episodeAgent{start: func(e *sdk.EpisodeStart) { episode = e.Episode },
			decide: func(obs *world.Observation) world.Decision {
				sdkMu.Lock()
				logs[2][[2]int{episode, obs.Tick}] = slices.Clone(obs.AgentIDs)
				sdkMu.Unlock()
				first := moved != episode
				moved = episode
				return dyingMove(2, first)
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

	checkRosters(t, logs, rt, alive)
	for _, ep := range []int{1, 2} {
		require.Contains(t, logs[5], [2]int{ep, 20}, "agent_006 played on after its reconnection, in episode %d", ep)
	}
}

// checkRosters holds every client's roster to logs[4]'s (the client that
// asked for the whole roster) at every tick both saw, and that to the
// living agents of the spectator's frames where there is one.
func checkRosters(t *testing.T, logs []rosterLog, realtime bool, alive rosterLog) {
	t.Helper()
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
			require.True(t, ok || realtime, "agent_%03d: no truth for episode %d tick %d", i+1, k[0], k[1])
			if ok {
				compared++
				require.Equal(t, want, ids, "agent_%03d: episode %d tick %d", i+1, k[0], k[1])
			}
		}
		require.Greater(t, compared, len(log)/2, "agent_%03d", i+1)
	}
}

// TestRosterSurvivesReplacedObservations: in real time over a pipe, which
// buffers nothing, the observations a slow reader has not taken are replaced
// by newer ones; the deaths the replaced ones announced still reach it,
// because changes are sent from the roster of the last observation it
// answered.
func TestRosterSurvivesReplacedObservations(t *testing.T) {
	pl := &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
	done, cancel := serveOn(t, dyingScenario(t), server.Options{Seed: 3, Episodes: 2, Mode: "realtime", TickRate: 40,
		DecisionTimeout: 5 * time.Second, Conn: ipc.ConnOptions{MaxSkipped: 1000}}, pl)
	defer cancel()
	dial := func() *client {
		a, b := net.Pipe()
		select {
		case pl.conns <- a:
		case <-time.After(5 * time.Second):
			t.Fatal("the server accepts no connection")
		}
		t.Cleanup(func() { b.Close() })
		return &client{t: t, nc: b}
	}
	logs := make([]rosterLog, 7)
	var wg sync.WaitGroup
	for i := range logs {
		plan := rosterPlan{full: i == 4, realtime: true}
		if i == 6 {
			plan.lazy = 80 * time.Millisecond // about three observations of four replaced
		}
		wg.Go(func() { logs[i] = rosterClient(t, dial, i, plan, nil) })
	}
	wg.Wait()
	<-done
	checkRosters(t, logs, true, nil)
	changes := 0
	for ep := 1; ep <= 2; ep++ {
		var prev []string
		for tick := range 24 {
			if ids, ok := logs[6][[2]int{ep, tick}]; ok {
				if prev != nil && !slices.Equal(ids, prev) {
					changes++
				}
				prev = ids
			}
		}
	}
	require.Positive(t, changes, "the slow reader saw the roster change: %v", logs[6])
}

// pipeListener accepts the server ends of pipes.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

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
