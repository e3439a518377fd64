package bots_test

import (
	"context"
	"testing"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

var allEconomyTools = []any{"set_price", "hire", "fire", "invest", "allocate", "apply_policy", "do_nothing"}

// econObs is an observation whose economy section shows one actor.
func econObs(round int, role string, you map[string]any, extra map[string]any) *world.Observation {
	y := map[string]any{"id": "agent_001", "role": role, "balance": 1000.0, "savings": 0.0, "payroll": 0.0, "workforce": 0.0,
		"price": 0.0, "output": 0.0, "capacity": 0.0, "allowed_tools": allEconomyTools,
		"last_round": map[string]any{"revenue": 0.0, "units_sold": 0.0, "capacity": 0.0, "wages_paid": 0.0}}
	for k, v := range you {
		y[k] = v
	}
	sec := world.Section{"text": "=== Economic State ===", "round": float64(round), "wage": 5.0, "unemployed": 50.0,
		"metrics":   map[string]any{"employment_rate": 0.5, "avg_price": 8.0, "total_output": 0.0, "total_investment": 0.0},
		"variables": map[string]any{"min_wage": 5.0}, "policies": []any{},
		"actors": []any{
			map[string]any{"id": "agent_001", "role": role},
			map[string]any{"id": "agent_002", "role": "worker"},
			map[string]any{"id": "agent_003", "role": "worker"},
		},
		"you": y}
	for k, v := range extra {
		sec[k] = v
	}
	return &world.Observation{Tick: round - 1, AgentID: "agent_001", Alive: true, Components: map[string]world.Section{"economy": sec}}
}

func economist() *bots.Economist { return bots.NewEconomist(bots.Info{AgentID: "agent_001", Seed: 1}) }

func TestEconomistDecisions(t *testing.T) {
	last := func(rev, sold, capacity, wages float64) map[string]any {
		return map[string]any{"revenue": rev, "units_sold": sold, "capacity": capacity, "wages_paid": wages}
	}
	cases := []struct {
		name   string
		obs    *world.Observation
		tool   string
		params map[string]any
	}{
		{"a firm without a price starts at the going price", econObs(1, "firm", nil, nil),
			"set_price", map[string]any{"price": 8.0}},
		{"a firm without workers hires", econObs(2, "firm", map[string]any{"price": 8.0}, nil),
			"hire", map[string]any{"count": 5}},
		{"a firm that sold out at a profit hires", econObs(3, "firm", map[string]any{"price": 8.0, "workforce": 10.0, "capacity": 10.0, "payroll": 100.0,
			"last_round": last(80, 10, 10, 50)}, nil),
			"hire", map[string]any{"count": 5}},
		{"a firm that sold out at a loss raises its price instead of hiring", econObs(3, "firm", map[string]any{"price": 8.0, "workforce": 10.0, "capacity": 10.0, "payroll": 100.0,
			"balance": 400.0, "last_round": last(40, 10, 10, 50)}, nil),
			"set_price", map[string]any{"price": 8.41}},
		{"a firm that cannot pay three rounds of wages fires a quarter", econObs(3, "firm", map[string]any{"price": 8.0, "workforce": 10.0, "balance": 120.0}, nil),
			"fire", map[string]any{"count": 3}},
		{"a firm keeps wages in payroll", econObs(3, "firm", map[string]any{"price": 8.0, "workforce": 10.0, "capacity": 10.0, "payroll": 20.0,
			"last_round": last(60, 8, 10, 50)}, nil),
			"allocate", map[string]any{"target": "payroll", "amount": 180.0}},
		{"a firm that sold little cuts its price, not below its costs", econObs(3, "firm", map[string]any{"price": 8.0, "workforce": 10.0, "capacity": 10.0, "payroll": 100.0,
			"last_round": last(16, 2, 10, 50)}, nil),
			"set_price", map[string]any{"price": 7.6}},
		{"a firm that sold out and cannot hire raises its price", econObs(3, "firm", map[string]any{"price": 8.0, "workforce": 10.0, "capacity": 10.0, "payroll": 100.0,
			"last_round": last(80, 10, 10, 50)}, map[string]any{"unemployed": 0.0}),
			"set_price", map[string]any{"price": 8.41}},
		{"a firm invests a third of the cash above its reserve", econObs(3, "firm", map[string]any{"price": 8.0, "workforce": 10.0, "capacity": 10.0, "payroll": 100.0,
			"balance": 1500.0, "last_round": last(64, 8, 10, 50)}, nil),
			"invest", map[string]any{"amount": 300.0}},
		{"a worker with much cash saves", econObs(3, "worker", map[string]any{"balance": 800.0}, nil),
			"allocate", map[string]any{"target": "savings", "amount": 80.0}},
		{"a worker short of cash draws on savings", econObs(3, "worker", map[string]any{"balance": 10.0, "savings": 30.0}, nil),
			"allocate", map[string]any{"target": "cash", "from": "savings", "amount": 30.0}},
		{"a worker otherwise does nothing", econObs(3, "worker", map[string]any{"balance": 100.0}, nil),
			"do_nothing", nil},
		{"a government waits before its policy", econObs(4, "government", nil, nil),
			"do_nothing", nil},
		{"a government raises the minimum wage from round 5", econObs(5, "government", nil, nil),
			"apply_policy", map[string]any{"policy_name": "raise_min_wage", "description": "Raise the minimum wage by 20% to 6 to support household demand",
				"variable": "min_wage", "value": 6.0}},
		{"a government supports households when employment is low", econObs(12, "government", nil, map[string]any{
			"policies": []any{map[string]any{"name": "raise_min_wage"}}, "metrics": map[string]any{"employment_rate": 0.2}}),
			"allocate", map[string]any{"target": "agent_002", "amount": 50.0}},
		{"a role it does not know does nothing", econObs(3, "banker", nil, nil), "do_nothing", nil},
		{"a tool its role may not use is not tried", econObs(1, "firm", map[string]any{"allowed_tools": []any{"do_nothing"}}, nil), "do_nothing", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := economist().Decide(context.Background(), c.obs)
			require.Equal(t, c.tool, d.Tool, d.Reasoning)
			require.Equal(t, c.params, d.Params)
			require.NotEmpty(t, d.Reasoning)
			// The same decision from the observation as it arrives over the wire.
			b, err := cbor.Marshal(c.obs)
			require.NoError(t, err)
			var wire world.Observation
			require.NoError(t, cbor.Unmarshal(b, &wire))
			require.Equal(t, d, economist().Decide(context.Background(), &wire))
		})
	}
}

