package bots

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/arena-sim/arena/world"
)

// Townsfolk ("townsfolk" kind) lives in a world that mixes the spatial game
// with the social feed, the prediction market and the economy (the
// town_square scenario). It composes the other built-in bots rather than
// repeating them: a Crafter and a Forager move its body, a Social bot, a
// Trader and an Economist act in the components, and every tick one of them
// makes the one decision. Each sub-bot is built with the same Info.
//
// The body comes first. The Forager moves it, but the Crafter leads while
// the objective's crafted items are still to make, once the agent carries
// their raw materials or has collected 6 resources (it then fetches what is
// missing), and while it crafts; foraging first spreads the agents' visits
// to the workbench and usually brings the materials in on the way. When the
// body bot has something to do (flee a hazard, collect, craft, start a walk
// or a scan) that is the decision; while the Crafter walks, the townsfolk
// also picks up any resource in reach. When the body bot would idle
// (walking on, crafting, waiting for a station), component tools do not
// stop a move or a craft, so the tick is free, and the first of these that
// applies takes it:
//
//  1. the Economist, once per economic round (it acts by role; a round it
//     has nothing to do is passed over);
//  2. the Trader, when news about a market arrived (a bridge event naming a
//     market), when its belief about a market differs from the price by its
//     edge or more, and every 12 to 18 ticks otherwise (it trades only on
//     an edge, and comments its estimate now and then);
//  3. a post of the townsfolk's own, at least 15 ticks after its last one:
//     the scheduled news it saw in its digest, a crafted item, or the
//     resources it has brought in (every 3 more);
//  4. the Social bot, every 4 to 6 ticks (it posts its stance on the topic,
//     votes, follows, reposts and replies);
//  5. otherwise the body's idle.
//
// A component sub-bot that passes (do_nothing) gives the tick to the next.
//
// The sub-bots were written to decide every tick; as parts they do not, so
// the townsfolk hands each one what it would have seen:
//
//   - events: the digest shows a bridge event once, in the observation after
//     it happened. Each component sub-bot gets every event since it last
//     decided (at most the 64 newest), so the Trader still reads the news,
//     the Social bot trending posts and the Economist a shock that came
//     while another sub-bot had the tick;
//   - results: last_action_result is the result of the last decision,
//     whoever made it. Each sub-bot is shown its own newest result instead,
//     so the Trader counts its trades and skips a market whose trade just
//     failed, and a failed post is never taken for a failed walk by the
//     Forager (which would give up the resource it walks to). The body bots
//     remember failures they already handled, so seeing one again is
//     harmless;
//   - moves: the Forager and the Crafter each remember the walk they
//     started. When the body passes from one to the other, the walk under
//     way is the other's, so the new one forgets its own and picks a target
//     afresh.
//
// Everything follows from the observations and the seed: the same
// observations give the same decisions, in process and off the wire alike.
type Townsfolk struct {
	info      Info
	forager   *Forager
	crafter   *Crafter
	social    *Social
	trader    *Trader
	economist *Economist

	lastBy   string                         // the sub-bot that made the last decision ("town" for own posts)
	lastTick int                            // the observation tick of that decision
	results  map[string]*world.ActionResult // each sub-bot's newest result
	pending  map[string][]world.EventView   // each component sub-bot's events since it last decided
	bodyBy   string                         // the body bot that started the move or craft under way

	econRound   int // the last economic round the Economist was asked about
	nextTrade   int // tick of the next routine look at the markets
	tradeEvery  int
	nextSocial  int // tick of the next turn of the Social bot
	socialEvery int
	lastPost    int // tick of the townsfolk's own last post
	postedAt    int // resources collected when it last posted about them
	crafted     map[string]float64
	news        []string // scheduled news not yet posted about
}

// How the townsfolk shares its ticks.
const (
	townCraftAfter   = 6  // resources collected before the Crafter fetches what is missing
	townPostGap      = 15 // ticks between the townsfolk's own posts
	townPostEvery    = 3  // more resources collected that are worth a post
	townPendingMax   = 64 // events kept for a sub-bot that has not decided
	townNewsMax      = 8  // news items waiting for a post
	townNewsChars    = 180
	townSubForager   = "forager"
	townSubCrafter   = "crafter"
	townSubSocial    = "social"
	townSubTrader    = "trader"
	townSubEconomist = "economist"
	townSubOwn       = "town"
)

// NewTownsfolk creates a townsfolk for one agent, with its sub-bots.
func NewTownsfolk(info Info) *Townsfolk {
	rng := rand.New(rand.NewPCG(world.DeriveSeed(info.Seed, "bot:"+info.AgentID), 13))
	t := &Townsfolk{info: info, forager: NewForager(info), crafter: NewCrafter(info), social: NewSocial(info),
		trader: NewTrader(info), economist: NewEconomist(info),
		lastTick: -1, results: map[string]*world.ActionResult{}, pending: map[string][]world.EventView{},
		econRound: -1, lastPost: -townPostGap, crafted: map[string]float64{}}
	t.tradeEvery = 12 + rng.IntN(7)
	t.socialEvery = 4 + rng.IntN(3)
	t.nextTrade = 5 + rng.IntN(t.tradeEvery)
	t.nextSocial = rng.IntN(t.socialEvery)
	return t
}

