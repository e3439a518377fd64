// Package market is the prediction-market world component: yes/no questions
// traded against a constant-product automated market maker (see Pool), with
// agents' cash balances, share holdings, public comments, price_move events
// for the bridge, resolution that pays each winning share 1, and objective
// metrics (portfolio value, profit, balance, trades, comments). See
// docs/components.md#market.
//
// Two makers share the reserves and prices n/(y+n): the default, fair one
// trades complete sets (Gnosis/Omen's fixed-product market maker), so a
// share costs its price and a trader who buys the outcome that happens
// profits; the reference's (SimSwarm's) rule is the config's amm: "seed".
//
// Money is conserved: every agent starts with the config's initial balance,
// and each market holds cash, seeded at 2L (the sum of its seeded reserves),
// which takes in what buyers pay and pays out what sellers and, at
// resolution, winners receive; what is left after resolution stays in the
// market. Under the fair maker a market's cash is the number of complete
// sets it has minted: it equals the YES reserve plus every agent's YES
// shares plus the seeded NO reserve (the YES the maker kept when it seeded
// the pool), and likewise for NO. Under the seed maker it equals both
// reserves plus every agent's shares. Either way it can always pay the
// winners.
package market

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"

	"github.com/arena-sim/arena/world"
)

// Name is the component's name: its kind, section key and event source.
const Name = "market"

// Metric names the component defines.
const (
	MetricPortfolioValue = "market.portfolio_value"
	MetricProfit         = "market.profit"
	MetricBalance        = "market.balance"
	MetricTrades         = "market.trades"
	MetricComments       = "market.comments"
	// MetricOpenMarkets is the number of markets not yet resolved, the same
	// for every agent: an objective that requires it to be 0 (lower is
	// better) completes when the last market resolves.
	MetricOpenMarkets = "market.open_markets"
)

// Comment is one public comment on a market.
type Comment struct {
	Agent string `json:"agent"`
	Tick  int    `json:"tick"`
	Text  string `json:"text"`
}

type market struct {
	id, question string
	pool         Pool
	cash         float64
	initialPrice float64
	lastPrice    float64 // the YES price at the end of the previous round
	resolveTick  int     // -1: not scheduled by the config
	resolveAs    string
	resolved     bool
	outcome      string // "yes" or "no" once resolved
	resolvedTick int
	paidOut      float64
	comments     []Comment // newest last, at most CommentsKept
	commentCount int
	trades       int
	volume       float64
}

type portfolio struct {
	balance          float64
	yes, no, paid    []float64 // per market, in config order
	trades, comments int
}

// Component is the market component. Build it with New.
type Component struct {
	cfg     Config
	markets []*market
	byID    map[string]int
	ids     []string
	agents  []string // agent ids in world order
	port    map[string]*portfolio
	round   int
	rep     reports // trades and prices for the reports: derived, not hashed (report.go)
}

// New builds a market component from its config.
func New(cfg Config) (*Component, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	c := &Component{cfg: cfg, byID: map[string]int{}, round: 1}
	asked := map[string][]int{} // the markets asking each question
	for i, s := range cfg.Markets {
		asked[s.Question] = append(asked[s.Question], i)
	}
	for i, s := range cfg.Markets {
		// An id is never another market's question, so that a question
		// given as a market_id cannot name a different market by its id.
		id := UniqueSlug(s.Question, func(id string) bool {
			_, ok := c.byID[id]
			return ok || slices.ContainsFunc(asked[id], func(j int) bool { return j != i })
		})
		p := *s.InitialPriceYes
		m := &market{id: id, question: s.Question, pool: NewPool(cfg.AMM, p, s.Liquidity), initialPrice: p, lastPrice: p, resolveTick: -1}
		m.cash = m.pool.Yes + m.pool.No
		if s.ResolveTick != nil {
			m.resolveTick, m.resolveAs = *s.ResolveTick, s.Outcome
		}
		c.byID[id] = len(c.markets)
		c.ids = append(c.ids, id)
		c.markets = append(c.markets, m)
	}
	return c, nil
}

// Factory builds the component from a scenario's JSON config.
func Factory(raw json.RawMessage) (world.Component, error) {
	cfg, err := ParseConfig(raw)
	if err != nil {
		return nil, err
	}
	return New(cfg)
}

// Name implements world.Component.
func (c *Component) Name() string { return Name }

