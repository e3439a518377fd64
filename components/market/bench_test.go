package market

import (
	"testing"

	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// BenchmarkTrades measures trades per second: through the AMM alone (a buy
// and a sell of the shares bought, alternating sides), and through the tool
// path an agent uses (registry lookup, schema validation, the handler's
// checks, the trade, its event and result).
//
//	go test ./components/market/ -run '^$' -bench Trades -count 3
func BenchmarkTrades(b *testing.B) {
	for _, rule := range []AMM{AMMFair, AMMSeed} {
		b.Run("amm="+string(rule), func(b *testing.B) {
			p := NewPool(rule, 0.5, 500)
			var shares float64
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				yes := i&2 == 0
				if i&1 == 0 {
					shares = p.Buy(yes, 10)
				} else {
					p.Sell(yes, shares)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "trades/s")
		})
	}
	b.Run("tool", func(b *testing.B) {
		w, c, reg := smallWorld(b, `{"markets": [{"question": "Will X?"}, {"question": "Will Y?", "initial_price_yes": 0.3}]}`)
		agents := []string{"a1", "a2", "a3"}
		buy := []map[string]any{
			{"market_id": "will_x", "outcome": "yes", "amount": 10.0},
			{"market_id": "will_y", "outcome": "NO", "amount": 10.0},
		}
		sells := make([]map[string]any, len(buy))
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			agent, k := agents[(i/4)%len(agents)], (i/2)%2
			var r world.ActionResult
			if i&1 == 0 {
				r = reg.Execute(w, agent, "buy_shares", buy[k], false)
				sells[k] = map[string]any{"market_id": buy[k]["market_id"], "outcome": buy[k]["outcome"], "shares": r.Data["shares"]}
			} else {
				r = reg.Execute(w, agent, "sell_shares", sells[k], false)
			}
			if !r.Success {
				b.Fatalf("trade %d failed: %s", i, r.ErrorMessage)
			}
			if i%1024 == 1023 {
				w.TakeEvents()
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "trades/s")
		_ = c
	})
}

var _ tools.Provider = (*Component)(nil)
