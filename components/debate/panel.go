package debate

import (
	"fmt"

	"github.com/arena-sim/arena/world"
)

var _ world.Spectated = (*Debate)(nil)

// Panel implements world.Spectated: the round and phase with the ticks left,
// the task, the judge with the termination rule and its latest confidence,
// the debaters with what each has contributed to the phase, contributions
// lost to timeouts, and the latest contribution (the synthesis, once made).
func (d *Debate) Panel(*world.World) world.Panel {
	p := world.Panel{Name: Name, Title: "Debate"}
	if len(d.rounds) == 0 {
		p.Add("Not started")
		return p
	}
	if d.phase == PhaseDone {
		p.Add("Done after round %d of at most %d", d.round, d.cfg.Rounds)
	} else {
		p.Add("Round %d of at most %d · %s · %d ticks left", d.round, d.cfg.Rounds, d.phase, max(0, d.cfg.PhaseTicks-d.phaseTicks))
	}
	p.Add("Task: %s", d.task)
	judge := "Judge " + d.judge.id
	if len(d.owed(d.judge)) > 0 {
		judge += " (to " + map[string]string{PhaseEvaluation: "evaluate", PhaseSynthesis: "synthesise"}[d.phase] + ")"
	}
	switch {
	case d.cfg.Termination.Type == "confidence" && d.evaluated:
		judge += fmt.Sprintf(" · confidence %g, %g ends", d.confidence, d.cfg.Termination.Threshold)
	case d.cfg.Termination.Type == "confidence":
		judge += fmt.Sprintf(" · no confidence yet, %g ends", d.cfg.Termination.Threshold)
	default:
		judge += fmt.Sprintf(" · fixed %d rounds", d.cfg.Rounds)
	}
	p.Add("%s", judge)
	var items []string
	for _, q := range d.debaters() {
		items = append(items, fmt.Sprintf("%s (%s)%s", q.id, q.role, d.stage(q)))
	}
	p.AddList("Debaters: ", items, 5)
	if d.skipped > 0 {
		p.Add("Lost to timeouts: %d contributions", d.skipped)
	}
	if s := d.synthesis; s != nil {
		p.Add("Synthesis by %s, confidence %g:", s.AgentID, s.Confidence)
		p.Add("  %s", s.Content)
		return p
	}
	for i := len(d.rounds) - 1; i >= 0; i-- {
		r := &d.rounds[i]
		for j := len(r.Contributions) - 1; j >= 0; j-- {
			c := &r.Contributions[j]
			if c.Metadata.CarriedForward {
				continue
			}
			of := ""
			if c.TargetAgentID != "" {
				of = " of " + c.TargetAgentID
			}
			p.Add("Last: %s (%s), %s%s, round %d:", c.AgentID, c.AgentRole, c.Type, of, r.Number)
			p.Add("  %s", c.Content)
			return p
		}
	}
	return p
}

// stage tells what a debater has contributed to the phase: " done" or
// " pending" for a proposal or refinement (" -" when none is asked of it, a
// refinement without a proposal), " k/n" critiques made until all are done,
// nothing outside those phases.
func (d *Debate) stage(q *participant) string {
	owed := len(d.owed(q))
	switch d.phase {
	case PhaseProposal, PhaseRefinement:
		switch {
		case d.cur().find(q.id, d.phase, "") != nil: // the phases are named after their contributions
			return " done"
		case owed > 0:
			return " pending"
		}
		return " -"
	case PhaseCritique:
		made := 0
		for _, c := range d.cur().Contributions {
			if c.AgentID == q.id && c.Type == TypeCritique {
				made++
			}
		}
		if owed == 0 {
			return " done"
		}
		return fmt.Sprintf(" %d/%d", made, made+owed)
	}
	return ""
}
