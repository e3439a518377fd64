package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/render"
	"github.com/arena-sim/arena/sdk/llm"
	"github.com/stretchr/testify/require"
)

// TestRunWithLLMAgents plays a short foraging episode with every agent an
// llm.Agent talking to a fake OpenAI-compatible server that always answers
// with a move.
func TestRunWithLLMAgents(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"explore",
			"tool_calls":[{"id":"c1","type":"function","function":{"name":"move_to","arguments":"{\"target\":[1,0,1]}"}}]}}]}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	out, _, err := arena(t, "run", "--scenario", "foraging", "--agents", "2", "--ticks", "20", "--out", dir, "--quiet",
		"--agent", "llm", "--model", "fake", "--base-url", srv.URL+"/v1")
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() == 0 || !strings.Contains(out, "mean score") {
		t.Fatalf("%d calls; output:\n%s", calls.Load(), out)
	}
	ents, err := os.ReadDir(filepath.Join(dir, "transcripts"))
	if err != nil || len(ents) != 2 {
		t.Fatalf("transcripts: %v %v", ents, err)
	}
	// The viewer finds the transcripts beside the replay.
	saved := showWindow
	defer func() { showWindow = saved }()
	showWindow = func(_ context.Context, g *render.Game, _ string, _, _ int) error {
		require.NotNil(t, g.Model.Transcripts)
		e := g.Model.Transcripts.Turn("agent_001", 1, 3)
		require.NotNil(t, e, "agent_001's turn at tick 3")
		require.Contains(t, e.Lines, `calls move_to {"target":[1,0,1]}`)
		return nil
	}
	_, _, err = arena(t, "view", filepath.Join(dir, replayFile), "--select", "agent_001", "--show", "history")
	require.NoError(t, err)
	if _, _, err := arena(t, "run", "--agent", "llm", "--out", dir, "--quiet", "--ticks", "1", "--base-url", srv.URL); err == nil && os.Getenv("ARENA_MODEL") == "" {
		t.Error("--agent llm without a model accepted")
	}
}

// TestServeWithLLMBots fills every slot of `arena serve` with language-model
// agents (--bots with --agent llm), so the episode starts at once and plays
// against the fake model.
func TestServeWithLLMBots(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"wait",
			"tool_calls":[{"id":"c1","type":"function","function":{"name":"idle","arguments":"{}"}}]}}]}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	out, _, err := arena(t, "serve", "--scenario", "foraging", "--agents", "2", "--bots", "2", "--ticks", "5",
		"--listen", "unix:"+filepath.Join(dir, "a.sock"), "--out", dir, "--agent", "llm", "--model", "fake", "--base-url", srv.URL+"/v1")
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 10 || !strings.Contains(out, "ended: time_limit after 5 ticks") {
		t.Fatalf("%d model calls (want 2 agents × 5 ticks); output:\n%s", calls.Load(), out)
	}
	if ents, err := os.ReadDir(filepath.Join(dir, "transcripts")); err != nil || len(ents) != 2 {
		t.Fatalf("transcripts: %v %v", ents, err)
	}
}

// arenaProcess runs the arena command in a child process (the test binary,
// see TestMain) and returns its exit code, its standard error and how long
// it took.
func arenaProcess(t *testing.T, args ...string) (int, string, time.Duration) {
	t.Helper()
	start := time.Now()
	code, _, stderr := arenaIn(t, "", args...)
	return code, stderr, time.Since(start)
}

