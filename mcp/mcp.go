// Package mcp makes Arena a Model Context Protocol server, so that any MCP
// client (Claude Desktop, Claude Code, Cursor, agent frameworks) can play an
// agent slot with no SDK (see docs/mcp.md).
//
// A seat is one agent slot played through MCP. Its tools are the agent's
// tools, with the names, descriptions and input schemas of `arena tools
// --format mcp`, plus observe. Calling an action tool submits it as the
// agent's decision for the current decision point and returns once the world
// has reached the next one, with the action's result and the new observation;
// query tools answer at once. The resources arena://observation and
// arena://results follow the episode.
//
// Two backends play a seat: an episode in this process with the scenario's
// built-in bots in the other slots (Start, ServeStdio: `arena mcp`), and a
// connection to an arena server's episode over its CBOR protocol, shared with
// other clients (HTTPBridge: `arena serve --mcp-listen`).
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// ProtocolVersions are the MCP protocol versions Arena's servers speak,
// newest first. Later versions drop sessions, which a seat needs.
var ProtocolVersions = []string{"2025-11-25", "2025-06-18"}

// Version is the version the MCP server reports in its serverInfo.
const Version = "0.1"

// The resources of a seat.
const (
	ObservationURI = "arena://observation"
	ResultsURI     = "arena://results"
)

// ObserveTool is the name of the tool that shows the current observation.
const ObserveTool = "observe"

var closedWorld = false

// actionOutput is the output schema of every action tool.
var actionOutput = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"result": map[string]any{"type": []any{"object", "null"},
			"description": "The action's result: tool, success, error_code and error_message when it failed, data, and the tick it was applied at"},
		"observation": map[string]any{"type": "object",
			"description": "The agent's observation at its next decision point (its last one when it died or the episode ended)"},
		"results": map[string]any{"type": "object",
			"description": "The episode's results, as results.json holds them; only once the episode has ended"},
	},
	"required": []any{"result", "observation"},
}

// observeOutput is the output schema of observe.
var observeOutput = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"observation": map[string]any{"type": []any{"object", "null"},
			"description": "The agent's current observation (after the end, its last one)"},
		"results": map[string]any{"type": "object",
			"description": "The episode's results, as results.json holds them; only once the episode has ended"},
	},
	"required": []any{"observation"},
}

// Tools lists an agent's tools as MCP tools: the tools/list result without
// observe. Query tools are read-only; action tools declare their output.
func Tools(specs []tools.Spec) []*gomcp.Tool {
	out := make([]*gomcp.Tool, 0, len(specs))
	for _, sp := range specs {
		t := &gomcp.Tool{Name: sp.Name, Description: sp.Description, InputSchema: sp.Parameters.Map(),
			Annotations: &gomcp.ToolAnnotations{OpenWorldHint: &closedWorld}}
		if sp.Query {
			t.Annotations.ReadOnlyHint, t.Annotations.IdempotentHint = true, true
		} else {
			t.OutputSchema = actionOutput
		}
		out = append(out, t)
	}
	return out
}

func observeTool() *gomcp.Tool {
	return &gomcp.Tool{Name: ObserveTool,
		Description: "Look at the world without acting: your current observation (position, health, inventory, what is nearby, " +
			"messages, your last action's result). Before the episode starts it waits for it. After the end: your last observation and the episode's results.",
		InputSchema:  tools.Object(nil).Map(),
		OutputSchema: observeOutput,
		Annotations:  &gomcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &closedWorld}}
}

// newServer builds the MCP server of a seat.
func newServer(s *seat, log *slog.Logger) *gomcp.Server {
	if log == nil {
		log = slog.Default()
	}
	known := func(uri string) error {
		if uri != ObservationURI && uri != ResultsURI {
			return gomcp.ResourceNotFoundError(uri)
		}
		return nil
	}
	srv := gomcp.NewServer(&gomcp.Implementation{Name: "arena", Title: "Arena", Version: Version}, &gomcp.ServerOptions{
		Instructions:              instructions(s),
		SupportedProtocolVersions: ProtocolVersions,
		Capabilities: &gomcp.ServerCapabilities{Tools: &gomcp.ToolCapabilities{},
			Resources: &gomcp.ResourceCapabilities{Subscribe: true}},
		SubscribeHandler:   func(_ context.Context, r *gomcp.SubscribeRequest) error { return known(r.Params.URI) },
		UnsubscribeHandler: func(_ context.Context, r *gomcp.UnsubscribeRequest) error { return known(r.Params.URI) },
	})
	for _, t := range Tools(s.specs) {
		sp := specOf(s.specs, t.Name)
		if sp.Query {
			srv.AddTool(t, s.queryHandler(sp))
		} else {
			srv.AddTool(t, s.actionHandler(sp))
		}
	}
	if specOf(s.specs, ObserveTool).Name == "" {
		srv.AddTool(observeTool(), s.observeHandler)
	}
	srv.AddResource(&gomcp.Resource{URI: ObservationURI, Name: "observation", Title: "Current observation", MIMEType: "application/json",
		Description: "The agent's current observation, as observe returns it; subscribers are told when it changes (every decision point)"},
		s.readObservation)
	srv.AddResource(&gomcp.Resource{URI: ResultsURI, Name: "results", Title: "Episode results", MIMEType: "application/json",
		Description: "The episode's results, as results.json holds them, once the episode has ended"},
		s.readResults)
	n := &notifier{srv: srv, wake: make(chan struct{}, 1), log: log}
	s.mu.Lock()
	s.onChange = n.changed
	s.mu.Unlock()
	go n.run(s.quit)
	return srv
}

