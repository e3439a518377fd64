package bots_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/components/market"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// marketEntry is one market as the market component shows it, with reserves
// seeded at liquidity 500 for the YES price p.
func marketEntry(id string, p, yesHeld, noHeld float64, comments ...any) map[string]any {
	return map[string]any{"market_id": id, "question": id + "?", "price_yes": p, "price_no": 1 - p,
		"yes_reserve": 1000 * (1 - p), "no_reserve": 1000 * p, "yes_shares": yesHeld, "no_shares": noHeld,
		"resolved": false, "comments": append([]any{}, comments...)}
}

func marketObs(tick int, balance float64, markets ...any) *world.Observation {
	obs := baseObs()
	obs.Tick = tick
	obs.Components = map[string]world.Section{"market": {"text": "…", "balance": balance, "round": float64(tick + 1), "markets": markets}}
	return obs
}

func newTrader(seed uint64) *bots.Trader {
	return bots.NewTrader(bots.Info{AgentID: "a1", Seed: seed})
}

// firstTrade runs decisions on the same observation until the trader trades
// (it sits some rounds out and comments now and then), and returns it.
func firstTrade(t *testing.T, tr *bots.Trader, obs func(i int) *world.Observation) world.Decision {
	t.Helper()
	for i := 0; i < 40; i++ {
		d := tr.Decide(context.Background(), obs(i))
		if d.Tool == "buy_shares" || d.Tool == "sell_shares" {
			return d
		}
		require.Contains(t, []string{"do_nothing", "comment_on_market"}, d.Tool)
	}
	t.Fatal("the trader never traded")
	return world.Decision{}
}

func TestTraderIdlesWithoutAMarket(t *testing.T) {
	require.Equal(t, "idle", newTrader(1).Decide(context.Background(), baseObs()).Tool)
}

func TestTraderBuysTheSideItThinksCheap(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		for _, tc := range []struct {
			forecast, price float64
			outcome         string
		}{{0.8, 0.3, "yes"}, {0.2, 0.7, "no"}} {
			tr := newTrader(seed)
			d := firstTrade(t, tr, func(i int) *world.Observation {
				obs := marketObs(i, 1000, marketEntry("will_x", tc.price, 0, 0))
				obs.Variables = map[string]any{"forecast.will_x": tc.forecast}
				return obs
			})
			require.Equal(t, "buy_shares", d.Tool, "seed %d", seed)
			require.Equal(t, "will_x", d.Params["market_id"])
			require.Equal(t, tc.outcome, d.Params["outcome"], "seed %d: %s", seed, d.Reasoning)
			amount := d.Params["amount"].(float64)
			require.GreaterOrEqual(t, amount, 1.0)
			require.LessOrEqual(t, amount, 100.0, "at most 10%% of the balance")
			b, ok := tr.Belief("will_x")
			require.True(t, ok)
			require.InDelta(t, tc.forecast, b, 0.25+1e-9, "the prior is the forecast and a private signal")
		}
	}
}

func TestTraderNeverSpendsWhatItHasNot(t *testing.T) {
	tr := newTrader(3)
	for i := 0; i < 30; i++ {
		d := tr.Decide(context.Background(), marketObs(i, 0.5, marketEntry("will_x", 0.5, 0, 0)))
		require.NotEqual(t, "buy_shares", d.Tool, "a balance under 1 buys nothing")
	}
}

func TestTraderTakesProfit(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		tr := newTrader(seed)
		d := firstTrade(t, tr, func(i int) *world.Observation {
			obs := marketObs(i, 500, marketEntry("will_x", 0.95, 120.57, 0))
			obs.Variables = map[string]any{"forecast.will_x": 0.3}
			return obs
		})
		require.Equal(t, "sell_shares", d.Tool, "seed %d", seed)
		require.Equal(t, "yes", d.Params["outcome"])
		shares := d.Params["shares"].(float64)
		require.Greater(t, shares, 0.0)
		require.LessOrEqual(t, shares, 120.57, "never more than it holds")
		require.Contains(t, d.Reasoning, "above my estimate")
	}
}

