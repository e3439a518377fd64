// Package tools owns the tool registry: every tool an agent can call, with its
// name, description, JSON Schema parameters, whether it may be sent as a mid-turn
// query, and its handler. It validates parameters against the schema, routes a
// call by name to its handler, and exports the registry as OpenAI
// function-calling tools. The seven universal tools live here; components add
// their own through Provider.
package tools

import (
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/arena-sim/arena/internal/fuzzy"
	"github.com/arena-sim/arena/world"
)

// Tool is one callable tool.
type Tool struct {
	Name        string
	Description string
	Parameters  *Schema
	// Query tools may be called mid-turn without using up the decision.
	Query bool
	// Persistence says how long a result stays useful to an agent's memory:
	// PersistencePermanent (for the whole episode) or PersistenceTurn (only the
	// current turn or phase). Empty means unspecified.
	Persistence string
	// Check runs after schema validation for rules a schema cannot say (one of
	// two parameter forms, say). It returns a message for INVALID_PARAMS, or "".
	// It reads only params: Prepare calls it on worker goroutines.
	Check   func(params map[string]any) string
	Handler Handler
	// Invalid, when set, answers a call whose parameters fail the schema or
	// Check, instead of the registry's INVALID_PARAMS: it gets the raw
	// parameters and the failure. A tool whose failed calls must count
	// toward a limit, or that answers in its own envelope (debate's
	// context_search), uses it.
	Invalid func(c *Call, err error) world.ActionResult
	// Private tools change nothing but their caller's own result and what
	// its last observation showed it once (BeginDecision), and read nothing
	// any other decision changes (idle): a decision to call one commutes
	// with every other decision of the decision point, so DecideAhead may
	// apply it on a worker as soon as it is made.
	Private bool
	// Prepare, when set, does ahead of a decision, on a world.Worker's
	// goroutine, read-only work that Handler then reuses (move_to plans its
	// path): see Registry.Prepare. It must not change anything Handler's
	// outcome depends on.
	Prepare func(c *Call, k *world.Worker)
}

// Persistence classes a tool may declare.
const (
	PersistencePermanent = "permanent"
	PersistenceTurn      = "turn"
)

// Handler carries out a validated call.
type Handler func(c *Call) world.ActionResult

// Call is one tool invocation by one agent.
type Call struct {
	World  *world.World
	Agent  *world.Agent
	Params map[string]any // validated: numbers are float64
	// Query is true for a mid-turn query, false for a decision. Query tools
	// answer a query in the result's data and a decision in the next observation.
	Query bool
	// Audience, when not nil, is who may receive what the call sends, as the
	// world's tool guards narrowed it (world.ToolGuard). A handler that
	// delivers content to other agents must honour it.
	Audience []string
}

// Float returns a number parameter, or def when it is absent.
func (c *Call) Float(name string, def float64) float64 {
	if v, ok := c.Params[name].(float64); ok {
		return v
	}
	return def
}

// String returns a string parameter, or def when it is absent.
func (c *Call) String(name, def string) string {
	if v, ok := c.Params[name].(string); ok {
		return v
	}
	return def
}

// Provider is implemented by world components that bring their own tools.
type Provider interface {
	Tools() []Tool
}

// Visibility is implemented by world components that decide which of the
// world's tools each agent is offered (its welcome, its prompt, the tools
// sent to its model): the debate offers context_search only to agents whose
// config lists it, and nothing spatial. A hidden tool is not offered; whether
// a call to it succeeds is still up to its handler.
type Visibility interface {
	ToolVisible(agentID, tool string) bool
}

// Registry holds tools by name. The zero value is empty and ready to use.
type Registry struct {
	byName  map[string]*Tool
	names   []string
	guards  []world.ToolGuard
	visible []Visibility
	// spare is a Call for the next handler call to reuse (handlers do not
	// keep it): one, taken and given back with an atomic swap, because
	// calls without scratch of their own come one at a time from the tick
	// goroutine; a call that finds none (a query on another goroutine
	// meanwhile) makes its own. Workers applying decisions ahead bring
	// their own (DecideAhead).
	spare atomic.Pointer[Call]
}

