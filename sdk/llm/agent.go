// Package llm drives a language model as an Arena agent: an OpenAI-compatible
// chat-completions client (OpenAI, vLLM, Ollama, llama.cpp's server), and
// Agent, an sdk.Agent that turns each observation into a prompt, answers the
// model's query tools mid-turn and returns its first action tool as the
// decision. Models without function calling use XML tool tags instead (see
// TagParser). docs/llm.md describes the loop.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/sdk"
	"github.com/arena-sim/arena/tools"
)

// Querier answers mid-turn query tools. *sdk.Client is one; so is QueryFunc.
type Querier interface {
	Query(ctx context.Context, tool string, params map[string]any) (map[string]any, error)
}

// QueryFunc adapts a function to Querier.
type QueryFunc func(ctx context.Context, tool string, params map[string]any) (map[string]any, error)

// Query implements Querier.
func (f QueryFunc) Query(ctx context.Context, tool string, params map[string]any) (map[string]any, error) {
	return f(ctx, tool, params)
}

// Persistence classes: how long a query's result stays in the agent's memory.
const (
	Permanent = tools.PersistencePermanent // for the rest of the episode
	TurnBased = tools.PersistenceTurn      // for the current turn only
)

// Options configure an Agent.
type Options struct {
	Model Chatter      // required
	Tools []tools.Spec // the welcome's tools (sdk.Client.Welcome().Tools)
	// Query answers query tools [sdk.ClientFrom(ctx), the client Run passes].
	Query Querier
	// ToolCallLimit bounds the tool calls of one turn, failed ones included
	// [10]: when the model asks for one more, the turn ends idle.
	ToolCallLimit int
	// XML switches to XML tool tags, for models without function calling.
	XML bool
	// System replaces the default system prompt's introduction.
	System string
	// Scenario is the scenario's description, shown in the system prompt
	// after the introduction.
	Scenario string
	// Transcripts is a folder where each agent's turns are appended, one
	// JSON object a line, to AGENT.jsonl; "" keeps none.
	Transcripts string
	// Persistence returns a tool's persistence class (Permanent or
	// TurnBased) [the Spec's Persistence field when it has one, else
	// TurnBased].
	Persistence func(tools.Spec) string
	// MaxMemory bounds the permanent results kept [50].
	MaxMemory   int
	Temperature *float64
	MaxTokens   int
	// NoStream turns off streaming: whole replies are read. In XML mode the
	// text after the first tool tag is then dropped (never executed or shown
	// to the model).
	NoStream bool
	// OnFatal is called once when the model server fails in a way that no
	// retry mends (see Fatal). From then on the agent idles without calling
	// the model. `arena run` stops the run with the error.
	OnFatal func(error)
}

// Agent is a language-model agent: an sdk.Agent (and engine.Controller).
// One Agent plays one agent slot; it is not safe for concurrent Decide calls.
type Agent struct {
	opt     Options
	byName  map[string]tools.Spec
	parser  *TagParser
	mu      sync.Mutex
	memory  []memo // permanent query results, oldest first
	history []string
	tw      *transcript
	usage   engine.Usage
	fatal   error
}

type memo struct {
	Key, Text string
}

// New returns an agent.
func New(opt Options) *Agent {
	if opt.ToolCallLimit <= 0 {
		opt.ToolCallLimit = 10
	}
	if opt.MaxMemory <= 0 {
		opt.MaxMemory = 50
	}
	if opt.Persistence == nil {
		opt.Persistence = specPersistence
	}
	a := &Agent{opt: opt, byName: map[string]tools.Spec{}}
	var names []string
	for _, s := range opt.Tools {
		a.byName[s.Name] = s
		names = append(names, s.Name)
	}
	a.parser = NewTagParser(names)
	if opt.Transcripts != "" {
		a.tw = &transcript{dir: opt.Transcripts}
	}
	return a
}

