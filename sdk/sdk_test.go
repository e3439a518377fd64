package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/sdk"
	"github.com/arena-sim/arena/server"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

// The built-in bots and the engine's controllers are SDK agents.
var (
	_ sdk.Agent = bots.Bot(nil)
	_ sdk.Agent = engine.Controller(nil)
)

const timeout = 60 * time.Second

func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// startServer runs a real server for the foraging scenario on a Unix socket in
// a temporary folder. The server is stopped, and waited for, at cleanup.
func startServer(t *testing.T, opt server.Options) (addr string, done <-chan []*engine.Results) {
	t.Helper()
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	opt.Scenario = sc
	opt.Log = slog.New(slog.DiscardHandler)
	srv, err := server.New(opt)
	require.NoError(t, err)
	addr = "unix:" + filepath.Join(t.TempDir(), "arena.sock")
	l, err := ipc.Listen(context.Background(), addr)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	results := make(chan []*engine.Results, 1)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		res, _ := srv.Serve(ctx, l)
		results <- res
	}()
	t.Cleanup(func() {
		cancel()
		<-stopped
	})
	return addr, results
}

func connect(t *testing.T, addr string, opt sdk.Options) *sdk.Client {
	t.Helper()
	if opt.Log == nil {
		opt.Log = testLog(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := sdk.Connect(ctx, addr, opt)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func newForager(t *testing.T, agentID string, seed uint64) *bots.Forager {
	t.Helper()
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: seed})
	require.NoError(t, err)
	return bots.NewForager(bots.Info{AgentID: agentID, Seed: seed, Bounds: w.Bounds(), Rules: w.Rules()})
}

// episodes records what an EpisodeObserver is told.
type episodes struct {
	sdk.Agent
	events []string
	ended  chan int // episode numbers, as EndEpisode sees them
}

func (e *episodes) StartEpisode(_ context.Context, s *sdk.EpisodeStart) {
	e.events = append(e.events, fmt.Sprintf("start %d seed %d", s.Episode, s.Seed))
}

func (e *episodes) EndEpisode(_ context.Context, end *sdk.EpisodeEnd) {
	e.events = append(e.events, fmt.Sprintf("end %d %s final=%v", end.Episode, end.Reason, end.Final))
	if e.ended != nil {
		e.ended <- end.Episode
	}
}

func TestQueryFromInsideDecide(t *testing.T) {
	addr, served := startServer(t, server.Options{Seed: 2, Agents: 1, Ticks: 3, DecisionTimeout: timeout})
	var serverErrors []*sdk.ServerError
	c := connect(t, addr, sdk.Options{OnError: func(se *sdk.ServerError) { serverErrors = append(serverErrors, se) }})
	id := c.AgentID()
	require.Equal(t, "agent_001", id)

	type step struct {
		name     string
		call     func(ctx context.Context) error
		wantCode string // "" for success
	}
	queryInventory := func(ctx context.Context) error {
		inv, err := sdk.ClientFrom(ctx).QueryInventory(ctx)
		if err == nil && inv.Capacity <= 0 {
			err = fmt.Errorf("inventory capacity %d", inv.Capacity)
		}
		return err
	}
	steps := []step{
		{"query_inventory, typed", queryInventory, ""},
		{"query_world, typed", func(ctx context.Context) error {
			q, err := sdk.ClientFrom(ctx).QueryWorld(ctx, 30, "resource")
			if err == nil && (q.Radius != 30 || q.Filter != "resource") {
				err = fmt.Errorf("query_world answered %+v", q)
			}
			return err
		}, ""},
		{"query_world, untyped", func(ctx context.Context) error {
			data, err := sdk.ClientFrom(ctx).Query(ctx, "query_world", map[string]any{"radius": 5})
			if err == nil && data["query_result"] == nil {
				err = fmt.Errorf("data %v has no query_result", data)
			}
			return err
		}, ""},
		{"an action is not a query", func(ctx context.Context) error {
			_, err := c.Query(ctx, "move_to", map[string]any{"target": []any{1, 0, 1}})
			return err
		}, world.CodeNotAQuery},
		{"bad parameters", func(ctx context.Context) error {
			_, err := c.Query(ctx, "query_world", map[string]any{"radius": -1})
			return err
		}, world.CodeInvalidParams},
	}
	// The limit is 10 queries per observation, failed ones included: five
	// more pass, the eleventh is refused.
	for i := len(steps); i < 10; i++ {
		steps = append(steps, step{fmt.Sprintf("query %d of 10", i+1), queryInventory, ""})
	}
	steps = append(steps, step{"the eleventh query", queryInventory, world.CodeLimitExceeded})

	var ticks []int
	agent := &episodes{Agent: sdk.AgentFunc(func(ctx context.Context, obs *sdk.Observation) sdk.Decision {
		ticks = append(ticks, obs.Tick)
		require.Same(t, c, sdk.ClientFrom(ctx), "Decide's context carries the client")
		_, ok := ctx.Deadline()
		require.True(t, ok, "lockstep: Decide's context has the observation's deadline")
		if obs.Tick == 1 { // queries from several goroutines at once
			var wg sync.WaitGroup
			errs := make(chan error, 10)
			for range 10 {
				wg.Go(func() {
					_, err := c.QueryInventory(ctx)
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
		}
		if obs.Tick != 0 {
			return sdk.Decision{} // sent as idle
		}
		for _, s := range steps {
			err := s.call(ctx)
			if s.wantCode == "" {
				require.NoError(t, err, s.name)
				continue
			}
			var se *sdk.ServerError
			require.ErrorAs(t, err, &se, s.name)
			require.Equal(t, s.wantCode, se.Code, s.name)
			require.NotEmpty(t, se.Message, s.name)
			require.False(t, se.Fatal, s.name)
			require.ErrorContains(t, err, se.Code, s.name)
		}
		return sdk.Idle()
	})}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	end, err := c.Run(ctx, agent)
	require.NoError(t, err)
	require.Empty(t, serverErrors)

	require.Equal(t, []int{0, 1, 2}, ticks)
	require.Equal(t, []string{fmt.Sprintf("start 1 seed %d", engine.AgentSeed(2, "agent_001")), "end 1 time_limit final=true"}, agent.events)
	require.Equal(t, "episode_end", end.Type)
	require.Equal(t, 1, end.Episode)
	require.True(t, end.Final)
	require.Equal(t, "time_limit", end.Reason)
	require.Equal(t, 3, end.Tick)
	require.NotNil(t, end.Results)
	require.Equal(t, 3, end.Results.Ticks)
	require.Len(t, end.Results.Agents, 1)
	require.Equal(t, id, end.Results.Agents[0].ID)
	require.Equal(t, (<-served)[0].FinalStateHash, end.Results.FinalStateHash, "the results are the server's")

	_, err = c.Query(ctx, "query_inventory", nil)
	require.ErrorIs(t, err, sdk.ErrClosed, "Run closes the client at the end")
	_, err = sdk.ClientFrom(context.Background()).Query(ctx, "query_inventory", nil)
	require.ErrorContains(t, err, "no client")
}

func TestEpisodesOnARealServer(t *testing.T) {
	const seed = 5
	addr, served := startServer(t, server.Options{Seed: seed, Agents: 1, Ticks: 2, Episodes: 3, DecisionTimeout: timeout})
	c := connect(t, addr, sdk.Options{})
	type call struct{ episode, tick int }
	var calls []call
	agent := &episodes{}
	agent.Agent = sdk.AgentFunc(func(_ context.Context, obs *sdk.Observation) sdk.Decision {
		calls = append(calls, call{len(agent.events)/2 + 1, obs.Tick})
		return sdk.Idle()
	})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	end, err := c.Run(ctx, agent)
	require.NoError(t, err)
	require.Equal(t, []string{
		fmt.Sprintf("start 1 seed %d", engine.AgentSeed(seed, "agent_001")), "end 1 time_limit final=false",
		fmt.Sprintf("start 2 seed %d", engine.AgentSeed(engine.EpisodeSeed(seed, 2), "agent_001")), "end 2 time_limit final=false",
		fmt.Sprintf("start 3 seed %d", engine.AgentSeed(engine.EpisodeSeed(seed, 3), "agent_001")), "end 3 time_limit final=true",
	}, agent.events)
	require.Equal(t, []call{{1, 0}, {1, 1}, {2, 0}, {2, 1}, {3, 0}, {3, 1}}, calls)
	require.Equal(t, 3, end.Episode)
	require.True(t, end.Final)
	all := <-served
	require.Len(t, all, 3)
	require.NotZero(t, all[2].SecretSeed, "the operator's results keep the secret seed")
	require.Zero(t, end.Results.SecretSeed, "results sent to agents never carry the secret seed")
	want := *all[2]
	want.SecretSeed = 0
	require.Equal(t, &want, end.Results, "Run returns the last episode's results")
}

func TestRefusalsAreServerErrors(t *testing.T) {
	// Three slots, the last a bot's; agent_002 never connects, so the
	// episode does not start.
	addr, _ := startServer(t, server.Options{Seed: 1, Agents: 3, Bots: 1,
		Tokens: map[string]string{"agent_001": "red", "agent_002": "blue", "agent_003": "bot"}})
	connect(t, addr, sdk.Options{Token: "red"})

	// A server that speaks another version of the protocol.
	fake := newFakeServer(t)
	go fake.serve(t, func(f *fakeConn) {
		f.recv("hello")
		f.send(ipc.ErrorMsg{Type: "error", Code: ipc.CodeUnsupportedProtocol, Message: "protocol 1 is not supported; this server speaks 2", Fatal: true})
	})

	for _, tc := range []struct {
		name, addr string
		opt        sdk.Options
		code, msg  string
	}{
		{"wrong token", addr, sdk.Options{Token: "green"}, ipc.CodeUnauthorized, "the token does not match an agent slot"},
		{"token of another slot", addr, sdk.Options{Token: "blue", Agent: "agent_001"}, ipc.CodeUnauthorized, "the token does not match an agent slot"},
		{"a bot's slot", addr, sdk.Options{Token: "bot"}, ipc.CodeNoSlot, `slot "agent_003" is played by a built-in bot`},
		{"slot taken", addr, sdk.Options{Token: "red"}, ipc.CodeSlotTaken, `slot "agent_001" already has a connected client`},
		{"unsupported protocol", fake.addr, sdk.Options{}, ipc.CodeUnsupportedProtocol, "protocol 1 is not supported; this server speaks 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opt.Log = testLog(t)
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			c, err := sdk.Connect(ctx, tc.addr, tc.opt)
			require.Nil(t, c)
			var se *sdk.ServerError
			require.ErrorAs(t, err, &se)
			require.Equal(t, tc.code, se.Code)
			require.Equal(t, tc.msg, se.Message)
			require.True(t, se.Fatal)
			require.Equal(t, "server answered "+tc.code+": "+tc.msg, err.Error())
		})
	}
}

// proxy forwards connections to a server and can cut them, as a network that
// fails would. It records the hello each connection starts with.
type proxy struct {
	addr   string
	l      net.Listener
	target string
	hellos chan map[string]any

	mu    sync.Mutex
	conns []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	addr := "unix:" + filepath.Join(t.TempDir(), "proxy.sock")
	l, err := ipc.Listen(context.Background(), addr)
	require.NoError(t, err)
	p := &proxy{addr: addr, l: l, target: target, hellos: make(chan map[string]any, 16)}
	t.Cleanup(func() {
		l.Close()
		p.cut()
	})
	go p.accept(t)
	return p
}

func (p *proxy) accept(t *testing.T) {
	for {
		client, err := p.l.Accept()
		if err != nil {
			return
		}
		upstream, err := ipc.Dial(context.Background(), p.target)
		if err != nil {
			t.Errorf("proxy: %v", err)
			client.Close()
			return
		}
		p.mu.Lock()
		p.conns = append(p.conns, client, upstream)
		p.mu.Unlock()
		go func() {
			// The hello, recorded, then everything as it comes.
			frame, err := ipc.ReadFrame(client, ipc.DefaultMaxFrame, nil)
			if err != nil {
				return
			}
			var hello map[string]any
			if err := cbor.Unmarshal(frame, &hello); err == nil {
				p.hellos <- hello
			}
			if ipc.WriteFrame(upstream, frame) != nil {
				return
			}
			io.Copy(upstream, client)
			upstream.Close()
		}()
		go func() {
			io.Copy(client, upstream)
			client.Close()
		}()
	}
}

// cut closes every connection through the proxy.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func TestReconnectResumesTheSameSlot(t *testing.T) {
	const seed, cutTick = 3, 5
	addr, served := startServer(t, server.Options{Seed: seed, Agents: 2, DecisionTimeout: timeout})
	p := newProxy(t, addr)

	// a connects through the proxy and asks for any slot; b connects directly.
	a := connect(t, p.addr, sdk.Options{Backoff: time.Millisecond, MaxBackoff: 50 * time.Millisecond, MaxReconnects: 50})
	aID := a.AgentID()
	require.Equal(t, map[string]any{"type": "hello", "protocol": uint64(1), "role": "agent", "sdk": "arena-go/" + sdk.Version}, <-p.hellos,
		"the first hello asks for any slot")
	b := connect(t, addr, sdk.Options{})
	require.NotEqual(t, aID, b.AgentID())

	// At cutTick, a cuts its own connection while deciding: its decision is
	// lost. b waits, so that the world cannot move on, until a has
	// reconnected and been sent the observation of cutTick again.
	resumed := make(chan struct{})
	aForager := newForager(t, aID, seed)
	var aTicks []int
	aAgent := &episodes{Agent: sdk.AgentFunc(func(ctx context.Context, obs *sdk.Observation) sdk.Decision {
		aTicks = append(aTicks, obs.Tick)
		if obs.Tick == cutTick {
			if len(aTicks) >= 2 && aTicks[len(aTicks)-2] == cutTick {
				close(resumed)
			} else {
				p.cut()
			}
		}
		return aForager.Decide(ctx, obs)
	})}
	bForager := newForager(t, b.AgentID(), seed)
	bAgent := sdk.AgentFunc(func(ctx context.Context, obs *sdk.Observation) sdk.Decision {
		if obs.Tick == cutTick {
			select {
			case <-resumed:
			case <-time.After(timeout):
				t.Error("a did not resume")
			}
		}
		return bForager.Decide(ctx, obs)
	})

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	bEnd := make(chan *sdk.EpisodeEnd, 1)
	go func() {
		end, err := b.Run(ctx, bAgent)
		if err != nil {
			t.Errorf("b: %v", err)
		}
		bEnd <- end
	}()
	end, err := a.Run(ctx, aAgent)
	require.NoError(t, err)

	require.Equal(t, map[string]any{"type": "hello", "protocol": uint64(1), "role": "agent", "sdk": "arena-go/" + sdk.Version, "agent": aID}, <-p.hellos,
		"the hello after a reconnection asks for the slot the client had")
	require.Equal(t, aID, a.AgentID())
	require.Equal(t, []string{fmt.Sprintf("start 1 seed %d", engine.AgentSeed(3, aID)), "end 1 completed final=true"}, aAgent.events,
		"a reconnection within the episode starts no new episode")
	n := 0
	for _, tick := range aTicks {
		if tick == cutTick {
			n++
		}
	}
	require.Equal(t, 2, n, "the observation of cutTick was sent again after the reconnection")

	require.NotNil(t, end.Results)
	require.Equal(t, "completed", end.Reason)
	require.Greater(t, end.Tick, cutTick)
	ids := []string{}
	for _, r := range end.Results.Agents {
		ids = append(ids, r.ID)
		if r.ID == aID {
			require.True(t, r.Passed, "a finished its objective after reconnecting")
		}
	}
	require.Contains(t, ids, aID)
	require.Equal(t, end.Results, (<-bEnd).Results)
	require.Equal(t, end.Results.FinalStateHash, (<-served)[0].FinalStateHash)
}

func TestGiveUpAfterMaxReconnects(t *testing.T) {
	fake := newFakeServer(t)
	go fake.serve(t, func(f *fakeConn) {
		f.recv("hello")
		f.send(welcome)
		fake.l.Close() // no one will answer the redials
	})
	c := connect(t, fake.addr, sdk.Options{Backoff: time.Millisecond, MaxReconnects: 3})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, err := c.Run(ctx, sdk.AgentFunc(func(context.Context, *sdk.Observation) sdk.Decision { return sdk.Idle() }))
	require.ErrorContains(t, err, "gave up after 3 reconnection attempts")
}

// A fake server speaks raw frames, to script what a real one would take long
// to do (let an agent die) or does not do yet (several episodes).
type fakeServer struct {
	addr  string
	l     net.Listener
	codec *ipc.Codec
}

type fakeConn struct {
	t     *testing.T
	nc    net.Conn
	codec *ipc.Codec
}

func newFakeServer(t *testing.T) *fakeServer {
	addr := "unix:" + filepath.Join(t.TempDir(), "fake.sock")
	l, err := ipc.Listen(context.Background(), addr)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	codec, err := ipc.NewCodec(ipc.Limits{})
	require.NoError(t, err)
	return &fakeServer{addr: addr, l: l, codec: codec}
}

// serve runs script on the first connection. Failures are reported with
// t.Error: it runs on its own goroutine.
func (s *fakeServer) serve(t *testing.T, script func(*fakeConn)) {
	nc, err := s.l.Accept()
	if err != nil {
		t.Errorf("fake server: %v", err)
		return
	}
	defer nc.Close()
	defer func() {
		if r := recover(); r != nil && r != errStop {
			panic(r)
		}
	}()
	script(&fakeConn{t: t, nc: nc, codec: s.codec})
}

var errStop = errors.New("fake server stops")

func (f *fakeConn) send(v any) {
	b, err := f.codec.Marshal(v)
	if err == nil {
		err = ipc.WriteFrame(f.nc, b)
	}
	if err != nil {
		f.t.Errorf("fake server: send %T: %v", v, err)
		panic(errStop)
	}
}

// recv returns the next message that is not a ping; it must be of type typ.
func (f *fakeConn) recv(typ string) map[string]any {
	for {
		f.nc.SetReadDeadline(time.Now().Add(timeout))
		frame, err := ipc.ReadFrame(f.nc, ipc.DefaultMaxFrame, nil)
		var m map[string]any
		if err == nil {
			err = cbor.Unmarshal(frame, &m)
		}
		if err != nil {
			f.t.Errorf("fake server: waiting for %s: %v", typ, err)
			panic(errStop)
		}
		if m["type"] == "ping" {
			continue
		}
		if m["type"] != typ {
			f.t.Errorf("fake server: got %v, want a %s", m, typ)
			panic(errStop)
		}
		return m
	}
}

var welcome = ipc.Welcome{Type: "welcome", Protocol: 1, Session: "s1", AgentID: "agent_001", Scenario: "foraging",
	Episode: 1, Seed: 7, TickRate: 10, Mode: "lockstep", DecisionTimeoutMS: 5000,
	Objective: world.Objective{Description: "test", TimeLimit: 60}}

func observation(tick int, alive bool) ipc.ObservationMsg {
	return ipc.ObservationMsg{Type: "observation", Tick: tick, DeadlineMS: 5000, Observation: &world.Observation{
		Tick: tick, AgentID: "agent_001", Alive: alive, Health: 100, Inventory: map[string]int{}}}
}

func episodeResults(episode int) *engine.Results {
	return &engine.Results{Scenario: "foraging", Seed: uint64(6 + episode), Ticks: 2, EndReason: "completed", Outcome: "all_dead",
		FinalStateHash: fmt.Sprint("hash", episode), Agents: []engine.AgentResult{{ID: "agent_001", Score: 12.5, Metrics: map[string]float64{"health": 0}}}}
}

// decided says which tick the next decision answers.
func (f *fakeConn) decided() int {
	m := f.recv("decision")
	tick, _ := m["tick"].(uint64)
	return int(tick)
}

func TestEpisodesAndDeadAgents(t *testing.T) {
	type decideCall struct {
		tick  int
		alive bool
	}
	for _, tc := range []struct {
		name   string
		script func(f *fakeConn, agent *episodes)
		events []string
		calls  []decideCall
		end    *sdk.EpisodeEnd
		errors []string
	}{{
		name: "two episodes with episode_start, final",
		script: func(f *fakeConn, agent *episodes) {
			hello := f.recv("hello")
			if hello["agent"] != nil {
				f.t.Errorf("the first hello asks for %v", hello["agent"])
			}
			f.send(welcome)
			f.send(ipc.EpisodeStart{Type: "episode_start", Episode: 1, Seed: 7, Objective: welcome.Objective})
			f.send(observation(0, true))
			if tick := f.decided(); tick != 0 {
				f.t.Errorf("decision for tick %d, want 0", tick)
			}
			f.send(ipc.ErrorMsg{Type: "error", Code: ipc.CodeDuplicateDecision, Message: "a decision for tick 0 was already received; the first one stands"})
			f.send(observation(1, false)) // the agent died
			f.send(ipc.EpisodeEnd{Type: "episode_end", Episode: 1, Tick: 2, Reason: "completed", Results: episodeResults(1)})
			<-agent.ended // the dead observation was handled before
			f.send(ipc.EpisodeStart{Type: "episode_start", Episode: 2, Seed: 8, Objective: welcome.Objective})
			f.send(observation(0, true))
			if tick := f.decided(); tick != 0 {
				f.t.Errorf("decision for tick %d, want 0 (of episode 2)", tick)
			}
			f.send(ipc.EpisodeEnd{Type: "episode_end", Episode: 2, Tick: 1, Reason: "time_limit", Final: true, Results: episodeResults(2)})
			f.recv("bye")
		},
		events: []string{"start 1 seed 7", "end 1 completed final=false", "start 2 seed 8", "end 2 time_limit final=true"},
		calls:  []decideCall{{0, true}, {0, true}},
		end:    &sdk.EpisodeEnd{Type: "episode_end", Episode: 2, Tick: 1, Reason: "time_limit", Final: true, Results: episodeResults(2)},
		errors: []string{ipc.CodeDuplicateDecision},
	}, {
		name: "one episode, no episode_start, no final: the server closes",
		script: func(f *fakeConn, agent *episodes) {
			f.recv("hello")
			f.send(welcome)
			f.send(observation(0, true))
			f.decided()
			f.send(observation(1, false))
			f.send(ipc.EpisodeEnd{Type: "episode_end", Episode: 1, Tick: 2, Reason: "completed", Results: episodeResults(1)})
		},
		events: []string{"start 1 seed 7", "end 1 completed final=false"},
		calls:  []decideCall{{0, true}},
		end:    &sdk.EpisodeEnd{Type: "episode_end", Episode: 1, Tick: 2, Reason: "completed", Results: episodeResults(1)},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var calls []decideCall
			agent := &episodes{ended: make(chan int, 4), Agent: sdk.AgentFunc(func(_ context.Context, obs *sdk.Observation) sdk.Decision {
				calls = append(calls, decideCall{obs.Tick, obs.Alive})
				return sdk.Idle()
			})}
			fake := newFakeServer(t)
			scripted := make(chan struct{})
			go func() {
				defer close(scripted)
				fake.serve(t, func(f *fakeConn) { tc.script(f, agent) })
			}()
			var codes []string
			c := connect(t, fake.addr, sdk.Options{MaxReconnects: -1, OnError: func(se *sdk.ServerError) { codes = append(codes, se.Code) }})
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			end, err := c.Run(ctx, agent)
			require.NoError(t, err)
			<-scripted
			require.Equal(t, tc.end, end)
			require.Equal(t, tc.events, agent.events)
			require.Equal(t, tc.calls, calls, "an observation with alive false is not passed to Decide")
			require.Equal(t, tc.errors, codes)
		})
	}
}

func TestFatalErrorEndsRun(t *testing.T) {
	fake := newFakeServer(t)
	go fake.serve(t, func(f *fakeConn) {
		f.recv("hello")
		f.send(welcome)
		f.send(observation(0, true))
		f.decided()
		f.send(ipc.ErrorMsg{Type: "error", Code: ipc.CodeFrameTooLarge, Message: "frame of 2000000 bytes is larger than the limit of 1048576 bytes", Fatal: true})
	})
	c := connect(t, fake.addr, sdk.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	end, err := c.Run(ctx, sdk.AgentFunc(func(context.Context, *sdk.Observation) sdk.Decision { return sdk.Idle() }))
	require.Nil(t, end)
	var se *sdk.ServerError
	require.ErrorAs(t, err, &se)
	require.Equal(t, ipc.CodeFrameTooLarge, se.Code)
	require.True(t, se.Fatal)
	require.True(t, strings.HasSuffix(err.Error(), "server answered FRAME_TOO_LARGE: frame of 2000000 bytes is larger than the limit of 1048576 bytes"), err.Error())
}

func TestKeepAlive(t *testing.T) {
	fake := newFakeServer(t)
	pinged := make(chan struct{})
	go fake.serve(t, func(f *fakeConn) {
		f.recv("hello")
		f.send(welcome)
		// Nothing to answer: the client pings on its own.
		frame, err := ipc.ReadFrame(f.nc, ipc.DefaultMaxFrame, nil)
		var m map[string]any
		if err == nil {
			err = cbor.Unmarshal(frame, &m)
		}
		if err != nil || m["type"] != "ping" || len(m) != 1 {
			t.Errorf("got %v, %v; want a ping", m, err)
			return
		}
		close(pinged)
	})
	connect(t, fake.addr, sdk.Options{KeepAlive: 20 * time.Millisecond})
	select {
	case <-pinged:
	case <-time.After(timeout):
		t.Fatal("no ping")
	}
}

func TestCancelSaysBye(t *testing.T) {
	fake := newFakeServer(t)
	bye := make(chan struct{})
	go fake.serve(t, func(f *fakeConn) {
		f.recv("hello")
		f.send(welcome)
		f.recv("bye")
		close(bye)
	})
	c := connect(t, fake.addr, sdk.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Run(ctx, sdk.AgentFunc(func(context.Context, *sdk.Observation) sdk.Decision { return sdk.Idle() }))
	require.ErrorIs(t, err, context.Canceled)
	select {
	case <-bye:
	case <-time.After(timeout):
		t.Fatal("no bye")
	}
}

// The client answers the server's pings: with its own pings off, it stays
// connected however long it is quiet, while the server would drop a client
// silent for 60 ms.
func TestTheClientAnswersTheServersPings(t *testing.T) {
	addr, _ := startServer(t, server.Options{Seed: 1, Agents: 2,
		Conn: ipc.ConnOptions{PingInterval: 20 * time.Millisecond, PongWait: 40 * time.Millisecond}})
	c := connect(t, addr, sdk.Options{KeepAlive: -1})
	time.Sleep(600 * time.Millisecond) // ten times what drops a client that does not answer
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, err := c.Query(ctx, "query_inventory", nil)
	require.NoError(t, err, "the quiet client was dropped")
}
