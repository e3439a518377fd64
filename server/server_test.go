package server_test

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/server"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

// client is a minimal protocol client for tests.
type client struct {
	t  *testing.T
	nc net.Conn
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	var nc net.Conn
	var err error
	for i := 0; i < 100; i++ { // the server may still be starting
		if nc, err = ipc.Dial(context.Background(), addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc}
}

func (c *client) send(v any) {
	b, err := cbor.Marshal(v)
	require.NoError(c.t, err)
	require.NoError(c.t, ipc.WriteFrame(c.nc, b))
}

func (c *client) recv() (map[string]any, []byte) {
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	f, err := ipc.ReadFrame(c.nc, ipc.DefaultMaxFrame, nil)
	require.NoError(c.t, err)
	var m map[string]any
	require.NoError(c.t, cbor.Unmarshal(f, &m))
	return m, append([]byte(nil), f...)
}

func start(t *testing.T, opt server.Options) (string, chan *engine.Results, context.CancelFunc) {
	t.Helper()
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	return startScenario(t, sc, opt)
}

// startScenario serves sc on a Unix socket in a temporary directory until
// the test ends; the results arrive on the channel.
func startScenario(t *testing.T, sc *scenarios.Scenario, opt server.Options) (string, chan *engine.Results, context.CancelFunc) {
	t.Helper()
	addr, l := listen(t)
	done, cancel := serveOn(t, sc, opt, l)
	return addr, done, cancel
}

// serveOn serves sc on l until the test ends; the results arrive on the
// channel.
func serveOn(t *testing.T, sc *scenarios.Scenario, opt server.Options, l net.Listener) (chan *engine.Results, context.CancelFunc) {
	t.Helper()
	opt.Scenario = sc
	srv, err := server.New(opt)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *engine.Results, 1)
	served := make(chan struct{})
	t.Cleanup(func() { cancel(); <-served }) // the test may not log once it has ended
	go func() {
		defer close(served)
		all, err := srv.Serve(ctx, l)
		if err != nil {
			t.Log("serve:", err)
		}
		var last *engine.Results
		if len(all) > 0 {
			last = all[len(all)-1]
		}
		done <- last
	}()
	return done, cancel
}

// listen opens a Unix socket in a temporary folder.
func listen(t *testing.T) (string, net.Listener) {
	t.Helper()
	addr := "unix:" + filepath.Join(t.TempDir(), "arena.sock")
	l, err := ipc.Listen(context.Background(), addr)
	require.NoError(t, err)
	return addr, l
}

// play runs a forager over the protocol until the episode ends.
func play(t *testing.T, addr string, seed uint64) { playNoting(t, addr, seed, nil) }

// playNoting is play that passes on the notices the server sends.
func playNoting(t *testing.T, addr string, seed uint64, notices chan<- map[string]any) {
	c := dial(t, addr)
	c.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent"})
	welcome, _ := c.recv()
	require.Equal(t, "welcome", welcome["type"], "%v", welcome)
	id := welcome["agent_id"].(string)
	w, err := scenarios.Load("foraging")
	require.NoError(t, err)
	cfg, err := w.Config(scenarios.Options{Seed: seed})
	require.NoError(t, err)
	f := bots.NewForager(bots.Info{AgentID: id, Seed: seed, Bounds: cfg.Bounds, Rules: worldRules(t, seed)})
	for {
		m, raw := c.recv()
		switch m["type"] {
		case "observation":
			var msg struct {
				Tick        int               `cbor:"tick"`
				Observation world.Observation `cbor:"observation"`
			}
			require.NoError(t, cbor.Unmarshal(raw, &msg))
			d := f.Decide(context.Background(), &msg.Observation)
			c.send(map[string]any{"type": "decision", "tick": msg.Tick, "tool": d.Tool, "params": d.Params, "reasoning": d.Reasoning})
		case "episode_end":
			return
		case "error":
			t.Errorf("%s got an error: %v", id, m)
		case "notice":
			if notices != nil {
				notices <- m
			}
		}
	}
}

func worldRules(t *testing.T, seed uint64) world.Rules {
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: seed})
	require.NoError(t, err)
	return w.Rules()
}

func TestRemoteForagersMatchAnInProcessRun(t *testing.T) {
	const seed = 3
	addr, done, _ := start(t, server.Options{Seed: seed})
	finished := make(chan struct{}, 2)
	for i := 0; i < 2; i++ {
		go func() { play(t, addr, seed); finished <- struct{}{} }()
	}
	var res *engine.Results
	select {
	case res = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("episode did not finish")
	}
	require.NotNil(t, res)
	<-finished
	<-finished

	// The same seed and agents in process.
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: seed})
	require.NoError(t, err)
	ctrls := map[string]engine.Controller{}
	for _, a := range w.Agents() {
		ctrls[a.ID] = bots.NewForager(bots.Info{AgentID: a.ID, Seed: seed, Bounds: w.Bounds(), Rules: w.Rules()})
	}
	local, err := (&engine.Runner{World: w, Controllers: ctrls}).Run(context.Background())
	require.NoError(t, err)
	require.Equal(t, local.FinalStateHash, res.FinalStateHash, "the protocol changes nothing")
	require.Equal(t, local.Agents, res.Agents)
}