// specPersistence is the tool's declared persistence (turn-based when it
// declares none).
func specPersistence(s tools.Spec) string {
	if s.Persistence == tools.PersistencePermanent {
		return Permanent
	}
	return TurnBased
}

// StartEpisode forgets what the agent remembered (sdk.EpisodeObserver).
func (a *Agent) StartEpisode(context.Context, *sdk.EpisodeStart) {
	a.mu.Lock()
	a.memory, a.history = nil, nil
	a.mu.Unlock()
}

// EndEpisode implements sdk.EpisodeObserver.
func (a *Agent) EndEpisode(context.Context, *sdk.EpisodeEnd) {}

// Memory returns the permanent results the agent keeps, oldest first.
func (a *Agent) Memory() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, len(a.memory))
	for i, m := range a.memory {
		out[i] = m.Text
	}
	return out
}

func (a *Agent) remember(tool string, params map[string]any, result string) {
	if a.opt.Persistence(a.byName[tool]) != Permanent {
		return
	}
	p, _ := json.Marshal(params)
	key := tool + string(p)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.memory = slices.DeleteFunc(a.memory, func(m memo) bool { return m.Key == key })
	a.memory = append(a.memory, memo{Key: key, Text: fmt.Sprintf("%s %s → %s", tool, p, result)})
	if len(a.memory) > a.opt.MaxMemory {
		a.memory = a.memory[len(a.memory)-a.opt.MaxMemory:]
	}
}

// Usage is what the agent has spent so far (engine.UsageReporter): model
// calls, retries, tokens and the time spent waiting for the model.
func (a *Agent) Usage() engine.Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.usage
}

// TokensEstimated says whether some of Usage's tokens are estimates: a
// call's tokens are estimated (about 4 characters a token, at least one a
// streamed chunk) when the server reported none, as for a stream the agent
// closed at a tool tag, before the server's last event.
func (a *Agent) TokensEstimated() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.usage.TokensEstimated
}

// Err is the fatal error that stopped the agent calling its model, or nil.
func (a *Agent) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fatal
}

// Fatal says whether a model call's error means the server is wrong for
// the run rather than for this request: every error except HTTP 400, 413
// and 422 (a request the server refuses, such as one too long for the
// model) and a cancelled context. Authentication, a wrong path or model
// (404), a bad URL, a refused connection and retries that ran out are fatal.
func Fatal(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var ae *APIError
	if errors.As(err, &ae) {
		switch ae.Status {
		case 400, 413, 422:
			return false
		}
	}
	return true
}

// chat makes one model call, streaming unless NoStream is set or the model
// cannot (watch, when not nil, watches each attempt's text: see Streamer),
// and accounts for it.
func (a *Agent) chat(ctx context.Context, t *turn, req ChatRequest, watch func() func(string) bool) (*ChatResponse, error) {
	req.Temperature, req.MaxTokens = a.opt.Temperature, a.opt.MaxTokens
	start := time.Now()
	var resp *ChatResponse
	var err error
	if s, ok := a.opt.Model.(Streamer); ok && !a.opt.NoStream {
		resp, err = s.ChatStream(ctx, req, watch)
	} else {
		resp, err = a.opt.Model.Chat(ctx, req)
	}
	if err == nil && len(resp.Choices) == 0 {
		err = errors.New("chat completions: the response has no choices")
	}
	elapsed := time.Since(start)
	a.mu.Lock()
	a.usage.ModelCalls++
	a.usage.LatencyMS += elapsed.Milliseconds()
	t.Usage.ModelCalls++
	t.Usage.LatencyMS += elapsed.Milliseconds()
	if resp != nil {
		in, out := resp.Usage.PromptTokens, resp.Usage.CompletionTokens
		if in == 0 && out == 0 {
			in, out = estimateTokens(req, resp)
			a.usage.TokensEstimated, t.TokensEstimated = true, true
		}
		for _, u := range []*engine.Usage{&a.usage, &t.Usage} {
			u.Retries += resp.Retries
			u.TokensIn += in
			u.TokensOut += out
		}
	}
	var report func(error)
	if err != nil && Fatal(err) && ctx.Err() == nil && a.fatal == nil {
		a.fatal, report = err, a.opt.OnFatal
	}
	a.mu.Unlock()
	if report != nil {
		report(err)
	}
	return resp, err
}