// Register adds tools; a duplicate or malformed tool is an error. A tool
// identical to one already registered (same name, description, parameters and
// query flag, such as the do_nothing that several components offer) is not a
// duplicate: the first one is kept.
func (r *Registry) Register(tools ...Tool) error {
	if r.byName == nil {
		r.byName = map[string]*Tool{}
	}
	for i := range tools {
		t := tools[i]
		if t.Parameters == nil {
			t.Parameters = Object(nil)
		}
		if prev := r.byName[t.Name]; prev != nil && t.Handler != nil && prev.Description == t.Description &&
			prev.Query == t.Query && reflect.DeepEqual(prev.Parameters, t.Parameters) {
			continue
		}
		switch {
		case t.Name == "":
			return fmt.Errorf("register tool: empty name")
		case t.Handler == nil:
			return fmt.Errorf("register tool %q: no handler", t.Name)
		case r.byName[t.Name] != nil:
			return fmt.Errorf("register tool %q: already registered", t.Name)
		}
		if t.Parameters.Type != "object" {
			return fmt.Errorf("register tool %q: parameters must be an object schema", t.Name)
		}
		r.byName[t.Name] = &t
		r.names = append(r.names, t.Name)
	}
	sort.Strings(r.names)
	return nil
}

// Lookup returns a tool by name.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Tools returns every tool, sorted by name.
func (r *Registry) Tools() []*Tool {
	out := make([]*Tool, len(r.names))
	for i, n := range r.names {
		out[i] = r.byName[n]
	}
	return out
}

// ForWorld builds the registry of a world: the universal tools plus the tools of
// every component that is a Provider. Every component that is a
// world.ToolGuard rules on each call before it runs.
func ForWorld(w *world.World) (*Registry, error) {
	r := &Registry{}
	if err := r.Register(Universal(w.Rules())...); err != nil {
		return nil, err
	}
	for _, c := range w.Components() {
		if g, ok := c.(world.ToolGuard); ok {
			r.guards = append(r.guards, g)
		}
		if v, ok := c.(Visibility); ok {
			r.visible = append(r.visible, v)
		}
		if p, ok := c.(Provider); ok {
			if err := r.Register(p.Tools()...); err != nil {
				return nil, fmt.Errorf("component %q: %w", c.Name(), err)
			}
		}
	}
	return r, nil
}

// Execute runs one tool call for an agent and returns its result. It never
// panics on bad input: an unknown tool is UNKNOWN_TOOL, a non-query tool sent as
// a query is NOT_A_QUERY, bad parameters are INVALID_PARAMS, an unknown agent is
// NOT_FOUND and a dead one DEAD.
func (r *Registry) Execute(w *world.World, agentID, name string, params map[string]any, asQuery bool) (res world.ActionResult) {
	return r.execute(nil, w, w.Agent(agentID), agentID, name, params, asQuery, nil)
}

// execute is Execute for agent a (w.Agent(agentID)), taking the parameters'
// validation from p when it was worked out ahead for this tool, with scratch,
// when not nil, as the handler's Call.
func (r *Registry) execute(scratch *Call, w *world.World, a *world.Agent, agentID, name string, params map[string]any, asQuery bool, p *Prepared) (res world.ActionResult) {
	var t *Tool
	if p != nil && p.tool != nil && p.tool.Name == name {
		t = p.tool // Prepare looked it up (no hashing on the tick goroutine)
	} else if t = r.byName[name]; t == nil {
		return world.Fail(fuzzy.Clip(name), world.CodeUnknownTool, "Unknown tool '%s'%s; available tools: %s", fuzzy.Clip(name), r.suggest(name), strings.Join(r.names, ", "))
	}
	if asQuery && !t.Query {
		return world.Fail(name, world.CodeNotAQuery, "'%s' is an action and must be sent as a decision; query tools: %s", name, strings.Join(r.queryNames(), ", "))
	}
	if a == nil {
		return world.Fail(name, world.CodeNotFound, "No agent named '%s'", agentID)
	}
	if !a.Alive {
		return world.Fail(name, world.CodeDead, "%s is dead and cannot act", agentID)
	}
	var clean map[string]any
	var err error
	if p != nil && p.tool == t {
		clean, err = p.params, p.err
	} else {
		clean, err = t.validate(params)
	}
	if err != nil {
		if t.Invalid != nil {
			res = t.Invalid(&Call{World: w, Agent: a, Params: params, Query: asQuery}, err)
			res.Tool, res.Tick = name, w.Tick()
			return res
		}
		return world.Fail(name, world.CodeInvalidParams, "%s: %v", name, err)
	}
	var audience []string
	if len(r.guards) > 0 {
		var refusal world.ActionResult
		var guarded bool
		audience, refusal, guarded = r.guard(w, world.GuardedCall{Agent: agentID, Tool: name, Params: clean, Query: asQuery})
		if guarded {
			return refusal
		}
	}
	defer func() {
		if p := recover(); p != nil {
			slog.Error("tool handler panicked", "tool", name, "agent", agentID, "panic", p)
			res = world.Fail(name, world.CodeInvalidParams, "%s could not be carried out with these parameters (internal error: %v)", name, p)
		}
	}()
	c := scratch
	if c == nil {
		if c = r.spare.Swap(nil); c == nil {
			c = new(Call)
		}
	}
	*c = Call{World: w, Agent: a, Params: clean, Query: asQuery, Audience: audience}
	res = t.Handler(c)
	*c = Call{}
	if scratch == nil {
		r.spare.Store(c)
	}
	res.Tool = name
	res.Tick = w.Tick()
	return res
}

