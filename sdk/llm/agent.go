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
	"slices"
	"sort"
	"strings"
	"sync"

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

// turn is one Decide's record, for the transcript.
type turn struct {
	Agent     string       `json:"agent"`
	Tick      int          `json:"tick"`
	Mode      string       `json:"mode"`
	Messages  []Message    `json:"messages"`
	ToolCalls int          `json:"tool_calls"`
	Decision  sdk.Decision `json:"decision"`
	Error     string       `json:"error,omitempty"`
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
	if a.opt.XML {
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

// result envelopes, as tool messages carry them.
func okEnvelope(v any) string {
	b, _ := json.Marshal(map[string]any{"status": "success", "result": v})
	return string(b)
}

func errEnvelope(msg string) string {
	b, _ := json.Marshal(map[string]any{"status": "error", "error": msg})
	return string(b)
}

// call is what one tool call came to.
type call struct {
	action   *sdk.Decision // an action: the turn ends
	result   string        // a query's result or an error, for the model
	failed   bool
	resultOK any
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
			return call{failed: true, result: fmt.Sprintf("%s: %s", se.Code, se.Message)}
		}
		return call{failed: true, result: err.Error()}
	}
	text := compactJSON(data)
	a.remember(name, params, text)
	return call{result: text, resultOK: data}
}

// toolLoop is the function-calling loop.
func (a *Agent) toolLoop(ctx context.Context, t *turn) (sdk.Decision, error) {
	fns := a.functions()
	for {
		resp, err := a.opt.Model.Chat(ctx, ChatRequest{Messages: t.Messages, Tools: fns, Temperature: a.opt.Temperature, MaxTokens: a.opt.MaxTokens})
		if err != nil {
			return sdk.Decision{}, err
		}
		msg := resp.Choices[0].Message
		msg.Role = "assistant"
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
				return sdk.Decision{Tool: "idle", Reasoning: strings.TrimSpace(msg.Content + fmt.Sprintf(" [tool call limit of %d reached]", a.opt.ToolCallLimit))}, nil
			}
			t.ToolCalls++
			var params map[string]any
			var c call
			args := strings.TrimSpace(tc.Function.Arguments)
			if args == "" {
				args = "{}"
			}
			if err := json.Unmarshal([]byte(args), &params); err != nil {
				c = call{failed: true, result: fmt.Sprintf("Invalid arguments JSON for %s: %v; send the arguments as one JSON object", tc.Function.Name, err)}
			} else {
				c = a.run(ctx, tc.Function.Name, params, strings.TrimSpace(msg.Content))
			}
			if c.action != nil {
				return *c.action, nil
			}
			content := okEnvelope(c.resultOK)
			if c.failed {
				content = errEnvelope(c.result)
			}
			t.Messages = append(t.Messages, Message{Role: "tool", ToolCallID: tc.ID, Name: tc.Function.Name, Content: content})
		}
	}
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

// xmlStops are the stop sequences of XML mode: the closing tags of query
// tools (at most 4, OpenAI's limit), so that the model stops as soon as it
// asks a question. Tags past the fourth, and self-closing tags, are found in
// the full text and the text after them is dropped.
func (a *Agent) xmlStops() []string {
	var stops []string
	for _, s := range a.opt.Tools {
		if s.Query && len(stops) < 4 {
			stops = append(stops, "</"+s.Name+">")
		}
	}
	return stops
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
		props = slices.Sorted(func(yield func(string) bool) {
			for k := range spec.Parameters.Properties {
				if !yield(k) {
					return
				}
			}
		})
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

// xmlLoop is the XML-tag loop: the model writes tool tags in its text; a
// query tag is answered with an <observation> and the model resumes; the
// first action tag ends the turn.
func (a *Agent) xmlLoop(ctx context.Context, t *turn) (sdk.Decision, error) {
	stops := a.xmlStops()
	var reasoning strings.Builder
	for {
		resp, err := a.opt.Model.Chat(ctx, ChatRequest{Messages: t.Messages, Stop: stops, Temperature: a.opt.Temperature, MaxTokens: a.opt.MaxTokens})
		if err != nil {
			return sdk.Decision{}, err
		}
		ch := resp.Choices[0]
		text := ch.Message.Content
		tag := a.parser.Find(text)
		if tag.Status == TagIncomplete && tag.Tool != "" && slices.Contains(stops, "</"+tag.Tool+">") && !strings.Contains(text[tag.Start:], "</"+tag.Tool+">") {
			// Stopped on the closing tag, which the API leaves out.
			text += "</" + tag.Tool + ">"
			tag = a.parser.Find(text)
		}
		if tag.Status == TagNone || tag.Status == TagIncomplete && tag.Tool == "" {
			t.Messages = append(t.Messages, Message{Role: "assistant", Content: text})
			reasoning.WriteString(text)
			return sdk.Decision{Tool: "idle", Reasoning: strings.TrimSpace(reasoning.String())}, nil
		}
		end := tag.End
		spoken := text[:end]
		reasoning.WriteString(text[:tag.Start])
		t.Messages = append(t.Messages, Message{Role: "assistant", Content: spoken})
		if t.ToolCalls >= a.opt.ToolCallLimit {
			return sdk.Decision{Tool: "idle", Reasoning: strings.TrimSpace(reasoning.String() + fmt.Sprintf(" [tool call limit of %d reached]", a.opt.ToolCallLimit))}, nil
		}
		t.ToolCalls++
		var obsText string
		switch tag.Status {
		case TagMalformed, TagIncomplete:
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
