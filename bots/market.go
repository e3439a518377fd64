package bots

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"

	"github.com/arena-sim/arena/world"
)

// Trader is the reference prediction-market trader ("trader" kind). It reads
// the market component's section (components.market) and keeps a belief,
// the probability of YES, for every market:
//
//   - its prior is the scenario variable forecast.<market_id> when there is
//     one, otherwise the market's opening price, moved by a private signal
//     of 8 to 25 points up or down (seeded per agent and market), so that
//     traders disagree;
//   - news (a bridge event whose data carries market_id and probability, as
//     a scheduled event may) pulls it three quarters of the way to the news;
//   - another agent's comment "… estimate … NN% …" pulls it a tenth of the
//     way.
//
// Each decision it does the first of these that applies: sell a side it
// holds that now trades above its belief (taking profit, or cutting a loss
// once news turned against it); buy the side of the market with the largest
// edge (belief minus price, beyond a threshold of 4 to 7 points), spending
// what moves the price halfway to its belief, at most 10–20% of its
// balance, and at most 40% of what it started with in any one market;
// comment its estimate on the market with the largest edge every 10–20
// decisions; otherwise do_nothing. It never repeats a trade that just
// failed on the same market in the same decision. All of it is
// deterministic for a seed.
type Trader struct {
	info      Info
	rng       *rand.Rand
	belief    map[string]float64
	order     []string        // market ids in the order first seen
	read      map[string]bool // comments already read (tick|agent|text)
	readOrder []string
	edge      float64            // least |belief − price| worth trading
	stake     float64            // most of the balance one buy spends
	every     int                // decisions between comments
	untilNext int                // decisions until the next comment
	start     float64            // the first balance seen
	failedOn  string             // the market of a trade that just failed
	spent     map[string]float64 // net money put into each market
	counted   int                // the observation tick of the last result counted
	active    float64            // chance of trading at a decision
}

// NewTrader creates a trader for one agent.
func NewTrader(info Info) *Trader {
	rng := rand.New(rand.NewPCG(world.DeriveSeed(info.Seed, "bot:"+info.AgentID), 11))
	t := &Trader{info: info, rng: rng, belief: map[string]float64{}, read: map[string]bool{}, spent: map[string]float64{}, counted: -1}
	t.edge = 0.04 + 0.03*rng.Float64()
	t.stake = 0.05 + 0.05*rng.Float64()
	t.active = 0.5 + 0.3*rng.Float64()
	t.every = 10 + rng.IntN(11)
	t.untilNext = 2 + rng.IntN(6)
	return t
}

// traderMarket is one market as the trader reads it from the section.
type traderMarket struct {
	id, question    string
	price           float64 // YES price
	yesRes, noRes   float64
	yesHeld, noHeld float64
	resolved        bool
	fair            bool // the market maker trades complete sets (amm "fair", the default)
	comments        []any
}

var estimateRE = regexp.MustCompile(`(?i)estimate\D{0,40}?(\d{1,3}(?:\.\d+)?)\s*%`)

const (
	newsWeight    = 0.75
	commentWeight = 0.10
	maxRead       = 4096
	budget        = 0.25 // most of the starting balance put into one market
	step          = 0.35 // how far one trade moves the price toward the belief
)