// A sale moves the price a step (0.35) of the way to the trader's belief
// under either maker: the fair maker's sale also burns complete sets, so it
// takes more shares to move the price as far.
func TestTraderSellsWhatMovesThePriceAStep(t *testing.T) {
	for _, rule := range []market.AMM{market.AMMFair, market.AMMSeed} {
		tr := newTrader(3)
		d := firstTrade(t, tr, func(i int) *world.Observation {
			obs := marketObs(i, 500, marketEntry("will_x", 0.95, 1e6, 0))
			obs.Components["market"]["amm"] = string(rule)
			obs.Variables = map[string]any{"forecast.will_x": 0.3}
			return obs
		})
		require.Equal(t, "sell_shares", d.Tool, rule)
		belief, _ := tr.Belief("will_x")
		pool := market.Pool{Yes: 50, No: 950, K: 50 * 950, Rule: rule}
		pool.Sell(true, d.Params["shares"].(float64))
		require.InDelta(t, 0.95+0.35*(belief-0.95), pool.PriceYes(), 1e-3, "%s: %s", rule, d.Reasoning)
	}
}

func TestTraderFollowsNewsAndComments(t *testing.T) {
	tr := newTrader(5)
	obs := marketObs(0, 1000, marketEntry("will_x", 0.5, 0, 0))
	obs.Variables = map[string]any{"forecast.will_x": 0.5}
	tr.Decide(context.Background(), obs)
	before, _ := tr.Belief("will_x")

	obs = marketObs(1, 1000, marketEntry("will_x", 0.5, 0, 0))
	obs.Events = []world.EventView{{Source: "scheduled", Type: "news", Text: "[Scheduled] big news",
		Data: map[string]any{"market_id": "will_x", "probability": 0.9}}}
	tr.Decide(context.Background(), obs)
	after, _ := tr.Belief("will_x")
	require.InDelta(t, 0.75*0.9+0.25*before, after, 1e-9, "news pulls the belief three quarters of the way")

	comment := map[string]any{"agent": "a2", "tick": 1.0, "text": "My estimate for YES is 10%; the market says 50%."}
	tr.Decide(context.Background(), marketObs(2, 1000, marketEntry("will_x", 0.5, 0, 0, comment)))
	read, _ := tr.Belief("will_x")
	require.InDelta(t, after+0.1*(0.10-after), read, 1e-9, "a comment's estimate pulls it a tenth of the way")
	tr.Decide(context.Background(), marketObs(3, 1000, marketEntry("will_x", 0.5, 0, 0, comment)))
	again, _ := tr.Belief("will_x")
	require.Equal(t, read, again, "each comment is read once")
}

func TestTraderCommentsItsEstimate(t *testing.T) {
	tr := newTrader(2)
	var comments []string
	for i := 0; i < 60; i++ {
		obs := marketObs(i, 1000, marketEntry("will_x", 0.5, 0, 0))
		obs.Variables = map[string]any{"forecast.will_x": 0.8}
		if d := tr.Decide(context.Background(), obs); d.Tool == "comment_on_market" {
			comments = append(comments, d.Params["text"].(string))
			require.Equal(t, "will_x", d.Params["market_id"])
		}
	}
	require.GreaterOrEqual(t, len(comments), 3, "every 10 to 20 decisions")
	require.True(t, strings.HasPrefix(comments[0], "My estimate for YES is "), comments[0])
	require.Contains(t, comments[0], "so YES looks cheap to me.")
}