// estimateTokens estimates a call's tokens when the server reported none
// (a stream the agent closed early never gets to its usage event; some
// servers send none): a token for every 4 characters of the request's
// messages and tools, and of the reply's text and tool calls, and at least
// one for every streamed chunk of the reply.
func estimateTokens(req ChatRequest, resp *ChatResponse) (in, out int) {
	tokens := func(n int) int { return (n + 3) / 4 }
	chars := 0
	for _, m := range req.Messages {
		chars += utf8.RuneCountInString(m.Content)
		for _, tc := range m.ToolCalls {
			chars += utf8.RuneCountInString(tc.Function.Name) + utf8.RuneCountInString(tc.Function.Arguments)
		}
	}
	if len(req.Tools) > 0 {
		b, _ := json.Marshal(req.Tools)
		chars += utf8.RuneCount(b)
	}
	in = tokens(chars)
	if len(resp.Choices) == 0 {
		return in, resp.Chunks
	}
	m := resp.Choices[0].Message
	chars = utf8.RuneCountInString(m.Content)
	for _, tc := range m.ToolCalls {
		chars += utf8.RuneCountInString(tc.Function.Name) + utf8.RuneCountInString(tc.Function.Arguments)
	}
	return in, max(tokens(chars), resp.Chunks)
}

// turn is one Decide's record, for the transcript.
type turn struct {
	Agent     string       `json:"agent"`
	Tick      int          `json:"tick"`
	Mode      string       `json:"mode"`
	Messages  []Message    `json:"messages"`
	ToolCalls int          `json:"tool_calls"`
	Decision  sdk.Decision `json:"decision"`
	Usage     engine.Usage `json:"usage"`
	// TokensEstimated says that some of Usage's tokens are estimates
	// (estimateTokens): the server reported no usage for a call.
	TokensEstimated bool   `json:"tokens_estimated,omitempty"`
	Error           string `json:"error,omitempty"`
}

// Decide implements sdk.Agent: one turn of the tool loop.
func (a *Agent) Decide(ctx context.Context, obs *sdk.Observation) sdk.Decision {
	t := &turn{Agent: obs.AgentID, Tick: obs.Tick, Mode: "tools"}
	if a.opt.XML {
		t.Mode = "xml"
	}
	t.Messages = []Message{{Role: "system", Content: a.systemPrompt()}, {Role: "user", Content: a.observationPrompt(obs)}}
	var d sdk.Decision
	var err error
	if err = a.Err(); err != nil {
		// The server failed for good: do not call it again.
	} else if a.opt.XML {
		d, err = a.xmlLoop(ctx, t)
	} else {
		d, err = a.toolLoop(ctx, t)
	}
	if err != nil {
		t.Error = err.Error()
		d = sdk.Decision{Tool: "idle", Reasoning: "model unavailable: " + err.Error()}
	}
	if d.Tool == "" {
		d.Tool = "idle"
	}
	t.Decision = d
	a.mu.Lock()
	a.history = append(a.history, fmt.Sprintf("tick %d: %s %s", obs.Tick, d.Tool, compactJSON(d.Params)))
	if len(a.history) > 8 {
		a.history = a.history[len(a.history)-8:]
	}
	a.mu.Unlock()
	if a.tw != nil {
		a.tw.write(t)
	}
	return d
}

func (a *Agent) querier(ctx context.Context) Querier {
	if a.opt.Query != nil {
		return a.opt.Query
	}
	if c := sdk.ClientFrom(ctx); c != nil {
		return c
	}
	return nil
}

