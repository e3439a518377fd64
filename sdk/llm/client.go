package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
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
// the model wrote it (possibly invalid).
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ChatRequest is a chat-completions request. Model is filled in by the
// client when empty.
type ChatRequest struct {
	Model       string           `json:"model"`
	Messages    []Message        `json:"messages"`
	Tools       []map[string]any `json:"tools,omitempty"`
	Stop        []string         `json:"stop,omitempty"`
	Temperature *float64         `json:"temperature,omitempty"`
	MaxTokens   int              `json:"max_tokens,omitempty"`
}

// ChatResponse is the part of a chat-completions response the agent uses.
type ChatResponse struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int     `json:"index"`
		Message      Message `json:"message"`
		FinishReason string  `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// Chatter is what the agent needs from a model: one chat completion.
type Chatter interface {
	Chat(ctx context.Context, req ChatRequest) (*ChatResponse, error)
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
	// Retries is how many times a call that failed with 429, 5xx, a time-out
	// or a network error is tried again [3]; negative: never.
	Retries int
	// Backoff is the wait before the first retry, doubled each time up to
	// 30 s [500ms]. A Retry-After header of a 429 or 503 is honoured.
	Backoff time.Duration
	// HTTP is the HTTP client [a new one].
	HTTP *http.Client
}

// Client is an OpenAI-compatible chat-completions client
// (POST BaseURL/chat/completions). It works with OpenAI, vLLM, Ollama and
// llama.cpp's server.
type Client struct {
	opt ClientOptions
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
		opt.Retries = 3
	}
	if opt.Backoff <= 0 {
		opt.Backoff = 500 * time.Millisecond
	}
	if opt.HTTP == nil {
		opt.HTTP = &http.Client{}
	}
	return &Client{opt: opt}
}

// Model is the model the client asks for.
func (c *Client) Model() string { return c.opt.Model }

// APIError is a refused call: the HTTP status and the server's message.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("chat completions: HTTP %d: %s", e.Status, e.Message)
}

func retryable(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status == http.StatusTooManyRequests || ae.Status >= 500
	}
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// Chat sends one request, retrying with backoff on 429, 5xx, time-outs and
// network errors. It gives up when ctx ends.
func (c *Client) Chat(ctx context.Context, req ChatRequest) (*ChatResponse, error) {
	if req.Model == "" {
		req.Model = c.opt.Model
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("chat completions: encode request: %w", err)
	}
	wait := c.opt.Backoff
	for attempt := 0; ; attempt++ {
		resp, retryAfter, err := c.once(ctx, body)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (%v)", err, ctx.Err())
		}
		if !retryable(err) || c.opt.Retries < 0 || attempt >= c.opt.Retries {
			if attempt > 0 {
				return nil, fmt.Errorf("%w (after %d attempts)", err, attempt+1)
			}
			return nil, err
		}
		d := wait
		if retryAfter > 0 {
			d = retryAfter
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

func (c *Client) once(ctx context.Context, body []byte) (*ChatResponse, time.Duration, error) {
	cctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(cctx, http.MethodPost, c.opt.BaseURL+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	if c.opt.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.opt.APIKey)
	}
	hresp, err := c.opt.HTTP.Do(hreq)
	if err != nil {
		if cctx.Err() != nil && ctx.Err() == nil {
			return nil, 0, fmt.Errorf("chat completions: no answer within %s: %w", c.opt.Timeout, context.DeadlineExceeded)
		}
		return nil, 0, fmt.Errorf("chat completions: %w", err)
	}
	defer hresp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hresp.Body, 32<<20))
	if err != nil {
		if cctx.Err() != nil && ctx.Err() == nil {
			return nil, 0, fmt.Errorf("chat completions: no answer within %s: %w", c.opt.Timeout, context.DeadlineExceeded)
		}
		return nil, 0, fmt.Errorf("chat completions: read response: %w", err)
	}
	if hresp.StatusCode/100 != 2 {
		var retryAfter time.Duration
		if s, err := strconv.Atoi(hresp.Header.Get("Retry-After")); err == nil && s >= 0 {
			retryAfter = min(time.Duration(s)*time.Second, time.Minute)
		}
		msg := strings.TrimSpace(string(data))
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
			msg = e.Error.Message
		}
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		return nil, retryAfter, &APIError{Status: hresp.StatusCode, Message: msg}
	}
	var out ChatResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, 0, fmt.Errorf("chat completions: decode response: %w", err)
	}
	if len(out.Choices) == 0 {
		return nil, 0, errors.New("chat completions: the response has no choices")
	}
	return &out, 0, nil
}
