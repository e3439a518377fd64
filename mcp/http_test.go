package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/sdk"
	"github.com/arena-sim/arena/server"
)

// arenaServer runs an arena server with an MCP bridge on a loopback port
// and, when cbor is set, a CBOR listener on a Unix socket. It returns the
// bridge, the socket's address and the channel of the server's results.
func arenaServer(t *testing.T, opt server.Options, hopt HTTPOptions, cbor bool) (*HTTPBridge, string, <-chan []*engine.Results) {
	t.Helper()
	if opt.Scenario == nil {
		sc, err := scenarios.Load("foraging")
		require.NoError(t, err)
		opt.Scenario = sc
	}
	opt.Seed = max(opt.Seed, 1)
	opt.Tokens = hopt.Tokens
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	srv, err := server.New(opt)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	hopt.ProgressEvery = max(hopt.ProgressEvery, 20*time.Millisecond)
	if hopt.Log == nil {
		hopt.Log = slog.New(slog.DiscardHandler)
	}
	b, err := ListenHTTP(ctx, "tcp::0", hopt)
	require.NoError(t, err)
	addr := ""
	serveLs := []net.Listener{b.Listener()}
	if cbor {
		addr = "unix:" + filepath.Join(t.TempDir(), "arena.sock")
		l, err := ipc.Listen(ctx, addr)
		require.NoError(t, err)
		serveLs = append(serveLs, l)
	}
	done := make(chan []*engine.Results, 1)
	go func() {
		res, err := srv.Serve(ctx, serveLs...)
		if err != nil {
			t.Errorf("serve: %v", err)
		}
		done <- res
	}()
	t.Cleanup(func() {
		cancel()
		b.Close()
	})
	return b, addr, done
}

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP opens an MCP session over Streamable HTTP.
func connectHTTP(t *testing.T, url, token string, copt *gomcp.ClientOptions) (*gomcp.ClientSession, error) {
	t.Helper()
	hc := &http.Client{}
	if token != "" {
		hc.Transport = bearer{token}
	}
	cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "test", Version: "0"}, copt).
		Connect(context.Background(), &gomcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// slotOf is the slot a session plays, as its instructions name it.
func slotOf(cs *gomcp.ClientSession) string {
	f := strings.Fields(strings.TrimPrefix(cs.InitializeResult().Instructions, "You play the agent "))
	return f[0]
}

// TestTwoHTTPSessionsShareALockstepEpisode: two MCP sessions over HTTP and a
// CBOR client play one lockstep episode; an action returns only once every
// agent has decided, reporting progress while it waits; both sessions see
// the same results.
func TestTwoHTTPSessionsShareALockstepEpisode(t *testing.T) {
	b, addr, done := arenaServer(t, server.Options{Agents: 3, Ticks: 4, DecisionTimeout: time.Minute}, HTTPOptions{}, true)
	var mu sync.Mutex
	progress := map[string]int{}
	copt := &gomcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *gomcp.ProgressNotificationClientRequest) {
		mu.Lock()
		progress[r.Params.ProgressToken.(string)]++
		mu.Unlock()
	}}
	a, err := connectHTTP(t, b.URL(), "", copt)
	require.NoError(t, err)
	c, err := connectHTTP(t, b.URL(), "", copt)
	require.NoError(t, err)
	require.Equal(t, "agent_001", slotOf(a))
	require.Equal(t, "agent_002", slotOf(c))

	// Before the third agent connects, observe waits for the start.
	observed := make(chan *testutil.MCPTurn, 1)
	go func() {
		turn, _ := testutil.CallMCP(t, a, "observe", nil)
		observed <- turn
	}()
	select {
	case <-observed:
		t.Fatal("observe returned before the episode started")
	case <-time.After(200 * time.Millisecond):
	}
	cbor, err := sdk.Connect(context.Background(), addr, sdk.Options{})
	require.NoError(t, err)
	require.Equal(t, "agent_003", cbor.AgentID())
	go cbor.Run(context.Background(), sdk.AgentFunc(func(context.Context, *sdk.Observation) sdk.Decision { return sdk.Idle() }))
	require.Equal(t, 0, (<-observed).Observation.Tick)

	// a acts at once; c only after a while: a's call waits for c's.
	type call struct {
		turn *testutil.MCPTurn
		took time.Duration
	}
	calls := make(chan call, 1)
	go func() {
		start := time.Now()
		params := &gomcp.CallToolParams{Name: "move_to", Arguments: map[string]any{"target": []float64{5, 0, 0}}}
		params.SetProgressToken("a1")
		res, err := a.CallTool(context.Background(), params)
		require.NoError(t, err)
		b, _ := json.Marshal(res.StructuredContent)
		var turn testutil.MCPTurn
		require.NoError(t, json.Unmarshal(b, &turn))
		calls <- call{&turn, time.Since(start)}
	}()
	time.Sleep(300 * time.Millisecond)
	turn, r := testutil.CallMCP(t, c, "idle", nil)
	require.False(t, r.IsError)
	require.Equal(t, 1, turn.Observation.Tick)
	got := <-calls
	require.GreaterOrEqual(t, got.took, 300*time.Millisecond, "the action waited for the other agents")
	require.Equal(t, 1, got.turn.Observation.Tick)
	require.Contains(t, string(got.turn.Result), `"tool":"move_to"`)
	mu.Lock()
	require.Positive(t, progress["a1"], "progress notifications while waiting")
	mu.Unlock()

	// Play to the end (--ticks 4); calls run concurrently, as lockstep needs.
	var wg sync.WaitGroup
	final := make([]*testutil.MCPResults, 2)
	for i, cs := range []*gomcp.ClientSession{a, c} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				turn, _ := testutil.CallMCP(t, cs, "idle", nil)
				if turn.Results != nil {
					final[i] = turn.Results
					return
				}
			}
		}()
	}
	wg.Wait()
	require.NotNil(t, final[0])
	require.Equal(t, final[0], final[1])
	require.Equal(t, "time_limit", final[0].EndReason)
	require.Len(t, final[0].Agents, 3)
	all := <-done
	require.Len(t, all, 1)
	require.Equal(t, all[0].FinalStateHash, final[0].FinalStateHash)

	// The session outlives the episode: observe has the results.
	turn, r = testutil.CallMCP(t, a, "observe", nil)
	require.False(t, r.IsError)
	require.NotNil(t, turn.Results)
}