// isEnvelope says whether a tool's data is already a result envelope
// (debate's context_search returns one): passed on as it is, not wrapped
// again.
func isEnvelope(v map[string]any) bool {
	st, _ := v["status"].(string)
	_, has := v["result"]
	return len(v) == 2 && has && (st == "success" || st == "error")
}

// envelope is the tool message of a call, as seed 003 gives it:
// {"status":"success","result":{...}} or {"status":"error","result":"message"}.
func (c call) envelope() string {
	type env struct {
		Status string `json:"status"`
		Result any    `json:"result"`
	}
	e := env{Status: "success", Result: c.data}
	switch {
	case isEnvelope(c.data):
		e = env{Status: c.data["status"].(string), Result: c.data["result"]}
	case c.failed:
		e = env{Status: "error", Result: c.result}
	}
	return compactJSON(e)
}

// call is what one tool call came to.
type call struct {
	action *sdk.Decision // an action: the turn ends
	result string        // a query's result or an error, for the model
	failed bool
	data   map[string]any // the query's data (an error's, for a failed one)
}

// run handles one tool call by name and parameters.
func (a *Agent) run(ctx context.Context, name string, params map[string]any, reasoning string) call {
	spec, ok := a.byName[name]
	if !ok {
		var names []string
		for n := range a.byName {
			names = append(names, n)
		}
		sort.Strings(names)
		return call{failed: true, result: fmt.Sprintf("Tool not found: %q. Available tools: %s", name, strings.Join(names, ", "))}
	}
	for k, v := range params {
		if v == nil {
			delete(params, k) // strict schemas send null for "not given"
		}
	}
	if spec.Parameters != nil {
		clean, err := spec.Parameters.Validate(params)
		if err != nil {
			return call{failed: true, result: fmt.Sprintf("Invalid arguments for %s: %v", name, err)}
		}
		params = clean
	}
	if !spec.Query {
		return call{action: &sdk.Decision{Tool: name, Params: params, Reasoning: reasoning}}
	}
	q := a.querier(ctx)
	if q == nil {
		return call{failed: true, result: "queries are not available here; choose an action"}
	}
	data, err := q.Query(ctx, name, params)
	if err != nil {
		var se *sdk.ServerError
		if errors.As(err, &se) {
			if isEnvelope(se.Data) {
				r, _ := se.Data["result"].(string)
				return call{failed: true, result: r, data: se.Data}
			}
			return call{failed: true, result: fmt.Sprintf("%s: %s", se.Code, se.Message)}
		}
		return call{failed: true, result: err.Error()}
	}
	if isEnvelope(data) {
		text := compactJSON(data["result"])
		a.remember(name, params, text)
		return call{result: text, data: data}
	}
	text := compactJSON(data)
	a.remember(name, params, text)
	return call{result: text, data: data}
}

// cutNote is what the model is told when its reply was cut short.
func cutNote(what string) string {
	return "Your reply was cut off (the token limit was reached) " + what + "; nothing was run. " +
		"Write the call again, complete, with less text before it."
}