func TestTraderDoesNotRepeatAFailedTrade(t *testing.T) {
	mk := func(i int) *world.Observation {
		obs := marketObs(i, 1000, marketEntry("will_x", 0.3, 0, 0), marketEntry("will_y", 0.5, 0, 0))
		obs.Variables = map[string]any{"forecast.will_x": 0.9, "forecast.will_y": 0.5}
		return obs
	}
	retried := 0
	for seed := uint64(1); seed <= 30; seed++ {
		tr := newTrader(seed)
		d := firstTrade(t, tr, mk)
		require.Equal(t, "will_x", d.Params["market_id"], "the larger edge first")
		obs := mk(100)
		obs.LastActionResult = &world.ActionResult{Tool: d.Tool, Tick: 99, ErrorCode: world.CodeNotAllowed, ErrorMessage: "trading is closed"}
		if next := tr.Decide(context.Background(), obs); next.Tool == "buy_shares" || next.Tool == "sell_shares" {
			require.Equal(t, "will_y", next.Params["market_id"], "seed %d: not the market whose trade just failed", seed)
			retried++
		}
	}
	require.Positive(t, retried)
}

// The same section read off the wire (CBOR maps with any keys, integers)
// gives the same decisions.
func TestTraderReadsWireShapedSections(t *testing.T) {
	wire := func(m map[string]any) map[any]any {
		out := map[any]any{}
		for k, v := range m {
			if f, ok := v.(float64); ok && f == float64(int64(f)) {
				v = int64(f)
			}
			out[k] = v
		}
		return out
	}
	a, b := newTrader(9), newTrader(9)
	for i := 0; i < 30; i++ {
		o1 := marketObs(i, 1000, marketEntry("will_x", 0.25, 10, 0))
		o2 := marketObs(i, 1000, wire(marketEntry("will_x", 0.25, 10, 0)))
		o2.Components["market"]["balance"] = int64(1000)
		for _, o := range []*world.Observation{o1, o2} {
			o.Variables = map[string]any{"forecast.will_x": 0.6}
		}
		require.Equal(t, a.Decide(context.Background(), o1), b.Decide(context.Background(), o2), "decision %d", i)
	}
}

// TestTraderPassesTheMarketScenario plays the built-in market scenario with
// built-in traders, as `arena run --scenario market` does, and checks that
// they trade sensibly: every agent passes, prices follow the news, and
// the books balance.
func TestTraderPassesTheMarketScenario(t *testing.T) {
	sc, err := scenarios.Load("market")
	require.NoError(t, err)
	for _, agents := range []int{1, 6, sc.Agents.Max} {
		t.Run(fmt.Sprintf("%d agents", agents), func(t *testing.T) {
			w, err := sc.NewWorld(scenarios.Options{Seed: 1, Agents: agents})
			require.NoError(t, err)
			ctrls, err := eval.Controllers(sc, w)
			require.NoError(t, err)
			var rainAt25, rainAt35 float64
			r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: sc.TimeLimit(), OnTick: func(rec *engine.TickRecord) {
				if rec.Tick == 25 || rec.Tick == 35 {
					sec := w.Component("market").Observe(w, w.Agents()[0].ID)
					p := sec["markets"].([]any)[0].(map[string]any)["price_yes"].(float64)
					if rec.Tick == 25 {
						rainAt25 = p
					} else {
						rainAt35 = p
					}
				}
			}}
			res, err := r.Run(context.Background())
			require.NoError(t, err)
			t.Logf("%d agents: %s after %d ticks, mean score %.2f", agents, res.Outcome, res.Ticks, res.MeanScore)
			require.True(t, res.Passed, "%+v", res.Agents)
			for _, a := range res.Agents {
				require.GreaterOrEqual(t, a.Metrics["market.trades"], 3.0, a.ID)
				require.GreaterOrEqual(t, a.Metrics["market.comments"], 1.0, a.ID)
				require.Equal(t, 0.0, a.Metrics["market.open_markets"])
				require.Greater(t, a.Metrics["market.portfolio_value"], 300.0, "%s does not gamble everything away", a.ID)
			}
			require.Greater(t, rainAt35, rainAt25+0.1, "the festival forecast of 80%% at tick 25 moves the price up (%.2f → %.2f)", rainAt25, rainAt35)
		})
	}
}
