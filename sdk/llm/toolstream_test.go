package llm

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// event is one streamed chunk with the given delta and finish_reason ("":
// none).
func event(delta map[string]any, finish string) json.RawMessage {
	ch := map[string]any{"index": 0, "delta": delta, "finish_reason": nil}
	if finish != "" {
		ch["finish_reason"] = finish
	}
	b, _ := json.Marshal(map[string]any{"id": "s", "choices": []any{ch}})
	return b
}

// callDelta is a tool_calls delta of call index i.
func callDelta(i int, id, name, args string) map[string]any {
	fn := map[string]any{"arguments": args}
	if name != "" {
		fn["name"] = name
	}
	tc := map[string]any{"index": i, "function": fn}
	if id != "" {
		tc["id"], tc["type"] = id, "function"
	}
	return map[string]any{"tool_calls": []any{tc}}
}

// streamedCall is a tool call as OpenAI streams it: the id and the name
// (itself in two pieces) first, then the arguments n bytes a chunk.
func streamedCall(i int, id, name, args string, n int) []json.RawMessage {
	out := []json.RawMessage{event(callDelta(i, id, name[:len(name)/2], ""), ""), event(callDelta(i, "", name[len(name)/2:], ""), "")}
	for _, p := range pieces(args, n) {
		out = append(out, event(callDelta(i, "", "", p), ""))
	}
	return out
}

func usageEvent(in, out int) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"id": "s", "choices": []any{}, "usage": map[string]any{"prompt_tokens": in, "completion_tokens": out}})
	return b
}

