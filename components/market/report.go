package market

import (
	"github.com/arena-sim/arena/internal/series"
	"github.com/arena-sim/arena/world"
)

// What the component reports once an episode is over (world.Reporter): every
// trade, every market's prices at the end of each round, and every agent's
// final position, from the component's own records.
//
// The records are derived state: they are written as the simulation runs and
// never read by it, so they are left out of the state hash (two worlds with
// the same hash have the same records anyway, since both are built by the
// same deterministic steps). They are reset by Attach.

// maxTradeLog is how many trades the trades table keeps: the first 100,000
// of an episode; later trades still count in the markets' and agents' totals
// (the prices table's total_trades, final_positions' trades) but are not
// listed.
const maxTradeLog = 100_000

// maxPriceRounds is how many rounds of prices are kept. A longer run keeps
// every second round once the record fills, then every fourth, and so on, so
// that the record spans the whole run at an even spacing; the last round is
// always reported.
const maxPriceRounds = 10_000

// tradeRecord is one successful buy or sell.
type tradeRecord struct {
	round, tick int
	agent       string
	market      int
	sell, yes   bool
	shares      float64
	amount      float64 // money paid (buy) or received (sell)
	priceYes    float64 // after the trade
	balance     float64 // the agent's balance after the trade
}

// priceSnap is one market at the end of a round.
type priceSnap struct {
	yes, no  float64 // reserves
	trades   int     // the market's trades so far
	volume   float64 // the market's volume so far
	resolved bool
}

// priceRound is every market at the end of one round, in config order.
type priceRound struct {
	round, tick int
	markets     []priceSnap
}

// reports is the component's record of an episode; it is not hashed (see
// above).
type reports struct {
	trades  []tradeRecord
	dropped int // trades not logged past maxTradeLog
	prices  series.Thinned[priceRound]
}

// logTrade records a trade in market i, after it was made.
func (c *Component) logTrade(w *world.World, agent string, i int, sell, yes bool, shares, amount, balance float64) {
	r := &c.rep
	if len(r.trades) >= maxTradeLog {
		r.dropped++
		return
	}
	r.trades = append(r.trades, tradeRecord{round: c.round, tick: w.Tick(), agent: agent, market: i, sell: sell, yes: yes,
		shares: shares, amount: amount, priceYes: c.markets[i].pool.PriceYes(), balance: balance})
}

// closeRound records every market at the end of the round in progress.
func (c *Component) closeRound(tick int) {
	pr := priceRound{round: c.round, tick: tick, markets: make([]priceSnap, len(c.markets))}
	for i, m := range c.markets {
		pr.markets[i] = priceSnap{yes: m.pool.Yes, no: m.pool.No, trades: m.trades, volume: m.volume, resolved: m.resolved}
	}
	c.rep.prices.Add(pr, maxPriceRounds)
}

// Tables implements world.Reporter:
//   - trades: every successful buy and sell (the first 100,000), in order:
//     the round and tick, the agent, the market, buy or sell, yes or no, the
//     shares, the money paid or received, the YES price after the trade and
//     the agent's balance after it;
//   - prices: per round and market, the YES and NO prices and the reserves at
//     the round's end, the market's trades and volume so far and whether it
//     has resolved;
//   - final_positions: per agent, the balance, portfolio value and profit
//     (to the cent, as the market.* metrics), trades and comments, and per
//     market the YES and NO shares held and the payout received at
//     resolution (columns MARKET.yes, MARKET.no, MARKET.payout).
func (c *Component) Tables() []world.Table {
	trades := world.Table{Name: "trades", Columns: []string{"round", "tick", "agent_id", "market_id", "side", "outcome", "shares", "amount", "price_yes", "balance"}}
	for _, t := range c.rep.trades {
		side := "buy"
		if t.sell {
			side = "sell"
		}
		trades.Rows = append(trades.Rows, []any{float64(t.round), float64(t.tick), t.agent, c.ids[t.market], side, outcomeName(t.yes),
			t.shares, t.amount, t.priceYes, t.balance})
	}

	prices := world.Table{Name: "prices", Columns: []string{"round", "tick", "market_id", "price_yes", "price_no", "yes_reserve", "no_reserve",
		"total_trades", "total_volume", "resolved"}}
	for _, pr := range c.rep.prices.All() {
		for i, s := range pr.markets {
			p := Pool{Yes: s.yes, No: s.no}
			prices.Rows = append(prices.Rows, []any{float64(pr.round), float64(pr.tick), c.ids[i], p.PriceYes(), p.PriceNo(), s.yes, s.no,
				float64(s.trades), s.volume, s.resolved})
		}
	}

	cols := []string{"agent_id", "balance", "portfolio_value", "profit", "trades", "comments"}
	for _, id := range c.ids {
		cols = append(cols, id+".yes", id+".no", id+".payout")
	}
	final := world.Table{Name: "final_positions", Columns: cols}
	for _, id := range c.agents {
		p := c.port[id]
		v := c.value(p)
		row := []any{id, round2(p.balance), round2(v), round2(v - *c.cfg.InitialBalance), float64(p.trades), float64(p.comments)}
		for i := range c.markets {
			row = append(row, p.yes[i], p.no[i], p.paid[i])
		}
		final.Rows = append(final.Rows, row)
	}
	return []world.Table{trades, prices, final}
}

// Plots implements world.Reporter: prices, the YES price of every market at
// the end of each round, one line per market.
func (c *Component) Plots() []world.Plot {
	pl := world.Plot{Name: "prices", Title: "Market prices (YES)", X: "round", Y: "price_yes"}
	rounds := c.rep.prices.All()
	for i, id := range c.ids {
		s := world.Series{Label: id, X: make([]float64, 0, len(rounds)), Y: make([]float64, 0, len(rounds))}
		for _, pr := range rounds {
			p := Pool{Yes: pr.markets[i].yes, No: pr.markets[i].no}
			s.X = append(s.X, float64(pr.round))
			s.Y = append(s.Y, p.PriceYes())
		}
		pl.Series = append(pl.Series, s)
	}
	return []world.Plot{pl}
}