// Decide implements Bot.
func (t *Trader) Decide(_ context.Context, obs *world.Observation) world.Decision {
	sec := SectionOf(obs, "market")
	if sec == nil {
		return world.Idle("no market in this world")
	}
	balance := NumOf(sec["balance"])
	if t.start == 0 {
		t.start = balance
	}
	var ms []traderMarket
	for _, v := range ListOf(sec["markets"]) {
		m := MapOf(v)
		if m == nil {
			continue
		}
		tm := traderMarket{id: StrOf(m["market_id"]), question: StrOf(m["question"]), price: NumOf(m["price_yes"]),
			yesRes: NumOf(m["yes_reserve"]), noRes: NumOf(m["no_reserve"]), yesHeld: NumOf(m["yes_shares"]), noHeld: NumOf(m["no_shares"]),
			resolved: m["resolved"] == true, comments: ListOf(m["comments"]), fair: StrOf(sec["amm"]) != "seed"}
		if tm.id == "" {
			continue
		}
		ms = append(ms, tm)
		if _, ok := t.belief[tm.id]; !ok {
			t.belief[tm.id] = t.prior(obs, tm)
			t.order = append(t.order, tm.id)
		}
	}
	t.readNews(obs)
	t.readComments(ms)

	failed := ""
	if r := obs.LastActionResult; r != nil && r.Tick > t.counted {
		t.counted = r.Tick
		id := StrOf(r.Data["market_id"])
		switch {
		case !r.Success && (r.Tool == "buy_shares" || r.Tool == "sell_shares"):
			failed = t.failedOn
		case r.Success && r.Tool == "buy_shares":
			t.spent[id] += NumOf(r.Data["cost"])
		case r.Success && r.Tool == "sell_shares":
			t.spent[id] = math.Max(0, t.spent[id]-NumOf(r.Data["proceeds"]))
		}
	}
	t.failedOn = ""
	act := t.rng.Float64() < t.active

	// 1. Sell what now trades above its worth to us, enough to move the
	// price a step toward our belief.
	for _, m := range ms {
		if !act || m.resolved || m.id == failed {
			continue
		}
		b := t.belief[m.id]
		if m.yesHeld >= 0.01 && m.price >= b+t.edge {
			n := math.Min(m.yesHeld, floor2(sharesToMove(m, true, m.price+step*(b-m.price))))
			if n >= 0.01 {
				return t.trade("sell_shares", m, "yes", "shares", n,
					fmt.Sprintf("YES trades at %.0f%%, above my estimate of %.0f%%: selling %.2f of my %.2f YES shares", 100*m.price, 100*b, n, m.yesHeld))
			}
		}
		if m.noHeld >= 0.01 && 1-m.price >= (1-b)+t.edge {
			n := math.Min(m.noHeld, floor2(sharesToMove(m, false, m.price+step*(b-m.price))))
			if n >= 0.01 {
				return t.trade("sell_shares", m, "no", "shares", n,
					fmt.Sprintf("NO trades at %.0f%%, above my estimate of %.0f%%: selling %.2f of my %.2f NO shares", 100*(1-m.price), 100*(1-b), n, m.noHeld))
			}
		}
	}

	// 2. Comment now and then, on the market we disagree with most.
	t.untilNext--
	best, bestEdge := -1, 0.0
	for i, m := range ms {
		if m.resolved {
			continue
		}
		if e := math.Abs(t.belief[m.id] - m.price); e > bestEdge {
			best, bestEdge = i, e
		}
	}
	if t.untilNext <= 0 && best >= 0 {
		t.untilNext = t.every
		m := ms[best]
		b := t.belief[m.id]
		side := "YES"
		if b < m.price {
			side = "NO"
		}
		text := fmt.Sprintf("My estimate for YES is %.0f%%; the market says %.0f%%, so %s looks cheap to me.", 100*b, 100*m.price, side)
		return world.Decision{Tool: "comment_on_market", Params: map[string]any{"market_id": m.id, "text": text},
			Reasoning: fmt.Sprintf("sharing my estimate on %s", m.id)}
	}

	// 3. Buy the largest edge, if it is worth it.
	for _, i := range t.byEdge(ms) {
		m := ms[i]
		if !act {
			break
		}
		if m.id == failed {
			continue
		}
		b := t.belief[m.id]
		if math.Abs(b-m.price) < t.edge {
			break
		}
		yes := b > m.price
		amount := math.Min(math.Min(toMove(m, yes, m.price+step*(b-m.price)), t.stake*balance), budget*t.start-t.spent[m.id])
		amount = math.Floor(amount*100) / 100
		if amount < 1 || amount > balance {
			continue
		}
		out := "no"
		if yes {
			out = "yes"
		}
		return t.trade("buy_shares", m, out, "amount", amount,
			fmt.Sprintf("I estimate YES at %.0f%% and the market at %.0f%%: buying %s for %.2f", 100*b, 100*m.price, strings.ToUpper(out), amount))
	}
	if !act {
		return world.Decision{Tool: "do_nothing", Reasoning: "sitting this round out"}
	}
	return world.Decision{Tool: "do_nothing", Reasoning: "no edge worth trading"}
}

func (t *Trader) trade(tool string, m traderMarket, outcome, key string, v float64, why string) world.Decision {
	t.failedOn = m.id
	return world.Decision{Tool: tool, Params: map[string]any{"market_id": m.id, "outcome": outcome, key: v}, Reasoning: why}
}