// Decide implements Bot.
func (t *Townsfolk) Decide(ctx context.Context, obs *world.Observation) world.Decision {
	if !obs.Alive {
		return world.Idle("dead")
	}
	t.takeResult(obs)
	t.takeEvents(obs)

	// The body first.
	body := t.bodyBot(obs)
	d := t.ask(ctx, body, obs)
	if d.Tool != "idle" {
		return t.decided(body, obs, d)
	}
	bodyIdle := d
	if body == townSubCrafter {
		// The Crafter gathers only what its recipes need; on the way the
		// townsfolk picks up anything else in reach (a collect does not stop
		// the walk).
		if d, ok := t.pickUp(obs); ok {
			return t.decided(townSubOwn, obs, d)
		}
	}

	// A free tick: the components, in turn.
	if sec := SectionOf(obs, "economy"); sec != nil {
		if round := int(NumOf(sec["round"])); round != t.econRound {
			t.econRound = round
			if d := t.ask(ctx, townSubEconomist, obs); acts(d) {
				return t.decided(townSubEconomist, obs, d)
			}
		}
	}
	if sec := SectionOf(obs, "market"); sec != nil && (t.marketNews() || t.beliefDiffers(sec) || obs.Tick >= t.nextTrade) {
		t.nextTrade = obs.Tick + t.tradeEvery
		if d := t.ask(ctx, townSubTrader, obs); acts(d) {
			return t.decided(townSubTrader, obs, d)
		}
	}
	if SectionOf(obs, "social") != nil {
		if d, ok := t.ownPost(obs); ok {
			return t.decided(townSubOwn, obs, d)
		}
		if obs.Tick >= t.nextSocial {
			t.nextSocial = obs.Tick + t.socialEvery
			if d := t.ask(ctx, townSubSocial, obs); acts(d) {
				return t.decided(townSubSocial, obs, d)
			}
		}
	}
	return t.decided(body, obs, bodyIdle)
}

// acts reports whether a component sub-bot's decision does something.
func acts(d world.Decision) bool { return d.Tool != "" && d.Tool != "do_nothing" && d.Tool != "idle" }

// decided records who made the decision.
func (t *Townsfolk) decided(by string, obs *world.Observation, d world.Decision) world.Decision {
	t.lastBy, t.lastTick = by, obs.Tick
	if by == townSubForager || by == townSubCrafter {
		switch d.Tool {
		case "move_to", "collect", "craft":
			t.bodyBy = by
		}
	}
	if by != townSubOwn {
		d.Reasoning = by + ": " + d.Reasoning
	}
	return d
}

// takeResult gives the last decision's result to the sub-bot that made it.
func (t *Townsfolk) takeResult(obs *world.Observation) {
	r := obs.LastActionResult
	if r == nil || t.lastBy == "" || r.Tick != t.lastTick {
		return
	}
	own := *r
	t.results[t.lastBy] = &own
}

// takeEvents keeps the digest for every component sub-bot, and the
// scheduled news for a post.
func (t *Townsfolk) takeEvents(obs *world.Observation) {
	if len(obs.Events) == 0 {
		return
	}
	for _, name := range []string{townSubSocial, townSubTrader, townSubEconomist} {
		p := append(t.pending[name], obs.Events...)
		if len(p) > townPendingMax {
			p = append(p[:0:0], p[len(p)-townPendingMax:]...)
		}
		t.pending[name] = p
	}
	for _, e := range obs.Events {
		if e.Source != "scheduled" || e.Type != "news" {
			continue
		}
		text := StrOf(e.Data["text"])
		if text == "" {
			text = strings.TrimPrefix(e.Text, "[Scheduled] ")
		}
		if text != "" && len(t.news) < townNewsMax {
			t.news = append(t.news, text)
		}
	}
}

// marketNews reports whether an event about a market (news naming one, a
// price move, a resolution) came since the Trader last decided.
func (t *Townsfolk) marketNews() bool {
	for _, e := range t.pending[townSubTrader] {
		if StrOf(e.Data["market_id"]) != "" {
			return true
		}
	}
	return false
}

// beliefDiffers reports whether the Trader's belief about an open market
// differs from its price by its edge or more.
func (t *Townsfolk) beliefDiffers(sec map[string]any) bool {
	for _, v := range ListOf(sec["markets"]) {
		m := MapOf(v)
		if m == nil || m["resolved"] == true {
			continue
		}
		if b, ok := t.trader.Belief(StrOf(m["market_id"])); ok && math.Abs(b-NumOf(m["price_yes"])) >= t.trader.edge {
			return true
		}
	}
	return false
}

