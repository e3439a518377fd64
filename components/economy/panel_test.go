package economy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// panel returns the economy's panel, checking that it changes nothing and
// keeps to the panel limits.
func (v *env) panel() world.Panel {
	v.t.Helper()
	return testutil.Panel(v.t, v.w, v.e)
}

func TestPanelShowsMetricsAndPolicies(t *testing.T) {
	cfg := `{"labor_force": 100, "assign": ["firm", "firm", "worker", "worker", "worker"], "wage_variable": "min_wage",
		"spend_rate": 0.5, "labor_productivity": 2,
		"roles": {"firm": {"balance": 1000, "price": 5, "workforce": 10}, "worker": {"balance": 100}}}`
	v := newEnv(t, 5, cfg, map[string]any{"min_wage": 3.0})
	p := v.panel()
	require.Equal(t, "Economy", p.Title)
	require.Equal(t, []string{
		"Round 1 · 5 actors · 0 policies",
		"Money 2300.00 · mean cash 460.00",
		"Labor 100: 20 employed, 80 unemployed · wage 3.00",
		"Employment 20.0% · avg price 5.00",
		"Output 0.00 · investment 0.00",
		"Spend rate 0.5 · productivity labor 2, capital 0",
		"No policies in force",
	}, p.Lines)

	v.ok("a1", "set_price", map[string]any{"price": 4})
	v.ok("a2", "invest", map[string]any{"amount": 70})
	v.ok("a3", "apply_policy", map[string]any{"policy_name": "raise", "description": "A higher minimum wage", "variable": "min_wage", "value": 4})
	v.ok("a4", "apply_policy", map[string]any{"policy_name": "holiday", "description": "A day off"})
	v.w.Step()
	v.ok("a5", "apply_policy", map[string]any{"policy_name": "raise", "description": "Higher still", "variable": "min_wage", "value": 5})
	p = v.panel()
	require.Equal(t, "Round 2 · 5 actors · 2 policies", p.Lines[0])
	require.Equal(t, fmt.Sprintf("Money %.2f · mean cash %.2f", v.e.Total(), meanCash(v)), p.Lines[1])
	require.Equal(t, "Money 2230.00 · mean cash 446.00", p.Lines[1], "70.00 became capital; wages and spending move money")
	require.Equal(t, "Labor 100: 20 employed, 80 unemployed · wage 5.00", p.Lines[2])
	require.Equal(t, fmt.Sprintf("Employment 20.0%% · avg price %.2f", v.metric("avg_price")), p.Lines[3])
	require.Equal(t, "Employment 20.0% · avg price 4.50", p.Lines[3])
	require.Equal(t, "Output 70.00 · investment 70.00", p.Lines[4])
	require.Equal(t, `Last policy: a5 enacted "raise" in round 2: min_wage 4 → 5`, p.Lines[6])
	require.Equal(t, []string{"Policies in force:", "  min_wage = 5 · raise (by a5)", "  holiday (by a4, round 1)"}, p.Lines[7:])
}

func meanCash(v *env) float64 {
	var sum float64
	for i := range 5 {
		sum += v.actor(fmt.Sprintf("a%d", i+1)).Balance
	}
	return sum / 5
}

func TestPanelManyPolicies(t *testing.T) {
	v := newEnv(t, 2, `{}`, nil)
	for i := range 12 {
		v.ok("a1", "apply_policy", map[string]any{"policy_name": fmt.Sprintf("policy %d %s", i, strings.Repeat("long ", 15)), "description": "d",
			"variable": fmt.Sprintf("var_%d", i), "value": float64(i)})
	}
	p := v.panel()
	require.Len(t, p.Lines, world.PanelLines)
	require.Equal(t, "Policies in force:", p.Lines[7])
	require.True(t, strings.HasPrefix(p.Lines[8], "  var_0 = 0 · policy 0 long"), p.Lines[8])
	require.True(t, strings.HasSuffix(p.Lines[8], "…"), "long names are clipped")
	require.Equal(t, "  +7 more", p.Lines[world.PanelLines-1])
	require.True(t, strings.HasPrefix(p.Lines[6], `Last policy: a1 enacted "policy 11 long`), p.Lines[6])
}
