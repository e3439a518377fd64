// Package debate is the multi-agent debate world component, after the
// reference Dialectic: debaters with roles (architect, security,
// performance, ...) propose, critique every other debater's proposal and
// refine their own in rounds, refinements carrying forward as the next
// round's proposals; a judge synthesises the answer. The debate stops after a
// fixed number of rounds or once the judge's confidence reaches a threshold.
// Each agent has its own query tools (context_search) and a per-phase tool
// call limit. Rounds run as phases over world ticks; nothing is spatial. See
// docs/components.md#debate.
package debate

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/arena-sim/arena/world"
)

// Name is the component's name: its observation section and event source.
const Name = "debate"

// The phases.
const (
	PhaseProposal   = "proposal"
	PhaseCritique   = "critique"
	PhaseRefinement = "refinement"
	PhaseEvaluation = "evaluation"
	PhaseSynthesis  = "synthesis"
	PhaseDone       = "done"
)

// The contribution types.
const (
	TypeProposal   = "proposal"
	TypeCritique   = "critique"
	TypeRefinement = "refinement"
)

// RoleJudge is the judge's role.
const RoleJudge = "judge"

// Round is one round's contributions, in the order they were made.
type Round struct {
	Number        int            `json:"roundNumber"`
	Contributions []Contribution `json:"contributions"`
	// Evaluation is the judge's confidence after the round, when it gave one.
	Evaluation *float64 `json:"evaluation,omitempty"`
}

// Contribution is one proposal, critique or refinement.
type Contribution struct {
	AgentID       string   `json:"agentId"`
	AgentRole     string   `json:"agentRole"`
	Type          string   `json:"type"`
	Content       string   `json:"content"`
	TargetAgentID string   `json:"targetAgentId,omitempty"`
	Tick          int      `json:"tick"`
	Metadata      Metadata `json:"metadata"`
}

// Metadata is what the reference records with each contribution.
type Metadata struct {
	ToolCalls          []ToolCall   `json:"toolCalls,omitempty"`
	ToolResults        []ToolResult `json:"toolResults,omitempty"`
	ToolCallIterations int          `json:"toolCallIterations"`
	// CarriedForward marks a proposal copied from the previous round's
	// refinement.
	CarriedForward bool `json:"carriedForward,omitempty"`
}

// ToolCall is one query-tool call, in OpenAI form.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolResult is the result of one call, as the reference's tool message.
type ToolResult struct {
	ToolCallID string `json:"tool_call_id"`
	Role       string `json:"role"`
	Content    string `json:"content"`
}

// Synthesis is the judge's answer.
type Synthesis struct {
	AgentID    string   `json:"agentId"`
	Content    string   `json:"content"`
	Confidence float64  `json:"confidence"`
	Round      int      `json:"round"`
	Tick       int      `json:"tick"`
	Metadata   Metadata `json:"metadata"`
}

// participant is one agent of the debate.
type participant struct {
	id, name, role string
	judge          bool
	tools          []string
	limit          int
	// Per phase: query-tool calls so far, and the calls not yet attached to
	// a contribution.
	calls   int
	pending []ToolCall
	results []ToolResult
}

// Debate is the component. Build it with New; it is attached to one world.
type Debate struct {
	cfg   Config
	task  string
	parts []*participant // debaters in scenario order, then the judge
	idx   map[string]int
	judge *participant

	round      int // the current round, from 1
	phase      string
	phaseStart int // the tick the phase began
	phaseTicks int // ticks the phase has lasted
	rounds     []Round
	confidence float64 // the judge's last confidence
	evaluated  bool    // the judge gave one
	synthesis  *Synthesis
	callSeq    int
	skipped    int // contributions a phase timed out without
}

// New builds a component from its scenario config (nil: the defaults).
func New(raw json.RawMessage) (*Debate, error) {
	cfg, err := ParseConfig(raw)
	if err != nil {
		return nil, err
	}
	return &Debate{cfg: cfg}, nil
}

// Factory builds the component for the components registry.
func Factory(raw json.RawMessage) (world.Component, error) { return New(raw) }

