package debate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/arena-sim/arena/internal/fuzzy"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// Tools implements tools.Provider: the action tools propose, critique,
// refine (debaters), evaluate and synthesize (the judge), the query tool
// context_search (for agents whose tools list names it) and the shared
// do_nothing. Every check comes before any change, so a refused call changes
// nothing.
func (d *Debate) Tools() []tools.Tool {
	content := func(desc string) *tools.Schema {
		return &tools.Schema{Type: "string", Description: fmt.Sprintf("%s (1 to %d characters)", desc, d.cfg.MaxContributionLength),
			MinLength: tools.Ptr(1), MaxLength: tools.Ptr(d.cfg.MaxContributionLength)}
	}
	confidence := &tools.Schema{Type: "number", Description: "Your confidence, from 0 to 100", Minimum: tools.Ptr(0.0), Maximum: tools.Ptr(100.0)}
	return []tools.Tool{
		{
			Name:        "propose",
			Description: "Debaters, in the proposal phase: submit your proposal for the task, from your role's point of view. One per round.",
			Parameters:  tools.Object(map[string]*tools.Schema{"content": content("Your proposal")}, "content"),
			Handler:     d.propose,
		},
		{
			Name: "critique",
			Description: "Debaters, in the critique phase: critique another debater's proposal of this round, by its agent id. " +
				"You critique every other debater's proposal, one per call.",
			Parameters: tools.Object(map[string]*tools.Schema{
				"target_agent_id": {Type: "string", Description: "The debater whose proposal you critique, e.g. agent_002", MinLength: tools.Ptr(1), MaxLength: tools.Ptr(200)},
				"content":         content("Your critique"),
			}, "target_agent_id", "content"),
			Handler: d.critique,
		},
		{
			Name:        "refine",
			Description: "Debaters, in the refinement phase: submit your refined proposal, answering the critiques of yours. It becomes your proposal for the next round.",
			Parameters:  tools.Object(map[string]*tools.Schema{"content": content("Your refined proposal")}, "content"),
			Handler:     d.refine,
		},
		{
			Name:        "evaluate",
			Description: "The judge, in the evaluation phase: rate your confidence (0-100) that the latest refinements answer the task. At or above the debate's threshold the debate goes to synthesis. Rubric: 0-40 far apart, 41-70 partial, 71-89 close, 90-100 ready.",
			Parameters:  tools.Object(map[string]*tools.Schema{"confidence": confidence}, "confidence"),
			Handler:     d.evaluate,
		},
		{
			Name:        "synthesize",
			Description: "The judge, in the synthesis phase: write the debate's final answer from the debaters' refinements, with your confidence (0-100). Ends the debate.",
			Parameters:  tools.Object(map[string]*tools.Schema{"content": content("The synthesised answer"), "confidence": confidence}, "content", "confidence"),
			Handler:     d.synthesize,
		},
		{
			Name:        ToolContextSearch,
			Description: ContextSearchDescription + " Case-insensitive substring match over every contribution of every round; each match gives roundNumber, agentId, agentRole, type and the first 200 characters of the content. Only for agents whose tools include it; counts toward your tool call limit per phase.",
			Parameters:  tools.Object(map[string]*tools.Schema{"term": {Type: "string", Description: "The search term to find in debate history"}}, "term"),
			Query:       true,
			Handler:     d.contextSearch,
			// A call the schema refuses still counts and gets the seed's
			// own answer (its error envelope, or a search when only extra
			// arguments were wrong).
			Invalid: func(c *tools.Call, _ error) world.ActionResult { return d.contextSearch(c) },
		},
		tools.DoNothing(),
	}
}

// ToolVisible implements tools.Visibility: debaters are offered propose,
// critique and refine, the judge evaluate and synthesize, context_search
// only those whose tools list names it, and everyone idle and do_nothing;
// nothing spatial (move_to, collect, craft, query_world...) and no
// messages.
func (d *Debate) ToolVisible(agentID, tool string) bool {
	p := d.part(agentID)
	switch tool {
	case "idle", tools.DoNothing().Name:
		return true
	case "propose", "critique", "refine":
		return p != nil && !p.judge
	case "evaluate", "synthesize":
		return p != nil && p.judge
	case ToolContextSearch:
		return p != nil && slices.Contains(p.tools, tool)
	}
	return false
}

// caller returns the calling agent's participant, or a failure.
func (d *Debate) caller(c *tools.Call, tool string) (*participant, world.ActionResult, bool) {
	p := d.part(c.Agent.ID)
	if p == nil {
		return nil, world.Fail(tool, world.CodeNotAllowed, "%s is not taking part in the debate", c.Agent.ID), false
	}
	return p, world.ActionResult{}, true
}

