package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Message is one chat message in the OpenAI chat-completions format.
type Message struct {
	Role       string     `json:"role"` // system, user, assistant, tool
	Content    string     `json:"content"`
	Name       string     `json:"name,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// ToolCall is a function call the model asked for.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall is the function part of ToolCall. Arguments is JSON text, as
// the model wrote it (possibly invalid, or cut short).
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ChatRequest is a chat-completions request. Model is filled in by the
// client when empty; Stream and StreamOptions by ChatStream.
type ChatRequest struct {
	Model         string           `json:"model"`
	Messages      []Message        `json:"messages"`
	Tools         []map[string]any `json:"tools,omitempty"`
	Stop          []string         `json:"stop,omitempty"`
	Temperature   *float64         `json:"temperature,omitempty"`
	MaxTokens     int              `json:"max_tokens,omitempty"`
	Stream        bool             `json:"stream,omitempty"`
	StreamOptions *streamOptions   `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Choice is one choice of a response.
type Choice struct {
	Index        int     `json:"index"`
	Message      Message `json:"message"`
	FinishReason string  `json:"finish_reason"`
}

// Usage is a response's token counts.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// ChatResponse is the part of a chat-completions response the agent uses.
type ChatResponse struct {
	ID      string   `json:"id"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   Usage    `json:"usage"`
	// Retries is how many failed attempts came before this answer (a
	// stream that broke and was asked for again included).
	Retries int `json:"-"`
	// Interrupted is set when ChatStream stopped reading the stream early;
	// FinishReason is then "interrupted".
	Interrupted bool `json:"-"`
	// Chunks is the number of streamed chunks that carried text or a piece
	// of a tool call (one token or more each), for estimating the tokens
	// out when the server reports no usage.
	Chunks int `json:"-"`
}

// Chatter is what the agent needs from a model: one chat completion.
type Chatter interface {
	Chat(ctx context.Context, req ChatRequest) (*ChatResponse, error)
}

// Streamer is a Chatter that can stream. watch, when not nil, is called at
// the start of each attempt (a stream that breaks is asked for again, from
// the start) and returns the function that gets that attempt's text as it
// arrives, piece by piece; it returns true to stop reading (the stream is
// closed at once). Servers that do not stream answer as Chat does, and the
// text comes in one piece.
type Streamer interface {
	ChatStream(ctx context.Context, req ChatRequest, watch func() (onText func(delta string) (stop bool))) (*ChatResponse, error)
}

// ClientOptions configure a Client. Empty fields take the environment's
// values, then the defaults in brackets.
type ClientOptions struct {
	// BaseURL is the API root, up to and including /v1
	// [$OPENAI_BASE_URL, https://api.openai.com/v1]. For vLLM, llama.cpp's
	// server and Ollama: http://HOST:PORT/v1.
	BaseURL string
	APIKey  string // [$OPENAI_API_KEY]; local servers need none
	Model   string // [$ARENA_MODEL]
	// Timeout bounds each HTTP call [60s]; a call that times out is retried.
	Timeout time.Duration
	// Retries is how many times a call that failed with 429, 5xx, a time-out,
	// a dropped connection or a stream that broke before its end is tried
	// again [4]; negative: never.
	Retries int
	// Backoff is the base wait before the first retry, doubled each time up
	// to 30 s, with full jitter (a random wait between half and all of it)
	// [500ms]. A Retry-After header (seconds or an HTTP date) is honoured.
	Backoff time.Duration
	// RetryTime bounds the time spent on one call, retries and waits
	// included [2m]: a retry that could not start before then is not made.
	RetryTime time.Duration
	// HTTP is the HTTP client [a new one].
	HTTP *http.Client
}

// Client is an OpenAI-compatible chat-completions client
// (POST BaseURL/chat/completions). It works with OpenAI, vLLM, Ollama and
// llama.cpp's server.
//
// Failures are of two kinds. Those that mean the server is wrong for this
// run (HTTP 401, 403, 404, a malformed URL, a refused connection, an
// unknown host) fail at once. Those that may pass (429, 5xx, time-outs,
// dropped connections) are retried with exponential backoff and jitter,
// bounded by Retries and RetryTime, then fail. Either way the error is an
// *APIError or a *ConnError naming the URL.
type Client struct {
	opt ClientOptions
	url string // BaseURL/chat/completions
	// wholeOnly is set once the server has refused a streamed request
	// (older llama.cpp servers: "Cannot use tools with stream"): ChatStream
	// then asks for whole replies.
	wholeOnly atomic.Bool
}

// NewClient returns a client, taking what opt leaves empty from the
// environment (OPENAI_BASE_URL, OPENAI_API_KEY, ARENA_MODEL).
func NewClient(opt ClientOptions) *Client {
	if opt.BaseURL == "" {
		opt.BaseURL = os.Getenv("OPENAI_BASE_URL")
	}
	if opt.BaseURL == "" {
		opt.BaseURL = "https://api.openai.com/v1"
	}
	opt.BaseURL = strings.TrimRight(opt.BaseURL, "/")
	if opt.APIKey == "" {
		opt.APIKey = os.Getenv("OPENAI_API_KEY")
	}
	if opt.Model == "" {
		opt.Model = os.Getenv("ARENA_MODEL")
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 60 * time.Second
	}
	if opt.Retries == 0 {
		opt.Retries = 4
	}
	if opt.Backoff <= 0 {
		opt.Backoff = 500 * time.Millisecond
	}
	if opt.RetryTime <= 0 {
		opt.RetryTime = 2 * time.Minute
	}
	if opt.HTTP == nil {
		opt.HTTP = &http.Client{}
	}
	return &Client{opt: opt, url: opt.BaseURL + "/chat/completions"}
}

// Model is the model the client asks for.
func (c *Client) Model() string { return c.opt.Model }

// URL is the endpoint the client posts to.
func (c *Client) URL() string { return c.url }

// Check reports a base URL that cannot work (no http or https scheme, no
// host), before any call is made.
func (c *Client) Check() error {
	u, err := url.Parse(c.opt.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &ConnError{URL: c.opt.BaseURL, Err: errors.New("not a valid base URL; write http(s)://HOST:PORT/v1")}
	}
	return nil
}

// APIError is a call the server refused: the URL, the HTTP status and the
// server's message.
type APIError struct {
	URL      string
	Status   int
	Message  string
	Attempts int // calls made, retries included
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("model server %s: HTTP %d %s", e.URL, e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (gave up after %d attempts)", e.Attempts)
	}
	return s
}

// Retryable says whether the status may pass: 408, 429 or 5xx.
func (e *APIError) Retryable() bool {
	return e.Status == http.StatusRequestTimeout || e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// ConnError is a call that got no HTTP answer: a malformed URL, a refused
// connection, an unknown host, a time-out or a dropped connection.
type ConnError struct {
	URL      string
	Err      error
	Attempts int
}

func (e *ConnError) Error() string {
	s := fmt.Sprintf("model server %s: %v", e.URL, e.Err)
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (gave up after %d attempts)", e.Attempts)
	}
	return s
}

func (e *ConnError) Unwrap() error { return e.Err }

// Retryable says whether the failure may pass: time-outs and dropped
// connections may; refused connections, unknown hosts and bad URLs do not.
func (e *ConnError) Retryable() bool {
	var dns *net.DNSError
	var ue *url.Error
	switch {
	case errors.Is(e.Err, syscall.ECONNREFUSED), errors.As(e.Err, &dns) && !dns.IsTimeout && !dns.IsTemporary:
		return false
	case errors.As(e.Err, &ue) && !ue.Timeout() && ue.Op == "parse":
		return false
	}
	var ne net.Error
	return errors.Is(e.Err, context.DeadlineExceeded) || errors.As(e.Err, &ne) || errors.Is(e.Err, io.ErrUnexpectedEOF) ||
		errors.Is(e.Err, io.EOF) || errors.Is(e.Err, syscall.ECONNRESET)
}

func retryable(err error) bool {
	var ae *APIError
	var ce *ConnError
	return errors.As(err, &ae) && ae.Retryable() || errors.As(err, &ce) && ce.Retryable()
}

// Chat sends one request and reads the whole answer.
func (c *Client) Chat(ctx context.Context, req ChatRequest) (*ChatResponse, error) {
	req.Stream, req.StreamOptions = false, nil
	return c.do(ctx, req, nil)
}

// ChatStream sends one request with "stream": true (and asks for the usage
// in the last event) and reads the server-sent events as they come.
// Content deltas go to the attempt's onText (see Streamer); when it returns
// true the stream is closed at once and the response holds the text so far,
// with Interrupted set. Tool-call deltas are assembled, by index, into the
// message's ToolCalls. A server that ignores "stream" and answers with a
// JSON body is read as Chat reads it.
//
// A stream that breaks before its end (no finish_reason and no [DONE]: a
// dropped connection, a time-out) is asked for again from the start, within
// the same retry budget as any failed call. Nothing of a broken attempt is
// kept; the caller has run nothing of it either, since a reply's tool calls
// are only complete once its stream is.
//
// A server that refuses streamed requests (HTTP 400, 422, 500 or 501 with a
// message that speaks of streaming, as older llama.cpp servers answer a
// streamed request with tools: "Cannot use tools with stream") is asked
// again for a whole reply at once, and from then on this client asks it for
// whole replies only; the refused attempt counts as a retry.
func (c *Client) ChatStream(ctx context.Context, req ChatRequest, watch func() func(string) bool) (*ChatResponse, error) {
	if watch == nil {
		watch = func() func(string) bool { return func(string) bool { return false } }
	}
	refused := false
	if !c.wholeOnly.Load() {
		req.Stream, req.StreamOptions = true, &streamOptions{IncludeUsage: true}
		resp, err := c.do(ctx, req, watch)
		if !streamRefused(err) {
			return resp, err
		}
		c.wholeOnly.Store(true)
		refused = true
	}
	req.Stream, req.StreamOptions = false, nil
	resp, err := c.do(ctx, req, watch)
	if resp != nil && refused {
		resp.Retries++
	}
	return resp, err
}

// streamRefused says whether err is a server's refusal to stream.
func streamRefused(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.Status {
	case 400, 422, 500, 501:
		return strings.Contains(strings.ToLower(ae.Message), "stream")
	}
	return false
}

// do sends a request, retrying what may pass.
func (c *Client) do(ctx context.Context, req ChatRequest, watch func() func(string) bool) (*ChatResponse, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if req.Model == "" {
		req.Model = c.opt.Model
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("chat completions: encode request: %w", err)
	}
	deadline := time.Now().Add(c.opt.RetryTime)
	wait := c.opt.Backoff
	for attempt := 1; ; attempt++ {
		var onText func(string) bool
		if watch != nil {
			onText = watch()
		}
		resp, retryAfter, err := c.once(ctx, body, onText)
		if err == nil {
			resp.Retries = attempt - 1
			return resp, nil
		}
		setAttempts(err, attempt)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (%v)", err, ctx.Err())
		}
		if !retryable(err) || req.Stream && streamRefused(err) || c.opt.Retries < 0 || attempt > c.opt.Retries {
			return nil, err
		}
		// Full jitter over the upper half: between wait/2 and wait.
		d := wait/2 + rand.N(wait/2+1)
		if retryAfter > 0 {
			d = retryAfter
		}
		if time.Now().Add(d).After(deadline) {
			return nil, fmt.Errorf("%w; no retry within %s", err, c.opt.RetryTime)
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (%v)", err, ctx.Err())
		}
		wait = min(wait*2, 30*time.Second)
	}
}

func setAttempts(err error, n int) {
	var ae *APIError
	var ce *ConnError
	if errors.As(err, &ae) {
		ae.Attempts = n
	} else if errors.As(err, &ce) {
		ce.Attempts = n
	}
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date,
// at most a minute.
func parseRetryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(h, 64); err == nil && s >= 0 {
		return min(time.Duration(s*float64(time.Second)), time.Minute)
	}
	if t, err := http.ParseTime(h); err == nil {
		return min(max(time.Until(t), 0), time.Minute)
	}
	return 0
}

// once makes one attempt; a streamed one when onText is not nil.
func (c *Client) once(ctx context.Context, body []byte, onText func(string) bool) (*ChatResponse, time.Duration, error) {
	cctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	connErr := func(err error) error {
		if cctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("no answer within %s: %w", c.opt.Timeout, context.DeadlineExceeded)
		}
		return &ConnError{URL: c.url, Err: err}
	}
	hreq, err := http.NewRequestWithContext(cctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, &ConnError{URL: c.url, Err: err}
	}
	hreq.Header.Set("Content-Type", "application/json")
	if c.opt.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.opt.APIKey)
	}
	hresp, err := c.opt.HTTP.Do(hreq)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is named once, by ConnError
		}
		return nil, 0, connErr(err)
	}
	defer hresp.Body.Close()
	if hresp.StatusCode/100 != 2 {
		data, _ := io.ReadAll(io.LimitReader(hresp.Body, 1<<20))
		msg := strings.TrimSpace(string(data))
		var e struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && len(e.Error) > 0 {
			var inner struct {
				Message string `json:"message"`
			}
			var s string
			if json.Unmarshal(e.Error, &inner) == nil && inner.Message != "" {
				msg = inner.Message
			} else if json.Unmarshal(e.Error, &s) == nil && s != "" {
				msg = s // Ollama: {"error": "..."}
			}
		}
		msg = strings.Join(strings.Fields(msg), " ") // one line
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return nil, parseRetryAfter(hresp.Header.Get("Retry-After")), &APIError{URL: c.url, Status: hresp.StatusCode, Message: msg}
	}
	if onText != nil && strings.HasPrefix(hresp.Header.Get("Content-Type"), "text/event-stream") {
		resp, err := readStream(hresp.Body, onText)
		if err != nil {
			return nil, 0, connErr(err)
		}
		return resp, 0, nil
	}
	data, err := io.ReadAll(io.LimitReader(hresp.Body, 32<<20))
	if err != nil {
		return nil, 0, connErr(fmt.Errorf("read response: %w", err))
	}
	var out ChatResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, 0, fmt.Errorf("model server %s: decode response: %w", c.url, err)
	}
	if len(out.Choices) == 0 {
		return nil, 0, fmt.Errorf("model server %s: the response has no choices", c.url)
	}
	if onText != nil {
		if onText(out.Choices[0].Message.Content) {
			out.Interrupted = true
		}
	}
	return &out, 0, nil
}

// chunk is one server-sent event of a streamed completion.
type chunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage `json:"usage"`
}

// errStreamCut is a stream that ended before its finish_reason or [DONE].
var errStreamCut = fmt.Errorf("the stream ended before the reply did: %w", io.ErrUnexpectedEOF)

// readStream reads "data: {...}" events up to "data: [DONE]", or until
// onText asks to stop. A stream whose body ends (or fails) before either a
// finish_reason or [DONE] has arrived is an error: it broke.
//
// Tool-call deltas are keyed by their index: the first delta of a call
// brings its id and name, the next ones pieces of its arguments. A delta
// without an index (some servers) continues the last call, or starts a new
// one when it brings an id of its own.
func readStream(r io.Reader, onText func(string) bool) (*ChatResponse, error) {
	out := &ChatResponse{Choices: []Choice{{Message: Message{Role: "assistant"}}}}
	ch := &out.Choices[0]
	var text strings.Builder
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	done, finished := false, false
	for !done && sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("data:")) {
			continue // comments, event names, blank separators
		}
		data := bytes.TrimSpace(line[5:])
		if bytes.Equal(data, []byte("[DONE]")) {
			finished = true
			break
		}
		var c chunk
		if err := json.Unmarshal(data, &c); err != nil {
			return nil, fmt.Errorf("decode stream event: %w", err)
		}
		if c.ID != "" {
			out.ID = c.ID
		}
		if c.Model != "" {
			out.Model = c.Model
		}
		if c.Usage != nil {
			out.Usage = *c.Usage
		}
		for _, cc := range c.Choices {
			calls := &ch.Message.ToolCalls
			for _, tc := range cc.Delta.ToolCalls {
				i := len(*calls) - 1
				switch {
				case tc.Index != nil:
					i = *tc.Index
				case i < 0 || tc.ID != "" && (*calls)[i].ID != "" && (*calls)[i].ID != tc.ID:
					i = len(*calls)
				}
				if i < 0 || i > len(*calls) {
					return nil, fmt.Errorf("decode stream event: tool call index %d after %d calls", i, len(*calls))
				}
				if i == len(*calls) {
					*calls = append(*calls, ToolCall{Type: "function"})
				}
				t := &(*calls)[i]
				if tc.ID != "" {
					t.ID = tc.ID
				}
				t.Function.Name += tc.Function.Name
				t.Function.Arguments += tc.Function.Arguments
				out.Chunks++
			}
			if cc.FinishReason != nil && *cc.FinishReason != "" {
				ch.FinishReason, finished = *cc.FinishReason, true
			}
			if cc.Delta.Content == "" {
				continue
			}
			out.Chunks++
			text.WriteString(cc.Delta.Content)
			if onText(cc.Delta.Content) {
				out.Interrupted, ch.FinishReason, done = true, "interrupted", true
				break
			}
		}
	}
	ch.Message.Content = text.String()
	switch err := sc.Err(); {
	case done, finished:
		return out, nil
	case err != nil:
		return nil, fmt.Errorf("read stream: %w (%w)", err, errStreamCut)
	default:
		return nil, errStreamCut
	}
}