// Config returns the component's config.
func (d *Debate) Config() Config { return d.cfg }

// Name implements world.Component.
func (d *Debate) Name() string { return Name }

// Attach implements world.Component: it assigns roles to the world's agents
// and opens round 1's proposal phase.
func (d *Debate) Attach(w *world.World) error {
	var ids []string
	for _, a := range w.Agents() {
		ids = append(ids, a.ID)
	}
	d.task = strings.TrimSpace(d.cfg.Task)
	if d.task == "" {
		d.task = strings.TrimSpace(w.Objective().Description)
	}
	if d.task == "" {
		d.task = "the problem set by the scenario"
	}
	if err := d.setup(ids); err != nil {
		return err
	}
	d.startRound(w, 1)
	return nil
}

// setup assigns the judge and the debaters.
func (d *Debate) setup(ids []string) error {
	known := map[string]bool{}
	for _, id := range ids {
		known[id] = true
	}
	judgeID := d.cfg.Judge.ID
	if judgeID == "" && len(ids) > 0 {
		judgeID = ids[len(ids)-1]
	}
	if !known[judgeID] {
		return fmt.Errorf("config.judge.id: no agent %q in this world (agents: %s)", judgeID, strings.Join(ids, ", "))
	}
	byID := map[string]AgentConfig{}
	for i, a := range d.cfg.Agents {
		if a.ID == "" {
			continue
		}
		if !known[a.ID] {
			return fmt.Errorf("config.agents[%d].id: no agent %q in this world (agents: %s)", i, a.ID, strings.Join(ids, ", "))
		}
		byID[a.ID] = a
	}
	var unnamed []AgentConfig
	for _, a := range d.cfg.Agents {
		if a.ID == "" {
			unnamed = append(unnamed, a)
		}
	}
	d.parts, d.idx = nil, map[string]int{}
	next, deflt := 0, 0
	for _, id := range ids {
		if id == judgeID {
			continue
		}
		ac, ok := byID[id]
		if !ok && next < len(unnamed) {
			ac, ok = unnamed[next], true
			next++
		}
		if !ok {
			ac = AgentConfig{ToolCallLimit: DefaultToolCallLimit}
		}
		if ac.Enabled != nil && !*ac.Enabled {
			continue
		}
		role := ac.Role
		if role == "" {
			role = DefaultRoles[deflt%len(DefaultRoles)]
			deflt++
		}
		p := &participant{id: id, name: ac.Name, role: role, limit: ac.ToolCallLimit}
		for _, t := range ac.Tools {
			p.tools = append(p.tools, t.Name)
		}
		d.idx[id] = len(d.parts)
		d.parts = append(d.parts, p)
	}
	if len(d.parts) == 0 {
		return fmt.Errorf("a debate needs at least one debater besides the judge %s", judgeID)
	}
	j := &participant{id: judgeID, name: d.cfg.Judge.Name, role: RoleJudge, judge: true, limit: d.cfg.Judge.ToolCallLimit}
	for _, t := range d.cfg.Judge.Tools {
		j.tools = append(j.tools, t.Name)
	}
	d.idx[judgeID] = len(d.parts)
	d.parts = append(d.parts, j)
	d.judge = j
	return nil
}

// debaters returns the participants other than the judge.
func (d *Debate) debaters() []*participant { return d.parts[:len(d.parts)-1] }

// part returns an agent's participant, or nil.
func (d *Debate) part(id string) *participant {
	if i, ok := d.idx[id]; ok {
		return d.parts[i]
	}
	return nil
}

// cur returns the current round.
func (d *Debate) cur() *Round { return &d.rounds[len(d.rounds)-1] }

// find returns the agent's contribution of a type (to target, for a
// critique) in a round, or nil.
func (r *Round) find(agent, typ, target string) *Contribution {
	for i := range r.Contributions {
		c := &r.Contributions[i]
		if c.AgentID == agent && c.Type == typ && c.TargetAgentID == target {
			return c
		}
	}
	return nil
}

