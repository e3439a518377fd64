package economy_test

import (
	"encoding/json"
	"testing"

	"github.com/arena-sim/arena/components/economy"
	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// env is a world with an economy and its tool registry.
type env struct {
	t   *testing.T
	w   *world.World
	e   *economy.Economy
	reg *tools.Registry
}

// newEnv builds a small world whose agents are a1, a2, ... (n of them) with
// an economy of the given config.
func newEnv(t *testing.T, n int, config string, vars map[string]any) *env {
	t.Helper()
	e, err := economy.New(json.RawMessage(config))
	require.NoError(t, err)
	w, reg := testutil.ComponentWorld(t, n, e, func(cfg *world.Config) {
		cfg.Objective.SuccessMetrics = map[string]world.MetricTarget{"economy.balance": {Target: 1}}
		cfg.Variables = vars
	})
	return &env{t: t, w: w, e: e, reg: reg}
}

func (v *env) do(id, tool string, params map[string]any) world.ActionResult {
	return v.reg.Execute(v.w, id, tool, params, false)
}

func (v *env) ok(id, tool string, params map[string]any) map[string]any {
	v.t.Helper()
	res := v.do(id, tool, params)
	require.True(v.t, res.Success, "%s %v: %s %s", tool, params, res.ErrorCode, res.ErrorMessage)
	return res.Data
}

func (v *env) fail(id, tool string, params map[string]any, code, msg string) {
	v.t.Helper()
	before := v.w.StateHash()
	events := len(v.w.Events())
	vars := v.w.Variables()
	res := v.do(id, tool, params)
	require.False(v.t, res.Success, "%s %v should fail, got %+v", tool, params, res)
	require.Equal(v.t, code, res.ErrorCode, res.ErrorMessage)
	require.Contains(v.t, res.ErrorMessage, msg)
	require.Less(v.t, len(res.ErrorMessage), 2000, "an error never echoes a huge input")
	require.Equal(v.t, before, v.w.StateHash(), "a refused %s changes nothing", tool)
	require.Len(v.t, v.w.Events(), events, "a refused %s publishes nothing", tool)
	require.Equal(v.t, vars, v.w.Variables())
}

func (v *env) actor(id string) economy.Actor {
	v.t.Helper()
	a, ok := v.e.Actor(id)
	require.True(v.t, ok)
	return a
}

func (v *env) metric(name string) float64 { return v.e.Metrics()[name] }

func (v *env) events(typ string) []world.Event {
	var out []world.Event
	for _, ev := range v.w.Events() {
		if ev.Source == economy.Name && ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// The reference's economic examples (tests/engine test_economic_env and
// test_economic_metrics).
func TestReferenceEconomicExamples(t *testing.T) {
	t.Run("hire 10 makes a workforce of 10", func(t *testing.T) {
		v := newEnv(t, 1, `{}`, nil)
		v.ok("a1", "hire", map[string]any{"count": 10})
		require.Equal(t, 10, v.actor("a1").Workforce)
	})
	t.Run("hire 20 then fire 8 leaves 12; firing more than employed fails", func(t *testing.T) {
		v := newEnv(t, 1, `{}`, nil)
		v.ok("a1", "hire", map[string]any{"count": 20})
		v.ok("a1", "fire", map[string]any{"count": 8})
		require.Equal(t, 12, v.actor("a1").Workforce)
		v.fail("a1", "fire", map[string]any{"count": 13}, world.CodeNotAllowed, "Cannot fire 13 workers, only 12 employed")
		require.Equal(t, 12, v.actor("a1").Workforce)
	})
	t.Run("labor 100 with hire 50 gives an employment rate of 0.5", func(t *testing.T) {
		v := newEnv(t, 1, `{"labor_force": 100}`, nil)
		v.ok("a1", "hire", map[string]any{"count": 50})
		v.w.Step()
		require.Equal(t, 0.5, v.metric("employment_rate"))
	})
	t.Run("labor 10 with hire 100: the rate stays at most 1", func(t *testing.T) {
		// The reference lets the hire through and caps the rate; hiring
		// people who are not there is refused here, and the rate is still
		// capped when a shock shrinks the labor force below the workforce.
		v := newEnv(t, 1, `{"labor_force": 10, "shocks": [{"round": 2, "labor_force": 5}]}`, nil)
		v.fail("a1", "hire", map[string]any{"count": 100}, world.CodeNotAllowed, "Cannot hire 100 workers, only 10 unemployed (labor force 10)")
		v.ok("a1", "hire", map[string]any{"count": 10})
		v.w.Step()
		require.Equal(t, 1.0, v.metric("employment_rate"))
		v.w.Step() // round 2: the labor force falls to 5 with 10 employed
		require.Equal(t, 1.0, v.metric("employment_rate"))
		v.fail("a1", "hire", map[string]any{"count": 1}, world.CodeNotAllowed, "only 0 unemployed")
	})
	t.Run("invest 200 from 500 leaves 300 and makes 200 output; invest 500 from 100 fails", func(t *testing.T) {
		v := newEnv(t, 2, `{"actors": {"a1": {"balance": 500}, "a2": {"balance": 100}}}`, nil)
		v.ok("a1", "invest", map[string]any{"amount": 200})
		a := v.actor("a1")
		require.Equal(t, 300.0, a.Balance)
		require.Equal(t, 200.0, a.Output)
		v.fail("a2", "invest", map[string]any{"amount": 500}, world.CodeNotAllowed, "Insufficient balance")
		require.Equal(t, 100.0, v.actor("a2").Balance)
		require.Zero(t, v.actor("a2").Output)
	})
	t.Run("prices 10 and 30 average 20; investments 100 and 200 make total output 300", func(t *testing.T) {
		v := newEnv(t, 3, `{}`, nil)
		v.ok("a1", "set_price", map[string]any{"price": 10})
		v.ok("a2", "set_price", map[string]any{"price": 30})
		v.ok("a1", "invest", map[string]any{"amount": 100})
		v.ok("a2", "invest", map[string]any{"amount": 200})
		v.w.Step()
		require.Equal(t, 20.0, v.metric("avg_price"), "a3 sets no price and is left out")
		require.Equal(t, 300.0, v.metric("total_output"))
		require.Equal(t, 300.0, v.metric("total_investment"))
	})
	t.Run("labor 100 with hire 20 publishes metric_change; labor 10000 with hire 1 does not", func(t *testing.T) {
		v := newEnv(t, 1, `{"labor_force": 100}`, nil)
		v.ok("a1", "hire", map[string]any{"count": 20})
		v.w.Step()
		ev := v.events("metric_change")
		require.Len(t, ev, 1)
		require.Equal(t, map[string]any{"metric": "employment_rate", "previous": 0.0, "current": 0.2, "delta": 0.2, "round": 1.0}, ev[0].Data)

		v = newEnv(t, 1, `{"labor_force": 10000}`, nil)
		v.ok("a1", "hire", map[string]any{"count": 1})
		v.w.Step()
		require.Empty(t, v.events("metric_change"))
		require.Equal(t, 0.0001, v.metric("employment_rate"))
	})
	t.Run("apply_policy with min_wage = 15 sets the variable", func(t *testing.T) {
		v := newEnv(t, 2, `{}`, nil)
		v.ok("a1", "apply_policy", map[string]any{"policy_name": "minimum wage", "description": "Set the minimum wage to 15", "variable": "min_wage", "value": 15})
		val, ok := v.w.Variable("min_wage")
		require.True(t, ok)
		require.Equal(t, 15.0, val)
		require.Equal(t, []string{"minimum wage"}, v.e.Policies())
		// ... and, unlike the reference, announces it as policy_change.
		ev := v.events("policy_change")
		require.Len(t, ev, 1)
		require.Equal(t, "a1", ev[0].Agent)
		require.Equal(t, "min_wage", ev[0].Data["variable"])
		require.Equal(t, 15.0, ev[0].Data["value"])
	})
}

func TestStartingBalancesAndRoles(t *testing.T) {
	v := newEnv(t, 5, `{"starting_balance": 250, "assign": ["firm", "worker", "worker"],
		"roles": {"firm": {"balance": 5000, "price": 12, "workforce": 3, "output": 100}, "worker": {"savings": 20}},
		"actors": {"a5": {"role": "government", "balance": 9000}}}`, nil)
	require.Equal(t, economy.Actor{Role: "firm", Balance: 5000, Workforce: 3, Price: 12, Output: 100}, v.actor("a1"))
	require.Equal(t, economy.Actor{Role: "worker", Balance: 250, Savings: 20}, v.actor("a2"))
	require.Equal(t, economy.Actor{Role: "firm", Balance: 5000, Workforce: 3, Price: 12, Output: 100}, v.actor("a4"))
	require.Equal(t, economy.Actor{Role: "government", Balance: 9000}, v.actor("a5"))
	// Invest works from the start (the reference's actors have nothing).
	v.ok("a2", "invest", map[string]any{"amount": 50})
	require.Equal(t, 200.0, v.actor("a2").Balance)
	require.Equal(t, 5000+250+20+250+20+5000+9000.0, v.e.Total()+50)
}

func TestAllocateMovesMoney(t *testing.T) {
	v := newEnv(t, 2, `{"starting_balance": 100}`, nil)
	total := v.e.Total()
	d := v.ok("a1", "allocate", map[string]any{"target": "savings", "amount": 30})
	require.Equal(t, map[string]any{"amount": 30.0, "from": "cash", "target": "savings", "cash": 70.0, "savings": 30.0}, d)
	d = v.ok("a1", "allocate", map[string]any{"target": "Payroll", "amount": 10, "from": " Savings"})
	require.Equal(t, "savings", d["from"], "account names are case-insensitive, in from as in target")
	a := v.actor("a1")
	require.Equal(t, [3]float64{70, 20, 10}, [3]float64{a.Balance, a.Savings, a.Payroll})
	v.ok("a1", "allocate", map[string]any{"target": "SAVINGS", "amount": 1, "from": "Cash"})
	v.ok("a1", "allocate", map[string]any{"target": "cash", "amount": 1, "from": "SAVINGS"})
	v.ok("a1", "allocate", map[string]any{"target": "a2", "amount": 20.005})
	require.Equal(t, 49.99, v.actor("a1").Balance, "amounts are rounded to the cent")
	require.Equal(t, 120.01, v.actor("a2").Balance)
	require.Equal(t, total, v.e.Total())
	ev := v.events("transfer")
	require.Len(t, ev, 1)
	require.Equal(t, []string{"a2"}, ev[0].To, "only the recipient is told")
	o2 := v.w.Observe(v.w.Agent("a2"))
	require.Len(t, o2.Events, 1)
	require.Equal(t, "[Economy] a1 sent you 20.01", o2.Events[0].Text)
	require.Empty(t, v.w.Observe(v.w.Agent("a1")).Events)
}

func TestPermissions(t *testing.T) {
	v := newEnv(t, 2, `{"assign": ["government", "worker"], "permissions": {"apply_policy": ["government"], "hire": ["government"]}}`, nil)
	v.fail("a2", "apply_policy", map[string]any{"policy_name": "x", "description": "y"}, world.CodeNotAllowed, "apply_policy is for government actors; you are a worker")
	v.fail("a2", "hire", map[string]any{"count": 1}, world.CodeNotAllowed, "hire is for government actors")
	v.ok("a1", "apply_policy", map[string]any{"policy_name": "x", "description": "y"})
	sec := v.w.Observe(v.w.Agent("a2")).Components["economy"]
	require.Equal(t, []any{"set_price", "fire", "invest", "allocate", "do_nothing"}, sec["you"].(map[string]any)["allowed_tools"])
	require.Contains(t, sec["text"], "\nTools a worker may use: set_price, fire, invest, allocate, do_nothing")
}

func TestObservationLayout(t *testing.T) {
	v := newEnv(t, 2, `{"labor_force": 100, "assign": ["firm", "government"], "roles": {"firm": {"balance": 500}}}`, map[string]any{"min_wage": 10.0})
	v.ok("a1", "hire", map[string]any{"count": 20})
	v.ok("a1", "set_price", map[string]any{"price": 12.5})
	v.ok("a1", "invest", map[string]any{"amount": 200})
	v.ok("a2", "apply_policy", map[string]any{"policy_name": "raise_min_wage", "description": "Raise the minimum wage\nto 15", "variable": "min_wage", "value": 15})
	v.w.Step()
	sec := v.w.Observe(v.w.Agent("a1")).Components["economy"]
	want := `=== Economic State ===
Round 2. Labor force 100: 20 employed, 80 unemployed. Wage per worker per round: 0.00.
Metrics:
  employment_rate: 0.2000
  avg_price: 12.5000
  total_output: 200.0000
  total_investment: 200.0000
Active policies:
  - raise_min_wage: Raise the minimum wage to 15 (by a2, round 1; min_wage = 15)
Scenario variables:
  min_wage: 15
Actors:
  a1 (firm): price=12.50 workforce=20 output=200.00 (you)
  a2 (government)
Your state: role=firm balance=300.00 workforce=20 price=12.50 output=200.00
Your accounts: cash=300.00 savings=0.00 payroll=0.00
Last round: revenue=0.00 units_sold=0.00 capacity=20.00 wages_paid=0.00 wages_earned=0.00 spent=0.00`
	require.Equal(t, want, sec["text"])
	require.Equal(t, 2.0, sec["round"])
	require.Equal(t, map[string]any{"employment_rate": 0.2, "avg_price": 12.5, "total_output": 200.0, "total_investment": 200.0}, sec["metrics"])
	require.Equal(t, map[string]any{"min_wage": 15.0}, sec["variables"])
	you := sec["you"].(map[string]any)
	require.Equal(t, "firm", you["role"])
	require.Equal(t, 300.0, you["balance"])
	require.Equal(t, 20.0, you["workforce"])
	// Another agent sees the public list but not a1's money.
	other := v.w.Observe(v.w.Agent("a2")).Components["economy"]
	require.NotContains(t, other["text"], "balance=300.00")
	require.Contains(t, other["text"], "Your state: role=government balance=1000.00")
	requireJSONShaped(t, sec)
}

// requireJSONShaped checks that a section holds only the JSON-shaped values
// the bots' readers expect.
func requireJSONShaped(t *testing.T, v any) {
	t.Helper()
	switch x := v.(type) {
	case world.Section:
		for _, e := range x {
			requireJSONShaped(t, e)
		}
	case map[string]any:
		for _, e := range x {
			requireJSONShaped(t, e)
		}
	case []any:
		for _, e := range x {
			requireJSONShaped(t, e)
		}
	case string, float64, bool:
	default:
		t.Fatalf("%T is not JSON-shaped: %v", v, v)
	}
}

func TestEventsReachOtherAgentsNextObservation(t *testing.T) {
	v := newEnv(t, 3, `{"labor_force": 100, "assign": ["firm", "government", "worker"]}`, map[string]any{"min_wage": 10.0})
	// Observations before anything happened carry no events.
	for _, a := range v.w.Agents() {
		require.Empty(t, v.w.Observe(a).Events)
	}
	v.ok("a2", "apply_policy", map[string]any{"policy_name": "raise_min_wage", "description": "Raise the minimum wage to 15", "variable": "min_wage", "value": 15})
	v.ok("a1", "hire", map[string]any{"count": 20})
	v.w.Step()
	texts := func(id string) []string {
		var out []string
		for _, e := range v.w.Observe(v.w.Agent(id)).Events {
			out = append(out, e.Text)
		}
		return out
	}
	require.Equal(t, []string{
		"[Policy] a2 enacted raise_min_wage: Raise the minimum wage to 15 (min_wage = 15, was 10)",
		"[Economy] employment_rate rose from 0.0000 to 0.2000 (+0.2000)",
	}, texts("a1"))
	require.Equal(t, []string{"[Economy] employment_rate rose from 0.0000 to 0.2000 (+0.2000)"}, texts("a2"), "the enactor is not told its own policy")
	require.Len(t, texts("a3"), 2)
	require.Empty(t, texts("a3"), "each event is delivered once")
	require.Contains(t, v.w.Observe(v.w.Agent("a3")).VariablesText, "min_wage: 15", "the variable shows in every observation")

	v.ok("a1", "fire", map[string]any{"count": 20})
	v.w.Step()
	require.Equal(t, []string{"[Economy] employment_rate fell from 0.2000 to 0.0000 (-0.2000)"}, texts("a3"))
}

func TestRoundTicks(t *testing.T) {
	v := newEnv(t, 1, `{"labor_force": 100, "round_ticks": 3}`, nil)
	v.ok("a1", "hire", map[string]any{"count": 10})
	v.w.Step()
	v.w.Step()
	require.Zero(t, v.metric("employment_rate"), "the round is not over")
	require.Equal(t, 1, v.e.Round())
	v.w.Step()
	require.Equal(t, 0.1, v.metric("employment_rate"))
	require.Equal(t, 2, v.e.Round())
}

func TestWagesAndSpending(t *testing.T) {
	cfg := `{"labor_force": 100, "assign": ["firm", "firm", "worker", "worker", "worker"], "wage_variable": "min_wage",
		"spend_rate": 0.5, "labor_productivity": 2,
		"roles": {"firm": {"balance": 1000, "price": 5, "workforce": 10}, "worker": {"balance": 100}}}`
	v := newEnv(t, 5, cfg, map[string]any{"min_wage": 3.0})
	v.ok("a2", "set_price", map[string]any{"price": 4})
	total := v.e.Total()
	v.w.Step()
	require.Equal(t, total, v.e.Total(), "the flow moves money, never makes or loses it")
	// Wages: each firm pays 10 × 3 = 30, split over three households: 20
	// each. Spending: each household spends half its cash (60), the cheapest
	// seller (a2 at 4, 20 units) first.
	a1, a2 := v.actor("a1"), v.actor("a2")
	require.Equal(t, 30.0, a1.WagesPaid)
	require.Equal(t, 30.0, a2.WagesPaid)
	for _, id := range []string{"a3", "a4", "a5"} {
		require.Equal(t, 20.0, v.actor(id).WagesEarned, id)
	}
	// a3 buys 15 units of a2 (60.00); a4 buys the 5 left of a2 (20.00) and 8
	// units of a1 (40.00); a5 buys 12 of a1 (60.00).
	require.Equal(t, 80.0, a2.Revenue)
	require.Equal(t, 100.0, a1.Revenue)
	require.Equal(t, 60.0, v.actor("a3").Spent)
	require.Equal(t, 60.0, v.actor("a4").Spent)
	require.Equal(t, 60.0, v.actor("a5").Spent)
	require.Equal(t, 1000-30+100.0, a1.Balance)
	require.Equal(t, 1000-30+80.0, a2.Balance)
	require.Equal(t, 60.0, v.actor("a3").Balance)

	// A firm that cannot pay its workers lays off those it cannot pay.
	v.ok("a1", "allocate", map[string]any{"target": "a3", "amount": 1060})
	v.ok("a1", "allocate", map[string]any{"target": "payroll", "amount": 10})
	v.w.Step()
	a1 = v.actor("a1")
	require.Equal(t, 3, a1.Workforce, "10.00 pays three workers at 3.00")
	require.Equal(t, total, v.e.Total())
	ev := v.events("layoff")
	require.Len(t, ev, 1)
	require.Equal(t, []string{"a1"}, ev[0].To)
	require.Equal(t, 7.0, ev[0].Data["laid_off"])
}

func TestShocksArePublished(t *testing.T) {
	v := newEnv(t, 2, `{"spend_rate": 0.5, "shocks": [{"round": 2, "spend_rate": 0.2, "note": "A recession"}]}`, nil)
	v.w.Step()
	require.Empty(t, v.events("economic_shock"))
	v.w.Step()
	ev := v.events("economic_shock")
	require.Len(t, ev, 1)
	o := v.w.Observe(v.w.Agent("a1"))
	require.Equal(t, "[Economy] Shock in round 2: A recession (spend_rate 0.5 → 0.2)", o.Events[len(o.Events)-1].Text)
	require.Equal(t, 0.2, o.Components["economy"]["spend_rate"])
}

func TestMetricsForObjectives(t *testing.T) {
	v := newEnv(t, 2, `{"labor_force": 10}`, nil)
	v.ok("a1", "hire", map[string]any{"count": 5})
	v.ok("a1", "invest", map[string]any{"amount": 100})
	v.ok("a1", "allocate", map[string]any{"target": "savings", "amount": 50})
	v.w.Step()
	m := func(id, name string) float64 {
		f, ok := v.e.Metric(v.w, id, name)
		require.True(t, ok, name)
		return f
	}
	require.Equal(t, 850.0, m("a1", "economy.balance"))
	require.Equal(t, 900.0, m("a1", "economy.wealth"))
	require.Equal(t, 100.0, m("a1", "economy.output"))
	require.Equal(t, 5.0, m("a1", "economy.workforce"))
	require.Equal(t, 0.5, m("a2", "economy.employment_rate"))
	require.Equal(t, 100.0, m("a2", "economy.total_output"))
	require.Equal(t, 0.0, m("a2", "economy.output"))
	_, ok := v.e.Metric(v.w, "a1", "balance")
	require.False(t, ok, "economy metrics are prefixed")
	_, ok = v.e.Metric(v.w, "a1", "economy.nope")
	require.False(t, ok)
	for _, n := range economy.MetricNames() {
		_, ok := v.e.Metric(v.w, "a1", n)
		require.True(t, ok, n)
	}
	// The world finds them too (objective progress).
	require.Equal(t, 850.0, v.w.Progress(v.w.Agent("a1"))["economy.balance"])
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct{ cfg, want string }{
		{`{"labour_force": 5}`, `unknown field "labour_force"`},
		{`{"labor_force": "many"}`, "config.labor_force: must be a whole number"},
		{`{"labor_force": -3}`, "config.labor_force: must be between 1"},
		{`{"starting_balance": -1}`, "config.starting_balance"},
		{`{"metric_change_threshold": 0}`, "config.metric_change_threshold: must be a positive number"},
		{`{"assign": ["Firm"]}`, "config.assign[0]: a role is a lowercase name"},
		{`{"permissions": {"steal": ["producer"]}}`, "config.permissions.steal: is not an economy tool"},
		{`{"permissions": {"hire": ["king"]}}`, `"king" is not a role of this economy`},
		{`{"spend_rate": 1.5}`, "config.spend_rate: must be between 0 and 1"},
		{`{"shocks": [{"round": 3}]}`, "config.shocks[0]: changes nothing"},
		{`{"shocks": [{"round": 0, "spend_rate": 0.1}]}`, "config.shocks[0].round"},
		{`{"roles": {"firm": {"price": -2}}}`, "config.roles.firm.price"},
		{`{"wage_variable": "Min Wage"}`, "config.wage_variable"},
		{`[1]`, "config:"},
		{`{} {}`, "unexpected data"},
	} {
		_, err := economy.New(json.RawMessage(c.cfg))
		require.ErrorContains(t, err, c.want, c.cfg)
	}
	_, err := economy.New(nil)
	require.NoError(t, err, "no config: the defaults")

	// Problems only the world shows: unknown actor ids, too many starting
	// workers, a wage variable that is not a number.
	for _, c := range []struct {
		cfg  string
		vars map[string]any
		want string
	}{
		{`{"actors": {"zed": {"role": "firm"}}}`, nil, "config.actors.zed: no agent has this id"},
		{`{"labor_force": 5, "roles": {"producer": {"workforce": 3}}}`, nil, "more than the labor force of 5"},
		{`{"wage_variable": "min_wage"}`, map[string]any{"min_wage": "high"}, "must be a number"},
	} {
		e, err := economy.New(json.RawMessage(c.cfg))
		require.NoError(t, err)
		cfg := testutil.Config()
		cfg.Components = []world.Component{e}
		cfg.Variables = c.vars
		_, err = world.New(cfg)
		require.ErrorContains(t, err, c.want)
	}
}