// scriptedModel is an OpenAI-compatible server answering with statuses in
// turn (200: a move), then with moves; it counts the calls.
func scriptedModel(t *testing.T, statuses ...int) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n := int(calls.Add(1))
		w.Header().Set("Content-Type", "application/json")
		if n <= len(statuses) && statuses[n-1] != 200 {
			w.WriteHeader(statuses[n-1])
			io.WriteString(w, `{"error":{"message":"scripted failure"}}`)
			return
		}
		io.WriteString(w, `{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"go",
			"tool_calls":[{"id":"c1","type":"function","function":{"name":"move_to","arguments":"{\"target\":[1,0,1]}"}}]}}],
			"usage":{"prompt_tokens":50,"completion_tokens":5}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// TestRunStopsOnFatalModelErrors: a 401 or a refused port ends the run at
// once with a non-zero exit and one line naming the URL and the failure; the
// model is not called again.
func TestRunStopsOnFatalModelErrors(t *testing.T) {
	srv, calls := scriptedModel(t, 401, 401, 401)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := "http://" + l.Addr().String() + "/v1"
	l.Close()
	for _, c := range []struct{ url, want string }{
		{srv.URL + "/v1", "arena: model server " + srv.URL + "/v1/chat/completions: HTTP 401 Unauthorized: scripted failure\n"},
		{refused, "arena: model server " + refused + "/chat/completions: dial tcp " + l.Addr().String() + ": connect: connection refused\n"},
		{"localhost:8000/v1", "arena: run: --base-url: model server localhost:8000/v1: not a valid base URL; write http(s)://HOST:PORT/v1\n"},
	} {
		code, stderr, took := arenaProcess(t, "run", "--scenario", "foraging", "--agents", "2", "--ticks", "200", "--out", t.TempDir(),
			"--agent", "llm", "--model", "m", "--base-url", c.url)
		require.NotZero(t, code, stderr)
		require.True(t, strings.HasSuffix(stderr, c.want), "stderr:\n%s\nwant the last line %q", stderr, c.want)
		require.Less(t, took, 30*time.Second)
	}
	require.EqualValues(t, 1, calls.Load(), "a 401 is not retried and the run stops at the first")
}

// TestServeStopsOnFatalModelErrors: `arena serve --agent llm` with its bot
// slots played by the model stops at once on a 401 or a refused port, with
// a non-zero exit and one line naming the URL and the failure; no bot calls
// the model again.
func TestServeStopsOnFatalModelErrors(t *testing.T) {
	srv, calls := scriptedModel(t, 401, 401, 401, 401)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := "http://" + l.Addr().String() + "/v1"
	l.Close()
	for _, c := range []struct{ url, want string }{
		{srv.URL + "/v1", "arena: model server " + srv.URL + "/v1/chat/completions: HTTP 401 Unauthorized: scripted failure\n"},
		{refused, "arena: model server " + refused + "/chat/completions: dial tcp " + l.Addr().String() + ": connect: connection refused\n"},
	} {
		dir := t.TempDir()
		// Every slot is a bot, so the episode starts at once; a server that
		// played on would take far longer than a minute.
		code, stderr, took := arenaProcess(t, "serve", "--scenario", "foraging", "--agents", "2", "--bots", "2", "--ticks", "100000",
			"--listen", "unix:"+filepath.Join(dir, "a.sock"), "--out", dir, "--agent", "llm", "--model", "m", "--base-url", c.url)
		require.NotZero(t, code, stderr)
		require.True(t, strings.HasSuffix(stderr, c.want), "stderr:\n%s\nwant the last line %q", stderr, c.want)
		require.Less(t, took, 30*time.Second)
	}
	n := calls.Load()
	require.True(t, n >= 1 && n <= 2, "%d calls: each of the 2 bots calls at most once, with no retry", n)
}

// TestRunRetriesThenCompletes: two 503s, then answers: the run completes,
// and results.json and the replay's end record carry each agent's usage.
func TestRunRetriesThenCompletes(t *testing.T) {
	srv, calls := scriptedModel(t, 503, 503)
	dir := t.TempDir()
	out, errOut, err := arena(t, "run", "--scenario", "foraging", "--agents", "1", "--ticks", "5", "--out", dir,
		"--agent", "llm", "--model", "m", "--base-url", srv.URL+"/v1")
	require.NoError(t, err, errOut)
	require.Contains(t, out, "mean score")
	require.Contains(t, errOut, "model: 5 calls, 250 tokens in, 25 out, 2 retries")
	require.EqualValues(t, 7, calls.Load())
	var res engine.Results
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &res))
	u := res.Agents[0].Usage
	require.NotNil(t, u)
	require.Equal(t, engine.Usage{ModelCalls: 5, Retries: 2, TokensIn: 250, TokensOut: 25, LatencyMS: u.LatencyMS}, *u)
	replay, err := os.ReadFile(filepath.Join(dir, "replay.jsonl"))
	require.NoError(t, err)
	lines := bytes.Split(bytes.TrimSpace(replay), []byte("\n"))
	require.Contains(t, string(lines[len(lines)-1]), `"usage":{"model_calls":5,"retries":2,"tokens_in":250,"tokens_out":25`)
}

// TestDebatePromptsArePerAgent: in the debate, each model sees only the
// tools its agent is offered — context_search only where the config lists
// it (not the judge's), nothing spatial — in its request's tools and in its
// system prompt, with the scenario's own description.
func TestDebatePromptsArePerAgent(t *testing.T) {
	var mu sync.Mutex
	byAgent := map[string]llm.ChatRequest{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req llm.ChatRequest
		json.NewDecoder(r.Body).Decode(&req)
		m := regexp.MustCompile(`you are (agent_\d+)`).FindStringSubmatch(req.Messages[1].Content)
		mu.Lock()
		byAgent[m[1]] = req
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"thinking"}}]}`)
	}))
	defer srv.Close()
	sc := strings.Replace(readFile(t, "../../scenarios/builtin/debate.json"),
		`{"role": "performance", "name": "Performance Engineer", "tools": ["context_search"], "tool_call_limit": 5}`,
		`{"role": "performance", "name": "Performance Engineer", "toolCallLimit": 5}`, 1)
	path := filepath.Join(t.TempDir(), "debate.json")
	require.NoError(t, os.WriteFile(path, []byte(sc), 0o644))
	_, errOut, err := arena(t, "run", "--scenario", path, "--ticks", "1", "--out", t.TempDir(), "--quiet",
		"--agent", "llm", "--model", "m", "--base-url", srv.URL+"/v1")
	require.NoError(t, err, errOut)
	want := map[string][]string{
		"agent_001": {"context_search", "critique", "do_nothing", "idle", "propose", "refine"},
		"agent_002": {"context_search", "critique", "do_nothing", "idle", "propose", "refine"},
		"agent_003": {"critique", "do_nothing", "idle", "propose", "refine"},
		"agent_004": {"do_nothing", "evaluate", "idle", "synthesize"},
	}
	require.Len(t, byAgent, 4)
	for id, names := range want {
		req := byAgent[id]
		var got []string
		for _, f := range req.Tools {
			got = append(got, f["function"].(map[string]any)["name"].(string))
		}
		require.Equal(t, names, got, id)
		system := req.Messages[0].Content
		require.Contains(t, system, "A multi-agent design debate (after Dialectic)", id)
		for _, hidden := range []string{"move_to", "collect", "craft", "query_world", "send_message"} {
			require.NotContains(t, system, "**"+hidden+"**", id)
		}
		require.Equal(t, slices.Contains(names, "context_search"), strings.Contains(system, "**context_search**"), id)
	}
}

func readFile(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