// inPhase checks the debate is in a phase and the caller's role fits.
func (d *Debate) inPhase(p *participant, tool, phase string, judge bool) (world.ActionResult, bool) {
	if judge != p.judge {
		who := "debaters"
		if judge {
			who = "the judge"
		}
		return world.Fail(tool, world.CodeNotAllowed, "%s is for %s; you are %s", tool, who, d.roleName(p)), false
	}
	if d.phase != phase {
		return world.Fail(tool, world.CodeNotAllowed, "%s is for the %s phase; it is %s", tool, phase, d.phaseName()), false
	}
	return world.ActionResult{}, true
}

func (d *Debate) roleName(p *participant) string {
	if p.judge {
		return "the judge"
	}
	return "a debater (" + p.role + ")"
}

func (d *Debate) phaseName() string {
	if d.phase == PhaseDone {
		return "over: the debate has ended"
	}
	return fmt.Sprintf("the %s phase of round %d", d.phase, d.round)
}

// text reads and cleans the content parameter.
func text(c *tools.Call, tool string) (string, world.ActionResult, bool) {
	t := strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return -1
		}
		return r
	}, c.String("content", "")))
	if t == "" {
		return "", world.Fail(tool, world.CodeInvalidParams, "%s: param 'content' has nothing in it once white space and control characters are removed", tool), false
	}
	return t, world.ActionResult{}, true
}

// contribute records a contribution with the tool calls the agent made in
// this phase since its last one.
func (d *Debate) contribute(w *world.World, p *participant, typ, content, target string) Contribution {
	c := Contribution{AgentID: p.id, AgentRole: p.role, Type: typ, Content: content, TargetAgentID: target, Tick: w.Tick(),
		Metadata: d.takeMetadata(p)}
	r := d.cur()
	r.Contributions = append(r.Contributions, c)
	data := map[string]any{"round": float64(d.round), "type": typ, "role": p.role, "snippet": Snippet(content)}
	if target != "" {
		data["target_agent_id"] = target
	}
	w.Publish(world.Event{Source: Name, Type: "contribution", Agent: p.id, Data: data})
	return c
}

func (d *Debate) takeMetadata(p *participant) Metadata {
	m := Metadata{ToolCalls: p.pending, ToolResults: p.results, ToolCallIterations: len(p.pending)}
	p.pending, p.results = nil, nil
	return m
}

func (d *Debate) propose(c *tools.Call) world.ActionResult {
	const tool = "propose"
	p, res, ok := d.caller(c, tool)
	if !ok {
		return res
	}
	if res, ok := d.inPhase(p, tool, PhaseProposal, false); !ok {
		return res
	}
	if d.cur().find(p.id, TypeProposal, "") != nil {
		return world.Fail(tool, world.CodeNotAllowed, "You already have a proposal in round %d", d.round)
	}
	t, res, ok := text(c, tool)
	if !ok {
		return res
	}
	d.contribute(c.World, p, TypeProposal, t, "")
	return world.OK(tool, map[string]any{"round": float64(d.round), "type": TypeProposal})
}

func (d *Debate) critique(c *tools.Call) world.ActionResult {
	const tool = "critique"
	p, res, ok := d.caller(c, tool)
	if !ok {
		return res
	}
	if res, ok := d.inPhase(p, tool, PhaseCritique, false); !ok {
		return res
	}
	target := c.String("target_agent_id", "")
	q := d.part(target)
	if q == nil || q.judge {
		var ids []string
		for _, o := range d.debaters() {
			if o != p {
				ids = append(ids, o.id)
			}
		}
		hint := ""
		if best := fuzzy.Closest(target, ids); best != "" {
			hint = fmt.Sprintf(" (did you mean '%s'?)", best)
		}
		return world.Fail(tool, world.CodeNotFound, "No debater '%s'%s; the other debaters are %s", fuzzy.Clip(target), hint, strings.Join(ids, ", "))
	}
	if q == p {
		return world.Fail(tool, world.CodeNotAllowed, "You cannot critique your own proposal; you refine it in the refinement phase")
	}
	r := d.cur()
	if r.find(q.id, TypeProposal, "") == nil {
		return world.Fail(tool, world.CodeNotFound, "%s has no proposal in round %d to critique", q.id, d.round)
	}
	if r.find(p.id, TypeCritique, q.id) != nil {
		return world.Fail(tool, world.CodeNotAllowed, "You already critiqued %s's proposal in round %d", q.id, d.round)
	}
	t, res, ok := text(c, tool)
	if !ok {
		return res
	}
	d.contribute(c.World, p, TypeCritique, t, q.id)
	return world.OK(tool, map[string]any{"round": float64(d.round), "type": TypeCritique, "target_agent_id": q.id,
		"still_to_critique": toAny(d.owed(p))})
}

