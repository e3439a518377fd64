package economy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/components/economy"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

func reportTables(t *testing.T, r world.Reporter) map[string]world.Table {
	t.Helper()
	out := map[string]world.Table{}
	for _, tb := range r.Tables() {
		out[tb.Name] = tb
		for _, row := range tb.Rows {
			require.Len(t, row, len(tb.Columns), tb.Name)
		}
	}
	return out
}

// row maps a table row to column name → value.
func row(tb world.Table, i int) map[string]any {
	m := map[string]any{}
	for j, c := range tb.Columns {
		m[c] = tb.Rows[i][j]
	}
	return m
}

// A short scripted run: the figures of every round, every actor's final
// state, every enactment, and one line per metric with one point per round.
func TestReportsOfAScriptedRun(t *testing.T) {
	cfg := `{"labor_force": 100, "assign": ["firm", "firm", "worker", "worker", "worker"], "wage_variable": "min_wage",
		"spend_rate": 0.5, "labor_productivity": 2,
		"roles": {"firm": {"balance": 1000, "price": 5, "workforce": 10}, "worker": {"balance": 100}}}`
	v := newEnv(t, 5, cfg, map[string]any{"min_wage": 3.0})
	money := v.e.Total()
	// Round 1 (tick 0): as TestWagesAndSpending.
	v.ok("a2", "set_price", map[string]any{"price": 4})
	v.w.Step()
	// Round 2 (tick 1): a1 invests and raises the wage to 4.
	v.ok("a1", "invest", map[string]any{"amount": 100})
	v.ok("a1", "apply_policy", map[string]any{"policy_name": "raise_wage", "description": "Wage to 4", "variable": "min_wage", "value": 4})
	v.w.Step()
	// Round 3 (tick 2): a3 re-enacts it at 5 and enacts another.
	v.ok("a3", "apply_policy", map[string]any{"policy_name": "raise_wage", "description": "Wage to 5", "variable": "min_wage", "value": 5})
	v.ok("a3", "apply_policy", map[string]any{"policy_name": "holiday", "description": "A day off"})
	v.do("a4", "invest", map[string]any{"amount": 1e6}) // refused: not recorded anywhere
	v.w.Step()

	h := v.w.StateHash()
	tb := reportTables(t, v.e)
	require.Equal(t, h, v.w.StateHash(), "reporting changes nothing")

	rounds := tb["rounds"]
	require.Equal(t, []string{"round", "tick", "employment_rate", "avg_price", "total_output", "total_investment",
		"employed", "labor_force", "unemployed", "wage", "spend_rate", "wages_paid", "household_spending", "units_sold", "laid_off",
		"active_policies", "money"}, rounds.Columns)
	require.Len(t, rounds.Rows, 3)
	// Round 1: wages 2 × 10 × 3; each household spends half its cash (60),
	// 40 units in all (a2's 20 at 4, then 20 of a1's at 5).
	require.Equal(t, map[string]any{"round": 1.0, "tick": 0.0, "employment_rate": 0.2, "avg_price": 4.5, "total_output": 0.0,
		"total_investment": 0.0, "employed": 20.0, "labor_force": 100.0, "unemployed": 80.0, "wage": 3.0, "spend_rate": 0.5,
		"wages_paid": 60.0, "household_spending": 180.0, "units_sold": 40.0, "laid_off": 0.0, "active_policies": 0.0, "money": money},
		row(rounds, 0))
	r2 := row(rounds, 1)
	require.Equal(t, 2.0, r2["round"])
	require.Equal(t, 1.0, r2["tick"])
	require.Equal(t, 4.0, r2["wage"], "the policy's wage is paid in the round it is enacted")
	require.Equal(t, 80.0, r2["wages_paid"])
	require.Equal(t, 100.0, r2["total_output"])
	require.Equal(t, 100.0, r2["total_investment"])
	require.Equal(t, 1.0, r2["active_policies"])
	require.Equal(t, money-100, r2["money"], "invest turns cash into capital; the flow moves money without making or losing any")
	r3 := row(rounds, 2)
	require.Equal(t, 5.0, r3["wage"])
	require.Equal(t, 2.0, r3["active_policies"])
	for i := range rounds.Rows {
		require.Equal(t, v.e.Metrics()["employment_rate"], row(rounds, i)["employment_rate"])
	}

	actors := tb["actors"]
	require.Len(t, actors.Rows, 5)
	for i, id := range []string{"a1", "a2", "a3", "a4", "a5"} {
		a := row(actors, i)
		ac := v.actor(id)
		require.Equal(t, id, a["actor_id"])
		require.Equal(t, ac.Role, a["role"])
		require.Equal(t, ac.Balance, a["balance"])
		require.Equal(t, ac.Revenue, a["revenue"])
		require.Equal(t, ac.WagesEarned, a["wages_earned"])
		require.Equal(t, float64(ac.Workforce), a["workforce"])
		profit, _ := v.e.Metric(v.w, id, "economy.profit")
		require.Equal(t, profit, a["profit"], "as the metric")
	}
	a1 := row(actors, 0)
	require.Equal(t, "firm", a1["role"])
	require.Equal(t, 100.0, a1["invested"])
	require.Equal(t, 100.0, a1["output"])
	require.Equal(t, 30.0+40+50, a1["wages_paid"], "10 workers at 3, 4 and 5")

	pol := tb["policies"]
	require.Equal(t, []string{"round", "tick", "policy", "enacted_by", "description", "variable", "value", "previous", "replaced", "in_force"}, pol.Columns)
	require.Len(t, pol.Rows, 3)
	require.Equal(t, []any{2.0, 1.0, "raise_wage", "a1", "Wage to 4", "min_wage", 4.0, 3.0, false, false}, pol.Rows[0])
	require.Equal(t, []any{3.0, 2.0, "raise_wage", "a3", "Wage to 5", "min_wage", 5.0, 4.0, true, true}, pol.Rows[1])
	require.Equal(t, []any{3.0, 2.0, "holiday", "a3", "A day off", "", "", "", false, true}, pol.Rows[2])

	plots := v.e.Plots()
	var names, labels []string
	for _, p := range plots {
		names = append(names, p.Name)
		for _, s := range p.Series {
			labels = append(labels, s.Label)
			require.Equal(t, []float64{1, 2, 3}, s.X, "one point per round")
			require.Len(t, s.Y, 3)
		}
	}
	require.Equal(t, []string{"employment", "prices", "output", "flows"}, names)
	require.Equal(t, []string{"employment_rate", "avg_price", "wage", "total_output", "total_investment", "wages_paid", "household_spending"}, labels,
		"one line per metric")
	require.Equal(t, []float64{0, 100, 100}, plots[2].Series[1].Y)
	require.Equal(t, []float64{3, 4, 5}, plots[1].Series[1].Y)
}

