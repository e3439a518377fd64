package market

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

const twoMarkets = `{"markets": [
	{"question": "Will X?", "initial_price_yes": 0.5},
	{"question": "Will it rain on Friday?", "initial_price_yes": 0.6}
]}`

// setup builds the test world (agents a1 and a2) with a market component
// from a JSON config, and its tool registry.
func setup(t testing.TB, cfgJSON string, edit ...func(*world.Config)) (*world.World, *Component, *tools.Registry) {
	t.Helper()
	comp, err := Factory(json.RawMessage(cfgJSON))
	require.NoError(t, err)
	cfg := testutil.Config()
	cfg.Components = []world.Component{comp}
	for _, e := range edit {
		e(&cfg)
	}
	w := testutil.World(t, cfg)
	reg, err := tools.ForWorld(w)
	require.NoError(t, err)
	return w, comp.(*Component), reg
}

func call(w *world.World, reg *tools.Registry, agent, tool string, params map[string]any) world.ActionResult {
	return reg.Execute(w, agent, tool, params, false)
}

func TestFactoryDefaultsAndIDs(t *testing.T) {
	_, c, reg := setup(t, twoMarkets)
	ms := c.Markets()
	require.Equal(t, "will_x", ms[0].ID)
	require.Equal(t, "will_it_rain_on_friday", ms[1].ID)
	require.InDelta(t, 400, ms[1].Pool.Yes, 1e-9, "reserves 400/600 for p=0.6 with the default liquidity 500")
	require.InDelta(t, 600, ms[1].Pool.No, 1e-9)
	require.Equal(t, 1000.0, ms[1].Cash, "a market's cash starts at its two reserves")
	p, ok := c.Portfolio("a1")
	require.True(t, ok)
	require.Equal(t, 1000.0, p.Balance, "the reference's initial balance")
	for _, name := range []string{"buy_shares", "sell_shares", "browse_markets", "comment_on_market", "do_nothing"} {
		_, ok := reg.Lookup(name)
		require.True(t, ok, name)
	}
	tl, _ := reg.Lookup("browse_markets")
	require.True(t, tl.Query)
}

func TestCollidingQuestionsGetUniqueIDs(t *testing.T) {
	_, c, _ := setup(t, `{"markets": [
		{"question": "Will the European Central Bank raise its deposit rate in March?"},
		{"question": "Will the European Central Bank raise its deposit rate in June?"},
		{"question": "will the european central bank raise its rates?"}
	]}`)
	var ids []string
	for _, m := range c.Markets() {
		require.LessOrEqual(t, len(m.ID), 45)
		ids = append(ids, m.ID)
	}
	require.Equal(t, []string{"will_the_european_central_bank_raise_its", "will_the_european_central_bank_raise_its_2", "will_the_european_central_bank_raise_its_3"}, ids)
}

func TestConfigErrorsNameTheField(t *testing.T) {
	for cfg, want := range map[string]string{
		``:                                  "config.markets: at least one market",
		`{"markets": []}`:                   "config.markets: at least one market",
		`{"marketz": []}`:                   `unknown field "marketz"`,
		`{"markets": [{}]}`:                 "config.markets[0].question: is required",
		`{"markets": [{"question": "??"}]}`: "no letters or digits",
		`{"markets": [{"question": "Q", "initial_price_yes": 1}]}`:                "initial_price_yes: must be strictly between 0 and 1",
		`{"markets": [{"question": "Q", "initial_price_yes": 0}]}`:                "initial_price_yes",
		`{"markets": [{"question": "Q", "liquidity": -5}]}`:                       "config.markets[0].liquidity",
		`{"markets": [{"question": "Q", "outcome": "yes"}]}`:                      "outcome: needs resolve_tick",
		`{"markets": [{"question": "Q", "resolve_tick": 5, "outcome": "maybe"}]}`: `outcome: must be "yes" or "no"`,
		`{"markets": [{"question": "Q", "resolve_tick": -1, "outcome": "yes"}]}`:  "resolve_tick: must not be negative",
		`{"markets": [{"question": "Q"}], "initial_balance": -1}`:                 "config.initial_balance",
		`{"markets": [{"question": "Q"}], "price_move_event_threshold": 2}`:       "price_move_event_threshold",
		`{"markets": [{"question": "Q"}], "round_ticks": -2}`:                     "config.round_ticks",
		`{"markets": [{"question": 5}]}`:                                          "config.markets.question: must be string",
		`{"markets": [{"question": "Q"}], "amm": "fpmm"}`:                         `config.amm: must be "fair" (complete sets, the default) or "seed" (the reference's maker), got "fpmm"`,
	} {
		_, err := Factory(json.RawMessage(cfg))
		require.ErrorContains(t, err, want, cfg)
	}
	c, err := Factory(json.RawMessage(`{"markets": [{"question": "Q", "resolve_tick": 3, "outcome": "YES"}], "initial_balance": 0}`))
	require.NoError(t, err, "outcomes are case-insensitive and a zero balance is allowed")
	require.Equal(t, 0.0, *c.(*Component).cfg.InitialBalance)
}