// Attach gives every agent its starting balance and empty holdings.
func (c *Component) Attach(w *world.World) error {
	c.agents = c.agents[:0]
	c.port = make(map[string]*portfolio, len(w.Agents()))
	c.rep = reports{}
	n := len(c.markets)
	for _, a := range w.Agents() {
		c.agents = append(c.agents, a.ID)
		c.port[a.ID] = &portfolio{balance: *c.cfg.InitialBalance, yes: make([]float64, n), no: make([]float64, n), paid: make([]float64, n)}
	}
	return nil
}

// Tick resolves the markets due (by the config or a scheduled resolve_market
// event) and, at the end of each round, publishes price_move for every open
// market whose YES price moved at least the threshold since the previous
// round's end, then advances the round.
func (c *Component) Tick(w *world.World) {
	t := w.Tick()
	evs := w.Events()
	for _, e := range evs {
		if e.Source != "scheduled" || e.Type != "resolve_market" || e.Tick != t {
			continue
		}
		id, _ := e.Data["market_id"].(string)
		out, _ := e.Data["outcome"].(string)
		found := c.find(id)
		out = strings.ToLower(strings.TrimSpace(out))
		if len(found) != 1 || (out != "yes" && out != "no") {
			slog.Warn("market: scheduled resolve_market ignored: it needs data.market_id (one market's id or question) and data.outcome (yes or no)",
				"tick", t, "market_id", id, "outcome", out, "markets_named", len(found))
			continue
		}
		c.resolve(w, found[0], out)
	}
	for i, m := range c.markets {
		if !m.resolved && m.resolveTick == t {
			c.resolve(w, i, m.resolveAs)
		}
	}
	if (t+1)%c.cfg.RoundTicks != 0 {
		return
	}
	for _, m := range c.markets {
		if m.resolved {
			continue
		}
		p := m.pool.PriceYes()
		if d := p - m.lastPrice; math.Abs(d) >= c.cfg.PriceMoveThreshold {
			w.Publish(world.Event{Type: "price_move", Source: Name, Data: map[string]any{
				"market_id": m.id, "question": m.question, "from": m.lastPrice, "to": p,
				"price_yes": p, "delta": d, "round": float64(c.round),
			}})
		}
		m.lastPrice = p
	}
	c.closeRound(t)
	c.round++
}

// resolve closes market i with an outcome and pays each winning share 1.
func (c *Component) resolve(w *world.World, i int, outcome string) {
	m := c.markets[i]
	if m.resolved {
		return
	}
	var total float64
	holders := 0
	for _, id := range c.agents {
		p := c.port[id]
		win := p.no[i]
		if outcome == "yes" {
			win = p.yes[i]
		}
		if win > 0 {
			holders++
		}
		p.balance += win
		p.paid[i] = win
		total += win
		p.yes[i], p.no[i] = 0, 0
	}
	m.cash -= total
	m.resolved, m.outcome, m.resolvedTick, m.paidOut = true, outcome, w.Tick(), total
	w.Publish(world.Event{Type: "market_resolved", Source: Name, Data: map[string]any{
		"market_id": m.id, "question": m.question, "outcome": outcome,
		"payout": total, "winners": float64(holders), "price_yes": m.pool.PriceYes(),
	}})
}

// FormatEvent renders the component's events for the bridge digest from
// their own fields.
func (c *Component) FormatEvent(e world.Event) (string, bool) {
	q, _ := e.Data["question"].(string)
	id, _ := e.Data["market_id"].(string)
	switch e.Type {
	case "price_move":
		to, ok1 := e.Data["to"].(float64)
		from, ok2 := e.Data["from"].(float64)
		if !ok1 || !ok2 {
			return "", false
		}
		dir := "down"
		if to > from {
			dir = "up"
		}
		return fmt.Sprintf("[Market] %s moved %s to %s (from %s) [%s]", q, dir, pct(to), pct(from), id), true
	case "market_resolved":
		out, _ := e.Data["outcome"].(string)
		pay, _ := e.Data["payout"].(float64)
		return fmt.Sprintf("[Market] %s resolved %s [%s]; %.2f paid to holders of %s shares", q, strings.ToUpper(out), id, pay, strings.ToUpper(out)), true
	}
	return "", false
}

// pct renders a price as a whole percentage.
func pct(p float64) string { return fmt.Sprintf("%.0f%%", p*100) }

