package market

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// totalMoney is every balance plus every market's cash.
func totalMoney(c *Component) float64 {
	var s float64
	for _, id := range c.agents {
		s += c.port[id].balance
	}
	for _, m := range c.markets {
		s += m.cash
	}
	return s
}

// checkInvariants checks the books after a trade: k unchanged, money
// conserved, each open market's cash backing every share (under the fair
// maker the complete sets minted: the YES reserve plus all YES held plus the
// YES the maker kept when seeding, and the same for NO; under the seed maker
// both reserves plus all shares held), and nothing negative.
func checkInvariants(t *testing.T, c *Component, total float64, what string) {
	t.Helper()
	// Plain checks: this runs tens of thousands of times.
	if got := totalMoney(c); math.Abs(got-total) > 1e-12*total {
		t.Fatalf("money is not conserved across balances and reserves: %g, was %g: %s", got, total, what)
	}
	for i, m := range c.markets {
		if k := m.pool.Yes * m.pool.No; math.Abs(k-m.pool.K) > 1e-9*m.pool.K {
			t.Fatalf("k moved from %g to %g: %s", m.pool.K, k, what)
		}
		if !(m.pool.Yes > 0) || !(m.pool.No > 0) || m.cash < 0 {
			t.Fatalf("reserves %g/%g, cash %g: %s", m.pool.Yes, m.pool.No, m.cash, what)
		}
		var yes, no float64
		for _, id := range c.agents {
			p := c.port[id]
			if p.yes[i] < 0 || p.no[i] < 0 {
				t.Fatalf("%s holds %g YES, %g NO: %s", id, p.yes[i], p.no[i], what)
			}
			yes += p.yes[i]
			no += p.no[i]
		}
		if m.resolved {
			continue
		}
		if m.pool.Rule == AMMSeed {
			if want := m.pool.Yes + m.pool.No + yes + no; math.Abs(m.cash-want) > 1e-9*m.cash {
				t.Fatalf("cash %g is not reserves + shares held %g: %s", m.cash, want, what)
			}
			continue
		}
		s := c.cfg.Markets[i]
		seeded := NewPool(AMMFair, *s.InitialPriceYes, s.Liquidity)
		sets := []float64{m.pool.Yes + yes + seeded.No, m.pool.No + no + seeded.Yes}
		for _, n := range sets {
			if math.Abs(m.cash-n) > 1e-9*m.cash {
				t.Fatalf("cash %g is not the complete sets minted (YES %g, NO %g): %s", m.cash, sets[0], sets[1], what)
			}
		}
	}
	for _, id := range c.agents {
		if b := c.port[id].balance; b < 0 {
			t.Fatalf("%s's balance is negative (%g): %s", id, b, what)
		}
	}
}

// smallWorld is a bare 8×8 world with agents a1, a2 and a3 and the market.
func smallWorld(t testing.TB, cfgJSON string) (*world.World, *Component, *tools.Registry) {
	comp, err := Factory(json.RawMessage(cfgJSON))
	require.NoError(t, err)
	w, err := world.New(world.Config{Name: "m", Seed: 1, TickRate: 1, CellSize: 1,
		Bounds: world.Bounds{MinX: -4, MinZ: -4, MaxX: 4, MaxZ: 4},
		Agents: []world.AgentSpec{{ID: "a1"}, {ID: "a2", X: 1}, {ID: "a3", X: 2}}, Components: []world.Component{comp}})
	require.NoError(t, err)
	reg, err := tools.ForWorld(w)
	require.NoError(t, err)
	return w, comp.(*Component), reg
}

// TestPropertiesOverRandomTradeSequences plays many seeded random sequences
// of buys and sells (amounts from dust to more than the balance, sells of
// part, all or more than what is held, a resolution now and then) through the
// tool registry, checking the invariants after every call.
func TestPropertiesOverRandomTradeSequences(t *testing.T) {
	for _, rule := range []AMM{AMMFair, AMMSeed} {
		t.Run(string(rule), func(t *testing.T) { randomTradeSequences(t, rule) })
	}
}