func cat(parts ...[]json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// recordingQueries is fakeQueries that also keeps each call's parameters.
type recordingQueries struct {
	fakeQueries
	params []map[string]any
}

func (q *recordingQueries) Query(ctx context.Context, tool string, params map[string]any) (map[string]any, error) {
	q.params = append(q.params, params)
	return q.fakeQueries.Query(ctx, tool, params)
}

// TestToolCallsStreamed: in function-calling mode the reply is streamed;
// tool calls split across many chunks (name and arguments in pieces, two
// calls interleaved by index) are assembled and each is run exactly once
// with its whole arguments, after the stream's end.
func TestToolCallsStreamed(t *testing.T) {
	role := `{"role": "Investigator"}`
	speech := `{"text": "Player 3 claimed Doctor, but the will says otherwise."}`
	first := cat([]json.RawMessage{event(map[string]any{"role": "assistant", "content": "Let me "}, ""), event(map[string]any{"content": "check."}, "")},
		streamedCall(0, "call_a", "get_role_details", role, 2),
		[]json.RawMessage{event(map[string]any{}, "tool_calls"), usageEvent(90, 20)})
	// The second reply interleaves a query (index 0) and an action (index 1).
	q0, q1 := streamedCall(0, "call_b", "check_will", `{"player": "Player 3"}`, 3), streamedCall(1, "call_c", "speak", speech, 1)
	var second []json.RawMessage
	for i := range max(len(q0), len(q1)) {
		if i < len(q0) {
			second = append(second, q0[i])
		}
		if i < len(q1) {
			second = append(second, q1[i])
		}
	}
	second = append(second, event(map[string]any{}, "tool_calls"), usageEvent(130, 60))
	f := newScripted(t, recorded{Status: 200, Events: first}, recorded{Status: 200, Events: second})
	q := &recordingQueries{}
	a := New(Options{Model: f.client(time.Second), Tools: roleTools(), Query: q})
	d := a.Decide(context.Background(), obs())

	require.Equal(t, "speak", d.Tool)
	require.Equal(t, "Player 3 claimed Doctor, but the will says otherwise.", d.Params["text"])
	require.Equal(t, []string{"get_role_details", "check_will"}, q.calls, "each query runs once")
	require.Equal(t, []map[string]any{{"role": "Investigator"}, {"player": "Player 3"}}, q.params)
	require.Len(t, f.requests, 2)
	for _, r := range f.requests {
		require.True(t, r.Stream)
		require.Equal(t, &streamOptions{IncludeUsage: true}, r.StreamOptions)
		require.Len(t, r.Tools, 4)
	}
	m := lastMessages(f.requests[1], 2)
	require.Equal(t, Message{Role: "assistant", Content: "Let me check.", ToolCalls: []ToolCall{
		{ID: "call_a", Type: "function", Function: FunctionCall{Name: "get_role_details", Arguments: role}}}}, m[0])
	require.Equal(t, "tool", m[1].Role)
	require.Equal(t, "call_a", m[1].ToolCallID)
	require.JSONEq(t, `{"status":"success","result":{"role":"Investigator","alignment":"Town Investigative"}}`, m[1].Content)
	u := a.Usage()
	require.Equal(t, 2, u.ModelCalls)
	require.Equal(t, 220, u.TokensIn)
	require.Equal(t, 80, u.TokensOut)
	require.False(t, a.TokensEstimated())
}

// TestStreamedToolCallCutByLength: a streamed call whose reply stops at
// the token limit is never run, even when its arguments parse; the model
// is told, and its next, complete call runs.
func TestStreamedToolCallCutByLength(t *testing.T) {
	cut := cat(streamedCall(0, "c1", "check_will", `{"player": "Play"}`, 4), []json.RawMessage{event(map[string]any{}, "length")})
	whole := cat(streamedCall(0, "c2", "speak", `{"text": "Player 3 lies"}`, 4), []json.RawMessage{event(map[string]any{}, "tool_calls")})
	f := newScripted(t, recorded{Status: 200, Events: cut}, recorded{Status: 200, Events: whole})
	q := &fakeQueries{}
	a := New(Options{Model: f.client(time.Second), Tools: roleTools(), Query: q})
	d := a.Decide(context.Background(), obs())
	require.Equal(t, "Player 3 lies", d.Params["text"])
	require.Empty(t, q.calls, "the cut call must not run")
	m := lastMessages(f.requests[1], 2)
	require.Equal(t, Message{Role: "assistant"}, m[0])
	require.Equal(t, "user", m[1].Role)
	require.Contains(t, m[1].Content, "cut off (the token limit was reached) while you were writing a call to check_will; nothing was run")
}

// TestStreamToolCallDeltasWithoutIndex: servers that leave out the index
// start a new call with each new id and continue the last one otherwise;
// an index that skips calls is an error, not an allocation.
func TestStreamToolCallDeltasWithoutIndex(t *testing.T) {
	raw := func(tc string) string {
		return `data: {"choices":[{"index":0,"delta":{"tool_calls":[` + tc + `]}}]}` + "\n\n"
	}
	body := raw(`{"id":"a","type":"function","function":{"name":"speak","arguments":"{\"te"}}`) +
		raw(`{"function":{"arguments":"xt\":\"hi\"}"}}`) +
		raw(`{"id":"b","type":"function","function":{"name":"check_will","arguments":"{}"}}`) +
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n"
	resp, err := readStream(strings.NewReader(body), func(string) bool { return false })
	require.NoError(t, err)
	require.Equal(t, []ToolCall{
		{ID: "a", Type: "function", Function: FunctionCall{Name: "speak", Arguments: `{"text":"hi"}`}},
		{ID: "b", Type: "function", Function: FunctionCall{Name: "check_will", Arguments: "{}"}},
	}, resp.Choices[0].Message.ToolCalls)
	require.Equal(t, "tool_calls", resp.Choices[0].FinishReason)

	// A body that ends cleanly but before a finish_reason or [DONE] broke:
	// the error is one a retry may mend.
	_, err = readStream(strings.NewReader(raw(`{"index":0,"id":"a","function":{"name":"speak","arguments":"{"}}`)), func(string) bool { return false })
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.True(t, (&ConnError{Err: err}).Retryable())

	_, err = readStream(strings.NewReader(raw(`{"index":1000000000,"function":{"name":"x"}}`)), func(string) bool { return false })
	require.ErrorContains(t, err, "tool call index 1000000000 after 0 calls")
	_, err = readStream(strings.NewReader(raw(`{"index":-1,"function":{"name":"x"}}`)), func(string) bool { return false })
	require.ErrorContains(t, err, "tool call index -1")
}

// TestBrokenStreamRetried: a stream that breaks after text (or part of a
// tool call) has arrived is asked for again, the same request, and only
// the new attempt's reply counts; the retry is counted in the usage.
func TestBrokenStreamRetried(t *testing.T) {
	t.Run("xml", func(t *testing.T) {
		f := newScripted(t,
			recorded{Status: 200, Stream: pieces("Thinking hard. <speak>Pla", 3), Break: true},
			streamed("Fine. <speak>hello</speak> never read"))
		a := New(Options{Model: f.client(time.Second), Tools: roleTools(), Query: &fakeQueries{}, XML: true,
			OnFatal: func(err error) { t.Errorf("fatal: %v", err) }})
		d := a.Decide(context.Background(), obs())
		require.Equal(t, "speak", d.Tool)
		require.Equal(t, "hello", d.Params["text"])
		require.Equal(t, "Fine.", d.Reasoning, "nothing of the broken attempt is kept")
		require.Len(t, f.requests, 2)
		require.Equal(t, f.requests[0], f.requests[1], "the same request again")
		u := a.Usage()
		require.Equal(t, 1, u.ModelCalls)
		require.Equal(t, 1, u.Retries)
	})
	t.Run("tool calls", func(t *testing.T) {
		part := streamedCall(0, "c1", "check_will", `{"player": "Player 3"}`, 3)
		f := newScripted(t,
			recorded{Status: 200, Events: part[:5], Break: true},
			recorded{Status: 200, Events: cat(part, []json.RawMessage{event(map[string]any{}, "tool_calls")})},
			recorded{Status: 200, Events: cat(streamedCall(0, "c2", "speak", `{"text": "ok"}`, 3), []json.RawMessage{event(map[string]any{}, "tool_calls")})})
		q := &fakeQueries{}
		a := New(Options{Model: f.client(time.Second), Tools: roleTools(), Query: q})
		d := a.Decide(context.Background(), obs())
		require.Equal(t, "speak", d.Tool)
		require.Equal(t, []string{"check_will"}, q.calls)
		require.Equal(t, f.requests[0], f.requests[1])
		require.Equal(t, 1, a.Usage().Retries)
	})
	t.Run("budget", func(t *testing.T) {
		broken := recorded{Status: 200, Stream: pieces("I think <speak>", 3), Break: true}
		f := newScripted(t, broken, broken, streamed("<speak>too late</speak>"))
		c := NewClient(ClientOptions{BaseURL: f.URL + "/v1", Model: "m", Retries: 1, Backoff: time.Millisecond})
		var reported []error
		a := New(Options{Model: c, Tools: roleTools(), XML: true, OnFatal: func(err error) { reported = append(reported, err) }})
		require.Equal(t, "idle", a.Decide(context.Background(), obs()).Tool)
		require.Len(t, f.requests, 2, "one retry, as the budget allows")
		require.Len(t, reported, 1)
		require.ErrorContains(t, reported[0], "model server "+f.URL+"/v1/chat/completions: ")
		require.ErrorContains(t, reported[0], "the stream ended before the reply did")
		require.ErrorContains(t, reported[0], "(gave up after 2 attempts)")
	})
	t.Run("a tag already complete", func(t *testing.T) {
		// The stream breaks after a complete tag: the agent had closed it at
		// the tag, so the tag runs once and the next request continues.
		f := newScripted(t,
			recorded{Status: 200, Stream: pieces("<get_investigation_results /> and more", 3), Break: true},
			streamed("<speak>done</speak>"))
		q := &fakeQueries{}
		a := New(Options{Model: f.client(time.Second), Tools: roleTools(), Query: q, XML: true})
		require.Equal(t, "speak", a.Decide(context.Background(), obs()).Tool)
		require.Equal(t, []string{"get_investigation_results"}, q.calls)
		require.Contains(t, lastMessages(f.requests[1], 1)[0].Content, "<observation>")
		require.Zero(t, a.Usage().Retries)
	})
	t.Run("json body", func(t *testing.T) {
		// A server that ignores "stream" and whose JSON body is cut.
		cut := okReply()
		cut.Break = true
		f := newScripted(t, cut, okReply())
		a := New(Options{Model: f.client(time.Second), Tools: roleTools()})
		require.Equal(t, "speak", a.Decide(context.Background(), obs()).Tool)
		require.Len(t, f.requests, 2)
		require.Equal(t, 1, a.Usage().Retries)
	})
	t.Run("finished then broken", func(t *testing.T) {
		// The finish_reason arrived, then the connection dropped before the
		// usage and [DONE]: the reply is whole, its call runs once.
		f := newScripted(t,
			recorded{Status: 200, Events: cat(streamedCall(0, "c1", "speak", `{"text": "ok"}`, 2), []json.RawMessage{event(map[string]any{}, "tool_calls")}), Break: true})
		a := New(Options{Model: f.client(time.Second), Tools: roleTools()})
		require.Equal(t, "ok", a.Decide(context.Background(), obs()).Params["text"])
		require.Len(t, f.requests, 1)
	})
}

// TestTokensEstimated: a stream closed at its first tag never gets to the
// server's usage event; its tokens are estimated (a token for every 4
// characters, at least one a chunk) and labelled so, in the agent and in
// the transcript.
func TestTokensEstimated(t *testing.T) {
	f := newScripted(t, streamed("<speak>hello there</speak>"+strings.Repeat(" more", 50)))
	dir := t.TempDir()
	a := New(Options{Model: f.client(time.Second), Tools: roleTools(), XML: true, Transcripts: dir})
	require.Equal(t, "speak", a.Decide(context.Background(), obs()).Tool)
	chars := 0
	for _, m := range f.requests[0].Messages {
		chars += utf8.RuneCountInString(m.Content)
	}
	// 26 characters of tag: 9 chunks of 3 were read (27 characters, 7
	// tokens by length), so 9 tokens out, one a chunk.
	u := a.Usage()
	require.Equal(t, (chars+3)/4, u.TokensIn)
	require.Equal(t, 9, u.TokensOut)
	require.True(t, a.TokensEstimated())
	require.True(t, u.TokensEstimated, "the label reaches results.json and the replay with the usage")
	b, err := os.ReadFile(filepath.Join(dir, "agent_001.jsonl"))
	require.NoError(t, err)
	require.Contains(t, string(b), `"tokens_estimated":true`)

	// Character count wins over chunk count for long chunks.
	in, out := estimateTokens(ChatRequest{Messages: []Message{{Content: "abcdefgh"}}, Tools: nil},
		&ChatResponse{Chunks: 1, Choices: []Choice{{Message: Message{Content: "ééééé", ToolCalls: []ToolCall{{Function: FunctionCall{Name: "speak", Arguments: `{"a":1}`}}}}}}})
	require.Equal(t, 2, in)
	require.Equal(t, 5, out) // 5 + 5 + 7 = 17 characters
}

// TestServerRefusesStreaming: an older llama.cpp server answers a streamed
// request with tools with HTTP 500 "Cannot use tools with stream"; the
// client asks again at once for a whole reply, and asks that server for
// whole replies from then on.
func TestServerRefusesStreaming(t *testing.T) {
	refusal := recorded{Status: 500, Body: []byte(`{"error":{"code":500,"message":"Cannot use tools with stream","type":"server_error"}}`)}
	query := recorded{Status: 200, Body: []byte(`{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"",
		"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_investigation_results","arguments":"{}"}}]}}]}`)}
	f := newScripted(t, refusal, query, okReply())
	q := &fakeQueries{}
	c := NewClient(ClientOptions{BaseURL: f.URL + "/v1", Model: "m", Backoff: time.Millisecond})
	a := New(Options{Model: c, Tools: roleTools(), Query: q, OnFatal: func(err error) { t.Errorf("fatal: %v", err) }})
	d := a.Decide(context.Background(), obs())
	require.Equal(t, "speak", d.Tool)
	require.Equal(t, []string{"get_investigation_results"}, q.calls)
	require.Len(t, f.requests, 3)
	require.True(t, f.requests[0].Stream)
	require.False(t, f.requests[1].Stream)
	require.Nil(t, f.requests[1].StreamOptions)
	require.Equal(t, f.requests[0].Messages, f.requests[1].Messages)
	require.False(t, f.requests[2].Stream, "the client remembers")
	require.Equal(t, 1, a.Usage().Retries)

	// A 500 that does not speak of streaming is retried as before.
	require.False(t, streamRefused(&APIError{Status: 500, Message: "out of memory"}))
	require.False(t, streamRefused(&APIError{Status: 401, Message: "stream"}))
}
