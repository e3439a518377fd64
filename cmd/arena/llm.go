package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/sdk"
	"github.com/arena-sim/arena/sdk/llm"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// llmFlags are run's language-model options (--agent llm).
type llmFlags struct {
	model, baseURL, apiKey string
	xml, noStream          bool
	limit, retries         int
	timeout, retryTime     time.Duration
	// abort, when set, stops the run with a fatal model error (the first
	// one: a 401, a refused connection, retries that ran out).
	abort func(error)
	mu    sync.Mutex
	usage []*llm.Agent // the agents made, for the progress line
}

// llmPositive are the llm flags that must be above zero when given.
var llmPositive = []string{"tool-call-limit", "llm-timeout", "llm-retry-time"}

func (f *llmFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.model, "model", "", "with --agent llm: the model [$ARENA_MODEL]")
	fs.StringVar(&f.baseURL, "base-url", "", "with --agent llm: the OpenAI-compatible API root, e.g. http://localhost:8000/v1 [$OPENAI_BASE_URL, OpenAI]")
	fs.StringVar(&f.apiKey, "api-key", "", "with --agent llm: the API key [$OPENAI_API_KEY]")
	fs.BoolVar(&f.xml, "xml", false, "with --agent llm: XML tool tags instead of function calling")
	fs.IntVar(&f.limit, "tool-call-limit", 10, "with --agent llm: query tools per turn, failed ones included")
	fs.DurationVar(&f.timeout, "llm-timeout", 60*time.Second, "with --agent llm: time-out of each model call (retried)")
	fs.IntVar(&f.retries, "llm-retries", 4, "with --agent llm: retries of a model call that failed with 429, 5xx or a time-out (with backoff and jitter)")
	fs.DurationVar(&f.retryTime, "llm-retry-time", 2*time.Minute, "with --agent llm: the most time one model call may take, retries included")
	fs.BoolVar(&f.noStream, "no-stream", false, "with --agent llm: read whole replies instead of streaming them (in XML mode the text after the first tool tag is dropped)")
}

// client is the model client the flags describe.
func (f *llmFlags) client(cmd string) (*llm.Client, error) {
	retries := f.retries
	if retries == 0 {
		retries = -1
	}
	client := llm.NewClient(llm.ClientOptions{BaseURL: f.baseURL, APIKey: f.apiKey, Model: f.model, Timeout: f.timeout,
		Retries: retries, RetryTime: f.retryTime})
	if client.Model() == "" {
		return nil, fmt.Errorf("%s: --agent llm needs --model or $ARENA_MODEL", cmd)
	}
	if err := client.Check(); err != nil {
		return nil, fmt.Errorf("%s: --base-url: %w", cmd, err)
	}
	return client, nil
}

// fatal is the model error that stopped the run, if ctx was stopped by one.
func fatal(ctx context.Context) error {
	if err := context.Cause(ctx); err != nil && llm.Fatal(err) && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// progress is a short account of the model calls so far, for the progress
// line: "model: 12 calls, 3400 tokens in, 560 out, 1 retry".
func (f *llmFlags) progress() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.usage) == 0 {
		return ""
	}
	var u engine.Usage
	for _, a := range f.usage {
		v := a.Usage()
		u.ModelCalls += v.ModelCalls
		u.Retries += v.Retries
		u.TokensIn += v.TokensIn
		u.TokensOut += v.TokensOut
		u.TokensEstimated = u.TokensEstimated || v.TokensEstimated
	}
	est := ""
	if u.TokensEstimated {
		est = " (some estimated)"
	}
	return fmt.Sprintf("model: %d calls, %d tokens in, %d out%s, %d retries", u.ModelCalls, u.TokensIn, u.TokensOut, est, u.Retries)
}

// agent is the llm.Agent of one agent of w, in process: its queries are
// answered by the world's registry directly (agents decide on the world's
// goroutine, so reading the world is safe). Its transcript goes to
// DIR/transcripts/AGENT.jsonl.
func (f *llmFlags) agent(dir, scenario string, client *llm.Client, w *world.World, reg *tools.Registry, id string) *llm.Agent {
	q := llm.QueryFunc(func(_ context.Context, tool string, params map[string]any) (map[string]any, error) {
		res := reg.Execute(w, id, tool, params, true)
		if !res.Success {
			return nil, &sdk.ServerError{Code: res.ErrorCode, Message: res.ErrorMessage, Tool: tool}
		}
		return res.Data, nil
	})
	a := llm.New(llm.Options{Model: client, Tools: reg.SpecsFor(id), Scenario: scenario, Query: q, XML: f.xml, NoStream: f.noStream,
		ToolCallLimit: f.limit, Transcripts: filepath.Join(dir, "transcripts"), OnFatal: f.abort})
	f.mu.Lock()
	f.usage = append(f.usage, a)
	f.mu.Unlock()
	return a
}

// controllers plays every agent of a run with an llm.Agent.
func (f *llmFlags) controllers(dir string) func(*scenarios.Scenario, *world.World) (map[string]engine.Controller, error) {
	return func(sc *scenarios.Scenario, w *world.World) (map[string]engine.Controller, error) {
		reg, err := tools.ForWorld(w)
		if err != nil {
			return nil, err
		}
		client, err := f.client("run")
		if err != nil {
			return nil, err
		}
		f.mu.Lock()
		f.usage = nil // this episode's agents only
		f.mu.Unlock()
		ctrls := map[string]engine.Controller{}
		for _, a := range w.Agents() {
			ctrls[a.ID] = f.agent(dir, sc.Description, client, w, reg, a.ID)
		}
		return ctrls, nil
	}
}

// newBot plays serve's bot slots with llm.Agents.
func (f *llmFlags) newBot(dir, scenario string) (func(*world.World, *tools.Registry, string) (bots.Bot, error), error) {
	client, err := f.client("serve")
	if err != nil {
		return nil, err
	}
	return func(w *world.World, reg *tools.Registry, id string) (bots.Bot, error) {
		return f.agent(dir, scenario, client, w, reg, id), nil
	}, nil
}
