package market_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/components/market"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// reportWorld is the test world (agents a1 and a2) with a market component
// from a JSON config, and its tool registry.
func reportWorld(t *testing.T, cfgJSON string) (*world.World, *market.Component, *tools.Registry) {
	t.Helper()
	comp, err := market.Factory(json.RawMessage(cfgJSON))
	require.NoError(t, err)
	cfg := testutil.Config()
	cfg.Components = []world.Component{comp}
	w := testutil.World(t, cfg)
	reg, err := tools.ForWorld(w)
	require.NoError(t, err)
	return w, comp.(*market.Component), reg
}

func tables(t *testing.T, r world.Reporter) map[string]world.Table {
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

// cols maps a table's rows to column name → value.
func cols(tb world.Table, row []any) map[string]any {
	m := map[string]any{}
	for i, c := range tb.Columns {
		m[c] = row[i]
	}
	return m
}

// A short scripted run: its trades, the prices at each round's end, the final
// positions (with a resolution's payout) and one price line per market with
// one point per round.
func TestReportsOfAScriptedRun(t *testing.T) {
	w, c, reg := reportWorld(t, `{"markets": [
		{"question": "Will X?", "initial_price_yes": 0.5},
		{"question": "Will it rain on Friday?", "initial_price_yes": 0.6, "resolve_tick": 1, "outcome": "no"}
	]}`)
	do := func(agent, tool string, params map[string]any) map[string]any {
		t.Helper()
		r := reg.Execute(w, agent, tool, params, false)
		require.True(t, r.Success, "%+v", r)
		return r.Data
	}
	// Round 1 (tick 0): a1 buys YES on will_x, a2 NO on the rain market.
	do("a1", "buy_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "amount": 50})
	rain := do("a2", "buy_shares", map[string]any{"market_id": "will_it_rain_on_friday", "outcome": "no", "amount": 20})["shares"].(float64)
	require.False(t, reg.Execute(w, "a2", "buy_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "amount": 5000}, false).Success,
		"a refused trade is not logged")
	w.Step()
	// Round 2 (tick 1): a1 sells 10 YES; the rain market resolves NO at the
	// end of the tick.
	proceeds := do("a1", "sell_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "shares": 10})["proceeds"].(float64)
	w.Step()
	w.Step() // round 3: nothing happens

	h := w.StateHash()
	tb := tables(t, c)
	require.Equal(t, h, w.StateHash(), "reporting changes nothing")

	trades := tb["trades"]
	require.Equal(t, []string{"round", "tick", "agent_id", "market_id", "side", "outcome", "shares", "amount", "price_yes", "balance"}, trades.Columns)
	require.Len(t, trades.Rows, 3)
	first := cols(trades, trades.Rows[0])
	require.Equal(t, 1.0, first["round"])
	require.Equal(t, 0.0, first["tick"])
	require.Equal(t, "a1", first["agent_id"])
	require.Equal(t, "will_x", first["market_id"])
	require.Equal(t, "buy", first["side"])
	require.Equal(t, "yes", first["outcome"])
	require.InDelta(t, 95.4545, first["shares"], 1e-4, "reserves 500/500: 50 sets minted, 550 − 250000/550 YES out")
	require.Equal(t, 50.0, first["amount"])
	require.InDelta(t, 0.5475, first["price_yes"], 1e-4)
	require.Equal(t, 950.0, first["balance"])
	second := cols(trades, trades.Rows[1])
	require.Equal(t, "a2", second["agent_id"])
	require.Equal(t, "no", second["outcome"])
	require.Equal(t, rain, second["shares"])
	third := cols(trades, trades.Rows[2])
	require.Equal(t, []any{2.0, 1.0, "a1", "will_x", "sell", "yes", 10.0, proceeds},
		[]any{third["round"], third["tick"], third["agent_id"], third["market_id"], third["side"], third["outcome"], third["shares"], third["amount"]})
	require.InDelta(t, 950+proceeds, third["balance"], 1e-9)

	prices := tb["prices"]
	require.Len(t, prices.Rows, 3*2, "every market at the end of every round")
	ms := map[string]market.MarketState{}
	for _, m := range c.Markets() {
		ms[m.ID] = m
	}
	for i, row := range prices.Rows {
		r := cols(prices, row)
		require.Equal(t, float64(i/2+1), r["round"])
		require.Equal(t, float64(i/2), r["tick"])
		require.Equal(t, []string{"will_x", "will_it_rain_on_friday"}[i%2], r["market_id"])
		require.InDelta(t, 1, r["price_yes"].(float64)+r["price_no"].(float64), 1e-12)
	}
	r1 := cols(prices, prices.Rows[0])
	require.InDelta(t, 550.0/(550+250000.0/550), r1["price_yes"], 1e-12, "will_x after the buy")
	require.InDelta(t, 250000.0/550, r1["yes_reserve"], 1e-9)
	require.Equal(t, 550.0, r1["no_reserve"])
	require.Equal(t, 1.0, r1["total_trades"])
	require.Equal(t, 50.0, r1["total_volume"])
	require.Equal(t, false, r1["resolved"])
	last := cols(prices, prices.Rows[4])
	require.Equal(t, ms["will_x"].PriceYes, last["price_yes"], "the last round ends at the final price")
	require.Equal(t, 2.0, last["total_trades"])
	require.Equal(t, false, cols(prices, prices.Rows[1])["resolved"])
	require.Equal(t, true, cols(prices, prices.Rows[3])["resolved"], "resolved at the end of tick 1, in round 2")

	final := tb["final_positions"]
	require.Equal(t, []string{"agent_id", "balance", "portfolio_value", "profit", "trades", "comments",
		"will_x.yes", "will_x.no", "will_x.payout", "will_it_rain_on_friday.yes", "will_it_rain_on_friday.no", "will_it_rain_on_friday.payout"}, final.Columns)
	require.Len(t, final.Rows, 2)
	for i, id := range []string{"a1", "a2"} {
		f := cols(final, final.Rows[i])
		p, _ := c.Portfolio(id)
		require.Equal(t, id, f["agent_id"])
		v, _ := c.Metric(w, id, market.MetricPortfolioValue)
		require.Equal(t, v, f["portfolio_value"], "as the metric")
		pr, _ := c.Metric(w, id, market.MetricProfit)
		require.Equal(t, pr, f["profit"])
		require.Equal(t, p.Holdings["will_x"].Yes, f["will_x.yes"])
		require.Equal(t, float64(p.Trades), f["trades"])
	}
	a2 := cols(final, final.Rows[1])
	require.Equal(t, 0.0, a2["will_it_rain_on_friday.no"], "cleared at resolution")
	require.Equal(t, rain, a2["will_it_rain_on_friday.payout"], "each winning share paid 1")
	require.Equal(t, math.Round((1000-20+rain)*100)/100, a2["balance"], "balance to the cent")
	a1 := cols(final, final.Rows[0])
	require.InDelta(t, 95.4545-10, a1["will_x.yes"], 1e-4)

	plots := c.Plots()
	require.Len(t, plots, 1)
	pl := plots[0]
	require.Equal(t, "prices", pl.Name)
	require.Len(t, pl.Series, 2, "one line per market")
	for i, s := range pl.Series {
		require.Equal(t, c.Markets()[i].ID, s.Label)
		require.Equal(t, []float64{1, 2, 3}, s.X, "one point per round")
		require.Len(t, s.Y, 3)
	}
	require.Equal(t, r1["price_yes"], pl.Series[0].Y[0])
	require.Equal(t, ms["will_it_rain_on_friday"].PriceYes, pl.Series[1].Y[2], "a resolved market's price stays where trading left it")
}

// A long run keeps a bounded price record spanning the whole run, evenly
// spaced, ending at the last round.
func TestPriceRecordIsBoundedOverALongRun(t *testing.T) {
	if testing.Short() {
		t.Skip("25,000 ticks")
	}
	w, c, _ := reportWorld(t, `{"markets": [{"question": "Will X?"}]}`)
	const n = 25_002 // the last round falls between two kept ones
	for range n {
		w.Step()
	}
	s := c.Plots()[0].Series[0]
	require.LessOrEqual(t, len(s.X), 10_001)
	require.Greater(t, len(s.X), 5_000)
	require.Equal(t, 1.0, s.X[0])
	require.Equal(t, float64(n), s.X[len(s.X)-1], "the last round is always reported")
	gap := s.X[1] - s.X[0]
	for i := 1; i < len(s.X)-1; i++ {
		require.Equal(t, gap, s.X[i]-s.X[i-1], "evenly spaced")
	}
	require.Len(t, tables(t, c)["prices"].Rows, len(s.X))
}

// The trade log keeps the first 100,000 trades.
func TestTradeLogIsCapped(t *testing.T) {
	if testing.Short() {
		t.Skip("100,001 trades")
	}
	w, c, reg := reportWorld(t, `{"markets": [{"question": "Will X?"}], "initial_balance": 1000000}`)
	for i := range 100_001 {
		r := reg.Execute(w, "a1", "buy_shares", map[string]any{"market_id": "will_x", "outcome": []string{"yes", "no"}[i%2], "amount": 1}, false)
		require.True(t, r.Success)
	}
	tr := tables(t, c)["trades"]
	require.Len(t, tr.Rows, 100_000)
	p, _ := c.Portfolio("a1")
	require.Equal(t, 100_001, p.Trades, "trades past the cap still count")
}

// The market scenario played by its bots leaves its tables and plot as files.
func TestReportsOfThePlayedScenario(t *testing.T) {
	sc, err := scenarios.Load("market")
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: 1})
	require.NoError(t, err)
	ctrls := map[string]engine.Controller{}
	for _, a := range w.Agents() {
		ctrls[a.ID] = bots.NewTrader(bots.Info{AgentID: a.ID, Seed: 1})
	}
	res, err := (&engine.Runner{World: w, Controllers: ctrls, MaxTicks: sc.TimeLimit()}).Run(context.Background())
	require.NoError(t, err)
	c := w.Component("market").(*market.Component)
	tb := tables(t, c)
	require.Len(t, tb["prices"].Rows, res.Ticks*3, "three markets, every round")
	require.NotEmpty(t, tb["trades"].Rows)
	trades := 0
	for _, a := range w.Agents() {
		p, _ := c.Portfolio(a.ID)
		trades += p.Trades
	}
	require.Len(t, tb["trades"].Rows, trades)
	require.Len(t, tb["final_positions"].Rows, len(w.Agents()))

	dir := t.TempDir()
	files, err := eval.WriteComponentReports(dir, w)
	require.NoError(t, err)
	for _, name := range []string{"trades.csv", "trades.json", "prices.csv", "prices.json", "final_positions.csv", "final_positions.json", "prices.png"} {
		p := filepath.Join(dir, "market", name)
		require.Contains(t, files, p)
		st, err := os.Stat(p)
		require.NoError(t, err)
		require.Positive(t, st.Size())
	}
}

// A world where nothing happened still reports (and plots) without error.
func TestReportsOfAnIdleWorld(t *testing.T) {
	w, c, _ := reportWorld(t, `{"markets": [{"question": "Will X?"}]}`)
	tb := tables(t, c)
	require.Empty(t, tb["trades"].Rows)
	require.Empty(t, tb["prices"].Rows)
	require.Len(t, tb["final_positions"].Rows, 2)
	_, err := eval.WriteComponentReports(t.TempDir(), w)
	require.NoError(t, err)
}