func specOf(specs []tools.Spec, name string) tools.Spec {
	for _, sp := range specs {
		if sp.Name == name {
			return sp
		}
	}
	return tools.Spec{}
}

func instructions(s *seat) string {
	var act, ask []string
	for _, sp := range s.specs {
		if sp.Query {
			ask = append(ask, sp.Name)
		} else {
			act = append(act, sp.Name)
		}
	}
	return fmt.Sprintf("You play the agent %s in Arena, a simulated world that advances in ticks (%s). "+
		"Call observe to see your observation and objective. Each call of an action tool (%s) is your decision for the current tick: "+
		"the world then advances to your next decision point and the call returns the action's result and your new observation. "+
		"Query tools (%s) answer at once without using up your turn. When the episode ends, observe returns the results.",
		s.agent, s.mode, strings.Join(act, ", "), strings.Join(ask, ", "))
}

// notifier tells resource subscribers about changes, off the world's
// goroutine, coalescing changes that come faster than they are sent.
type notifier struct {
	srv     *gomcp.Server
	log     *slog.Logger
	wake    chan struct{}
	mu      sync.Mutex
	results bool
}

func (n *notifier) changed(results bool) {
	n.mu.Lock()
	n.results = n.results || results
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *notifier) run(quit <-chan struct{}) {
	ctx := context.Background()
	for {
		select {
		case <-n.wake:
		case <-quit:
			return
		}
		n.mu.Lock()
		results := n.results
		n.results = false
		n.mu.Unlock()
		if err := n.srv.ResourceUpdated(ctx, &gomcp.ResourceUpdatedNotificationParams{URI: ObservationURI}); err != nil {
			n.log.Debug("mcp: resource update", "err", err)
		}
		if results {
			n.srv.ResourceUpdated(ctx, &gomcp.ResourceUpdatedNotificationParams{URI: ResultsURI})
		}
	}
}

// progressOf reports a waiting call's progress to its client, when the
// client asked for it with a progress token: the progress is the number of
// seconds waited so far.
func progressOf(ctx context.Context, req *gomcp.CallToolRequest) progress {
	tok := req.Params.GetProgressToken()
	if tok == nil || req.Session == nil {
		return nil
	}
	start, last := time.Now(), 0.0
	return func(msg string) {
		p := math.Max(math.Round(time.Since(start).Seconds()*1000)/1000, last+0.001)
		last = p
		req.Session.NotifyProgress(ctx, &gomcp.ProgressNotificationParams{ProgressToken: tok, Progress: p, Message: msg})
	}
}

// arguments decodes a call's arguments and checks them against the tool's
// schema, so that a bad call is refused at once and costs no tick.
func arguments(sp tools.Spec, raw json.RawMessage) (map[string]any, error) {
	params := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &params); err != nil {
			return nil, refuse(world.CodeInvalidParams, "%s: the arguments must be a JSON object of parameters: %v", sp.Name, err)
		}
	}
	if sp.Parameters != nil {
		if _, err := sp.Parameters.Validate(params); err != nil {
			return nil, refuse(world.CodeInvalidParams, "%s: %v", sp.Name, err)
		}
	}
	return params, nil
}

// failure is a call's refusal as a tool result: isError, with the code first
// in the text.
func failure(err error) *gomcp.CallToolResult {
	text := err.Error()
	if ce, ok := err.(*callError); ok {
		text = ce.Code + ": " + ce.Message
	}
	return &gomcp.CallToolResult{IsError: true, Content: []gomcp.Content{&gomcp.TextContent{Text: text}}}
}