// bodyBot chooses the body's bot: the Forager, but the Crafter while the
// objective's items are still to make and either it carries every raw
// material they need or it has collected townCraftAfter resources (then it
// fetches what is missing), and while it crafts.
func (t *Townsfolk) bodyBot(obs *world.Observation) string {
	if obs.CurrentAction.Status == "crafting" && t.bodyBy == townSubCrafter {
		return townSubCrafter
	}
	p := makeCraftPlan(t.crafter.goals(obs), obs.AvailableRecipes, obs.Inventory)
	if len(p.steps) > 0 && (len(p.raw) == 0 || collected(obs) >= townCraftAfter) {
		return townSubCrafter
	}
	return townSubForager
}

// ask lets one sub-bot decide on the observation as it would have seen it:
// its own last result and the events since it last decided.
func (t *Townsfolk) ask(ctx context.Context, name string, obs *world.Observation) world.Decision {
	view := *obs
	view.LastActionResult = t.results[name]
	switch name {
	case townSubForager:
		if t.bodyBy != name {
			t.forager.moving = false // the walk under way is not its own
		}
		return t.forager.Decide(ctx, &view)
	case townSubCrafter:
		if t.bodyBy != name {
			t.crafter.moving = false
		}
		return t.crafter.Decide(ctx, &view)
	}
	view.Events = t.pending[name]
	t.pending[name] = nil
	switch name {
	case townSubSocial:
		return t.social.Decide(ctx, &view)
	case townSubTrader:
		return t.trader.Decide(ctx, &view)
	case townSubEconomist:
		return t.economist.Decide(ctx, &view)
	}
	return world.Idle("no such part")
}

// pickUp collects a resource within reach, if there is room for it.
func (t *Townsfolk) pickUp(obs *world.Observation) (world.Decision, bool) {
	if obs.InventoryUsed >= obs.InventoryCap || obs.CurrentAction.Status == "crafting" {
		return world.Decision{}, false
	}
	for i := range obs.NearbyResources {
		r := &obs.NearbyResources[i]
		if r.Distance < t.info.Rules.CollectRange-0.05 {
			return world.Decision{Tool: "collect", Params: map[string]any{"target_name": r.Name},
				Reasoning: fmt.Sprintf("picking up %s (%s) on the way, %.1f away", r.Name, r.ResourceType, r.Distance)}, true
		}
	}
	return world.Decision{}, false
}

// ownPost is a post of the townsfolk's own, when it has something to tell:
// the news it heard, an item it made, or the resources it brought in.
func (t *Townsfolk) ownPost(obs *world.Observation) (world.Decision, bool) {
	if obs.Tick < t.lastPost+townPostGap {
		return world.Decision{}, false
	}
	post := func(text, why string) (world.Decision, bool) {
		t.lastPost = obs.Tick
		return world.Decision{Tool: "create_post", Params: map[string]any{"text": text}, Reasoning: why}, true
	}
	if len(t.news) > 0 {
		n := t.news[0]
		t.news = t.news[1:]
		if r := []rune(n); len(r) > townNewsChars {
			n = strings.TrimSpace(string(r[:townNewsChars])) + "…"
		}
		return post("Heard the news: "+n+" What does everyone make of it?", "telling the town the news from my digest")
	}
	for _, k := range slices.Sorted(maps.Keys(obs.CurrentProgress)) {
		item, ok := strings.CutPrefix(k, "crafted.")
		if !ok || obs.CurrentProgress[k] <= t.crafted[item] {
			continue
		}
		t.crafted[item] = obs.CurrentProgress[k]
		return post(fmt.Sprintf("Made a %s at the workbench for the harvest festival. Happy to help!", item),
			fmt.Sprintf("I crafted a %s", item))
	}
	got := collected(obs)
	if got >= t.postedAt+townPostEvery {
		t.postedAt = got
		text := fmt.Sprintf("I have brought in %s for the harvest so far", countNoun(got, "resource"))
		if basket := basketText(obs.Inventory); basket != "" {
			text += "; my basket holds " + basket
		}
		return post(text+". Good work, everyone!", fmt.Sprintf("sharing my harvest: %d collected", got))
	}
	return world.Decision{}, false
}

// collected is how many resources the agent has collected: the objective's
// resources_collected when it has one, else the items it carries.
func collected(obs *world.Observation) int {
	if v, ok := obs.CurrentProgress["resources_collected"]; ok {
		return int(v)
	}
	n := 0
	for _, c := range obs.Inventory {
		n += c
	}
	return n
}

// basketText lists the inventory, "3 berry, 1 wood", by name.
func basketText(inv map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(inv)) {
		if inv[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", inv[k], k))
		}
	}
	return strings.Join(parts, ", ")
}
