package economy

import (
	"fmt"

	"github.com/arena-sim/arena/world"
)

var _ world.Spectated = (*Economy)(nil)

// Panel implements world.Spectated: the round, the money in the economy and
// the actors' mean cash, the labor market and wage, the four metrics as of
// the last round's end, the flow's parameters, the last policy change and
// the policies in force with the current value of the variable each set.
func (e *Economy) Panel(w *world.World) world.Panel {
	p := world.Panel{Name: Name, Title: "Economy"}
	var cash money
	for _, a := range e.actors {
		cash += a.cash
	}
	mean := 0.0
	if len(e.actors) > 0 {
		mean = cash.dollars() / float64(len(e.actors))
	}
	p.Add("Round %d · %d actors · %d policies", e.round, len(e.actors), len(e.policies))
	p.Add("Money %.2f · mean cash %.2f", e.Total(), mean)
	p.Add("Labor %d: %d employed, %d unemployed · wage %s", e.laborForce, e.employed(), e.unemployed(), e.wage(w))
	p.Add("Employment %.1f%% · avg price %.2f", 100*e.metrics[0], e.metrics[1])
	p.Add("Output %.2f · investment %.2f", e.metrics[2], e.metrics[3])
	p.Add("Spend rate %s · productivity labor %s, capital %s", formatValue(e.spendRate), formatValue(e.laborProd), formatValue(e.capitalProd))
	if last, ok := e.lastPolicy(); ok {
		s := fmt.Sprintf("Last policy: %s enacted %q in round %d", last.p.enactedBy, last.p.name, last.p.round)
		if last.p.variable != "" {
			s += fmt.Sprintf(": %s ", last.p.variable)
			if last.previous != nil {
				s += formatValue(last.previous) + " → "
			}
			s += formatValue(last.p.value)
		}
		p.Add("%s", s)
	}
	if len(e.policies) == 0 {
		p.Add("No policies in force")
		return p
	}
	p.Add("Policies in force:")
	for i, pol := range e.policies {
		if p.Room() == 1 && i < len(e.policies)-1 {
			p.Add("  +%d more", len(e.policies)-i)
			break
		}
		if pol.variable == "" {
			p.Add("  %s (by %s, round %d)", pol.name, pol.enactedBy, pol.round)
			continue
		}
		v, _ := w.Variable(pol.variable)
		p.Add("  %s = %s · %s (by %s)", pol.variable, formatValue(v), pol.name, pol.enactedBy)
	}
	return p
}

// lastPolicy is the latest enactment, with the value its variable had
// before; when the log is full, the latest of the policies in force.
func (e *Economy) lastPolicy() (enactment, bool) {
	if n := len(e.rep.policies); n > 0 && e.rep.dropped == 0 {
		return e.rep.policies[n-1], true
	}
	var last enactment
	for _, pol := range e.policies {
		if pol.round >= last.p.round {
			last = enactment{round: pol.round, p: pol}
		}
	}
	return last, len(e.policies) > 0
}
