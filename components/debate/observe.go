package debate

import (
	"fmt"
	"strings"

	"github.com/arena-sim/arena/world"
)

// Observe implements world.Component. Every agent's section has the task,
// the round and phase, its role, the participants, the contributions it
// needs now, what it must do now (you_must, with owed: the agent ids still to
// critique, or [""] for one contribution) and its query tools with the calls
// left this phase. The debate is public among its participants: what is shown
// is chosen for relevance, and context_search reaches everything.
func (d *Debate) Observe(_ *world.World, agentID string) world.Section {
	p := d.part(agentID)
	if p == nil {
		return world.Section{"text": "You are not taking part in the debate.", "participant": false}
	}
	var parts []any
	var partsText []string
	for _, q := range d.parts {
		parts = append(parts, map[string]any{"agent_id": q.id, "role": q.role})
		if !q.judge {
			partsText = append(partsText, fmt.Sprintf("%s (%s)", q.id, q.role))
		}
	}
	shown := d.shown(p)
	var vis []any
	for _, s := range shown {
		vis = append(vis, s.fields())
	}
	owed := d.owed(p)
	must := d.must(p, owed)
	sec := world.Section{
		"participant": true, "task": d.task, "round": float64(d.round), "rounds": float64(d.cfg.Rounds),
		"phase": d.phase, "phase_ticks_left": float64(max(0, d.cfg.PhaseTicks-d.phaseTicks)),
		"role": p.role, "is_judge": p.judge, "judge": d.judge.id, "participants": parts,
		"contributions": orEmpty(vis), "owed": toAny(owed), "you_must": must,
		"tools": toAny(p.tools), "tool_calls_left": float64(max(0, p.limit-p.calls)),
		"termination": d.cfg.Termination.Type, "threshold": d.cfg.Termination.Threshold,
	}
	if d.evaluated {
		sec["confidence"] = d.confidence
	}
	if d.synthesis != nil {
		sec["synthesis"] = map[string]any{"agent_id": d.synthesis.AgentID, "content": d.synthesis.Content, "confidence": d.synthesis.Confidence}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Debate task: %s\n", d.task)
	if p.judge {
		fmt.Fprintf(&b, "You are %s, the judge. Debaters: %s.\n", p.id, strings.Join(partsText, ", "))
	} else {
		fmt.Fprintf(&b, "You are %s, a debater with the role %s. Debaters: %s; judge %s.\n", p.id, p.role, strings.Join(partsText, ", "), d.judge.id)
	}
	if d.phase == PhaseDone {
		fmt.Fprintf(&b, "The debate is over after round %d.\n", d.round)
	} else {
		fmt.Fprintf(&b, "Round %d of at most %d, %s phase (at most %d more ticks).\n", d.round, d.cfg.Rounds, d.phase, max(0, d.cfg.PhaseTicks-d.phaseTicks))
	}
	if d.cfg.Termination.Type == "confidence" {
		fmt.Fprintf(&b, "The debate ends early once the judge's confidence reaches %g.\n", d.cfg.Termination.Threshold)
	}
	if len(shown) > 0 {
		b.WriteString(d.shownTitle(p) + "\n")
		for _, s := range shown {
			b.WriteString("  " + s.line() + "\n")
		}
	}
	if d.synthesis != nil {
		fmt.Fprintf(&b, "Synthesis by %s (confidence %g): %s\n", d.synthesis.AgentID, d.synthesis.Confidence, d.synthesis.Content)
	}
	b.WriteString("Now: " + must + "\n")
	if len(p.tools) > 0 {
		fmt.Fprintf(&b, "Your query tools: %s (%d calls left this phase).", strings.Join(p.tools, ", "), max(0, p.limit-p.calls))
	} else {
		b.WriteString("You have no query tools.")
	}
	sec["text"] = b.String()
	return sec
}

// shownItem is one contribution shown to an agent.
type shownItem struct {
	round int
	c     *Contribution
}

func (s shownItem) fields() map[string]any {
	m := map[string]any{"round": float64(s.round), "agent_id": s.c.AgentID, "agent_role": s.c.AgentRole, "type": s.c.Type, "content": s.c.Content}
	if s.c.TargetAgentID != "" {
		m["target_agent_id"] = s.c.TargetAgentID
	}
	return m
}

func (s shownItem) line() string {
	to := ""
	if s.c.TargetAgentID != "" {
		to = " of " + s.c.TargetAgentID + "'s proposal"
	}
	return fmt.Sprintf("[round %d] %s (%s), %s%s: %s", s.round, s.c.AgentID, s.c.AgentRole, s.c.Type, to, s.c.Content)
}

// shown picks the contributions an agent needs now: in the proposal phase
// its last refinement; in the critique phase this round's proposals; in the
// refinement phase its proposal and the critiques of it; the judge, this
// round's proposals and refinements (all rounds' refinements once done).
func (d *Debate) shown(p *participant) []shownItem {
	if len(d.rounds) == 0 {
		return nil
	}
	r := d.cur()
	var out []shownItem
	add := func(rd *Round, keep func(c *Contribution) bool) {
		for i := range rd.Contributions {
			if c := &rd.Contributions[i]; keep(c) {
				out = append(out, shownItem{rd.Number, c})
			}
		}
	}
	switch {
	case p.judge:
		add(r, func(c *Contribution) bool { return c.Type == TypeProposal || c.Type == TypeRefinement })
	case d.phase == PhaseProposal:
		if len(d.rounds) > 1 {
			add(&d.rounds[len(d.rounds)-2], func(c *Contribution) bool { return c.AgentID == p.id && c.Type == TypeRefinement })
		}
	case d.phase == PhaseCritique:
		add(r, func(c *Contribution) bool { return c.Type == TypeProposal })
	case d.phase == PhaseRefinement:
		add(r, func(c *Contribution) bool {
			return c.AgentID == p.id && c.Type == TypeProposal || c.Type == TypeCritique && c.TargetAgentID == p.id
		})
	default:
		add(r, func(c *Contribution) bool { return c.Type == TypeRefinement })
	}
	return out
}

func (d *Debate) shownTitle(p *participant) string {
	switch {
	case p.judge:
		return fmt.Sprintf("Round %d's proposals and refinements:", d.round)
	case d.phase == PhaseProposal:
		return "Your refinement from the last round:"
	case d.phase == PhaseCritique:
		return fmt.Sprintf("Round %d's proposals:", d.round)
	case d.phase == PhaseRefinement:
		return "Your proposal and the critiques of it:"
	}
	return fmt.Sprintf("Round %d's refinements:", d.round)
}

// must says what the agent must do now.
func (d *Debate) must(p *participant, owed []string) string {
	if d.phase == PhaseDone {
		return "nothing: the debate is over (do_nothing)."
	}
	if len(owed) == 0 {
		if p.judge {
			return "wait while the debaters work (do_nothing); you evaluate or synthesise later."
		}
		return fmt.Sprintf("wait for the %s phase to end (do_nothing); you have made every contribution it asks of you.", d.phase)
	}
	switch d.phase {
	case PhaseProposal:
		return "propose(content): your proposal for the task, from your role's point of view."
	case PhaseCritique:
		return fmt.Sprintf("critique(target_agent_id, content) each other debater's proposal; still to critique: %s.", strings.Join(owed, ", "))
	case PhaseRefinement:
		return "refine(content): your proposal improved in answer to the critiques of it; it carries forward to the next round."
	case PhaseEvaluation:
		return fmt.Sprintf("evaluate(confidence): 0-100, how ready the latest refinements are; %g or more ends the debate.", d.cfg.Termination.Threshold)
	case PhaseSynthesis:
		return "synthesize(content, confidence): the final answer, drawn from the debaters' refinements."
	}
	return "do_nothing."
}

func orEmpty(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}