// validate checks a call's parameters against the schema and Check, and
// returns them normalised.
func (t *Tool) validate(params map[string]any) (map[string]any, error) {
	clean, err := t.Parameters.Validate(params)
	if err == nil && t.Check != nil {
		if msg := t.Check(clean); msg != "" {
			err = errors.New(msg)
		}
	}
	return clean, err
}

// Decide applies an agent's decision for the observation of obsTick and records
// the outcome for its next observation. What that observation showed once
// (messages, a query answer) is cleared first, so a query tool used as a
// decision leaves its fresh answer for the next observation.
func (r *Registry) Decide(w *world.World, agentID string, obsTick int, d world.Decision) world.ActionResult {
	return r.decide(nil, w, w.Agent(agentID), agentID, obsTick, d, nil)
}

// DecidePrepared is Decide for the world's agent a (not nil), with what
// Prepare worked out ahead for this decision (nil: nothing). A caller that
// holds the agent saves Decide's look-up of its id, which in a world of
// thousands of agents misses the caches.
func (r *Registry) DecidePrepared(w *world.World, a *world.Agent, obsTick int, d world.Decision, p *Prepared) world.ActionResult {
	return r.decide(nil, w, a, a.ID, obsTick, d, p)
}

// DecideAhead applies agent a's decision on a world.Worker's goroutine, as
// soon as the agent has made it and while other agents are still observed
// and deciding, when its tool is Private, with what Prepare returned for it,
// and reports whether it did; the outcome is that of DecidePrepared in any
// order. It applies nothing (false) for any other tool, for a decision that
// timed out, and in a world with components (or tool guards, which only
// components bring), whose sections and verdicts may read what a Private
// tool changes: apply those with DecidePrepared on the tick goroutine, in
// the decision point's order. Different workers may apply the decisions of
// different agents at once, each with its own scratch Call (the zero value;
// nil: one of the registry's).
func (r *Registry) DecideAhead(scratch *Call, w *world.World, a *world.Agent, obsTick int, d world.Decision, p *Prepared) (world.ActionResult, bool) {
	if p == nil || p.tool == nil || !p.tool.Private || p.tool.Name != d.Tool || d.TimedOut ||
		len(r.guards) > 0 || !w.ObservesWhole() {
		return world.ActionResult{}, false
	}
	return r.decide(scratch, w, a, a.ID, obsTick, d, p), true
}

// decide is Decide for agent a (nil: none is named agentID), with scratch as
// execute takes it.
func (r *Registry) decide(scratch *Call, w *world.World, a *world.Agent, agentID string, obsTick int, d world.Decision, p *Prepared) world.ActionResult {
	if a != nil {
		w.BeginDecision(a)
	}
	res := r.execute(scratch, w, a, agentID, d.Tool, d.Params, false, p)
	if d.TimedOut && res.ErrorCode == "" {
		res = world.Fail(d.Tool, world.CodeTimeout, "no decision arrived before the deadline; the agent idled this tick")
	}
	res.Tick = obsTick
	if a != nil {
		w.RecordResult(a, res)
	}
	return res
}

