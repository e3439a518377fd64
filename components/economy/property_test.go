package economy_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

const flowConfig = `{"labor_force": 60, "assign": ["firm", "worker", "firm", "worker", "government", "worker"],
	"wage_variable": "min_wage", "spend_rate": 0.4, "labor_productivity": 1.5, "capital_productivity": 0.01,
	"roles": {"firm": {"balance": 800, "price": 6, "workforce": 4}, "worker": {"balance": 60, "savings": 10}, "government": {"balance": 3000}},
	"shocks": [{"round": 15, "spend_rate": 0.2, "labor_force": 20}, {"round": 40, "labor_productivity": 3}]}`

// randomAction picks a tool and parameters, sensible or not.
func randomAction(r *rand.Rand, ids []string) (string, string, map[string]any) {
	id := ids[r.IntN(len(ids))]
	amount := func() any {
		switch r.IntN(8) {
		case 0:
			return -r.Float64() * 50
		case 1:
			return 0.0
		case 2:
			return math.NaN()
		case 3:
			return r.Float64() * 5000
		case 4:
			return float64(r.IntN(3)) / 1000
		}
		return math.Round(r.Float64()*20000) / 100
	}
	count := func() any {
		switch r.IntN(6) {
		case 0:
			return -float64(r.IntN(5))
		case 1:
			return 0.5 + float64(r.IntN(3))
		}
		return float64(1 + r.IntN(25))
	}
	targets := append([]string{"cash", "savings", "payroll", "nobody"}, ids...)
	accounts := []string{"cash", "savings", "payroll", "wallet"}
	switch r.IntN(7) {
	case 0:
		return id, "set_price", map[string]any{"price": amount()}
	case 1:
		return id, "hire", map[string]any{"count": count()}
	case 2:
		return id, "fire", map[string]any{"count": count()}
	case 3:
		return id, "invest", map[string]any{"amount": amount()}
	case 4:
		return id, "allocate", map[string]any{"target": targets[r.IntN(len(targets))], "amount": amount(), "from": accounts[r.IntN(len(accounts))]}
	case 5:
		vals := []any{float64(r.IntN(30)) - 5, "high", true, math.Inf(1)}
		return id, "apply_policy", map[string]any{"policy_name": fmt.Sprintf("policy_%d", r.IntN(5)), "description": "random",
			"variable": []string{"min_wage", "min_wage", "tax", "mood"}[r.IntN(4)], "value": vals[r.IntN(len(vals))]}
	}
	return id, "do_nothing", nil
}

// Over random action sequences, with wages, spending, layoffs and shocks,
// money is conserved exactly (what is not in an account was invested), no
// account or workforce goes negative, and employment never exceeds the labor
// force except after a shock shrinks it.
func TestMoneyIsConservedOverRandomActions(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		v := newEnv(t, 6, flowConfig, map[string]any{"min_wage": 4.0, "mood": "calm"})
		r := rand.New(rand.NewPCG(seed, 99))
		ids := []string{"a1", "a2", "a3", "a4", "a5", "a6"}
		initial := v.e.Total()
		ok := 0
		for tick := 0; tick < 80; tick++ {
			for range 1 + r.IntN(6) {
				id, tool, params := randomAction(r, ids)
				if v.do(id, tool, params).Success {
					ok++
				}
			}
			v.w.Step()
			var invested float64
			for _, id := range ids {
				a := v.actor(id)
				invested += a.Invested
				for _, x := range []float64{a.Balance, a.Savings, a.Payroll, a.Price, a.Output} {
					require.GreaterOrEqual(t, x, 0.0, "seed %d tick %d: %s %+v", seed, tick, id, a)
				}
				require.GreaterOrEqual(t, a.Workforce, 0)
			}
			require.InDelta(t, initial, v.e.Total()+invested, 1e-6, "seed %d tick %d: money conserved", seed, tick)
			require.LessOrEqual(t, v.metric("employment_rate"), 1.0)
		}
		require.Greater(t, ok, 50, "seed %d: enough actions succeed for the test to mean something", seed)
		var revenue, wages float64
		for _, id := range ids {
			a := v.actor(id)
			revenue += a.Revenue
			wages += a.WagesPaid
		}
		require.Positive(t, revenue, "seed %d: goods were sold", seed)
		require.Positive(t, wages, "seed %d: wages were paid", seed)
	}
}

// The same seed and the same actions give the same state hash at every tick.
func TestDeterministic(t *testing.T) {
	run := func() []uint64 {
		v := newEnv(t, 6, flowConfig, map[string]any{"min_wage": 4.0})
		r := rand.New(rand.NewPCG(7, 7))
		ids := []string{"a1", "a2", "a3", "a4", "a5", "a6"}
		var hashes []uint64
		for range 60 {
			for range 3 {
				id, tool, params := randomAction(r, ids)
				v.do(id, tool, params)
			}
			v.w.Step()
			hashes = append(hashes, v.w.StateHash())
		}
		return hashes
	}
	a, b := run(), run()
	require.Equal(t, a, b)
	// The economy's state is in the hash.
	v := newEnv(t, 2, `{}`, nil)
	h := v.w.StateHash()
	v.ok("a1", "set_price", map[string]any{"price": 3})
	require.NotEqual(t, h, v.w.StateHash())
	h = v.w.StateHash()
	v.ok("a1", "allocate", map[string]any{"target": "savings", "amount": 1})
	require.NotEqual(t, h, v.w.StateHash())
	var _ world.Component = v.e
}
