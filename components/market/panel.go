package market

import (
	"fmt"
	"strings"

	"github.com/arena-sim/arena/world"
)

var _ world.Spectated = (*Component)(nil)

// Panel implements world.Spectated: the round, the number of markets open,
// the trades and volume in all, the last trade, and each market's question
// with its YES and NO prices, trades and volume, or its outcome once
// resolved. With up to six markets each takes two lines; with more, one.
func (c *Component) Panel(*world.World) world.Panel {
	p := world.Panel{Name: Name, Title: "Prediction market"}
	open, trades := 0, 0
	var volume float64
	for _, m := range c.markets {
		if !m.resolved {
			open++
		}
		trades += m.trades
		volume += m.volume
	}
	p.Add("Round %d · %d markets, %d open · %d trades, volume %.2f", c.round, len(c.markets), open, trades, volume)
	var last string
	if n := len(c.rep.trades); n > 0 && c.rep.dropped == 0 {
		t := c.rep.trades[n-1]
		verb := "bought"
		if t.sell {
			verb = "sold"
		}
		last = fmt.Sprintf("Last trade: %s %s %.2f %s for %.2f in %s", t.agent, verb, t.shares,
			strings.ToUpper(outcomeName(t.yes)), t.amount, c.markets[t.market].id)
	}
	room := p.Room()
	if last != "" {
		room--
	}
	twoLines := 2*len(c.markets) <= room
	for i, m := range c.markets {
		need := 1
		if twoLines {
			need = 2
		}
		if rest := len(c.markets) - i; rest*need > room && room < need+1 {
			p.Add("+%d more markets", rest)
			break
		}
		room -= need
		if twoLines {
			p.Add("%s [%s]", m.question, m.id)
			if m.resolved {
				p.Add("  RESOLVED %s at tick %d · paid %.2f · %d trades", strings.ToUpper(m.outcome), m.resolvedTick, m.paidOut, m.trades)
			} else {
				p.Add("  YES %s  NO %s · %d trades · volume %.2f", pct1(m.pool.PriceYes()), pct1(m.pool.PriceNo()), m.trades, m.volume)
			}
			continue
		}
		state := fmt.Sprintf(" · YES %s NO %s", pct1(m.pool.PriceYes()), pct1(m.pool.PriceNo()))
		if m.resolved {
			state = " · RESOLVED " + strings.ToUpper(m.outcome)
		}
		p.Add("%s%s", world.Clip(m.question, world.PanelWidth-len([]rune(state))), state)
	}
	if last != "" {
		p.Add("%s", last)
	}
	return p
}

// pct1 renders a price as a percentage to one decimal.
func pct1(p float64) string { return fmt.Sprintf("%.1f%%", p*100) }
