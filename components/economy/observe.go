package economy

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/arena-sim/arena/world"
)

// Observe implements world.Component. The section's text follows the
// reference's layout ("=== Economic State ===", the metrics to 4 decimals,
// active policies, scenario variables, "Your state: ..."), with the round,
// the labor market, the public list of actors (whose ids allocate takes) and
// the agent's own accounts and last round added. Structured fields carry the
// same: round, metrics, policies, variables, actors, you, labor_force,
// unemployed, wage. Other actors' money is private.
func (e *Economy) Observe(w *world.World, agentID string) world.Section {
	me := e.byID[agentID]
	var b strings.Builder
	b.WriteString("=== Economic State ===\n")
	unemployed := e.unemployed()
	wage := e.wage(w)
	fmt.Fprintf(&b, "Round %d. Labor force %d: %d employed, %d unemployed. Wage per worker per round: %s.\n",
		e.round, e.laborForce, e.employed(), unemployed, wage)
	b.WriteString("Metrics:\n")
	metrics := make(map[string]any, len(metricNames))
	for i, n := range metricNames {
		fmt.Fprintf(&b, "  %s: %.4f\n", n, e.metrics[i])
		metrics[n] = e.metrics[i]
	}
	b.WriteString("Active policies:")
	policies := make([]any, 0, len(e.policies))
	if len(e.policies) == 0 {
		b.WriteString(" (none)")
	}
	for _, p := range e.policies {
		fmt.Fprintf(&b, "\n  - %s: %s (by %s, round %d", p.name, p.description, p.enactedBy, p.round)
		pm := map[string]any{"name": p.name, "description": p.description, "enacted_by": p.enactedBy, "round": float64(p.round)}
		if p.variable != "" {
			fmt.Fprintf(&b, "; %s = %s", p.variable, formatValue(p.value))
			pm["variable"], pm["value"] = p.variable, p.value
		}
		b.WriteString(")")
		policies = append(policies, pm)
	}
	b.WriteString("\nScenario variables:")
	vars := w.Variables()
	if len(vars) == 0 {
		b.WriteString(" (none)")
	}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		fmt.Fprintf(&b, "\n  %s: %s", k, formatValue(vars[k]))
	}
	if vars == nil {
		vars = map[string]any{}
	}
	b.WriteString("\nActors:")
	actors := make([]any, 0, len(e.actors))
	for _, a := range e.actors {
		fmt.Fprintf(&b, "\n  %s (%s)", a.id, a.role)
		if a.price > 0 || a.workforce > 0 || a.output > 0 {
			fmt.Fprintf(&b, ": price=%s workforce=%d output=%s", a.price, a.workforce, a.output)
		}
		if a == me {
			b.WriteString(" (you)")
		}
		actors = append(actors, map[string]any{"id": a.id, "role": a.role, "price": a.price.dollars(),
			"workforce": float64(a.workforce), "output": a.output.dollars()})
	}
	sec := world.Section{
		"round": float64(e.round), "metrics": metrics, "policies": policies, "variables": vars, "actors": actors,
		"labor_force": float64(e.laborForce), "unemployed": float64(unemployed), "wage": wage.dollars(),
		"spend_rate": e.spendRate, "accounts": []any{"cash", "savings", "payroll"},
	}
	if me != nil {
		fmt.Fprintf(&b, "\nYour state: role=%s balance=%s workforce=%d price=%s output=%s", me.role, me.cash, me.workforce, me.price, me.output)
		fmt.Fprintf(&b, "\nYour accounts: cash=%s savings=%s payroll=%s", me.cash, me.savings, me.payroll)
		l := me.last
		fmt.Fprintf(&b, "\nLast round: revenue=%s units_sold=%s capacity=%s wages_paid=%s wages_earned=%s spent=%s",
			l.revenue, fmtUnits(l.unitsSold), fmtUnits(l.capacity), l.wagesPaid, l.wagesEarned, l.spent)
		if l.laidOff > 0 {
			fmt.Fprintf(&b, " laid_off=%d", l.laidOff)
		}
		allowed := e.allowedTools(me.role)
		if len(e.cfg.Permissions) > 0 {
			names := make([]string, len(allowed))
			for i, t := range allowed {
				names[i] = t.(string)
			}
			fmt.Fprintf(&b, "\nTools a %s may use: %s", me.role, strings.Join(names, ", "))
		}
		sec["you"] = map[string]any{
			"id": me.id, "role": me.role, "balance": me.cash.dollars(), "savings": me.savings.dollars(), "payroll": me.payroll.dollars(),
			"workforce": float64(me.workforce), "price": me.price.dollars(), "output": me.output.dollars(),
			"capacity": e.capacity(me), "invested": me.invested.dollars(), "revenue": me.revenue.dollars(),
			"wages_paid": me.wagesPaid.dollars(), "wages_earned": me.wagesEarned.dollars(),
			"allowed_tools": allowed,
			"last_round": map[string]any{"revenue": l.revenue.dollars(), "units_sold": l.unitsSold, "capacity": l.capacity,
				"wages_paid": l.wagesPaid.dollars(), "wages_earned": l.wagesEarned.dollars(), "spent": l.spent.dollars(), "laid_off": float64(l.laidOff)},
		}
	}
	sec["text"] = b.String()
	return sec
}