// A long run keeps a bounded record of rounds spanning the whole run, evenly
// spaced, ending at the last round; the policy log is capped too.
func TestRecordsAreBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("25,000 ticks and 10,000 policies")
	}
	v := newEnv(t, 2, `{}`, nil)
	const n = 25_002 // the last round falls between two kept ones
	for range n {
		v.w.Step()
	}
	for i := range 10_001 {
		v.ok("a1", "apply_policy", map[string]any{"policy_name": []string{"a", "b"}[i%2], "description": fmt.Sprint("d", i)})
	}
	tb := reportTables(t, v.e)
	rounds := tb["rounds"]
	require.LessOrEqual(t, len(rounds.Rows), 10_001)
	require.Greater(t, len(rounds.Rows), 5_000)
	require.Equal(t, 1.0, row(rounds, 0)["round"])
	require.Equal(t, float64(n), row(rounds, len(rounds.Rows)-1)["round"], "the last round is always reported")
	gap := row(rounds, 1)["round"].(float64) - 1
	for i := 1; i < len(rounds.Rows)-1; i++ {
		require.Equal(t, gap, row(rounds, i)["round"].(float64)-row(rounds, i-1)["round"].(float64), "evenly spaced")
	}
	for _, p := range v.e.Plots() {
		for _, s := range p.Series {
			require.Len(t, s.X, len(rounds.Rows))
		}
	}
	pol := tb["policies"]
	require.Len(t, pol.Rows, 10_000, "the first 10,000 enactments")
	require.Equal(t, false, row(pol, 9_998)["in_force"], "a, re-enacted after the log was full")
	require.Equal(t, true, row(pol, 9_999)["in_force"], "b")
}

// The economy scenario played by its bots leaves its tables and plots as
// files.
func TestReportsOfThePlayedScenario(t *testing.T) {
	sc, err := scenarios.Load("economy")
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: 1})
	require.NoError(t, err)
	ctrls := map[string]engine.Controller{}
	for _, a := range w.Agents() {
		ctrls[a.ID] = bots.NewEconomist(bots.Info{AgentID: a.ID, Seed: 1})
	}
	res, err := (&engine.Runner{World: w, Controllers: ctrls, MaxTicks: sc.TimeLimit()}).Run(context.Background())
	require.NoError(t, err)
	e := w.Component("economy").(*economy.Economy)
	tb := reportTables(t, e)
	require.Len(t, tb["rounds"].Rows, res.Ticks, "one row per round")
	require.Len(t, tb["actors"].Rows, len(w.Agents()))
	require.NotEmpty(t, tb["policies"].Rows, "the government raises min_wage")
	last := row(tb["rounds"], len(tb["rounds"].Rows)-1)
	for name, val := range e.Metrics() {
		require.Equal(t, val, last[name], name)
	}

	dir := t.TempDir()
	files, err := eval.WriteComponentReports(dir, w)
	require.NoError(t, err)
	for _, name := range []string{"rounds.csv", "rounds.json", "actors.csv", "actors.json", "policies.csv", "policies.json",
		"employment.png", "prices.png", "output.png", "flows.png"} {
		p := filepath.Join(dir, "economy", name)
		require.Contains(t, files, p)
		st, err := os.Stat(p)
		require.NoError(t, err)
		require.Positive(t, st.Size())
	}
}

// A world where nothing happened still reports (and plots) without error.
func TestReportsOfAnIdleWorld(t *testing.T) {
	v := newEnv(t, 1, `{}`, nil)
	tb := reportTables(t, v.e)
	require.Empty(t, tb["rounds"].Rows)
	require.Len(t, tb["actors"].Rows, 1)
	require.Empty(t, tb["policies"].Rows)
	_, err := eval.WriteComponentReports(t.TempDir(), v.w)
	require.NoError(t, err)
}