// find returns the markets a market_id parameter names: every market whose
// id or question it is exactly (ids are never another market's question, so
// more than one only when questions repeat), or else the market whose id it
// is in another case or in brackets, as observations print it.
func (c *Component) find(id string) []int {
	s := strings.TrimSpace(id)
	var found []int
	for i, m := range c.markets {
		if m.id == s || m.question == s {
			found = append(found, i)
		}
	}
	if len(found) > 0 {
		return found
	}
	s = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if i, ok := c.byID[s]; ok {
		return []int{i}
	}
	return nil
}

// value is a portfolio's worth at current prices: cash plus every share
// marked at its market's price.
func (c *Component) value(p *portfolio) float64 {
	v := p.balance
	for i, m := range c.markets {
		if m.resolved {
			continue
		}
		v += p.yes[i]*m.pool.PriceYes() + p.no[i]*m.pool.PriceNo()
	}
	return v
}

// round2 rounds money to cents, as every balance and value is shown: in
// observations, tool results, metrics and reports.
func round2(x float64) float64 { return math.Round(x*100) / 100 }

// MetricNames lists the metrics the component defines.
func (c *Component) MetricNames() []string {
	return []string{MetricBalance, MetricComments, MetricOpenMarkets, MetricPortfolioValue, MetricProfit, MetricTrades}
}

// Metric implements world.MetricSource. Money metrics are rounded to cents.
func (c *Component) Metric(_ *world.World, agentID, name string) (float64, bool) {
	p := c.port[agentID]
	known := true
	var v float64
	switch name {
	case MetricPortfolioValue, MetricProfit, MetricBalance, MetricTrades, MetricComments:
	case MetricOpenMarkets:
		n := 0
		for _, m := range c.markets {
			if !m.resolved {
				n++
			}
		}
		return float64(n), true
	default:
		known = false
	}
	if !known || p == nil {
		return 0, known
	}
	switch name {
	case MetricPortfolioValue:
		v = round2(c.value(p))
	case MetricProfit:
		v = round2(c.value(p) - *c.cfg.InitialBalance)
	case MetricBalance:
		v = round2(p.balance)
	case MetricTrades:
		v = float64(p.trades)
	case MetricComments:
		v = float64(p.comments)
	}
	return v, true
}

// Hash writes the markets, the round and every portfolio.
func (c *Component) Hash(h *world.Hasher) {
	h.Int(c.round)
	h.Int(len(c.markets))
	for _, m := range c.markets {
		h.String(m.id)
		h.String(string(m.pool.Rule))
		h.Float(m.pool.Yes)
		h.Float(m.pool.No)
		h.Float(m.pool.K)
		h.Float(m.cash)
		h.Float(m.lastPrice)
		h.Bool(m.resolved)
		h.String(m.outcome)
		h.Int(m.resolvedTick)
		h.Float(m.paidOut)
		h.Int(m.trades)
		h.Float(m.volume)
		h.Int(m.commentCount)
		h.Int(len(m.comments))
		for _, cm := range m.comments {
			h.String(cm.Agent)
			h.Int(cm.Tick)
			h.String(cm.Text)
		}
	}
	h.Int(len(c.agents))
	for _, id := range c.agents {
		p := c.port[id]
		h.String(id)
		h.Float(p.balance)
		h.Int(p.trades)
		h.Int(p.comments)
		for i := range c.markets {
			h.Float(p.yes[i])
			h.Float(p.no[i])
			h.Float(p.paid[i])
		}
	}
}

// MarketState is a market as extractors and tests read it.
type MarketState struct {
	ID, Question    string
	PriceYes        float64
	PriceNo         float64
	Pool            Pool
	Cash            float64
	Resolved        bool
	Outcome         string
	ResolvedTick    int
	Trades          int
	Volume          float64 // money paid in by buyers plus money paid out to sellers
	Comments        []Comment
	CommentCount    int
	ResolveTick     int // the config's resolution tick, -1 when none
	InitialPriceYes float64
}