func (s *seat) actionHandler(sp tools.Spec) gomcp.ToolHandler {
	return func(ctx context.Context, req *gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
		params, err := arguments(sp, req.Params.Arguments)
		if err != nil {
			return failure(err), nil
		}
		out, err := s.perform(ctx, world.Decision{Tool: sp.Name, Params: params}, progressOf(ctx, req))
		if err != nil {
			return failure(err), nil
		}
		var b strings.Builder
		failed := false
		switch r := out.result; {
		case r == nil:
			fmt.Fprintf(&b, "%s: the episode ended before its result was known\n", sp.Name)
		case r.Success && len(r.Data) == 0:
			fmt.Fprintf(&b, "%s succeeded at tick %d\n", r.Tool, r.Tick)
		case r.Success:
			data, _ := json.Marshal(r.Data)
			fmt.Fprintf(&b, "%s succeeded at tick %d: %s\n", r.Tool, r.Tick, data)
		default:
			failed = true
			fmt.Fprintf(&b, "%s: %s: %s\n", r.Tool, r.ErrorCode, r.ErrorMessage)
		}
		sc := map[string]any{"result": out.result, "observation": json.RawMessage(out.obs.obs)}
		b.WriteString("\n")
		b.WriteString(out.obs.text)
		if out.results != nil {
			sc["results"] = out.results
			b.WriteString("\n\n")
			b.WriteString(resultsText(out.results, s.agent, out.over))
		}
		return &gomcp.CallToolResult{IsError: failed, StructuredContent: sc, Content: []gomcp.Content{&gomcp.TextContent{Text: b.String()}}}, nil
	}
}

func (s *seat) queryHandler(sp tools.Spec) gomcp.ToolHandler {
	return func(ctx context.Context, req *gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
		params, err := arguments(sp, req.Params.Arguments)
		if err != nil {
			return failure(err), nil
		}
		r, err := s.ask(ctx, sp.Name, params)
		if err != nil {
			return failure(err), nil
		}
		if !r.Success {
			return failure(&callError{Code: r.ErrorCode, Message: r.ErrorMessage}), nil
		}
		data, err := json.Marshal(r.Data)
		if err != nil {
			return failure(fmt.Errorf("%s: its answer could not be encoded: %w", sp.Name, err)), nil
		}
		return &gomcp.CallToolResult{StructuredContent: r, Content: []gomcp.Content{&gomcp.TextContent{Text: string(data)}}}, nil
	}
}

func (s *seat) observeHandler(ctx context.Context, req *gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
	st, err := s.current(ctx, progressOf(ctx, req))
	if err != nil {
		return failure(err), nil
	}
	var b strings.Builder
	sc := map[string]any{"observation": nil}
	if st.cur != nil {
		sc["observation"] = json.RawMessage(st.cur.obs)
		b.WriteString(st.cur.text)
	}
	switch {
	case st.results != nil && (st.over || st.ended >= st.episode):
		sc["results"] = st.results
		b.WriteString("\n\n")
		b.WriteString(resultsText(st.results, s.agent, st.over))
	case st.over:
		return failure(st.overError()), nil
	case !st.cur.alive:
		fmt.Fprintf(&b, "\n%s is dead; the episode goes on without it until it ends.", s.agent)
	default:
		fmt.Fprintf(&b, "\nTick %d: the world waits for your action.", st.cur.tick)
	}
	return &gomcp.CallToolResult{StructuredContent: sc, Content: []gomcp.Content{&gomcp.TextContent{Text: b.String()}}}, nil
}

func (s *seat) readObservation(_ context.Context, req *gomcp.ReadResourceRequest) (*gomcp.ReadResourceResult, error) {
	st := s.state()
	if st.cur == nil {
		return nil, &jsonrpc.Error{Code: codeNotYet, Message: fmt.Sprintf("no observation yet: episode %d has not started", st.episode)}
	}
	return &gomcp.ReadResourceResult{Contents: []*gomcp.ResourceContents{{URI: ObservationURI, MIMEType: "application/json", Text: string(st.cur.obs)}}}, nil
}

func (s *seat) readResults(_ context.Context, req *gomcp.ReadResourceRequest) (*gomcp.ReadResourceResult, error) {
	st := s.state()
	if st.results == nil {
		return nil, &jsonrpc.Error{Code: codeNotYet, Message: "no results yet: the episode is still under way"}
	}
	b, err := json.MarshalIndent(st.results, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode results: %w", err)
	}
	return &gomcp.ReadResourceResult{Contents: []*gomcp.ResourceContents{{URI: ResultsURI, MIMEType: "application/json", Text: string(b)}}}, nil
}

// codeNotYet is the JSON-RPC error of a resource read before it exists
// (MCP's "resource not found").
const codeNotYet = -32002

// resultsText renders an episode's results for a language model.
func resultsText(res *engine.Results, agent string, final bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The episode is over: %s (%s) after %d ticks.", res.EndReason, res.Outcome, res.Ticks)
	for _, a := range res.Agents {
		mark := ""
		if a.ID == agent {
			mark = " (you)"
		}
		fmt.Fprintf(&b, "\n%s%s: score %.2f, passed %t", a.ID, mark, a.Score, a.Passed)
	}
	fmt.Fprintf(&b, "\nmean score %.2f; objective passed by every agent: %t", res.MeanScore, res.Passed)
	if !final {
		b.WriteString("\nAnother episode follows: call observe to see its first observation.")
	}
	return b.String()
}
