package llm

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/arena-sim/arena/sdk"
	"github.com/stretchr/testify/require"
)

func okReply() recorded {
	return recorded{Status: 200, Body: []byte(`{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"",
		"tool_calls":[{"id":"c1","type":"function","function":{"name":"speak","arguments":"{\"text\":\"hi\"}"}}]}}],
		"usage":{"prompt_tokens":120,"completion_tokens":7}}`)}
}

// TestFatalStatusesStopAtOnce: 401, 403 and 404 are not retried; the error
// names the URL and the status; the agent reports it once and then idles
// without calling the server again.
func TestFatalStatusesStopAtOnce(t *testing.T) {
	for _, status := range []int{401, 403, 404} {
		f := newScripted(t, recorded{Status: status, Body: []byte(`{"error":{"message":"no\nway"}}`)}, okReply(), okReply())
		var reported []error
		a := New(Options{Model: f.client(time.Second), Tools: roleTools(), OnFatal: func(err error) { reported = append(reported, err) }})
		for range 3 {
			d := a.Decide(context.Background(), obs())
			require.Equal(t, "idle", d.Tool)
		}
		require.Len(t, f.requests, 1, "HTTP %d must not be retried", status)
		require.Len(t, reported, 1)
		var ae *APIError
		require.ErrorAs(t, reported[0], &ae)
		require.Equal(t, status, ae.Status)
		require.Equal(t, "model server "+f.URL+"/v1/chat/completions: HTTP "+strconv.Itoa(status)+" "+http.StatusText(status)+": no way", reported[0].Error())
		require.ErrorIs(t, a.Err(), reported[0])
	}
}

// TestRefusedAndBadURL: a refused connection and a malformed URL fail at
// once, naming the URL.
func TestRefusedAndBadURL(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	c := NewClient(ClientOptions{BaseURL: "http://" + addr + "/v1", Backoff: time.Hour})
	_, err = c.Chat(context.Background(), ChatRequest{})
	var ce *ConnError
	require.ErrorAs(t, err, &ce)
	require.False(t, ce.Retryable())
	require.Equal(t, 1, ce.Attempts)
	require.Contains(t, err.Error(), "model server http://"+addr+"/v1/chat/completions: ")
	require.Contains(t, err.Error(), "connection refused")
	require.True(t, Fatal(err))

	for _, u := range []string{"localhost:8000/v1", "ftp://x/v1", "http:///v1"} {
		c := NewClient(ClientOptions{BaseURL: u})
		require.Error(t, c.Check(), u)
		_, err := c.Chat(context.Background(), ChatRequest{})
		require.ErrorContains(t, err, "not a valid base URL")
	}
}

// TestRetriesThenSuccess: two 503s then an answer: the call succeeds and
// the retries are counted in the agent's usage.
func TestRetriesThenSuccess(t *testing.T) {
	f := newScripted(t, recorded{Status: 503, Body: []byte(`{"error":{"message":"busy"}}`)},
		recorded{Status: 503, Headers: map[string]string{"Retry-After": "0"}}, okReply())
	a := New(Options{Model: f.client(time.Second), Tools: roleTools(), OnFatal: func(err error) { t.Errorf("fatal: %v", err) }})
	d := a.Decide(context.Background(), obs())
	require.Equal(t, "speak", d.Tool)
	require.Len(t, f.requests, 3)
	u := a.Usage()
	require.Equal(t, 1, u.ModelCalls)
	require.Equal(t, 2, u.Retries)
	require.Equal(t, 120, u.TokensIn)
	require.Equal(t, 7, u.TokensOut)
	require.False(t, a.TokensEstimated(), "the server reported its usage")
}

// TestRetriesBounded: retries stop after Retries attempts, or when the next
// wait would pass RetryTime, and the error says so.
func TestRetriesBounded(t *testing.T) {
	busy := recorded{Status: 429, Body: []byte(`{"error":{"message":"slow down"}}`)}
	f := newScripted(t, busy, busy, busy, busy, busy)
	c := NewClient(ClientOptions{BaseURL: f.URL + "/v1", Retries: 2, Backoff: time.Millisecond})
	_, err := c.Chat(context.Background(), ChatRequest{})
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, 3, ae.Attempts)
	require.ErrorContains(t, err, "HTTP 429 Too Many Requests: slow down (gave up after 3 attempts)")
	require.True(t, Fatal(err), "retries that ran out stop the run")

	// A Retry-After longer than the time left is not waited for.
	f = newScripted(t, recorded{Status: 503, Headers: map[string]string{"Retry-After": "30"}}, okReply())
	c = NewClient(ClientOptions{BaseURL: f.URL + "/v1", RetryTime: time.Second})
	_, err = c.Chat(context.Background(), ChatRequest{})
	require.ErrorContains(t, err, "no retry within 1s")
	require.Len(t, f.requests, 1)
}

func TestParseRetryAfter(t *testing.T) {
	require.Equal(t, 2*time.Second, parseRetryAfter("2"))
	require.Equal(t, 1500*time.Millisecond, parseRetryAfter("1.5"))
	require.Equal(t, time.Minute, parseRetryAfter("3600"))
	require.Equal(t, time.Duration(0), parseRetryAfter("soon"))
	d := parseRetryAfter(time.Now().Add(10 * time.Second).UTC().Format(http.TimeFormat))
	require.InDelta(t, 10, d.Seconds(), 1.5)
}

// TestBadRequestIsNotFatal: a 400 (a prompt too long, say) fails the turn
// only.
func TestBadRequestIsNotFatal(t *testing.T) {
	f := newScripted(t, recorded{Status: 400, Body: []byte(`{"error":{"message":"context length exceeded"}}`)}, okReply())
	a := New(Options{Model: f.client(time.Second), Tools: roleTools(), OnFatal: func(err error) { t.Errorf("fatal: %v", err) }})
	require.Equal(t, "idle", a.Decide(context.Background(), obs()).Tool)
	require.Equal(t, "speak", a.Decide(context.Background(), obs()).Tool)
	require.NoError(t, a.Err())
	require.False(t, Fatal(context.Canceled))
}

// TestEnvelopes: tool messages are seed 003's envelopes; a tool's own
// envelope (context_search's) is passed on unwrapped, success or error.
func TestEnvelopes(t *testing.T) {
	env := map[string]any{"status": "success", "result": map[string]any{"matches": []any{map[string]any{"roundNumber": 1}}}}
	errEnv := map[string]any{"status": "error", "result": "Search term is required and must be a string"}
	require.Equal(t, `{"status":"success","result":{"matches":[{"roundNumber":1}]}}`, call{data: env}.envelope())
	require.Equal(t, `{"status":"success","result":{"x":1}}`, call{data: map[string]any{"x": 1}}.envelope())
	require.Equal(t, `{"status":"error","result":"Tool not found"}`, call{failed: true, result: "Tool not found"}.envelope())

	q := QueryFunc(func(_ context.Context, tool string, p map[string]any) (map[string]any, error) {
		if p["role"] == "bad" {
			return nil, &sdk.ServerError{Code: "INVALID_PARAMS", Message: errEnv["result"].(string), Tool: tool, Data: errEnv}
		}
		return env, nil
	})
	a := New(Options{Tools: roleTools(), Query: q})
	c := a.run(context.Background(), "get_role_details", map[string]any{"role": "bad"}, "")
	require.Equal(t, `{"status":"error","result":"Search term is required and must be a string"}`, c.envelope())
	c = a.run(context.Background(), "get_role_details", map[string]any{"role": "x"}, "")
	require.Equal(t, `{"status":"success","result":{"matches":[{"roundNumber":1}]}}`, c.envelope())
}