// TestHTTPTokens: with tokens, a request without one or with a wrong one is
// refused with 401; a slot's token gets that slot.
func TestHTTPTokens(t *testing.T) {
	tokens := map[string]string{"agent_001": "red", "agent_002": "blue", "spectator": "eye"}
	b, _, _ := arenaServer(t, server.Options{Agents: 2}, HTTPOptions{Tokens: tokens}, false)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}`
	for _, auth := range []string{"", "Bearer green", "Bearer eye", "Basic blue", "Bearer"} {
		req, err := http.NewRequest(http.MethodPost, b.URL(), bytes.NewBufferString(init))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "Authorization %q", auth)
		require.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
	}
	_, err := connectHTTP(t, b.URL(), "green", nil)
	require.Error(t, err)

	blue, err := connectHTTP(t, b.URL(), "blue", nil)
	require.NoError(t, err)
	require.Equal(t, "agent_002", slotOf(blue))
	// The slot is taken while its session lives.
	_, err = connectHTTP(t, b.URL(), "blue", nil)
	require.ErrorContains(t, err, "SLOT_TAKEN")
	red, err := connectHTTP(t, b.URL(), "red", nil)
	require.NoError(t, err)
	require.Equal(t, "agent_001", slotOf(red))
	turn, r := testutil.CallMCP(t, red, "observe", nil)
	require.False(t, r.IsError)
	require.Equal(t, 0, turn.Observation.Tick)
}

// TestHTTPSessionEndFreesItsSlot: a session that ends gives its slot back,
// like a CBOR client that disconnects; when every slot is taken, a new
// session is refused with NO_SLOT.
func TestHTTPSessionEndFreesItsSlot(t *testing.T) {
	var logs testutil.SyncBuffer
	b, _, _ := arenaServer(t, server.Options{Agents: 3, Bots: 1, Log: slog.New(slog.NewTextHandler(&logs, nil))}, HTTPOptions{}, false)
	first, err := connectHTTP(t, b.URL(), "", nil)
	require.NoError(t, err)
	require.Equal(t, "agent_001", slotOf(first))
	require.NoError(t, first.Close())
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), `msg="agent disconnected" agent=agent_001`) },
		5*time.Second, 10*time.Millisecond, "the server frees the slot of a session that ended")
	again, err := connectHTTP(t, b.URL(), "", nil)
	require.NoError(t, err)
	require.Equal(t, "agent_001", slotOf(again))
	second, err := connectHTTP(t, b.URL(), "", nil)
	require.NoError(t, err)
	require.Equal(t, "agent_002", slotOf(second))
	_, err = connectHTTP(t, b.URL(), "", nil)
	require.ErrorContains(t, err, "NO_SLOT")
	// Every slot is played: the episode has started.
	turn, _ := testutil.CallMCP(t, again, "observe", nil)
	require.Equal(t, 0, turn.Observation.Tick)
}

// TestHTTPRealtime: in real time the world does not wait; an action applies
// at the next tick and the call returns with the observation that shows its
// result.
func TestHTTPRealtime(t *testing.T) {
	b, _, done := arenaServer(t, server.Options{Agents: 2, Bots: 1, Mode: "realtime", TickRate: 50, Ticks: 50}, HTTPOptions{}, false)
	cs, err := connectHTTP(t, b.URL(), "", nil)
	require.NoError(t, err)
	turn, _ := testutil.CallMCP(t, cs, "observe", nil)
	last := turn.Observation.Tick
	for _, tool := range []string{"move_to", "idle", "collect"} {
		args := map[string]any{"target": []float64{5, 0, 0}}
		if tool == "collect" {
			args = map[string]any{"target_name": "Berry1"}
		} else if tool == "idle" {
			args = nil
		}
		turn, _ = testutil.CallMCP(t, cs, tool, args)
		var res struct {
			Tool string `json:"tool"`
			Tick int    `json:"tick"`
		}
		require.NoError(t, json.Unmarshal(turn.Result, &res))
		require.Equal(t, tool, res.Tool)
		require.GreaterOrEqual(t, res.Tick, last, "applied at or after the observation it answered")
		require.Greater(t, turn.Observation.Tick, res.Tick, "the observation after it was applied")
		last = turn.Observation.Tick
	}
	cs.Close()
	all := <-done
	require.Equal(t, "time_limit", all[0].EndReason)
}

// TestHTTPEpisodes: a session stays from one episode to the next; the
// action that ends an episode returns its results, observe then waits for
// the next one's first observation.
func TestHTTPEpisodes(t *testing.T) {
	b, _, done := arenaServer(t, server.Options{Agents: 2, Bots: 1, Ticks: 2, Episodes: 2}, HTTPOptions{}, false)
	cs, err := connectHTTP(t, b.URL(), "", nil)
	require.NoError(t, err)
	var ends []*testutil.MCPResults
	for ep := 1; ep <= 2; ep++ {
		turn, r := testutil.CallMCP(t, cs, "observe", nil)
		require.False(t, r.IsError)
		require.Equal(t, 0, turn.Observation.Tick, "episode %d starts at tick 0", ep)
		require.Nil(t, turn.Results)
		turn, _ = testutil.CallMCP(t, cs, "idle", nil)
		require.Equal(t, 1, turn.Observation.Tick)
		turn, r = testutil.CallMCP(t, cs, "idle", nil)
		require.NotNil(t, turn.Results, "--ticks 2 ends episode %d", ep)
		text := r.Content[0].(*gomcp.TextContent).Text
		require.Equal(t, ep == 1, strings.Contains(text, "Another episode follows"), text)
		ends = append(ends, turn.Results)
	}
	_, r := testutil.CallMCP(t, cs, "idle", nil)
	require.Contains(t, errorText(t, r), "EPISODE_OVER")
	all := <-done
	require.Len(t, all, 2)
	for i := range all {
		require.Equal(t, all[i].FinalStateHash, ends[i].FinalStateHash)
	}
}

// TestHTTPDeath: a dead agent's calls are refused with DEAD while the
// episode goes on for the others (here another MCP session, which keeps the
// lockstep world waiting), and observe says so.
func TestHTTPDeath(t *testing.T) {
	b, _, done := arenaServer(t, server.Options{Agents: 2, Ticks: 170, DecisionTimeout: time.Minute}, HTTPOptions{}, false)
	a, err := connectHTTP(t, b.URL(), "", nil)
	require.NoError(t, err)
	other, err := connectHTTP(t, b.URL(), "", nil)
	require.NoError(t, err)
	otherDone := make(chan *testutil.MCPResults, 1)
	proceed := make(chan struct{})
	go func() {
		turn, _ := testutil.CallMCP(t, other, "observe", nil)
		for turn.Results == nil {
			if turn.Observation.Tick == 159 {
				<-proceed // hold the world while a is dead
			}
			turn, _ = testutil.CallMCP(t, other, "idle", nil)
		}
		otherDone <- turn.Results
	}()
	turn, _ := testutil.CallMCP(t, a, "move_to", map[string]any{"target": []float64{4, 0, -3}}) // Pit1
	for i := 0; turn.Observation.Alive; i++ {
		require.Less(t, i, 1000, "the pit never killed the agent")
		turn, _ = testutil.CallMCP(t, a, "idle", nil)
	}
	require.Nil(t, turn.Results)
	_, r := testutil.CallMCP(t, a, "idle", nil)
	require.Contains(t, errorText(t, r), "DEAD: agent_001 is dead")
	_, r = testutil.CallMCP(t, a, "query_world", nil)
	require.Contains(t, errorText(t, r), "DEAD")
	turn, r = testutil.CallMCP(t, a, "observe", nil)
	require.False(t, turn.Observation.Alive)
	require.Nil(t, turn.Results)
	require.Contains(t, r.Content[0].(*gomcp.TextContent).Text, "agent_001 is dead; the episode goes on without it")
	close(proceed)
	res := <-otherDone
	require.False(t, res.Agents[0].Passed)
	// The episode_end reaches each session on its own connection: a's may
	// land a moment after the other's.
	require.Eventually(t, func() bool {
		turn, _ = testutil.CallMCP(t, a, "observe", nil)
		return turn.Results != nil
	}, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, res, turn.Results)
	require.Equal(t, "time_limit", (<-done)[0].EndReason)
}

// TestHTTPRefusedInitializeTakesNoSlot: an initialize the transport refuses
// (no event streams accepted) takes no slot, so it cannot start the episode.
func TestHTTPRefusedInitializeTakesNoSlot(t *testing.T) {
	var logs testutil.SyncBuffer
	b, _, _ := arenaServer(t, server.Options{Agents: 2, Bots: 1, Log: slog.New(slog.NewTextHandler(&logs, nil))}, HTTPOptions{}, false)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}`
	req, err := http.NewRequest(http.MethodPost, b.URL(), bytes.NewBufferString(init))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	cs, err := connectHTTP(t, b.URL(), "", nil)
	require.NoError(t, err)
	require.Equal(t, "agent_001", slotOf(cs))
	require.Equal(t, 1, strings.Count(logs.String(), `msg="agent connected"`), logs.String())
}