func randomTradeSequences(t *testing.T, rule AMM) {
	sequences, steps := 1000, 200
	if testing.Short() {
		sequences = 100
	}
	cfg := withAMM(`{"markets": [
		{"question": "A?", "initial_price_yes": 0.5},
		{"question": "B?", "initial_price_yes": 0.93, "liquidity": 50},
		{"question": "C?", "initial_price_yes": 0.04, "liquidity": 2000}
	], "initial_balance": 300}`, rule)
	var trades, refused int
	for seq := 0; seq < sequences; seq++ {
		rng := rand.New(rand.NewPCG(uint64(seq), 2024))
		w, c, reg := smallWorld(t, cfg)
		total := totalMoney(c)
		agents := []string{"a1", "a2", "a3"}
		for step := 0; step < steps; step++ {
			agent := agents[rng.IntN(len(agents))]
			mi := rng.IntN(len(c.markets))
			yes := rng.IntN(2) == 0
			out := []string{"no", "YES"}[b2i(yes)]
			p := c.port[agent]
			var r world.ActionResult
			var what string
			before := compHash(c)
			switch k := rng.IntN(10); {
			case k < 5:
				var amount float64
				switch rng.IntN(5) {
				case 0:
					amount = p.balance // everything
				case 1:
					amount = p.balance * (1 + rng.Float64()) // too much
				case 2:
					amount = math.Pow(10, -rng.Float64()*14) // dust
				default:
					amount = rng.Float64() * p.balance * 0.5
				}
				what = fmt.Sprintf("seq %d step %d: %s buys %s of %s for %g", seq, step, agent, out, c.ids[mi], amount)
				r = call(w, reg, agent, "buy_shares", map[string]any{"market_id": c.ids[mi], "outcome": out, "amount": amount})
			case k < 9:
				held := p.no[mi]
				if yes {
					held = p.yes[mi]
				}
				var shares float64
				switch rng.IntN(4) {
				case 0:
					shares = held
				case 1:
					shares = Floor2(held)
				case 2:
					shares = held*1.5 + 0.01
				default:
					shares = held * rng.Float64()
				}
				what = fmt.Sprintf("seq %d step %d: %s sells %g %s of %s (holds %g)", seq, step, agent, shares, out, c.ids[mi], held)
				r = call(w, reg, agent, "sell_shares", map[string]any{"market_id": c.ids[mi], "outcome": out, "shares": shares})
			default:
				w.Step()
				if rng.IntN(8) == 0 {
					c.resolve(w, mi, []string{"no", "yes"}[b2i(yes)])
				}
				checkInvariants(t, c, total, fmt.Sprintf("seq %d step %d: tick", seq, step))
				continue
			}
			if r.Success {
				trades++
			} else {
				refused++
				require.NotEmpty(t, r.ErrorMessage)
				require.Equal(t, before, compHash(c), "a refused trade changes nothing: %s: %s", what, r.ErrorMessage)
			}
			checkInvariants(t, c, total, what)
		}
	}
	require.Greater(t, trades, sequences*steps/4, "most sequences trade")
	require.Greater(t, refused, sequences, "and bad trades are tried too")
}