// byEdge orders the open markets by edge, largest first (ties by order).
func (t *Trader) byEdge(ms []traderMarket) []int {
	var idx []int
	for i, m := range ms {
		if !m.resolved {
			idx = append(idx, i)
		}
	}
	edge := func(i int) float64 { return math.Abs(t.belief[ms[i].id] - ms[i].price) }
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && edge(idx[j]) > edge(idx[j-1]); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	return idx
}

// toMove is the amount that moves the YES price to target by buying one
// side of a constant-product pool (k = y·n), the same under both makers:
// buying YES adds to n until n²/(n²+k) = target, buying NO adds to y until
// y²/(y²+k) = 1 − target.
func toMove(m traderMarket, yes bool, target float64) float64 {
	k := m.yesRes * m.noRes
	if k <= 0 || target <= 0 || target >= 1 {
		return 0
	}
	if yes {
		return math.Sqrt(target*k/(1-target)) - m.noRes
	}
	return math.Sqrt((1-target)*k/target) - m.yesRes
}

// sharesToMove is the number of shares whose sale moves the YES price to
// target, where the reserves are y′ = √(k(1−t)/t) and n′ = k/y′: selling
// YES adds to y and, under the fair maker, whose sale also burns complete
// sets, takes n − n′ from both; selling NO mirrors it.
func sharesToMove(m traderMarket, yes bool, target float64) float64 {
	k := m.yesRes * m.noRes
	if k <= 0 || target <= 0 || target >= 1 {
		return 0
	}
	y, n := math.Sqrt(k*(1-target)/target), math.Sqrt(k*target/(1-target))
	s, burnt := y-m.yesRes, m.noRes-n
	if !yes {
		s, burnt = n-m.noRes, m.yesRes-y
	}
	if m.fair {
		s += burnt
	}
	return s
}

// floor2 floors to cents, as the market shows amounts.
func floor2(x float64) float64 { return math.Floor(x*100) / 100 }

// prior is the starting belief about a market: the forecast variable or the
// opening price, moved by a private signal.
func (t *Trader) prior(obs *world.Observation, m traderMarket) float64 {
	base := m.price
	if v, ok := obs.Variables["forecast."+m.id]; ok {
		if f := NumOf(v); f > 0 && f < 1 {
			base = f
		}
	}
	signal := 0.08 + 0.17*t.rng.Float64()
	if t.rng.IntN(2) == 0 {
		signal = -signal
	}
	return clampP(base + signal)
}

func clampP(p float64) float64 { return math.Min(0.95, math.Max(0.05, p)) }

// readNews moves beliefs toward bridge events that give a market's
// probability.
func (t *Trader) readNews(obs *world.Observation) {
	for _, e := range obs.Events {
		id := StrOf(e.Data["market_id"])
		p, ok := e.Data["probability"]
		if _, known := t.belief[id]; !known || !ok {
			continue
		}
		if f := NumOf(p); f > 0 && f < 1 {
			t.belief[id] = clampP(newsWeight*f + (1-newsWeight)*t.belief[id])
		}
	}
}

// readComments moves beliefs a little toward the estimates other agents
// post, each comment once.
func (t *Trader) readComments(ms []traderMarket) {
	for _, m := range ms {
		for _, v := range m.comments {
			c := MapOf(v)
			agent, text := StrOf(c["agent"]), StrOf(c["text"])
			key := strconv.Itoa(int(NumOf(c["tick"]))) + "|" + agent + "|" + text
			if agent == t.info.AgentID || t.read[key] {
				continue
			}
			t.remember(key)
			if mm := estimateRE.FindStringSubmatch(text); mm != nil {
				if f, err := strconv.ParseFloat(mm[1], 64); err == nil && f > 0 && f < 100 {
					b := t.belief[m.id]
					t.belief[m.id] = clampP(b + commentWeight*(f/100-b))
				}
			}
		}
	}
}

func (t *Trader) remember(key string) {
	if len(t.readOrder) >= maxRead {
		delete(t.read, t.readOrder[0])
		t.readOrder = t.readOrder[1:]
	}
	t.read[key] = true
	t.readOrder = append(t.readOrder, key)
}

// Belief returns the trader's current probability of YES for a market.
func (t *Trader) Belief(marketID string) (float64, bool) {
	b, ok := t.belief[marketID]
	return b, ok
}