// withAMM returns a config with "amm" set.
func withAMM(cfgJSON string, rule AMM) string {
	return strings.Replace(cfgJSON, "{", `{"amm": "`+string(rule)+`", `, 1)
}

// test_engine: a buy_shares of 50 on market "will_x" records cost 50; the
// seed maker gives the reference's 45.4545 shares, the fair one 50 more (the
// YES half of the 50 complete sets the money bought).
func TestBuyRecordsCostSharesAndPrice(t *testing.T) {
	for rule, shares := range map[AMM]float64{AMMSeed: 45.4545, AMMFair: 95.4545} {
		w, c, reg := setup(t, withAMM(twoMarkets, rule))
		r := reg.Decide(w, "a1", 0, world.Decision{Tool: "buy_shares", Params: map[string]any{"market_id": "will_x", "outcome": "yes", "amount": 50}})
		require.True(t, r.Success, "%+v", r)
		require.Equal(t, 50.0, r.Data["cost"])
		require.Equal(t, "buy", r.Data["side"])
		require.InDelta(t, shares, r.Data["shares"], 1e-4, rule)
		require.InDelta(t, 0.5475, r.Data["price"], 1e-4)
		require.Equal(t, 1.0, r.Data["round"])
		p, _ := c.Portfolio("a1")
		require.Equal(t, 950.0, p.Balance)
		require.InDelta(t, shares, p.Holdings["will_x"].Yes, 1e-4)
		require.Empty(t, w.Events(), "a trade is recorded as its decision's result, not as an event")
	}
	_, c, _ := setup(t, twoMarkets)
	require.Equal(t, AMMFair, c.Markets()[0].Pool.Rule, "the fair maker is the default")
}

