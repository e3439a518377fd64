package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
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
	xml                    bool
	limit                  int
	timeout                time.Duration
}

func (f *llmFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.model, "model", "", "with --agent llm: the model [$ARENA_MODEL]")
	fs.StringVar(&f.baseURL, "base-url", "", "with --agent llm: the OpenAI-compatible API root, e.g. http://localhost:8000/v1 [$OPENAI_BASE_URL, OpenAI]")
	fs.StringVar(&f.apiKey, "api-key", "", "with --agent llm: the API key [$OPENAI_API_KEY]")
	fs.BoolVar(&f.xml, "xml", false, "with --agent llm: XML tool tags instead of function calling")
	fs.IntVar(&f.limit, "tool-call-limit", 10, "with --agent llm: query tools per turn, failed ones included")
	fs.DurationVar(&f.timeout, "llm-timeout", 60*time.Second, "with --agent llm: time-out of each model call (retried)")
}

// client is the model client the flags describe.
func (f *llmFlags) client(cmd string) (*llm.Client, error) {
	client := llm.NewClient(llm.ClientOptions{BaseURL: f.baseURL, APIKey: f.apiKey, Model: f.model, Timeout: f.timeout})
	if client.Model() == "" {
		return nil, fmt.Errorf("%s: --agent llm needs --model or $ARENA_MODEL", cmd)
	}
	return client, nil
}

// agent is the llm.Agent of one agent of w, in process: its queries are
// answered by the world's registry directly (agents decide on the world's
// goroutine, so reading the world is safe). Its transcript goes to
// DIR/transcripts/AGENT.jsonl.
func (f *llmFlags) agent(dir string, client *llm.Client, w *world.World, reg *tools.Registry, id string) *llm.Agent {
	q := llm.QueryFunc(func(_ context.Context, tool string, params map[string]any) (map[string]any, error) {
		res := reg.Execute(w, id, tool, params, true)
		if !res.Success {
			return nil, &sdk.ServerError{Code: res.ErrorCode, Message: res.ErrorMessage, Tool: tool}
		}
		return res.Data, nil
	})
	return llm.New(llm.Options{Model: client, Tools: reg.Specs(), Query: q, XML: f.xml,
		ToolCallLimit: f.limit, Transcripts: filepath.Join(dir, "transcripts")})
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
		ctrls := map[string]engine.Controller{}
		for _, a := range w.Agents() {
			ctrls[a.ID] = f.agent(dir, client, w, reg, a.ID)
		}
		return ctrls, nil
	}
}

// newBot plays serve's bot slots with llm.Agents.
func (f *llmFlags) newBot(dir string) (func(*world.World, *tools.Registry, string) (bots.Bot, error), error) {
	client, err := f.client("serve")
	if err != nil {
		return nil, err
	}
	return func(w *world.World, reg *tools.Registry, id string) (bots.Bot, error) {
		return f.agent(dir, client, w, reg, id), nil
	}, nil
}