// Prepared is a decision's read-only part worked out ahead by Prepare: its
// validated parameters. The zero value holds nothing.
type Prepared struct {
	tool   *Tool
	params map[string]any
	err    error
}

// Prepare works out ahead, on a world.Worker's goroutine, the read-only part
// of applying an agent's decision: it validates the parameters and, for a
// tool that can (move_to), does ahead what its handler will reuse (the path
// to plan). Pass what it returns to DecidePrepared with the same decision,
// unchanged: the outcome is the same as Decide's, and the tick goroutine
// has less to do. Workers may prepare the decisions of
// different agents at once, between BeginObserve and the first Decide of the
// tick.
func (r *Registry) Prepare(k *world.Worker, w *world.World, agentID string, d world.Decision) Prepared {
	t, ok := r.byName[d.Tool]
	if !ok {
		return Prepared{}
	}
	clean, err := t.validate(d.Params)
	a := w.Agent(agentID)
	if err == nil && t.Prepare != nil && a != nil && a.Alive {
		t.Prepare(&Call{World: w, Agent: a, Params: clean}, k)
	}
	return Prepared{tool: t, params: clean, err: err}
}

// guard asks every tool guard about a call: the first refusal wins (refused
// is true), and the audiences of the others intersect (nil: no limit).
func (r *Registry) guard(w *world.World, c world.GuardedCall) (audience []string, refusal world.ActionResult, refused bool) {
	for _, g := range r.guards {
		v := g.GuardTool(w, c)
		if v.Code != "" {
			return nil, world.Fail(c.Tool, v.Code, "%s", v.Message), true
		}
		switch {
		case v.Audience == nil:
		case audience == nil:
			audience = slices.Clone(v.Audience)
		default:
			audience = slices.DeleteFunc(audience, func(id string) bool { return !slices.Contains(v.Audience, id) })
		}
	}
	return audience, world.ActionResult{}, false
}

func (r *Registry) queryNames() []string {
	var q []string
	for _, n := range r.names {
		if r.byName[n].Query {
			q = append(q, n)
		}
	}
	return q
}

func (r *Registry) suggest(name string) string {
	if best := fuzzy.Closest(name, r.names); best != "" {
		return fmt.Sprintf(" (did you mean '%s'?)", best)
	}
	return ""
}

// Function is one tool in OpenAI function-calling form.
type Function struct {
	Type     string      `json:"type"`
	Function FunctionDef `json:"function"`
}

// FunctionDef is the function part of Function.
type FunctionDef struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Parameters  *Schema `json:"parameters"`
}

// OpenAI exports the registry as OpenAI function-calling tools,
// {"type":"function","function":{"name","description","parameters"}}.
func (r *Registry) OpenAI() []Function {
	out := make([]Function, 0, len(r.names))
	for _, t := range r.Tools() {
		out = append(out, Function{Type: "function", Function: FunctionDef{Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	return out
}

// Spec is a tool as the wire protocol's welcome message lists it.
type Spec struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Parameters  *Schema `json:"parameters"`
	Query       bool    `json:"query"`
	// Persistence is "permanent" or "turn" when the tool declares it.
	Persistence string `json:"persistence,omitempty"`
}

// Specs lists every tool in protocol form.
func (r *Registry) Specs() []Spec { return r.SpecsFor("") }

// SpecsFor lists, in protocol form, the tools agentID is offered: those no
// Visibility component hides from it ("": every tool).
func (r *Registry) SpecsFor(agentID string) []Spec {
	out := make([]Spec, 0, len(r.names))
	for _, t := range r.Tools() {
		if agentID != "" && !r.Visible(agentID, t.Name) {
			continue
		}
		out = append(out, Spec{Name: t.Name, Description: t.Description, Parameters: t.Parameters, Query: t.Query, Persistence: t.Persistence})
	}
	return out
}

// Visible says whether agentID is offered tool.
func (r *Registry) Visible(agentID, tool string) bool {
	for _, v := range r.visible {
		if !v.ToolVisible(agentID, tool) {
			return false
		}
	}
	return true
}