func TestProtocolErrorsOverARealSocket(t *testing.T) {
	addr, _, cancel := start(t, server.Options{Seed: 1, Tokens: map[string]string{"agent_001": "red-token", "agent_002": "blue-token"}, DecisionTimeout: time.Second})
	defer cancel()

	early := dial(t, addr)
	early.send(map[string]any{"type": "decision", "tick": 0, "tool": "idle"})
	m, _ := early.recv()
	require.Equal(t, ipc.CodeNotReady, m["code"])

	bad := dial(t, addr)
	bad.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "token": "nope"})
	m, _ = bad.recv()
	require.Equal(t, ipc.CodeUnauthorized, m["code"])
	require.Equal(t, true, m["fatal"])

	old := dial(t, addr)
	old.send(map[string]any{"type": "hello", "protocol": 2, "role": "agent", "token": "red-token"})
	m, _ = old.recv()
	require.Equal(t, ipc.CodeUnsupportedProtocol, m["code"])

	red := dial(t, addr)
	red.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "token": "red-token"})
	m, _ = red.recv()
	require.Equal(t, "agent_001", m["agent_id"])

	twin := dial(t, addr)
	twin.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "token": "red-token"})
	m, _ = twin.recv()
	require.Equal(t, ipc.CodeSlotTaken, m["code"])

	blue := dial(t, addr)
	blue.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "token": "blue-token"})
	m, _ = blue.recv()
	require.Equal(t, "agent_002", m["agent_id"])

	// Both connected: the episode starts.
	start, _ := red.recv()
	require.Equal(t, "episode_start", start["type"])
	require.Equal(t, uint64(1), start["episode"])
	obs, _ := red.recv()
	require.Equal(t, "observation", obs["type"])
	require.Equal(t, uint64(0), obs["tick"])
	red.send(map[string]any{"type": "decision", "tick": 5, "tool": "idle"})
	m, _ = red.recv()
	require.Equal(t, ipc.CodeUnknownTick, m["code"])
	red.send(map[string]any{"type": "query", "id": 1, "tool": "move_to", "params": map[string]any{"target": []any{1, 0, 1}}})
	m, _ = red.recv()
	require.Equal(t, "result", m["type"])
	require.Equal(t, world.CodeNotAQuery, m["error_code"])
	red.send(map[string]any{"type": "query", "id": "q2", "tool": "query_inventory"})
	m, _ = red.recv()
	require.Equal(t, true, m["success"])
	require.Equal(t, "q2", m["id"])
	red.send(map[string]any{"type": "decision", "tick": 0, "tool": "idle"})
	red.send(map[string]any{"type": "decision", "tick": 0, "tool": "idle"})
	m, _ = red.recv()
	require.Equal(t, ipc.CodeDuplicateDecision, m["code"])

	// blue never answers: after the timeout the world moves on and blue's next
	// observation reports TIMEOUT.
	m, _ = blue.recv()
	require.Equal(t, "episode_start", m["type"])
	obs, _ = blue.recv()
	require.Equal(t, uint64(0), obs["tick"])
	obs, raw := blue.recv()
	require.Equal(t, uint64(1), obs["tick"])
	var msg struct {
		Observation world.Observation `cbor:"observation"`
	}
	require.NoError(t, cbor.Unmarshal(raw, &msg))
	require.Equal(t, world.CodeTimeout, msg.Observation.LastActionResult.ErrorCode)
}

func TestDecisionEdgeCases(t *testing.T) {
	addr, _, cancel := start(t, server.Options{Seed: 1, Agents: 1, DecisionTimeout: 2 * time.Second})
	defer cancel()
	c := dial(t, addr)
	c.send(map[string]any{"type": "hello", "protocol": 1.0, "role": "agent"})
	m, _ := c.recv()
	require.Equal(t, "welcome", m["type"], "a float protocol number is a number")
	m, _ = c.recv()
	require.Equal(t, "episode_start", m["type"])
	obs, _ := c.recv()
	require.Equal(t, "observation", obs["type"])
	c.send(map[string]any{"type": "decision", "tick": 0, "tool": ""})
	m, _ = c.recv()
	require.Equal(t, ipc.CodeBadMessage, m["code"])
	c.send(map[string]any{"type": "decision", "tick": 0.5, "tool": "idle"})
	m, _ = c.recv()
	require.Equal(t, ipc.CodeUnknownTick, m["code"])
	c.send(map[string]any{"type": "decision", "tick": 0.0, "tool": "idle"})
	obs, _ = c.recv()
	require.Equal(t, "observation", obs["type"], "a float tick that is whole is accepted")
	require.Equal(t, uint64(1), obs["tick"])
	c.send(map[string]any{"type": "decision", "tick": 0, "tool": "idle"})
	m, _ = c.recv()
	require.Equal(t, ipc.CodeDuplicateDecision, m["code"])
	for i := 0; i < 10; i++ { // use up the query limit (10)
		c.send(map[string]any{"type": "query", "id": i, "tool": "query_inventory"})
		m, _ = c.recv()
		require.Equal(t, true, m["success"])
	}
	c.send(map[string]any{"type": "query", "id": 10, "tool": "query_inventory"})
	m, _ = c.recv()
	require.Equal(t, world.CodeLimitExceeded, m["error_code"])
}