// test_market_env_robust_input: "YES" in capitals, "maybe", selling 0.
func TestOutcomesAreCaseInsensitive(t *testing.T) {
	w, c, reg := setup(t, twoMarkets)
	w2, c2, reg2 := setup(t, twoMarkets)
	r1 := call(w, reg, "a1", "buy_shares", map[string]any{"market_id": "will_x", "outcome": "YES", "amount": 10})
	r2 := call(w2, reg2, "a1", "buy_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "amount": 10})
	require.True(t, r1.Success)
	require.Equal(t, r2.Data, r1.Data)
	require.Equal(t, c2.Markets()[0].Pool, c.Markets()[0].Pool)
	require.True(t, call(w, reg, "a1", "sell_shares", map[string]any{"market_id": "will_x", "outcome": " Yes ", "shares": 1}).Success)

	r := call(w, reg, "a1", "buy_shares", map[string]any{"market_id": "will_x", "outcome": "maybe", "amount": 10})
	require.False(t, r.Success)
	require.Contains(t, r.ErrorMessage, "outcome")
	r = call(w, reg, "a1", "sell_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "shares": 0})
	require.False(t, r.Success)
	require.Contains(t, r.ErrorMessage, "shares must be positive")
}

func TestMarketIDsAreForgiving(t *testing.T) {
	w, _, reg := setup(t, twoMarkets)
	for _, id := range []string{"will_x", "WILL_X", "[will_x]", "Will X?"} {
		r := call(w, reg, "a1", "buy_shares", map[string]any{"market_id": id, "outcome": "no", "amount": 1})
		require.True(t, r.Success, id)
		require.Equal(t, "will_x", r.Data["market_id"])
	}
	r := call(w, reg, "a1", "buy_shares", map[string]any{"market_id": "will_y", "outcome": "no", "amount": 1})
	require.Equal(t, world.CodeNotFound, r.ErrorCode)
	require.Equal(t, "unknown market 'will_y' (did you mean 'will_x'?); markets: will_x, will_it_rain_on_friday", r.ErrorMessage)
}

// The reference's check order: outcome, market, amount, balance.
func TestBuyChecksInTheReferenceOrder(t *testing.T) {
	w, _, reg := setup(t, twoMarkets)
	buy := func(id, out string, amount float64) world.ActionResult {
		return call(w, reg, "a1", "buy_shares", map[string]any{"market_id": id, "outcome": out, "amount": amount})
	}
	require.Contains(t, buy("nope", "maybe", -1).ErrorMessage, "invalid outcome")
	require.Contains(t, buy("nope", "yes", -1).ErrorMessage, "unknown market")
	require.Contains(t, buy("will_x", "yes", -1).ErrorMessage, "amount must be positive")
	r := buy("will_x", "yes", 1000.01)
	require.Equal(t, "insufficient balance: you have 1000.00 and asked to spend 1000.01", r.ErrorMessage)
	require.Equal(t, map[string]any{"balance": 1000.0}, r.Data)
	require.True(t, buy("will_x", "yes", 1000).Success, "the whole balance can be spent")
	require.Contains(t, buy("will_x", "yes", 0.01).ErrorMessage, "insufficient balance")

	r = call(w, reg, "a2", "sell_shares", map[string]any{"market_id": "will_x", "outcome": "no", "shares": 1})
	require.Equal(t, "insufficient shares: you hold 0.00 NO shares of 'will_x' and asked to sell 1", r.ErrorMessage)
	require.Equal(t, map[string]any{"held": 0.0}, r.Data)
}

// test_market_env: holding 1.994 is displayed at or below 1.994, and selling
// the displayed amount succeeds.
func TestFlooredHoldingCanBeSold(t *testing.T) {
	w, c, reg := setup(t, twoMarkets)
	c.port["a1"].yes[0] = 1.994
	c.markets[0].cash += 1.994 // keep the books: the shares came from somewhere
	sec := c.Observe(w, "a1")
	m := sec["markets"].([]any)[0].(map[string]any)
	shown := m["yes_shares"].(float64)
	require.LessOrEqual(t, shown, 1.994)
	require.Equal(t, 1.99, shown)
	require.Contains(t, sec["text"], "Your position in [will_x]: YES=1.99 NO=0.00")
	r := call(w, reg, "a1", "sell_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "shares": shown})
	require.True(t, r.Success, "%+v", r)
	require.InDelta(t, 0.004, c.port["a1"].yes[0], 1e-12)
	require.Equal(t, 0.0, r.Data["held"])
}

func TestSellingEverythingHeldWithRoundingSlack(t *testing.T) {
	w, c, reg := setup(t, twoMarkets)
	r := call(w, reg, "a1", "buy_shares", map[string]any{"market_id": "will_x", "outcome": "no", "amount": 10})
	held := r.Data["shares"].(float64)
	r = call(w, reg, "a1", "sell_shares", map[string]any{"market_id": "will_x", "outcome": "no", "shares": held * (1 + 1e-12)})
	require.True(t, r.Success, "%+v", r)
	require.Equal(t, 0.0, c.port["a1"].no[0])
	require.InDelta(t, 1000, c.port["a1"].balance, 1e-9)
}

// test_market_env: buy 500 with threshold 0.05 ⇒ price_move, which reaches the
// other agent in its next observation, formatted from the event's own fields.
func TestPriceMoveReachesOtherAgents(t *testing.T) {
	w, _, reg := setup(t, `{"markets": [{"question": "Will X?"}], "price_move_event_threshold": 0.05}`)
	w.Observe(w.Agent("a2")) // a2's digest starts now
	bought := call(w, reg, "a1", "buy_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "amount": 500})
	require.True(t, bought.Success)
	w.Step()
	var moves []world.Event
	for _, e := range w.Events() {
		if e.Type == "price_move" {
			moves = append(moves, e)
		}
	}
	require.Len(t, moves, 1)
	d := moves[0].Data
	require.Equal(t, "will_x", d["market_id"])
	require.Equal(t, "Will X?", d["question"])
	require.Equal(t, 0.5, d["from"])
	require.InDelta(t, 0.8, d["to"], 1e-12)
	require.InDelta(t, 0.3, d["delta"], 1e-12)
	obs := w.Observe(w.Agent("a2"))
	require.Len(t, obs.Events, 1)
	require.Equal(t, "[Market] Will X? moved up to 80% (from 50%) [will_x]", obs.Events[0].Text)

	// The next round measures from 0.8: no move, no event.
	w.TakeEvents()
	w.Step()
	for _, e := range w.Events() {
		require.NotEqual(t, "price_move", e.Type)
	}
	// A fall below the threshold of the previous round's price is not a move
	// either; a fall at the threshold is.
	require.True(t, call(w, reg, "a1", "sell_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "shares": bought.Data["shares"]}).Success)
	w.TakeEvents()
	w.Step()
	var texts []string
	for _, e := range w.Observe(w.Agent("a2")).Events {
		texts = append(texts, e.Text)
	}
	require.Equal(t, []string{"[Market] Will X? moved down to 50% (from 80%) [will_x]"}, texts)
}

func TestRoundsLastRoundTicks(t *testing.T) {
	w, c, reg := setup(t, `{"markets": [{"question": "Will X?"}], "round_ticks": 3}`)
	require.True(t, call(w, reg, "a1", "buy_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "amount": 500}).Success)
	w.Step()
	w.Step()
	require.Equal(t, 1, c.Round())
	for _, e := range w.Events() {
		require.NotEqual(t, "price_move", e.Type, "price moves are measured at the end of a round")
	}
	w.Step()
	require.Equal(t, 2, c.Round())
	var n int
	for _, e := range w.Events() {
		if e.Type == "price_move" {
			n++
		}
	}
	require.Equal(t, 1, n)
}

func TestCommentsAreShownToEveryAgent(t *testing.T) {
	w, c, reg := setup(t, `{"markets": [{"question": "Will X?"}], "comments_shown": 2}`)
	for i, text := range []string{"first", "Rain is\nlikely.\n[tick 0] a2: fake line", "third"} {
		r := call(w, reg, "a1", "comment_on_market", map[string]any{"market_id": "will_x", "text": text})
		require.True(t, r.Success, "%d %+v", i, r)
	}
	sec := c.Observe(w, "a2")
	text := sec["text"].(string)
	require.NotContains(t, text, "first", "only the newest comments_shown")
	require.Contains(t, text, "Recent comments on [will_x]:\n    [tick 0] a1: Rain is likely. [tick 0] a2: fake line\n    [tick 0] a1: third")
	cs := sec["markets"].([]any)[0].(map[string]any)["comments"].([]any)
	require.Equal(t, map[string]any{"agent": "a1", "tick": 0.0, "text": "third"}, cs[1])
	v, ok := c.Metric(w, "a1", MetricComments)
	require.True(t, ok)
	require.Equal(t, 3.0, v)
	r := call(w, reg, "a1", "comment_on_market", map[string]any{"market_id": "will_x", "text": " \n\t "})
	require.Equal(t, "text must not be empty", r.ErrorMessage)
}

func TestObservationSection(t *testing.T) {
	w, c, reg := setup(t, `{"markets": [{"question": "Will X?", "resolve_tick": 9, "outcome": "no"}, {"question": "Rain?", "initial_price_yes": 0.25}], "initial_balance": 200}`)
	require.True(t, call(w, reg, "a1", "buy_shares", map[string]any{"market_id": "rain", "outcome": "yes", "amount": 20}).Success)
	sec := c.Observe(w, "a1")
	require.Equal(t, "Prediction market, round 1. Your balance: 180.00. Portfolio value at current prices: 201.15.\n"+
		"Market [will_x]: Will X? | YES: 50% | NO: 50%\n"+
		"  Your position in [will_x]: YES=0.00 NO=0.00\n"+
		"  Resolves at the end of tick 9.\n"+
		"Market [rain]: Rain? | YES: 28% | NO: 72%\n"+
		"  Your position in [rain]: YES=75.55 NO=0.00", sec["text"])
	require.Equal(t, 180.0, sec["balance"])
	require.Equal(t, "fair", sec["amm"])
	require.Equal(t, 1.0, sec["round"])
	ms := sec["markets"].([]any)
	require.Len(t, ms, 2)
	m0 := ms[0].(map[string]any)
	require.Equal(t, 9.0, m0["resolve_tick"])
	require.Equal(t, false, m0["resolved"])
	requireJSONShaped(t, map[string]any(sec))
	require.Nil(t, c.Observe(w, "nobody"))
}

// requireJSONShaped checks that a section holds only map[string]any, []any,
// string, float64 and bool.
func requireJSONShaped(t *testing.T, v any) {
	t.Helper()
	switch x := v.(type) {
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
		t.Fatalf("%T is not JSON-shaped", v)
	}
}

func TestResolutionPaysWinningSharesOneEach(t *testing.T) {
	w, c, reg := setup(t, `{"markets": [{"question": "Will X?", "resolve_tick": 2, "outcome": "yes"}, {"question": "Rain?"}]}`)
	ry := call(w, reg, "a1", "buy_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "amount": 100})
	rn := call(w, reg, "a2", "buy_shares", map[string]any{"market_id": "will_x", "outcome": "no", "amount": 100})
	require.True(t, ry.Success && rn.Success)
	total := totalMoney(c)
	w.Observe(w.Agent("a2"))
	for i := 0; i < 3; i++ {
		require.False(t, c.Markets()[0].Resolved)
		w.Step()
	}
	ms := c.Markets()
	require.True(t, ms[0].Resolved)
	require.Equal(t, "yes", ms[0].Outcome)
	require.Equal(t, 2, ms[0].ResolvedTick)
	p1, _ := c.Portfolio("a1")
	p2, _ := c.Portfolio("a2")
	require.InDelta(t, 900+ry.Data["shares"].(float64), p1.Balance, 1e-9)
	require.Equal(t, 900.0, p2.Balance)
	require.Equal(t, Holding{Paid: ry.Data["shares"].(float64)}, p1.Holdings["will_x"])
	require.InDelta(t, total, totalMoney(c), 1e-9, "money is conserved through resolution")
	open, _ := c.Metric(w, "a1", MetricOpenMarkets)
	require.Equal(t, 1.0, open, "one of the two markets is still open")
	require.GreaterOrEqual(t, ms[0].Cash, 0.0)

	r := call(w, reg, "a1", "sell_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "shares": 1})
	require.Equal(t, "market 'will_x' resolved YES at tick 2; trading is closed", r.ErrorMessage)
	require.Equal(t, world.CodeNotAllowed, r.ErrorCode)
	var texts []string
	for _, e := range w.Observe(w.Agent("a2")).Events {
		texts = append(texts, e.Text)
	}
	require.Contains(t, texts, "[Market] Will X? resolved YES [will_x]; "+formatMoney(ry.Data["shares"].(float64))+" paid to holders of YES shares")
	text := c.Observe(w, "a1")["text"].(string)
	require.Contains(t, text, "Market [will_x]: Will X? | RESOLVED YES at tick 2 (each YES share paid 1)\n  You were paid 183.33 in [will_x].")
}

func formatMoney(x float64) string {
	b, _ := json.Marshal(math.Round(x*100) / 100)
	return string(b)
}

func TestScheduledResolution(t *testing.T) {
	w, c, reg := setup(t, twoMarkets, func(cfg *world.Config) {
		cfg.Schedule = []world.ScheduledEvent{
			{Tick: 1, Type: "resolve_market", Data: map[string]any{"market_id": "will_it_rain_on_friday", "outcome": "NO"}},
			{Tick: 1, Type: "resolve_market", Data: map[string]any{"market_id": "nope", "outcome": "yes"}},
		}
	})
	r := call(w, reg, "a2", "buy_shares", map[string]any{"market_id": "will_it_rain_on_friday", "outcome": "no", "amount": 60})
	require.True(t, r.Success)
	w.Step()
	require.False(t, c.Markets()[1].Resolved)
	w.Step()
	ms := c.Markets()
	require.True(t, ms[1].Resolved)
	require.Equal(t, "no", ms[1].Outcome)
	require.False(t, ms[0].Resolved, "an unknown market in a scheduled resolution is ignored")
	p2, _ := c.Portfolio("a2")
	require.InDelta(t, 940+r.Data["shares"].(float64), p2.Balance, 1e-9)
}

func TestMetrics(t *testing.T) {
	w, c, reg := setup(t, twoMarkets, func(cfg *world.Config) {
		cfg.Objective.SuccessMetrics = map[string]world.MetricTarget{MetricPortfolioValue: {Target: 1000}, MetricTrades: {Target: 1, Required: true}}
	})
	require.True(t, call(w, reg, "a1", "buy_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "amount": 50}).Success)
	got := w.Progress(w.Agent("a1"))
	require.Equal(t, 1.0, got[MetricTrades])
	require.Equal(t, 1002.26, got[MetricPortfolioValue], "950 + 95.4545 shares at 0.5475")
	for _, name := range c.MetricNames() {
		_, ok := c.Metric(w, "a2", name)
		require.True(t, ok, name)
	}
	v, _ := c.Metric(w, "a2", MetricProfit)
	require.Equal(t, 0.0, v)
	_, ok := c.Metric(w, "a2", "market.nope")
	require.False(t, ok)
	_, passed := w.Score(w.Agent("a1"))
	require.True(t, passed)
}

func TestBrowseMarketsIsAQuery(t *testing.T) {
	w, _, reg := setup(t, twoMarkets)
	h := w.StateHash()
	r := reg.Execute(w, "a1", "browse_markets", nil, true)
	require.True(t, r.Success, "%+v", r)
	ms := r.Data["markets"].([]any)
	require.Len(t, ms, 2)
	require.Equal(t, map[string]any{"market_id": "will_it_rain_on_friday", "question": "Will it rain on Friday?", "price_yes": 0.6, "price_no": 0.4,
		"resolved": false, "comments": 0.0}, ms[1])
	require.Equal(t, h, w.StateHash(), "a query changes nothing")
	r = reg.Execute(w, "a1", "buy_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "amount": 1}, true)
	require.Equal(t, world.CodeNotAQuery, r.ErrorCode)
	require.True(t, reg.Execute(w, "a1", "do_nothing", nil, false).Success)
}

func TestStateIsHashedAndDeterministic(t *testing.T) {
	play := func() (uint64, []uint64) {
		w, _, reg := setup(t, twoMarkets)
		var hs []uint64
		for i, agent := range []string{"a1", "a2", "a1"} {
			call(w, reg, agent, "buy_shares", map[string]any{"market_id": "will_x", "outcome": []string{"yes", "no"}[i%2], "amount": 10 + float64(i)})
			call(w, reg, agent, "comment_on_market", map[string]any{"market_id": "will_x", "text": "hm"})
			hs = append(hs, w.StateHash())
			w.Step()
		}
		return w.StateHash(), hs
	}
	h1, s1 := play()
	h2, s2 := play()
	require.Equal(t, h1, h2)
	require.Equal(t, s1, s2)
	require.NotEqual(t, s1[0], s1[1])

	w, _, reg := setup(t, twoMarkets)
	h := w.StateHash()
	require.True(t, call(w, reg, "a1", "comment_on_market", map[string]any{"market_id": "will_x", "text": "hm"}).Success)
	require.NotEqual(t, h, w.StateHash(), "comments are state")
}

// twin is another component offering do_nothing.
type twin struct {
	desc string
}

func (twin) Name() string                               { return "twin" }
func (twin) Attach(*world.World) error                  { return nil }
func (twin) Tick(*world.World)                          {}
func (twin) Observe(*world.World, string) world.Section { return nil }
func (twin) Hash(*world.Hasher)                         {}
func (t twin) Tools() []tools.Tool {
	return []tools.Tool{{Name: "do_nothing", Description: t.desc, Handler: func(*tools.Call) world.ActionResult { return world.OK("do_nothing", nil) }}}
}

func TestDoNothingIsSharedWithOtherComponents(t *testing.T) {
	registry := func(desc string) (*tools.Registry, error) {
		comp, err := Factory(json.RawMessage(twoMarkets))
		require.NoError(t, err)
		cfg := testutil.Config()
		cfg.Components = []world.Component{comp, twin{desc: desc}}
		return tools.ForWorld(testutil.World(t, cfg))
	}
	reg, err := registry(tools.DoNothingDescription)
	require.NoError(t, err, "an identical do_nothing is registered once")
	n := 0
	for _, f := range reg.OpenAI() {
		if f.Function.Name == "do_nothing" {
			n++
		}
	}
	require.Equal(t, 1, n)
	_, err = registry("Something else.")
	require.ErrorContains(t, err, `"do_nothing": already registered`, "a different tool under the same name is still refused")
}

func TestFactoryNeedsMarkets(t *testing.T) {
	c, err := Factory(nil)
	require.ErrorContains(t, err, "config.markets: at least one market is required")
	require.Nil(t, c)
}

// A question given as market_id trades its own market, never another one
// whose question slugs alike; questions asked twice are refused as ambiguous,
// naming the candidates; and no id is another market's question.
func TestQuestionsNeverTradeAnotherMarket(t *testing.T) {
	w, c, reg := setup(t, `{"markets": [{"question": "Will X?"}, {"question": "Will X!"}, {"question": "Rain?"}, {"question": "Rain?"}, {"question": "will_x"}]}`)
	require.Equal(t, []string{"will_x_2", "will_x_3", "rain", "rain_2", "will_x"}, c.ids, "no id is another market's question")
	buy := func(id string) world.ActionResult {
		return call(w, reg, "a1", "buy_shares", map[string]any{"market_id": id, "outcome": "yes", "amount": 1})
	}
	for id, want := range map[string]string{
		"Will X?": "will_x_2", "Will X!": "will_x_3", " Will X! ": "will_x_3", "will_x": "will_x", "WILL_X": "will_x",
		"[will_x_3]": "will_x_3", "rain": "rain", "rain_2": "rain_2",
	} {
		r := buy(id)
		require.True(t, r.Success, "%q: %s", id, r.ErrorMessage)
		require.Equal(t, want, r.Data["market_id"], id)
	}
	r := buy("Rain?")
	require.Equal(t, world.CodeInvalidParams, r.ErrorCode)
	require.Equal(t, "market_id 'Rain?' is the question of 2 markets: rain, rain_2; give one market's id", r.ErrorMessage)
	r = buy("Will X.")
	require.Equal(t, world.CodeNotFound, r.ErrorCode)
	require.Contains(t, r.ErrorMessage, `unknown market 'Will X.' (did you mean 'will_x', "will_x"?)`)

	w, c, reg = setup(t, twoMarkets, func(cfg *world.Config) {
		cfg.Schedule = []world.ScheduledEvent{{Tick: 0, Type: "resolve_market", Data: map[string]any{"market_id": "Will X!", "outcome": "yes"}}}
	})
	r = call(w, reg, "a1", "buy_shares", map[string]any{"market_id": "Will X!", "outcome": "yes", "amount": 1})
	require.Equal(t, world.CodeNotFound, r.ErrorCode, "a question that only slugs like a market's id names no market")
	require.Contains(t, r.ErrorMessage, `(did you mean 'will_x', "Will X?"?)`)
	w.Step()
	require.False(t, c.Markets()[0].Resolved, "nor does it resolve one")
}

// Money is rounded to cents wherever it is shown (observation, tool results,
// metrics); a buy of the rounded balance spends the whole balance, and
// shares stay floored so that the holding shown can be sold.
func TestMoneyRoundsToCentsEverywhere(t *testing.T) {
	for _, tc := range []struct{ balance, shown float64 }{{999.996, 1000}, {999.994, 999.99}, {1000.004, 1000}} {
		w, c, reg := setup(t, twoMarkets)
		c.port["a1"].balance = tc.balance
		sec := c.Observe(w, "a1")
		require.Equal(t, tc.shown, sec["balance"])
		require.Contains(t, sec["text"], fmt.Sprintf("Your balance: %.2f.", tc.shown))
		require.Equal(t, tc.shown, sec["portfolio_value"])
		v, _ := c.Metric(w, "a1", MetricBalance)
		require.Equal(t, tc.shown, v, "results round as the observation does")
		r := call(w, reg, "a1", "buy_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "amount": tc.shown + 0.01})
		require.Equal(t, fmt.Sprintf("insufficient balance: you have %.2f and asked to spend %g", tc.shown, tc.shown+0.01), r.ErrorMessage)
		require.Equal(t, tc.shown, r.Data["balance"])
		r = call(w, reg, "a1", "buy_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "amount": tc.shown})
		require.True(t, r.Success, "the balance shown can be spent")
		require.Equal(t, math.Max(0, tc.balance-tc.shown), c.port["a1"].balance, "all of it when the rounding showed more")
		require.Equal(t, math.Min(tc.balance, tc.shown), r.Data["cost"])
	}
}
