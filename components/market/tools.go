package market

import (
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/arena-sim/arena/internal/fuzzy"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// maxIDLen bounds the market_id parameter; maxOutcomeLen the outcome.
const (
	maxIDLen      = 400
	maxOutcomeLen = 16
)

func idParam() *tools.Schema {
	return &tools.Schema{Type: "string", Description: "The market's id, shown in brackets in the observation, e.g. will_it_rain_on_friday (or its exact question)", MinLength: tools.Ptr(1), MaxLength: tools.Ptr(maxIDLen)}
}

// buyDescription says how buy_shares prices shares under each maker.
var buyDescription = map[AMM]string{
	AMMFair: "Buy YES or NO shares of a prediction market with money from your balance. Each share pays 1 if its outcome happens. " +
		"Your money buys complete sets (1 YES + 1 NO each) and the market maker swaps the other side for more of yours (fixed-product market maker, no fees): " +
		"a share costs about its price, the price rises as you buy, and the result gives the shares bought and the new YES price.",
	AMMSeed: "Buy YES or NO shares of a prediction market with money from your balance. Each share pays 1 if its outcome happens. " +
		"Your money joins the other side's reserve (the reference's constant-product rule, no fees): a share costs more than its price (at a YES price p, about p/(1−p) per YES share), " +
		"the price rises as you buy, and the result gives the shares bought and the new YES price.",
}

func outcomeParam() *tools.Schema {
	return &tools.Schema{Type: "string", Description: "yes or no (any case)", MinLength: tools.Ptr(1), MaxLength: tools.Ptr(maxOutcomeLen)}
}

// Tools implements tools.Provider: buy_shares, sell_shares, browse_markets (a
// query tool), comment_on_market and the shared do_nothing.
func (c *Component) Tools() []tools.Tool {
	return []tools.Tool{
		{
			Name:        "buy_shares",
			Description: buyDescription[c.cfg.AMM],
			Parameters: tools.Object(map[string]*tools.Schema{
				"market_id": idParam(),
				"outcome":   outcomeParam(),
				"amount":    {Type: "number", Description: "Money to spend, more than 0 and at most your balance (your balance as shown, rounded to cents, spends it all)"},
			}, "market_id", "outcome", "amount"),
			Handler: c.buy,
		},
		{
			Name:        "sell_shares",
			Description: "Sell YES or NO shares you hold back to the market for money. Your holdings are shown floored to cents, so the amount shown can always be sold.",
			Parameters: tools.Object(map[string]*tools.Schema{
				"market_id": idParam(),
				"outcome":   outcomeParam(),
				"shares":    {Type: "number", Description: "Number of shares to sell, more than 0 and at most what you hold"},
			}, "market_id", "outcome", "shares"),
			Handler: c.sell,
		},
		{
			Name:        "browse_markets",
			Description: "List every market with its id, question and YES/NO prices. As a mid-turn query the list is returned at once.",
			Query:       true,
			Handler:     c.browse,
		},
		{
			Name:        "comment_on_market",
			Description: "Post a public comment on a market; every agent sees the newest comments under the market in its observation.",
			Parameters: tools.Object(map[string]*tools.Schema{
				"market_id": idParam(),
				"text":      {Type: "string", Description: "The comment", MinLength: tools.Ptr(1), MaxLength: tools.Ptr(c.cfg.MaxCommentLength)},
			}, "market_id", "text"),
			Handler: c.comment,
		},
		tools.DoNothing(), // shared with the other components that offer it
	}
}

// side reads the outcome parameter, in any case.
func side(tool, outcome string) (yes bool, res world.ActionResult, ok bool) {
	switch strings.ToLower(strings.TrimSpace(outcome)) {
	case "yes":
		return true, res, true
	case "no":
		return false, res, true
	}
	return false, world.Fail(tool, world.CodeInvalidParams, "invalid outcome: %q; outcome must be yes or no", fuzzy.Clip(outcome)), false
}

// lookup finds the one market the market_id parameter names (see find).
func (c *Component) lookup(tool, id string) (int, world.ActionResult, bool) {
	found := c.find(id)
	switch len(found) {
	case 1:
		return found[0], world.ActionResult{}, true
	case 0:
		hint := ""
		if i, ok := c.byID[Slug(id)]; ok {
			hint = fmt.Sprintf(" (did you mean '%s', %q?)", c.markets[i].id, fuzzy.Clip(c.markets[i].question))
		} else if best := fuzzy.Closest(strings.ToLower(id), c.ids); best != "" {
			hint = fmt.Sprintf(" (did you mean '%s'?)", best)
		}
		return 0, world.Fail(tool, world.CodeNotFound, "unknown market '%s'%s; markets: %s", fuzzy.Clip(id), hint, strings.Join(c.ids, ", ")), false
	}
	names := make([]string, len(found))
	for k, i := range found {
		names[k] = c.markets[i].id
	}
	return 0, world.Fail(tool, world.CodeInvalidParams, "market_id '%s' is the question of %d markets: %s; give one market's id",
		fuzzy.Clip(id), len(found), strings.Join(names, ", ")), false
}

func (c *Component) account(tool string, a *world.Agent) (*portfolio, world.ActionResult, bool) {
	if p := c.port[a.ID]; p != nil {
		return p, world.ActionResult{}, true
	}
	return nil, world.Fail(tool, world.CodeNotFound, "%s has no market account", a.ID), false
}

func closed(tool string, m *market) world.ActionResult {
	return world.Fail(tool, world.CodeNotAllowed, "market '%s' resolved %s at tick %d; trading is closed", m.id, strings.ToUpper(m.outcome), m.resolvedTick)
}

func outcomeName(yes bool) string {
	if yes {
		return "yes"
	}
	return "no"
}

// trade reads what buying and selling share, checked in the reference's
// order: the outcome, the market, a positive quantity (the parameter named
// qty), the market still open, and the caller's account.
func (c *Component) trade(call *tools.Call, tool, qty string) (yes bool, i int, q float64, p *portfolio, res world.ActionResult, ok bool) {
	if yes, res, ok = side(tool, call.String("outcome", "")); !ok {
		return
	}
	if i, res, ok = c.lookup(tool, call.String("market_id", "")); !ok {
		return
	}
	if q = call.Float(qty, 0); !(q > 0) || math.IsInf(q, 0) {
		return yes, i, q, nil, world.Fail(tool, world.CodeInvalidParams, "%s must be positive, got %g", qty, q), false
	}
	if m := c.markets[i]; m.resolved {
		return yes, i, q, nil, closed(tool, m), false
	}
	p, res, ok = c.account(tool, call.Agent)
	return
}

// buy checks, in the reference's order, the outcome, the market, the amount
// and the balance, then trades.
func (c *Component) buy(call *tools.Call) world.ActionResult {
	const tool = "buy_shares"
	yes, i, amount, p, res, ok := c.trade(call, tool, "amount")
	if !ok {
		return res
	}
	m := c.markets[i]
	if amount > p.balance {
		if amount > p.balance+cashSlack {
			res := world.Fail(tool, world.CodeNotAllowed, "insufficient balance: you have %.2f and asked to spend %g", round2(p.balance), amount)
			res.Data = map[string]any{"balance": round2(p.balance)}
			return res
		}
		amount = p.balance
	}
	shares, after := m.pool.QuoteBuy(yes, amount)
	if !(shares > 0) || !finite(after.Yes) || !finite(after.No) || !(after.Yes > 0) || !(after.No > 0) || m.cash+amount == m.cash {
		return world.Fail(tool, world.CodeInvalidParams, "amount %g is too small to buy any shares", amount)
	}
	m.pool = after
	m.cash += amount
	m.trades++
	m.volume += amount
	p.balance -= amount
	if yes {
		p.yes[i] += shares
	} else {
		p.no[i] += shares
	}
	p.trades++
	c.logTrade(call.World, call.Agent.ID, i, false, yes, shares, amount, p.balance)
	price := m.pool.PriceYes()
	return world.OK(tool, map[string]any{
		"side": "buy", "market_id": m.id, "outcome": outcomeName(yes), "shares": shares, "cost": amount,
		"price": price, "price_no": m.pool.PriceNo(), "balance": round2(p.balance), "round": float64(c.round),
	})
}

// cashSlack lets a buy of the balance as shown, rounded to cents, spend the
// whole balance when that is up to half a cent less.
const cashSlack = 0.005

// sellSlack lets a sell of a hair more than is held (rounding in a client)
// sell everything held.
const sellSlack = 1e-9

// sell checks the outcome, the market, the shares and the holding, then
// trades.
func (c *Component) sell(call *tools.Call) world.ActionResult {
	const tool = "sell_shares"
	yes, i, shares, p, res, ok := c.trade(call, tool, "shares")
	if !ok {
		return res
	}
	m := c.markets[i]
	held := &p.no[i]
	if yes {
		held = &p.yes[i]
	}
	if shares > *held {
		if shares > *held*(1+sellSlack)+sellSlack || *held <= 0 {
			res := world.Fail(tool, world.CodeNotAllowed, "insufficient shares: you hold %.2f %s shares of '%s' and asked to sell %g",
				Floor2(*held), strings.ToUpper(outcomeName(yes)), m.id, shares)
			res.Data = map[string]any{"held": Floor2(*held)}
			return res
		}
		shares = *held
	}
	proceeds, after := m.pool.QuoteSell(yes, shares)
	if !(proceeds > 0) || !finite(after.Yes) || !finite(after.No) || !(after.Yes > 0) || !(after.No > 0) || proceeds > m.cash || m.cash-proceeds == m.cash {
		return world.Fail(tool, world.CodeInvalidParams, "%g shares are too few to sell for any money", shares)
	}
	m.pool = after
	m.cash -= proceeds
	m.trades++
	m.volume += proceeds
	*held -= shares
	if *held < 0 {
		*held = 0
	}
	p.balance += proceeds
	p.trades++
	c.logTrade(call.World, call.Agent.ID, i, true, yes, shares, proceeds, p.balance)
	price := m.pool.PriceYes()
	return world.OK(tool, map[string]any{
		"side": "sell", "market_id": m.id, "outcome": outcomeName(yes), "shares": shares, "proceeds": proceeds,
		"price": price, "price_no": m.pool.PriceNo(), "balance": round2(p.balance), "held": Floor2(*held), "round": float64(c.round),
	})
}

// browse lists the markets.
func (c *Component) browse(*tools.Call) world.ActionResult {
	list := make([]any, len(c.markets))
	for i, m := range c.markets {
		e := map[string]any{"market_id": m.id, "question": m.question, "price_yes": m.pool.PriceYes(), "price_no": m.pool.PriceNo(),
			"resolved": m.resolved, "comments": float64(m.commentCount)}
		if m.resolved {
			e["outcome"] = m.outcome
		}
		list[i] = e
	}
	return world.OK("browse_markets", map[string]any{"markets": list})
}

// cleanText makes a comment one line: control characters become spaces,
// runs of spaces one, and the ends are trimmed.
func cleanText(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// comment stores a public comment on a market.
func (c *Component) comment(call *tools.Call) world.ActionResult {
	const tool = "comment_on_market"
	i, res, ok := c.lookup(tool, call.String("market_id", ""))
	if !ok {
		return res
	}
	text := cleanText(call.String("text", ""))
	if text == "" {
		return world.Fail(tool, world.CodeInvalidParams, "text must not be empty")
	}
	p, res, ok := c.account(tool, call.Agent)
	if !ok {
		return res
	}
	m := c.markets[i]
	if len(m.comments) == c.cfg.CommentsKept {
		copy(m.comments, m.comments[1:])
		m.comments = m.comments[:len(m.comments)-1]
	}
	m.comments = append(m.comments, Comment{Agent: call.Agent.ID, Tick: call.World.Tick(), Text: text})
	m.commentCount++
	p.comments++
	return world.OK(tool, map[string]any{"market_id": m.id, "comment": text, "comments": float64(m.commentCount)})
}