// Markets returns the state of every market, in config order.
func (c *Component) Markets() []MarketState {
	out := make([]MarketState, len(c.markets))
	for i, m := range c.markets {
		out[i] = MarketState{ID: m.id, Question: m.question, PriceYes: m.pool.PriceYes(), PriceNo: m.pool.PriceNo(), Pool: m.pool,
			Cash: m.cash, Resolved: m.resolved, Outcome: m.outcome, ResolvedTick: m.resolvedTick, Trades: m.trades, Volume: m.volume,
			Comments: append([]Comment(nil), m.comments...), CommentCount: m.commentCount, ResolveTick: m.resolveTick, InitialPriceYes: m.initialPrice}
	}
	return out
}

// Holding is an agent's position in one market.
type Holding struct {
	Yes, No, Paid float64
}

// PortfolioState is an agent's account as extractors and tests read it.
type PortfolioState struct {
	Balance          float64
	Value            float64 // balance plus shares at current prices
	Holdings         map[string]Holding
	Trades, Comments int
}

// Portfolio returns an agent's account.
func (c *Component) Portfolio(agentID string) (PortfolioState, bool) {
	p := c.port[agentID]
	if p == nil {
		return PortfolioState{}, false
	}
	s := PortfolioState{Balance: p.balance, Value: c.value(p), Holdings: make(map[string]Holding, len(c.markets)), Trades: p.trades, Comments: p.comments}
	for i, m := range c.markets {
		s.Holdings[m.id] = Holding{Yes: p.yes[i], No: p.no[i], Paid: p.paid[i]}
	}
	return s, true
}

// Round is the current round, from 1.
func (c *Component) Round() int { return c.round }

// Observe renders the markets for one agent: prices, the agent's balance
// (rounded to cents; a buy of the rounded balance spends it all) and
// holdings (floored to cents, so that every amount shown can be sold), the
// newest comments and resolutions.
func (c *Component) Observe(_ *world.World, agentID string) world.Section {
	p := c.port[agentID]
	if p == nil {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Prediction market, round %d. Your balance: %.2f. Portfolio value at current prices: %.2f.", c.round, round2(p.balance), round2(c.value(p)))
	list := make([]any, 0, len(c.markets))
	for i, m := range c.markets {
		py, pn := m.pool.PriceYes(), m.pool.PriceNo()
		yes, no := Floor2(p.yes[i]), Floor2(p.no[i])
		entry := map[string]any{
			"market_id": m.id, "question": m.question, "price_yes": py, "price_no": pn,
			"yes_reserve": m.pool.Yes, "no_reserve": m.pool.No,
			"yes_shares": yes, "no_shares": no, "resolved": m.resolved,
		}
		if m.resolved {
			fmt.Fprintf(&b, "\nMarket [%s]: %s | RESOLVED %s at tick %d (each %s share paid 1)", m.id, m.question, strings.ToUpper(m.outcome), m.resolvedTick, strings.ToUpper(m.outcome))
			if p.paid[i] > 0 {
				fmt.Fprintf(&b, "\n  You were paid %.2f in [%s].", round2(p.paid[i]), m.id)
			}
			entry["outcome"] = m.outcome
			entry["resolved_tick"] = float64(m.resolvedTick)
			entry["payout"] = round2(p.paid[i])
		} else {
			fmt.Fprintf(&b, "\nMarket [%s]: %s | YES: %s | NO: %s", m.id, m.question, pct(py), pct(pn))
			fmt.Fprintf(&b, "\n  Your position in [%s]: YES=%.2f NO=%.2f", m.id, yes, no)
			if m.resolveTick >= 0 {
				fmt.Fprintf(&b, "\n  Resolves at the end of tick %d.", m.resolveTick)
				entry["resolve_tick"] = float64(m.resolveTick)
			}
		}
		shown := m.comments[max(0, len(m.comments)-c.cfg.CommentsShown):]
		comments := make([]any, 0, len(shown))
		if len(shown) > 0 {
			fmt.Fprintf(&b, "\n  Recent comments on [%s]:", m.id)
		}
		for _, cm := range shown {
			fmt.Fprintf(&b, "\n    [tick %d] %s: %s", cm.Tick, cm.Agent, cm.Text)
			comments = append(comments, map[string]any{"agent": cm.Agent, "tick": float64(cm.Tick), "text": cm.Text})
		}
		entry["comments"] = comments
		list = append(list, entry)
	}
	return world.Section{
		"text":            b.String(),
		"round":           float64(c.round),
		"amm":             string(c.cfg.AMM),
		"balance":         round2(p.balance),
		"portfolio_value": round2(c.value(p)),
		"markets":         list,
	}
}