func (d *Debate) refine(c *tools.Call) world.ActionResult {
	const tool = "refine"
	p, res, ok := d.caller(c, tool)
	if !ok {
		return res
	}
	if res, ok := d.inPhase(p, tool, PhaseRefinement, false); !ok {
		return res
	}
	r := d.cur()
	if r.find(p.id, TypeProposal, "") == nil {
		return world.Fail(tool, world.CodeNotAllowed, "You have no proposal in round %d to refine", d.round)
	}
	if r.find(p.id, TypeRefinement, "") != nil {
		return world.Fail(tool, world.CodeNotAllowed, "You already refined your proposal in round %d", d.round)
	}
	t, res, ok := text(c, tool)
	if !ok {
		return res
	}
	d.contribute(c.World, p, TypeRefinement, t, "")
	return world.OK(tool, map[string]any{"round": float64(d.round), "type": TypeRefinement})
}

func (d *Debate) evaluate(c *tools.Call) world.ActionResult {
	const tool = "evaluate"
	p, res, ok := d.caller(c, tool)
	if !ok {
		return res
	}
	if res, ok := d.inPhase(p, tool, PhaseEvaluation, true); !ok {
		return res
	}
	r := d.cur()
	if r.Evaluation != nil {
		return world.Fail(tool, world.CodeNotAllowed, "You already evaluated round %d", d.round)
	}
	v := c.Float("confidence", 0)
	r.Evaluation = &v
	d.confidence, d.evaluated = v, true
	d.takeMetadata(p)
	stop := v >= d.cfg.Termination.Threshold
	c.World.Publish(world.Event{Source: Name, Type: "evaluation", Agent: p.id, Data: map[string]any{
		"round": float64(d.round), "confidence": v, "threshold": d.cfg.Termination.Threshold, "consensus": stop}})
	return world.OK(tool, map[string]any{"round": float64(d.round), "confidence": v, "threshold": d.cfg.Termination.Threshold, "consensus": stop})
}

func (d *Debate) synthesize(c *tools.Call) world.ActionResult {
	const tool = "synthesize"
	p, res, ok := d.caller(c, tool)
	if !ok {
		return res
	}
	if res, ok := d.inPhase(p, tool, PhaseSynthesis, true); !ok {
		return res
	}
	t, res, ok := text(c, tool)
	if !ok {
		return res
	}
	v := c.Float("confidence", 0)
	d.synthesis = &Synthesis{AgentID: p.id, Content: t, Confidence: v, Round: d.round, Tick: c.World.Tick(), Metadata: d.takeMetadata(p)}
	d.confidence, d.evaluated = v, true
	c.World.Publish(world.Event{Source: Name, Type: "synthesis", Agent: p.id, Data: map[string]any{
		"round": float64(d.round), "confidence": v, "snippet": Snippet(t)}})
	return world.OK(tool, map[string]any{"round": float64(d.round), "confidence": v})
}

// contextSearch is the query tool: allowed only to agents whose tools list
// names it, and at most tool_call_limit calls per agent per phase, failed
// ones (schema failures included) counted. Its data is the seed's envelope
// and nothing else.
func (d *Debate) contextSearch(c *tools.Call) world.ActionResult {
	const tool = ToolContextSearch
	p, res, ok := d.caller(c, tool)
	if !ok {
		return res
	}
	if !slices.Contains(p.tools, tool) {
		return world.Fail(tool, world.CodeNotAllowed, "%s is not among your tools (yours: %s)", tool, toolList(p.tools))
	}
	if p.calls >= p.limit {
		return world.Fail(tool, world.CodeLimitExceeded, "You have used your %d tool calls for the %s; contribute now", p.limit, d.phaseName())
	}
	p.calls++
	d.callSeq++
	args, _ := json.Marshal(c.Params)
	call := ToolCall{ID: fmt.Sprintf("call_%d", d.callSeq), Name: tool, Arguments: string(args)}
	env := ContextSearch(&SearchContext{Rounds: d.rounds}, c.Params)
	p.pending = append(p.pending, call)
	p.results = append(p.results, ToolResult{ToolCallID: call.ID, Role: "tool", Content: env.JSON()})
	if env.Status != "success" {
		r := world.Fail(tool, world.CodeInvalidParams, "%s", env.Error)
		r.Data = env.Map()
		return r
	}
	// The data is the seed's envelope and nothing else (calls left are in
	// the observation's debate section).
	return world.OK(tool, env.Map())
}

func toolList(ts []string) string {
	if len(ts) == 0 {
		return "none"
	}
	return strings.Join(ts, ", ")
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