// toolLoop is the function-calling loop (seed 003's): each tool call is run
// and answered with a tool message, until the model calls an action tool,
// calls none, or reaches the tool call limit. Replies are streamed where the
// server streams; their tool calls run only once the stream has ended, whole
// (a stream that breaks is asked for again, see ChatStream), and not at all
// when the reply was cut by the token limit.
func (a *Agent) toolLoop(ctx context.Context, t *turn) (sdk.Decision, error) {
	fns := a.functions()
	for {
		resp, err := a.chat(ctx, t, ChatRequest{Messages: t.Messages, Tools: fns}, nil)
		if err != nil {
			return sdk.Decision{}, err
		}
		ch := resp.Choices[0]
		msg := ch.Message
		msg.Role = "assistant"
		if ch.FinishReason == "length" && len(msg.ToolCalls) > 0 {
			// The arguments may be cut anywhere: run none of the calls.
			name := msg.ToolCalls[len(msg.ToolCalls)-1].Function.Name
			t.Messages = append(t.Messages, Message{Role: "assistant", Content: msg.Content},
				Message{Role: "user", Content: cutNote("while you were writing a call to " + name)})
			if t.ToolCalls >= a.opt.ToolCallLimit {
				return a.limitReached(msg.Content), nil
			}
			t.ToolCalls++
			continue
		}
		t.Messages = append(t.Messages, msg)
		if len(msg.ToolCalls) == 0 {
			return sdk.Decision{Tool: "idle", Reasoning: strings.TrimSpace(msg.Content)}, nil
		}
		for i, tc := range msg.ToolCalls {
			if tc.ID == "" {
				tc.ID = fmt.Sprintf("call_%d_%d", len(t.Messages), i)
				msg.ToolCalls[i].ID = tc.ID
			}
			if t.ToolCalls >= a.opt.ToolCallLimit {
				return a.limitReached(msg.Content), nil
			}
			t.ToolCalls++
			var params map[string]any
			var c call
			args := strings.TrimSpace(tc.Function.Arguments)
			if args == "" {
				args = "{}"
			}
			if err := json.Unmarshal([]byte(args), &params); err != nil {
				c = call{failed: true, result: fmt.Sprintf("Invalid arguments JSON: %v; send the arguments of %s as one JSON object", err, tc.Function.Name)}
			} else {
				c = a.run(ctx, tc.Function.Name, params, strings.TrimSpace(msg.Content))
			}
			if c.action != nil {
				return *c.action, nil
			}
			t.Messages = append(t.Messages, Message{Role: "tool", ToolCallID: tc.ID, Name: tc.Function.Name, Content: c.envelope()})
		}
	}
}

func (a *Agent) limitReached(text string) sdk.Decision {
	return sdk.Decision{Tool: "idle", Reasoning: strings.TrimSpace(text + fmt.Sprintf(" [tool call limit of %d reached]", a.opt.ToolCallLimit))}
}

// functions lists the tools in function-calling form.
func (a *Agent) functions() []map[string]any {
	var out []map[string]any
	for _, s := range a.opt.Tools {
		params := s.Parameters
		if params == nil {
			params = tools.Object(nil)
		}
		out = append(out, map[string]any{"type": "function", "function": map[string]any{
			"name": s.Name, "description": s.Description, "parameters": params}})
	}
	return out
}

// xmlArgs turns a tag's argument into parameters: a JSON object as is, else
// the text as the tool's only (or only required) string parameter.
func xmlArgs(spec tools.Spec, arg string) (map[string]any, string) {
	if strings.HasPrefix(arg, "{") {
		var p map[string]any
		if err := json.Unmarshal([]byte(arg), &p); err != nil {
			return nil, fmt.Sprintf("the argument of <%s> looks like JSON but is not valid: %v", spec.Name, err)
		}
		return p, ""
	}
	var props []string
	if spec.Parameters != nil {
		props = slices.Sorted(maps.Keys(spec.Parameters.Properties))
	}
	if arg == "" {
		return map[string]any{}, ""
	}
	target := ""
	switch {
	case len(props) == 1:
		target = props[0]
	case spec.Parameters != nil && len(spec.Parameters.Required) == 1:
		target = spec.Parameters.Required[0]
	}
	if target == "" {
		return nil, fmt.Sprintf("<%s> takes its parameters as a JSON object, e.g. <%s>{\"%s\": ...}</%s>", spec.Name, spec.Name, strings.Join(props, "\": ..., \""), spec.Name)
	}
	return map[string]any{target: arg}, ""
}

