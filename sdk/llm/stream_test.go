package llm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pieces cuts text into chunks of n bytes, as a server streams tokens.
func pieces(text string, n int) []string {
	var out []string
	for len(text) > n {
		out = append(out, text[:n])
		text = text[n:]
	}
	return append(out, text)
}

func streamed(text string) recorded {
	return recorded{Status: 200, Stream: pieces(text, 3), ChunkMS: 2}
}

func lastMessages(req ChatRequest, n int) []Message {
	return req.Messages[len(req.Messages)-n:]
}

// TestXMLStreamInterruption: the stream is closed right after the first
// complete tag, whatever its kind (a self-closing query, a query with an
// argument, an action); the next request carries the text up to the tag and
// the injected observation, and nothing that followed the tag.
func TestXMLStreamInterruption(t *testing.T) {
	after := " <observation>invented</observation> <speak>too early</speak>" + strings.Repeat(" and on", 40)
	f := newScripted(t,
		streamed("Checking groups. <get_investigation_results />"+after),
		streamed("Now <get_role_details>Investigator</get_role_details>"+after),
		streamed("So: <speak>I trust Player 2</speak> <check_will>Player 3</check_will>"+after),
	)
	q := &fakeQueries{}
	a := New(Options{Model: f.client(time.Second), Tools: roleTools(), Query: q, XML: true})
	d := a.Decide(context.Background(), obs())
	require.Equal(t, "speak", d.Tool)
	require.Equal(t, "I trust Player 2", d.Params["text"])
	require.Equal(t, []string{"get_investigation_results", "get_role_details"}, q.calls)
	require.Len(t, f.requests, 3)
	for i, r := range f.requests {
		require.True(t, r.Stream, "request %d not streamed", i)
		require.Empty(t, r.Stop, "no stop sequences are needed")
	}
	m := lastMessages(f.requests[1], 2)
	require.Equal(t, Message{Role: "assistant", Content: "Checking groups. <get_investigation_results />"}, m[0])
	require.Equal(t, "<observation>\n{}\n</observation>\nContinue.", m[1].Content)
	m = lastMessages(f.requests[2], 2)
	require.Equal(t, "Now <get_role_details>Investigator</get_role_details>", m[0].Content)
	require.Contains(t, m[1].Content, "Town Investigative")
	for _, r := range f.requests {
		for _, msg := range r.Messages {
			require.NotContains(t, msg.Content, "invented")
			require.NotContains(t, msg.Content, "too early")
		}
	}
	// Every stream was abandoned long before its end.
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, n := range f.sent {
		require.Less(t, n, 30, "stream %d: %d chunks read", i, n)
	}
	u := a.Usage()
	require.Equal(t, 3, u.ModelCalls)
	require.Positive(t, u.TokensOut)
}

// TestXMLTruncatedTagNotRun: a reply cut by the token limit inside a tag, or
// a stream that ends inside one, runs nothing; the model is told.
func TestXMLTruncatedTagNotRun(t *testing.T) {
	cut := streamed("Let me read it. <check_will>Play")
	cut.Finish = "length"
	f := newScripted(t,
		cut,
		streamed("<speak>Player 3 is</speak"), // the stream ends inside the closing tag
		streamed("<get_investigation_results /"),
		streamed("<speak>done</speak>"),
	)
	q := &fakeQueries{}
	a := New(Options{Model: f.client(time.Second), Tools: roleTools(), Query: q, XML: true})
	d := a.Decide(context.Background(), obs())
	require.Equal(t, "speak", d.Tool)
	require.Equal(t, "done", d.Params["text"])
	require.Empty(t, q.calls, "no partial call may run")
	require.Contains(t, lastMessages(f.requests[1], 1)[0].Content, "cut off")
	require.Contains(t, lastMessages(f.requests[1], 1)[0].Content, "<check_will>")
	require.Contains(t, lastMessages(f.requests[2], 1)[0].Content, "ended inside a tool tag")
	require.Contains(t, lastMessages(f.requests[3], 1)[0].Content, "ended inside a tool tag")
}

// TestXMLWithoutStreaming: a server that answers a streamed request with a
// whole JSON reply still works; the text after the tag is dropped.
func TestXMLWithoutStreaming(t *testing.T) {
	reply := func(text string) recorded {
		return recorded{Status: 200, Body: []byte(`{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":` +
			mustJSON(text) + `}}]}`)}
	}
	f := newScripted(t,
		reply("Now the will: <check_will>Player 3</check_will> <observation>made up</observation>"),
		reply("<get_role_detail>Doctor</get_role_detail>"),
		reply("<speak>ok</speak>"),
	)
	q := &fakeQueries{}
	a := New(Options{Model: f.client(time.Second), Tools: roleTools(), Query: q, XML: true})
	d := a.Decide(context.Background(), obs())
	require.Equal(t, "speak", d.Tool)
	m := lastMessages(f.requests[1], 2)
	require.Equal(t, "Now the will: <check_will>Player 3</check_will>", m[0].Content)
	require.Contains(t, m[1].Content, "Error: ALIVE")
	require.Contains(t, lastMessages(f.requests[2], 1)[0].Content, "did you mean <get_role_details>")
}

// TestToolCallCutByLength: tool calls of a reply cut by the token limit are
// not run, even when their arguments happen to parse.
func TestToolCallCutByLength(t *testing.T) {
	f := newScripted(t,
		recorded{Status: 200, Body: []byte(`{"choices":[{"index":0,"finish_reason":"length","message":{"role":"assistant","content":"",
			"tool_calls":[{"id":"c1","type":"function","function":{"name":"speak","arguments":"{\"text\":\"Play\"}"}}]}}]}`)},
		recorded{Status: 200, Body: []byte(`{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"",
			"tool_calls":[{"id":"c2","type":"function","function":{"name":"speak","arguments":"{\"text\":\"Player 3 lies\"}"}}]}}]}`)},
	)
	a := New(Options{Model: f.client(time.Second), Tools: roleTools(), Query: &fakeQueries{}})
	d := a.Decide(context.Background(), obs())
	require.Equal(t, "Player 3 lies", d.Params["text"])
	m := lastMessages(f.requests[1], 2)
	require.Empty(t, m[0].ToolCalls)
	require.Contains(t, m[1].Content, "cut off")
}