// startRound opens a round: from round 2, each debater's previous refinement
// is carried forward as its proposal; the proposal phase is held only for
// debaters without one.
func (d *Debate) startRound(w *world.World, n int) {
	d.round = n
	d.rounds = append(d.rounds, Round{Number: n})
	if n > 1 {
		prev := &d.rounds[len(d.rounds)-2]
		r := d.cur()
		for _, p := range d.debaters() {
			if ref := prev.find(p.id, TypeRefinement, ""); ref != nil {
				r.Contributions = append(r.Contributions, Contribution{AgentID: p.id, AgentRole: p.role, Type: TypeProposal,
					Content: ref.Content, Tick: w.Tick(), Metadata: Metadata{CarriedForward: true}})
			}
		}
	}
	d.setPhase(w, PhaseProposal)
	if d.phaseComplete() {
		d.advance(w)
	}
}

// setPhase opens a phase: per-phase tool counts start afresh.
func (d *Debate) setPhase(w *world.World, phase string) {
	d.phase, d.phaseStart, d.phaseTicks = phase, w.Tick(), 0
	for _, p := range d.parts {
		p.calls, p.pending, p.results = 0, nil, nil
	}
	data := map[string]any{"round": float64(d.round), "phase": phase}
	if phase == PhaseDone {
		data["synthesized"] = d.synthesis != nil
	}
	w.Publish(world.Event{Source: Name, Type: "phase", Data: data})
}

// owed lists what the phase still asks of an agent: "" entries for a
// proposal or refinement, target ids for critiques, "judge" for the judge.
func (d *Debate) owed(p *participant) []string {
	r := d.cur()
	switch d.phase {
	case PhaseProposal:
		if !p.judge && r.find(p.id, TypeProposal, "") == nil {
			return []string{""}
		}
	case PhaseCritique:
		if p.judge {
			return nil
		}
		var out []string
		for _, q := range d.debaters() {
			if q != p && r.find(q.id, TypeProposal, "") != nil && r.find(p.id, TypeCritique, q.id) == nil {
				out = append(out, q.id)
			}
		}
		return out
	case PhaseRefinement:
		if !p.judge && r.find(p.id, TypeProposal, "") != nil && r.find(p.id, TypeRefinement, "") == nil {
			return []string{""}
		}
	case PhaseEvaluation:
		if p.judge && r.Evaluation == nil {
			return []string{""}
		}
	case PhaseSynthesis:
		if p.judge && d.synthesis == nil {
			return []string{""}
		}
	}
	return nil
}

// phaseComplete reports whether no one owes the phase anything.
func (d *Debate) phaseComplete() bool {
	for _, p := range d.parts {
		if len(d.owed(p)) > 0 {
			return false
		}
	}
	return true
}

// Tick implements world.Component: a phase whose contributions are all in,
// or that has lasted phase_ticks, gives way to the next.
func (d *Debate) Tick(w *world.World) {
	if d.phase == PhaseDone {
		return
	}
	d.phaseTicks++
	if d.phaseComplete() {
		d.advance(w)
		return
	}
	if d.phaseTicks >= d.cfg.PhaseTicks {
		for _, p := range d.parts {
			d.skipped += len(d.owed(p))
		}
		w.Publish(world.Event{Source: Name, Type: "phase_timeout", Data: map[string]any{"round": float64(d.round), "phase": d.phase}})
		d.advance(w)
	}
}

// advance moves to the next phase (or round, or the end).
func (d *Debate) advance(w *world.World) {
	switch d.phase {
	case PhaseProposal:
		d.setPhase(w, PhaseCritique)
	case PhaseCritique:
		d.setPhase(w, PhaseRefinement)
	case PhaseRefinement:
		switch {
		case d.round >= d.cfg.Rounds:
			d.setPhase(w, PhaseSynthesis)
		case d.cfg.Termination.Type == "confidence":
			d.setPhase(w, PhaseEvaluation)
		default:
			d.startRound(w, d.round+1)
			return
		}
	case PhaseEvaluation:
		if e := d.cur().Evaluation; e != nil && *e >= d.cfg.Termination.Threshold {
			d.setPhase(w, PhaseSynthesis)
		} else {
			d.startRound(w, d.round+1)
			return
		}
	case PhaseSynthesis:
		d.setPhase(w, PhaseDone)
		return
	}
	// A phase nobody owes anything (a critique phase with one debater, say)
	// ends at once.
	if d.phase != PhaseDone && d.phaseComplete() {
		d.advance(w)
	}
}