// tagWatcher follows streamed text and asks to stop at the first complete
// (or malformed) tool tag. It rescans only from the last place a tag may
// begin, so a reply is read in about linear time.
type tagWatcher struct {
	p    *TagParser
	buf  strings.Builder
	from int
}

func (w *tagWatcher) onText(delta string) bool {
	w.buf.WriteString(delta)
	s := w.buf.String()
	tag := w.p.Find(s[w.from:])
	switch tag.Status {
	case TagComplete, TagMalformed:
		return true
	case TagIncomplete:
		w.from += tag.Start
	default:
		// No tag yet; one may still begin at the last '<' (a look-alike
		// name is only judged once it ends).
		if i := strings.LastIndexByte(s[w.from:], '<'); i >= 0 {
			w.from += i
		} else {
			w.from = len(s)
		}
	}
	return false
}

// xmlLoop is the XML-tag loop of seed 001: the model's reply is streamed
// and read only up to the first complete tool tag of any of the agent's
// tools (the stream is closed there: engine interruption); a query tag is
// answered with an <observation> and the model resumes; the first action
// tag ends the turn. Text after the tag is never shown to the model or run.
// A reply cut short by the token limit, or one that ends inside a tag, runs
// nothing: the model is told its reply was cut.
func (a *Agent) xmlLoop(ctx context.Context, t *turn) (sdk.Decision, error) {
	var reasoning strings.Builder
	for {
		watch := func() func(string) bool { return (&tagWatcher{p: a.parser}).onText }
		resp, err := a.chat(ctx, t, ChatRequest{Messages: t.Messages}, watch)
		if err != nil {
			return sdk.Decision{}, err
		}
		ch := resp.Choices[0]
		text := ch.Message.Content
		tag := a.parser.Find(text)
		cut := ch.FinishReason == "length"
		var obsText string
		switch {
		case tag.Status == TagNone && !cut, tag.Status == TagIncomplete && tag.Tool == "" && !cut:
			t.Messages = append(t.Messages, Message{Role: "assistant", Content: text})
			reasoning.WriteString(text)
			return sdk.Decision{Tool: "idle", Reasoning: strings.TrimSpace(reasoning.String())}, nil
		case tag.Status == TagNone, tag.Status == TagIncomplete:
			// Cut off, or the stream ended inside a tag: never run a part.
			t.Messages = append(t.Messages, Message{Role: "assistant", Content: text})
			reasoning.WriteString(text[:min(tag.Start, len(text))])
			switch {
			case tag.Status == TagNone:
				obsText = cutNote("before you called a tool")
			case cut:
				obsText = cutNote("in the middle of a tool tag")
				if tag.Tool != "" {
					obsText = cutNote("in the middle of <" + tag.Tool + ">")
				}
			default:
				obsText = "Error: your reply ended inside a tool tag, so nothing was run: " + tag.Diagnostic
			}
		default:
			reasoning.WriteString(text[:tag.Start])
			t.Messages = append(t.Messages, Message{Role: "assistant", Content: text[:tag.End]})
		}
		if t.ToolCalls >= a.opt.ToolCallLimit {
			return a.limitReached(reasoning.String()), nil
		}
		t.ToolCalls++
		switch tag.Status {
		case TagMalformed:
			obsText = "Error: " + tag.Diagnostic
		case TagComplete:
			spec := a.byName[tag.Tool]
			params, msg := xmlArgs(spec, tag.Arg)
			if msg != "" {
				obsText = "Error: " + msg
				break
			}
			c := a.run(ctx, tag.Tool, params, strings.TrimSpace(reasoning.String()))
			if c.action != nil {
				return *c.action, nil
			}
			if c.failed {
				obsText = "Error: " + c.result
			} else {
				obsText = c.result
			}
		}
		t.Messages = append(t.Messages, Message{Role: "user", Content: FormatObservation(obsText) + "\nContinue."})
	}
}

func compactJSON(v any) string {
	if v == nil {
		return "{}"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