func compHash(c *Component) uint64 {
	h := world.NewHasher()
	c.Hash(h)
	return h.Sum64()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestBadInputIsRefusedWithoutChange sends every tool bad parameters:
// negative, zero, NaN and infinite numbers, unknown ids, 100 kB strings, wrong
// types, missing and unknown parameters. Each gets a clear error and leaves
// the state hash and the event log as they were.
func TestBadInputIsRefusedWithoutChange(t *testing.T) {
	w, c, reg := setup(t, twoMarkets)
	require.True(t, call(w, reg, "a1", "buy_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "amount": 10}).Success)
	huge := strings.Repeat("x", 100_000)
	type tc struct {
		tool   string
		params map[string]any
		code   string
		msg    string
	}
	buy := func(id, out any, amount any) map[string]any {
		return map[string]any{"market_id": id, "outcome": out, "amount": amount}
	}
	sell := func(id, out any, shares any) map[string]any {
		return map[string]any{"market_id": id, "outcome": out, "shares": shares}
	}
	cases := []tc{
		{"buy_shares", buy("will_x", "yes", -5), world.CodeInvalidParams, "amount must be positive, got -5"},
		{"buy_shares", buy("will_x", "yes", 0), world.CodeInvalidParams, "amount must be positive, got 0"},
		{"buy_shares", buy("will_x", "yes", math.NaN()), world.CodeInvalidParams, "param 'amount' must be a finite number"},
		{"buy_shares", buy("will_x", "yes", math.Inf(1)), world.CodeInvalidParams, "param 'amount' must be a finite number"},
		{"buy_shares", buy("will_x", "yes", 1e300), world.CodeNotAllowed, "insufficient balance"},
		{"buy_shares", buy("will_x", "yes", 1e-320), world.CodeInvalidParams, "too small to buy any shares"},
		{"buy_shares", buy("no_such_market", "yes", 5), world.CodeNotFound, "unknown market 'no_such_market'; markets: will_x, will_it_rain_on_friday"},
		{"buy_shares", buy("will_x", "perhaps", 5), world.CodeInvalidParams, `invalid outcome: "perhaps"; outcome must be yes or no`},
		{"buy_shares", buy(huge, "yes", 5), world.CodeInvalidParams, "param 'market_id' must be at most 400 characters, got 100000"},
		{"buy_shares", buy("will_x", huge, 5), world.CodeInvalidParams, "param 'outcome' must be at most 16 characters"},
		{"buy_shares", buy("will_x", "yes", "ten"), world.CodeInvalidParams, "param 'amount' must be a number, got string"},
		{"buy_shares", buy(5, "yes", 5), world.CodeInvalidParams, "param 'market_id' must be a string, got number"},
		{"buy_shares", buy("will_x", true, 5), world.CodeInvalidParams, "param 'outcome' must be a string, got boolean"},
		{"buy_shares", buy("will_x", "yes", []any{5}), world.CodeInvalidParams, "must be a number, got array"},
		{"buy_shares", buy("will_x", "yes", nil), world.CodeInvalidParams, "must be a number, got null"},
		{"buy_shares", buy("", "yes", 5), world.CodeInvalidParams, "param 'market_id' must be at least 1 characters"},
		{"buy_shares", map[string]any{"market_id": "will_x", "outcome": "yes"}, world.CodeInvalidParams, "param 'amount' is required"},
		{"buy_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "amount": 5, "price": 0.1}, world.CodeInvalidParams, "param 'price' is not a parameter of this tool"},
		{"buy_shares", nil, world.CodeInvalidParams, "is required"},
		{"sell_shares", sell("will_x", "yes", -1), world.CodeInvalidParams, "shares must be positive, got -1"},
		{"sell_shares", sell("will_x", "yes", 0), world.CodeInvalidParams, "shares must be positive, got 0"},
		{"sell_shares", sell("will_x", "yes", math.NaN()), world.CodeInvalidParams, "must be a finite number"},
		{"sell_shares", sell("will_x", "yes", math.Inf(-1)), world.CodeInvalidParams, "must be a finite number"},
		{"sell_shares", sell("will_x", "yes", 1e9), world.CodeNotAllowed, "insufficient shares: you hold 19.80 YES shares of 'will_x' and asked to sell 1e+09"},
		{"sell_shares", sell("will_x", "no", 1), world.CodeNotAllowed, "insufficient shares: you hold 0.00 NO shares"},
		{"sell_shares", sell("will_x", "yes", 1e-320), world.CodeInvalidParams, "too few to sell for any money"},
		{"sell_shares", sell("will_y", "yes", 1), world.CodeNotFound, "unknown market 'will_y' (did you mean 'will_x'?)"},
		{"sell_shares", sell("will_x", "maybe", 1), world.CodeInvalidParams, "invalid outcome"},
		{"sell_shares", sell(huge, "yes", 1), world.CodeInvalidParams, "param 'market_id' must be at most"},
		{"sell_shares", sell("will_x", "yes", "all"), world.CodeInvalidParams, "param 'shares' must be a number, got string"},
		{"sell_shares", sell("will_x", 1, 1), world.CodeInvalidParams, "param 'outcome' must be a string"},
		{"sell_shares", map[string]any{"market_id": "will_x", "outcome": "yes"}, world.CodeInvalidParams, "param 'shares' is required"},
		{"comment_on_market", map[string]any{"market_id": "will_x", "text": huge}, world.CodeInvalidParams, "param 'text' must be at most 500 characters, got 100000"},
		{"comment_on_market", map[string]any{"market_id": huge, "text": "hi"}, world.CodeInvalidParams, "param 'market_id' must be at most"},
		{"comment_on_market", map[string]any{"market_id": "nope", "text": "hi"}, world.CodeNotFound, "unknown market 'nope'"},
		{"comment_on_market", map[string]any{"market_id": "will_x", "text": ""}, world.CodeInvalidParams, "param 'text' must be at least 1 characters"},
		{"comment_on_market", map[string]any{"market_id": "will_x", "text": "\n\n"}, world.CodeInvalidParams, "text must not be empty"},
		{"comment_on_market", map[string]any{"market_id": "will_x", "text": 42}, world.CodeInvalidParams, "param 'text' must be a string, got number"},
		{"comment_on_market", map[string]any{"market_id": "will_x", "text": map[string]any{}}, world.CodeInvalidParams, "param 'text' must be a string, got object"},
		{"comment_on_market", map[string]any{"market_id": "will_x"}, world.CodeInvalidParams, "param 'text' is required"},
		{"browse_markets", map[string]any{"market_id": "will_x"}, world.CodeInvalidParams, "param 'market_id' is not a parameter of this tool (known: none)"},
		{"browse_markets", map[string]any{"filter": huge}, world.CodeInvalidParams, "is not a parameter of this tool"},
		{"do_nothing", map[string]any{"amount": -1}, world.CodeInvalidParams, "param 'amount' is not a parameter of this tool"},
		{"do_nothing", map[string]any{"x": math.NaN()}, world.CodeInvalidParams, "is not a parameter of this tool"},
	}
	for _, tc := range cases {
		h, nev := w.StateHash(), len(w.Events())
		r := reg.Execute(w, "a1", tc.tool, tc.params, false)
		require.False(t, r.Success, "%s %v", tc.tool, tc.params)
		require.Equal(t, tc.code, r.ErrorCode, "%s: %s", tc.tool, r.ErrorMessage)
		require.Contains(t, r.ErrorMessage, tc.msg, tc.tool)
		require.Less(t, len(r.ErrorMessage), 400, "huge input is not echoed back")
		require.Equal(t, h, w.StateHash(), "%s %q changed the state", tc.tool, r.ErrorMessage)
		require.Equal(t, nev, len(w.Events()), "%s published an event", tc.tool)
	}
	// Wrong agents: unknown and without a market account.
	r := reg.Execute(w, "ghost", "buy_shares", buy("will_x", "yes", 5), false)
	require.Equal(t, world.CodeNotFound, r.ErrorCode)
	p, _ := c.Portfolio("a1")
	require.InDelta(t, 990, p.Balance, 1e-9)
}