// Metric implements world.MetricSource: debate.synthesized (1 for every
// agent once the judge has synthesised), debate.done, debate.rounds (rounds
// begun), debate.confidence (the judge's latest), and per agent
// debate.contributions, debate.proposals, debate.critiques,
// debate.refinements and debate.tool_calls.
func (d *Debate) Metric(_ *world.World, agentID, name string) (float64, bool) {
	count := func(typ string, carried bool) float64 {
		n := 0
		for _, r := range d.rounds {
			for _, c := range r.Contributions {
				if c.AgentID == agentID && (typ == "" || c.Type == typ) && (carried || !c.Metadata.CarriedForward) {
					n++
				}
			}
		}
		return float64(n)
	}
	switch name {
	case "debate.synthesized":
		return b2f(d.synthesis != nil), true
	case "debate.done":
		return b2f(d.phase == PhaseDone), true
	case "debate.rounds":
		return float64(d.round), true
	case "debate.confidence":
		return d.confidence, true
	case "debate.contributions":
		n := count("", false)
		if d.synthesis != nil && d.synthesis.AgentID == agentID {
			n++
		}
		return n, true
	case "debate.proposals":
		return count(TypeProposal, true), true
	case "debate.critiques":
		return count(TypeCritique, false), true
	case "debate.refinements":
		return count(TypeRefinement, false), true
	case "debate.tool_calls":
		n := 0
		for _, r := range d.rounds {
			for _, c := range r.Contributions {
				if c.AgentID == agentID {
					n += len(c.Metadata.ToolCalls)
				}
			}
		}
		if d.synthesis != nil && d.synthesis.AgentID == agentID {
			n += len(d.synthesis.Metadata.ToolCalls)
		}
		return float64(n), true
	}
	return 0, false
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Hash implements world.Component.
func (d *Debate) Hash(h *world.Hasher) {
	h.Int(d.round)
	h.String(d.phase)
	h.Int(d.phaseStart)
	h.Int(d.phaseTicks)
	h.Float(d.confidence)
	h.Bool(d.evaluated)
	h.Int(d.callSeq)
	h.Int(d.skipped)
	for _, p := range d.parts {
		h.String(p.id)
		h.String(p.role)
		h.Int(p.calls)
		h.Int(len(p.pending))
	}
	h.Int(len(d.rounds))
	for _, r := range d.rounds {
		h.Int(r.Number)
		h.Bool(r.Evaluation != nil)
		if r.Evaluation != nil {
			h.Float(*r.Evaluation)
		}
		h.Int(len(r.Contributions))
		for _, c := range r.Contributions {
			h.String(c.AgentID)
			h.String(c.Type)
			h.String(c.TargetAgentID)
			h.String(c.Content)
			h.Int(c.Tick)
			h.Int(len(c.Metadata.ToolCalls))
		}
	}
	h.Bool(d.synthesis != nil)
	if d.synthesis != nil {
		h.String(d.synthesis.Content)
		h.Float(d.synthesis.Confidence)
	}
}

// Rounds returns the debate's rounds so far (shared; do not change).
func (d *Debate) Rounds() []Round { return d.rounds }

// Synthesis returns the judge's synthesis, or nil.
func (d *Debate) Synthesis() *Synthesis { return d.synthesis }

// Phase returns the current round and phase.
func (d *Debate) Phase() (int, string) { return d.round, d.phase }

// metricNames are the metrics Metric knows.
var metricNames = []string{"debate.synthesized", "debate.done", "debate.rounds", "debate.confidence", "debate.contributions",
	"debate.proposals", "debate.critiques", "debate.refinements", "debate.tool_calls"}

// MetricNames lists the metrics a scenario's objective may name.
func (d *Debate) MetricNames() []string { return append([]string(nil), metricNames...) }
