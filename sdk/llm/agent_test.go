package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arena-sim/arena/sdk"
	"github.com/arena-sim/arena/tools"
)

// recorded is one replayed HTTP response.
type recorded struct {
	Status  int               `json:"status"`
	DelayMS int               `json:"delay_ms"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
	// Stream, when set, is sent as server-sent events, one content chunk
	// each ChunkMS apart, then Finish as the finish_reason.
	Stream  []string `json:"stream"`
	ChunkMS int      `json:"chunk_ms"`
	Finish  string   `json:"finish"`
	// Events, when set, are sent as they are, one server-sent event each
	// (ChunkMS apart), then [DONE].
	Events []json.RawMessage `json:"events"`
	// Break drops the connection after the Stream's chunks or the Events,
	// before any finish_reason or [DONE]: the stream breaks. Without them,
	// halfway through the Body.
	Break bool `json:"break"`
}

// fakeServer is an OpenAI-compatible server replaying testdata/NAME.json,
// one response per request, and keeping the requests.
type fakeServer struct {
	*httptest.Server
	mu       sync.Mutex
	replies  []recorded
	requests []ChatRequest
	auth     []string
	// sent counts, per streamed reply, the chunks written before the client
	// closed the stream (all of them when it read to the end).
	sent []int
}

func newFake(t *testing.T, name string) *fakeServer {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var replies []recorded
	if err := json.Unmarshal(b, &replies); err != nil {
		t.Fatal(err)
	}
	return newScripted(t, replies...)
}

// newScripted is a fake server answering with replies, in order.
func newScripted(t *testing.T, replies ...recorded) *fakeServer {
	f := &fakeServer{replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var req ChatRequest
		json.NewDecoder(r.Body).Decode(&req)
		f.mu.Lock()
		f.requests = append(f.requests, req)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		if len(f.replies) == 0 {
			f.mu.Unlock()
			http.Error(w, `{"error":{"message":"no more recorded responses"}}`, 400)
			return
		}
		rep := f.replies[0]
		f.replies = f.replies[1:]
		f.mu.Unlock()
		if rep.DelayMS > 0 {
			select {
			case <-time.After(time.Duration(rep.DelayMS) * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		for k, v := range rep.Headers {
			w.Header().Set(k, v)
		}
		if rep.Stream != nil || rep.Events != nil {
			f.stream(w, r, rep)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if rep.Break {
			w.Header().Set("Content-Length", fmt.Sprint(len(rep.Body)))
			w.WriteHeader(rep.Status)
			w.Write(rep.Body[:len(rep.Body)/2])
			panic(http.ErrAbortHandler)
		}
		w.WriteHeader(rep.Status)
		w.Write(rep.Body)
	}))
	t.Cleanup(f.Close)
	return f
}

// stream writes a reply as server-sent events and records how many chunks
// went out before the client closed the connection.
func (f *fakeServer) stream(w http.ResponseWriter, r *http.Request, rep recorded) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	fl := w.(http.Flusher)
	n := 0
	defer func() {
		f.mu.Lock()
		f.sent = append(f.sent, n)
		f.mu.Unlock()
	}()
	events := rep.Events
	for _, c := range rep.Stream {
		b, _ := json.Marshal(map[string]any{"id": "s", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": c}, "finish_reason": nil}}})
		events = append(events, b)
	}
	for _, e := range events {
		if rep.ChunkMS > 0 {
			select {
			case <-time.After(time.Duration(rep.ChunkMS) * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		if r.Context().Err() != nil {
			return
		}
		fmt.Fprintf(w, "data: %s\n\n", e)
		fl.Flush()
		n++
	}
	if rep.Break {
		panic(http.ErrAbortHandler) // drops the connection mid-body
	}
	if rep.Events == nil {
		fin := rep.Finish
		if fin == "" {
			fin = "stop"
		}
		b, _ := json.Marshal(map[string]any{"id": "s", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": fin}},
			"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": len(rep.Stream)}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	fl.Flush()
}

func (f *fakeServer) client(timeout time.Duration) *Client {
	return NewClient(ClientOptions{BaseURL: f.URL + "/v1", APIKey: "k", Model: "fake", Timeout: timeout, Backoff: time.Millisecond})
}

// roleTools is a role game's tools, as a welcome lists them.
func roleTools() []tools.Spec {
	str := func(desc string) *tools.Schema { return &tools.Schema{Type: "string", Description: desc} }
	return []tools.Spec{
		{Name: "get_role_details", Description: "A role's card.", Query: true, Parameters: tools.Object(map[string]*tools.Schema{"role": str("role name")}, "role")},
		{Name: "get_investigation_results", Description: "Investigator groups.", Query: true, Parameters: tools.Object(nil)},
		{Name: "check_will", Description: "A dead player's will.", Query: true, Parameters: tools.Object(map[string]*tools.Schema{"player": str("player")}, "player")},
		{Name: "speak", Description: "Say something to everyone.", Parameters: tools.Object(map[string]*tools.Schema{"text": str("what to say")}, "text")},
	}
}

// fakeQueries answers queries from a table and counts them.
type fakeQueries struct {
	calls []string
}

func (q *fakeQueries) Query(_ context.Context, tool string, params map[string]any) (map[string]any, error) {
	q.calls = append(q.calls, tool)
	switch tool {
	case "get_role_details":
		return map[string]any{"role": params["role"], "alignment": "Town Investigative"}, nil
	case "check_will":
		return nil, &sdk.ServerError{Code: "ALIVE", Message: "Player 3 is alive", Tool: tool}
	}
	return map[string]any{}, nil
}

func obs() *sdk.Observation {
	return &sdk.Observation{Tick: 7, AgentID: "agent_001", Alive: true, Health: 100, MaxHealth: 100}
}

func permanent(s tools.Spec) string {
	if s.Name == "get_role_details" {
		return Permanent
	}
	return TurnBased
}

func TestToolLoopQueryThenAction(t *testing.T) {
	f := newFake(t, "tool_calls.json")
	q := &fakeQueries{}
	dir := t.TempDir()
	a := New(Options{Model: f.client(time.Second), Tools: roleTools(), Query: q, Transcripts: dir, Persistence: permanent})
	d := a.Decide(context.Background(), obs())
	if d.Tool != "speak" || d.Params["text"] != "hello town" || d.Reasoning != "I will speak." {
		t.Fatalf("decision %+v", d)
	}
	if len(q.calls) != 1 || q.calls[0] != "get_role_details" {
		t.Fatalf("queries %v", q.calls)
	}
	// The requests ask for a stream; the server answered with JSON bodies.
	if len(f.requests) != 2 || len(f.requests[0].Tools) != 4 || f.requests[0].Model != "fake" || f.auth[0] != "Bearer k" || !f.requests[0].Stream {
		t.Fatalf("requests %+v", f.requests)
	}
	// The second request carries the call and its result.
	msgs := f.requests[1].Messages
	last := msgs[len(msgs)-1]
	if last.Role != "tool" || last.ToolCallID != "c1" || !strings.Contains(last.Content, `"status":"success"`) || !strings.Contains(last.Content, "Town Investigative") {
		t.Fatalf("tool message %+v", last)
	}
	if msgs[len(msgs)-2].Role != "assistant" || len(msgs[len(msgs)-2].ToolCalls) != 1 {
		t.Fatalf("assistant message %+v", msgs[len(msgs)-2])
	}
	// get_role_details is permanent: remembered for the next turn's prompt.
	if mem := a.Memory(); len(mem) != 1 || !strings.Contains(mem[0], "Investigator") {
		t.Fatalf("memory %v", mem)
	}
	if p := a.observationPrompt(obs()); !strings.Contains(p, "## Knowledge") || !strings.Contains(p, "Town Investigative") {
		t.Fatalf("prompt lacks memory:\n%s", p)
	}
	b, err := os.ReadFile(filepath.Join(dir, "agent_001.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var tr turn
	if err := json.Unmarshal(b, &tr); err != nil || tr.Decision.Tool != "speak" || tr.ToolCalls != 2 || tr.Tick != 7 {
		t.Fatalf("transcript %s (%v)", b, err)
	}
}

func TestToolLoopNoToolIsIdle(t *testing.T) {
	f := newFake(t, "no_tool.json")
	a := New(Options{Model: f.client(time.Second), Tools: roleTools(), Query: &fakeQueries{}})
	d := a.Decide(context.Background(), obs())
	if d.Tool != "idle" || d.Reasoning != "Nothing to do right now." {
		t.Fatalf("decision %+v", d)
	}
}

func TestToolLoopLimit(t *testing.T) {
	f := newFake(t, "limit.json")
	q := &fakeQueries{}
	a := New(Options{Model: f.client(time.Second), Tools: roleTools(), Query: q, ToolCallLimit: 3})
	d := a.Decide(context.Background(), obs())
	if d.Tool != "idle" || !strings.Contains(d.Reasoning, "limit of 3") {
		t.Fatalf("decision %+v", d)
	}
	// Failed queries (check_will answers ALIVE) count: 3 ran, the 4th ended the turn.
	if len(q.calls) != 3 || len(f.requests) != 4 {
		t.Fatalf("%d queries, %d requests", len(q.calls), len(f.requests))
	}
	last := f.requests[3].Messages[len(f.requests[3].Messages)-1]
	if !strings.Contains(last.Content, "ALIVE: Player 3 is alive") || !strings.Contains(last.Content, `"status":"error"`) {
		t.Fatalf("error not passed back: %+v", last)
	}
}

func TestToolLoopErrorsGoBackToTheModel(t *testing.T) {
	f := newFake(t, "errors.json")
	a := New(Options{Model: f.client(time.Second), Tools: roleTools(), Query: &fakeQueries{}})
	d := a.Decide(context.Background(), obs())
	if d.Tool != "speak" || d.Params["text"] != "fixed" {
		t.Fatalf("decision %+v", d)
	}
	want := []string{"Tool not found", "Invalid arguments JSON", "Invalid arguments for speak"}
	for i, w := range want {
		msgs := f.requests[i+1].Messages
		if last := msgs[len(msgs)-1]; last.Role != "tool" || !strings.Contains(last.Content, w) {
			t.Errorf("request %d: last message %+v, want %q", i+1, last, w)
		}
	}
}

func TestClientRetriesAndTimeout(t *testing.T) {
	f := newFake(t, "retries.json")
	// 429, 503, then a reply slower than the 100 ms time-out, then success.
	a := New(Options{Model: f.client(100 * time.Millisecond), Tools: roleTools(), Query: &fakeQueries{}})
	d := a.Decide(context.Background(), obs())
	if d.Tool != "speak" || d.Params["text"] != "after retries" {
		t.Fatalf("decision %+v", d)
	}
	if len(f.requests) != 4 {
		t.Fatalf("%d requests", len(f.requests))
	}
}

func TestClientGivesUp(t *testing.T) {
	f := newFake(t, "retries.json")
	c := NewClient(ClientOptions{BaseURL: f.URL + "/v1", Retries: 1, Backoff: time.Millisecond})
	_, err := c.Chat(context.Background(), ChatRequest{Messages: []Message{{Role: "user", Content: "hi"}}})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 503 || !strings.Contains(err.Error(), "overloaded") {
		t.Fatalf("err %v", err)
	}
	// A model that cannot be reached leaves the agent idle, not crashed.
	f2 := newFake(t, "retries.json")
	a := New(Options{Model: NewClient(ClientOptions{BaseURL: f2.URL + "/v1", Retries: -1}), Tools: roleTools()})
	if d := a.Decide(context.Background(), obs()); d.Tool != "idle" || !strings.Contains(d.Reasoning, "model unavailable") {
		t.Fatalf("decision %+v", d)
	}
}

func TestClientEnvironment(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "http://example.invalid/v1/")
	t.Setenv("OPENAI_API_KEY", "env-key")
	t.Setenv("ARENA_MODEL", "env-model")
	c := NewClient(ClientOptions{})
	if c.opt.BaseURL != "http://example.invalid/v1" || c.opt.APIKey != "env-key" || c.Model() != "env-model" {
		t.Fatalf("%+v", c.opt)
	}
	if c := NewClient(ClientOptions{Model: "flag"}); c.Model() != "flag" {
		t.Fatal("flag should win over the environment")
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
