package market

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// panelOf returns the component's panel, checking that it changes nothing
// and keeps to the panel limits.
func panelOf(t *testing.T, w *world.World, c *Component) world.Panel {
	t.Helper()
	return testutil.Panel(t, w, c)
}

func TestPanelShowsPricesTradesAndResolution(t *testing.T) {
	w, c, reg := setup(t, `{"markets": [
		{"question": "Will X?", "initial_price_yes": 0.5},
		{"question": "Will it rain on Friday?", "initial_price_yes": 0.6, "resolve_tick": 2, "outcome": "no"}
	]}`)
	p := panelOf(t, w, c)
	require.Equal(t, "Prediction market", p.Title)
	require.Equal(t, []string{
		"Round 1 · 2 markets, 2 open · 0 trades, volume 0.00",
		"Will X? [will_x]",
		"  YES 50.0%  NO 50.0% · 0 trades · volume 0.00",
		"Will it rain on Friday? [will_it_rain_on_friday]",
		"  YES 60.0%  NO 40.0% · 0 trades · volume 0.00",
	}, p.Lines)

	require.True(t, call(w, reg, "a1", "buy_shares", map[string]any{"market_id": "will_x", "outcome": "yes", "amount": 500}).Success)
	require.True(t, call(w, reg, "a2", "buy_shares", map[string]any{"market_id": "will_it_rain_on_friday", "outcome": "no", "amount": 100}).Success)
	res := call(w, reg, "a2", "sell_shares", map[string]any{"market_id": "will_x", "outcome": "no", "shares": 1})
	require.False(t, res.Success, "a2 holds no NO shares of will_x")
	w.Step()
	m := c.Markets()
	p = panelOf(t, w, c)
	require.Equal(t, fmt.Sprintf("Round 2 · 2 markets, 2 open · 2 trades, volume %.2f", m[0].Volume+m[1].Volume), p.Lines[0])
	require.Equal(t, fmt.Sprintf("  YES %.1f%%  NO %.1f%% · 1 trades · volume 500.00", 100*m[0].PriceYes, 100*m[0].PriceNo), p.Lines[2])
	require.Equal(t, "  YES 80.0%  NO 20.0% · 1 trades · volume 500.00", p.Lines[2], "the AMM's price after buying YES for 500 at 50%")
	pf, _ := c.Portfolio("a2")
	last := fmt.Sprintf("Last trade: a2 bought %.2f NO for 100.00 in will_it_rain_on_friday", pf.Holdings["will_it_rain_on_friday"].No)
	require.Equal(t, world.Clip(last, world.PanelWidth), p.Lines[len(p.Lines)-1])
	require.Equal(t, "Last trade: a2 bought 220.00 NO for 100.00 in will_it_rain_…", p.Lines[len(p.Lines)-1])

	w.Step()
	w.Step() // the second market resolves NO at the end of tick 2
	m = c.Markets()
	require.True(t, m[1].Resolved)
	p = panelOf(t, w, c)
	require.Contains(t, p.Lines[0], "2 markets, 1 open")
	require.Equal(t, fmt.Sprintf("  RESOLVED NO at tick 2 · paid %.2f · 1 trades", pf.Holdings["will_it_rain_on_friday"].No), p.Lines[4])
}

func TestPanelManyMarketsFitOneLineEach(t *testing.T) {
	var specs []string
	for i := range 20 {
		specs = append(specs, fmt.Sprintf(`{"question": "Will question number %d, which is rather long and wordy, come true?", "initial_price_yes": 0.%d5}`, i, i%9+1))
	}
	w, c, reg := setup(t, `{"markets": [`+strings.Join(specs, ",")+`]}`)
	require.True(t, call(w, reg, "a1", "buy_shares", map[string]any{"market_id": c.Markets()[3].ID, "outcome": "no", "amount": 10}).Success)
	p := panelOf(t, w, c)
	require.Len(t, p.Lines, world.PanelLines)
	require.Contains(t, p.Lines[0], "20 markets, 20 open · 1 trades")
	require.Equal(t, "Will question number 0, which is rathe… · YES 15.0% NO 85.0%", p.Lines[1])
	require.Equal(t, "+9 more markets", p.Lines[12])
	require.True(t, strings.HasPrefix(p.Lines[13], "Last trade: a1 bought "), p.Lines[13])
	require.Contains(t, p.Lines[4], fmt.Sprintf("YES %.1f%%", 100*c.Markets()[3].PriceYes))
}