func TestEconomistActsOncePerRound(t *testing.T) {
	b := economist()
	obs := econObs(1, "firm", nil, nil)
	require.Equal(t, "set_price", b.Decide(context.Background(), obs).Tool)
	require.Equal(t, "do_nothing", b.Decide(context.Background(), obs).Tool, "the round's action is taken")
	require.Equal(t, "idle", b.Decide(context.Background(), &world.Observation{}).Tool, "no economy: idle")
}

func TestEconomistRespondsToAShock(t *testing.T) {
	b := economist()
	obs := econObs(6, "government", nil, map[string]any{"policies": []any{map[string]any{"name": "raise_min_wage"}}})
	require.Equal(t, "do_nothing", b.Decide(context.Background(), obs).Tool, "employment is fine and nothing happened")
	obs = econObs(8, "government", map[string]any{"balance": 2000.0}, map[string]any{"policies": []any{map[string]any{"name": "raise_min_wage"}}})
	obs.Events = []world.EventView{{Source: "economy", Type: "economic_shock", Text: "[Economy] Shock in round 8"}}
	d := b.Decide(context.Background(), obs)
	require.Equal(t, "allocate", d.Tool)
	require.Equal(t, map[string]any{"target": "agent_002", "amount": 100.0}, d.Params)
}

func runEconomy(t *testing.T, agents int) *engine.Results {
	t.Helper()
	sc, err := scenarios.Load("economy")
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: 1, Agents: agents})
	require.NoError(t, err)
	ctrls, err := eval.Controllers(sc, w)
	require.NoError(t, err)
	seen := map[string]bool{}
	r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: sc.TimeLimit(), OnTick: func(rec *engine.TickRecord) {
		for _, e := range rec.Events {
			seen[e.Source+"/"+e.Type] = true
		}
	}}
	res, err := r.Run(context.Background())
	require.NoError(t, err)
	want := []string{"economy/policy_change", "economy/metric_change"}
	if res.Ticks > 40 {
		// The news comes at tick 30 and the recession in round 40; the
		// government then supports households.
		want = append(want, "scheduled/news", "economy/economic_shock", "economy/transfer")
	}
	for _, ev := range want {
		require.True(t, seen[ev], "%d agents: no %s", agents, ev)
	}
	return res
}

func TestEconomistsPassTheEconomyScenario(t *testing.T) {
	for _, n := range []int{6, 12, 50} {
		res := runEconomy(t, n)
		t.Logf("%d agents: %s after %d ticks, mean score %.2f", n, res.Outcome, res.Ticks, res.MeanScore)
		require.True(t, res.Passed, "%d agents: %+v", n, res.Agents)
		require.Equal(t, "objective_met", res.Outcome)
	}
	a, b := runEconomy(t, 6), runEconomy(t, 6)
	require.Equal(t, a.FinalStateHash, b.FinalStateHash, "economists are deterministic")
	require.Equal(t, a.Ticks, b.Ticks)
}

// The economist decides the same from the component's real sections in
// process and off the wire.
func TestEconomistReadsRealSectionsOffTheWire(t *testing.T) {
	sc, err := scenarios.Load("economy")
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: 1})
	require.NoError(t, err)
	for step := 0; step < 3; step++ {
		for _, a := range w.Agents() {
			obs := w.Observe(a)
			b, err := cbor.Marshal(obs)
			require.NoError(t, err)
			var wire world.Observation
			require.NoError(t, cbor.Unmarshal(b, &wire))
			info := bots.Info{AgentID: a.ID, Seed: 1}
			d := bots.NewEconomist(info).Decide(context.Background(), obs)
			require.Equal(t, d, bots.NewEconomist(info).Decide(context.Background(), &wire), a.ID)
			if step == 0 && a.ID == "agent_002" {
				require.Equal(t, "set_price", d.Tool, "a firm starts by pricing its goods")
			}
		}
		w.Step()
	}
}