// allowedTools lists the economy tools a role may use.
func (e *Economy) allowedTools(role string) []any {
	out := make([]any, 0, len(toolNames))
	for _, t := range toolNames {
		if roles, ok := e.cfg.Permissions[t]; !ok || slices.Contains(roles, role) {
			out = append(out, t)
		}
	}
	return out
}

func fmtUnits(u float64) string { return strconv.FormatFloat(u, 'f', 2, 64) }

func formatValue(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

func signed(d float64) string {
	if d >= 0 {
		return fmt.Sprintf("+%.4f", d)
	}
	return fmt.Sprintf("%.4f", d)
}

// FormatEvent implements world.EventFormatter: one line per event, from the
// event's own fields.
func (e *Economy) FormatEvent(ev world.Event) (string, bool) {
	d := ev.Data
	str := func(k string) string { s, _ := d[k].(string); return s }
	num := func(k string) float64 { f, _ := d[k].(float64); return f }
	switch ev.Type {
	case "metric_change":
		dir := "rose"
		if num("delta") < 0 {
			dir = "fell"
		}
		return fmt.Sprintf("[Economy] %s %s from %.4f to %.4f (%s)", str("metric"), dir, num("previous"), num("current"), signed(num("delta"))), true
	case "policy_change":
		s := fmt.Sprintf("[Policy] %s enacted %s: %s", str("enacted_by"), str("policy"), str("description"))
		if v := str("variable"); v != "" {
			s += fmt.Sprintf(" (%s = %s", v, formatValue(d["value"]))
			if prev, ok := d["previous"]; ok {
				s += ", was " + formatValue(prev)
			}
			s += ")"
		}
		return s, true
	case "transfer":
		return fmt.Sprintf("[Economy] %s sent you %.2f", str("from"), num("amount")), true
	case "layoff":
		return fmt.Sprintf("[Economy] you could not pay the wage of %.2f for all your workers: %.0f laid off, %.0f remain", num("wage"), num("laid_off"), num("workforce")), true
	case "economic_shock":
		var parts []string
		for _, k := range []string{"spend_rate", "labor_force", "labor_productivity", "capital_productivity"} {
			if v, ok := d[k].(float64); ok {
				parts = append(parts, fmt.Sprintf("%s %s → %s", k, formatValue(d[k+"_before"]), formatValue(v)))
			}
		}
		s := "[Economy] Shock in round " + formatValue(d["round"])
		if n := str("note"); n != "" {
			s += ": " + n
		}
		return s + " (" + strings.Join(parts, ", ") + ")", true
	}
	return "", false
}
