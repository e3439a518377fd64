package bots_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

func newTownsfolk(id string) *bots.Townsfolk {
	return bots.NewTownsfolk(bots.Info{AgentID: id, Seed: 1,
		Bounds: world.Bounds{MinX: -25, MinZ: -25, MaxX: 25, MaxZ: 25},
		Rules:  world.Rules{PerceptionRadius: 10, CollectRange: 2, AgentRadius: 0.4}})
}

// townObs is an observation of agent a1 at tick, with no recipes (so the
// Forager moves the body) and the given component sections.
func townObs(tick int, status string, sections map[string]world.Section) *world.Observation {
	obs := baseObs()
	obs.Tick = tick
	obs.CurrentAction.Status = status
	obs.NearbyResources = []world.EntityView{{Name: "Far", Type: "resource", ResourceType: "berry", Position: world.Vec3{8, 0, 0}, Distance: 8}}
	obs.Components = sections
	return obs
}

// firmSection is the economy section of a firm that has not priced its goods
// yet, in round.
func firmSection(round int) world.Section {
	return econObs(round, "firm", nil, nil).Components["economy"]
}

func TestTownsfolkLetsTheBodyActFirst(t *testing.T) {
	ctx := context.Background()
	tf := newTownsfolk("a1")
	obs := townObs(0, "idle", map[string]world.Section{"economy": firmSection(1)})
	obs.NearbyResources = append(obs.NearbyResources, world.EntityView{Name: "Near", Type: "resource", ResourceType: "berry", Position: world.Vec3{1, 0, 1}, Distance: 1.41})
	d := tf.Decide(ctx, obs)
	require.Equal(t, "collect", d.Tool, "a resource in reach comes before the shop")
	require.True(t, strings.HasPrefix(d.Reasoning, "forager: "), d.Reasoning)

	// Walking on, the tick is free: the firm prices its goods, once a round.
	obs = townObs(1, "moving", map[string]world.Section{"economy": firmSection(1)})
	tf = newTownsfolk("a1")
	require.Equal(t, "move_to", tf.Decide(ctx, townObs(0, "idle", map[string]world.Section{"economy": firmSection(1)})).Tool)
	d = tf.Decide(ctx, obs)
	require.Equal(t, "set_price", d.Tool)
	require.True(t, strings.HasPrefix(d.Reasoning, "economist: "), d.Reasoning)
	obs = townObs(2, "moving", map[string]world.Section{"economy": firmSection(1)})
	d = tf.Decide(ctx, obs)
	require.Equal(t, "idle", d.Tool, "the economist was asked this round already; the walk goes on")
	require.Equal(t, "forager: walking to the chosen resource", d.Reasoning)
	obs = townObs(3, "moving", map[string]world.Section{"economy": firmSection(2)})
	require.Equal(t, "economist: ", tf.Decide(ctx, obs).Reasoning[:11], "a new round")
}

// A failed component call shows as the last action result. The Forager
// alone would take it for its own failure and give up the resource it walks
// to; the townsfolk shows each part only its own results.
func TestTownsfolkShowsEachPartItsOwnResults(t *testing.T) {
	ctx := context.Background()
	sections := func(round int) map[string]world.Section {
		return map[string]world.Section{"economy": firmSection(round)}
	}
	failed := &world.ActionResult{Tool: "set_price", Success: false, ErrorCode: world.CodeNotAllowed, ErrorMessage: "set_price is for firm actors", Tick: 1}

	f := newForager()
	require.Equal(t, "move_to", f.Decide(ctx, townObs(0, "idle", nil)).Tool)
	obs := townObs(2, "moving", nil)
	obs.LastActionResult = failed
	d := f.Decide(ctx, obs)
	require.Equal(t, "move_to", d.Tool, "on its own the forager reacts to a failure that is not its own")

	tf := newTownsfolk("a1")
	require.Equal(t, "move_to", tf.Decide(ctx, townObs(0, "idle", sections(1))).Tool)
	require.Equal(t, "set_price", tf.Decide(ctx, townObs(1, "moving", sections(1))).Tool)
	obs = townObs(2, "moving", sections(1))
	obs.LastActionResult = failed
	d = tf.Decide(ctx, obs)
	require.Equal(t, "idle", d.Tool)
	require.Equal(t, "forager: walking to the chosen resource", d.Reasoning, "the walk goes on")
}

var estimate = regexp.MustCompile(`I estimate YES at (\d+)%`)

// News that arrives while the body is busy reaches the Trader at its next
// turn: the digest shows it once, and the townsfolk keeps it for the Trader.
func TestTownsfolkKeepsTheNewsForTheTrader(t *testing.T) {
	ctx := context.Background()
	news := world.EventView{Tick: 0, Source: "scheduled", Type: "news", Text: "[Scheduled] Rain is nearly certain.",
		Data: map[string]any{"market_id": "rain", "probability": 0.9, "text": "Rain is nearly certain."}}
	market := func() map[string]world.Section {
		return map[string]world.Section{"market": marketObs(0, 1000, marketEntry("rain", 0.5, 0, 0)).Components["market"]}
	}
	// The first trade's estimate, with the news shown at tick 1 while the
	// body collects, or without it.
	firstEstimate := func(withNews bool) int {
		tf := newTownsfolk("a1")
		obs := townObs(1, "idle", market())
		obs.NearbyResources = append(obs.NearbyResources, world.EntityView{Name: "Near", Type: "resource", ResourceType: "berry", Position: world.Vec3{1, 0, 1}, Distance: 1.41})
		if withNews {
			obs.Events = []world.EventView{news}
		}
		require.Equal(t, "collect", tf.Decide(ctx, obs).Tool)
		for tick := 2; tick < 80; tick++ {
			d := tf.Decide(ctx, townObs(tick, "moving", market()))
			if d.Tool == "buy_shares" {
				m := estimate.FindStringSubmatch(d.Reasoning)
				require.NotNil(t, m, d.Reasoning)
				n, _ := strconv.Atoi(m[1])
				return n
			}
		}
		t.Fatal("the trader never traded")
		return 0
	}
	with, without := firstEstimate(true), firstEstimate(false)
	require.GreaterOrEqual(t, with, 74, "75%% of the way to the news' 90%%")
	require.NotEqual(t, with, without)
}

func TestTownsfolkPostsWhatItHeardAndGathered(t *testing.T) {
	ctx := context.Background()
	tf := newTownsfolk("a1")
	social := func() map[string]world.Section {
		return map[string]world.Section{"social": socialObs(0.3, nil).Components["social"]}
	}
	require.Equal(t, "move_to", tf.Decide(ctx, townObs(0, "idle", social())).Tool)
	obs := townObs(1, "moving", social())
	obs.Events = []world.EventView{{Tick: 0, Source: "scheduled", Type: "news", Text: "[Scheduled] The mill reopens.", Data: map[string]any{"text": "The mill reopens."}}}
	obs.CurrentProgress = map[string]float64{"resources_collected": 4}
	obs.Inventory = map[string]int{"berry": 3, "wood": 1}
	d := tf.Decide(ctx, obs)
	require.Equal(t, "create_post", d.Tool)
	require.Equal(t, "Heard the news: The mill reopens. What does everyone make of it?", d.Params["text"])
	var posts []string
	for tick := 2; tick < 40; tick++ {
		obs := townObs(tick, "moving", social())
		obs.CurrentProgress = map[string]float64{"resources_collected": 4}
		obs.Inventory = map[string]int{"berry": 3, "wood": 1}
		if d := tf.Decide(ctx, obs); d.Tool == "create_post" && !strings.HasPrefix(d.Reasoning, "social: ") {
			posts = append(posts, fmt.Sprintf("%d %s", tick, d.Params["text"]))
		}
	}
	require.Equal(t, []string{"16 I have brought in 4 resources for the harvest so far; my basket holds 3 berry, 1 wood. Good work, everyone!"}, posts,
		"its own posts are 15 ticks apart, and the harvest is told once per 3 more resources")
}

func TestNewKnowsTheTownsfolk(t *testing.T) {
	b, err := bots.New("townsfolk", bots.Info{AgentID: "a1", Seed: 1})
	require.NoError(t, err)
	require.IsType(t, &bots.Townsfolk{}, b)
	require.Contains(t, bots.Kinds(), "townsfolk")
}

// twin plays one agent twice, from the observation in process and from the
// same observation after a CBOR round trip, and requires the same decision.
type twin struct {
	t        *testing.T
	local    *bots.Townsfolk
	remote   *bots.Townsfolk
	compared *int
}

func (tw twin) Decide(ctx context.Context, obs *world.Observation) world.Decision {
	raw, err := cbor.Marshal(obs)
	require.NoError(tw.t, err)
	var wire world.Observation
	require.NoError(tw.t, cbor.Unmarshal(raw, &wire))
	d := tw.local.Decide(ctx, obs)
	require.Equal(tw.t, fmt.Sprint(d), fmt.Sprint(tw.remote.Decide(ctx, &wire)), "%s at tick %d", obs.AgentID, obs.Tick)
	*tw.compared++
	return d
}

func TestTownsfolkDecidesAlikeOffTheWire(t *testing.T) {
	sc, err := scenarios.Load("town_square")
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: 1, Ticks: 200})
	require.NoError(t, err)
	compared := 0
	ctrls := map[string]engine.Controller{}
	for _, a := range w.Agents() {
		info := bots.Info{AgentID: a.ID, Seed: w.Seed(), Bounds: w.Bounds(), Rules: w.Rules()}
		ctrls[a.ID] = twin{t: t, local: bots.NewTownsfolk(info), remote: bots.NewTownsfolk(info), compared: &compared}
	}
	_, err = (&engine.Runner{World: w, Controllers: ctrls, MaxTicks: 200}).Run(context.Background())
	require.NoError(t, err)
	require.Equal(t, 200*len(w.Agents()), compared)
}

// The town_square scenario as `arena run --scenario town_square --seed 1`
// plays it: every agent passes, and every part of the town is used.
func TestTownsfolkPassTheTownSquare(t *testing.T) {
	sc, err := scenarios.Load("town_square")
	require.NoError(t, err)
	require.Equal(t, "townsfolk", sc.Agents.Bot)
	run := func() (*engine.Results, map[string]int, map[string]int) {
		events, tools := map[string]int{}, map[string]int{}
		w, err := sc.NewWorld(scenarios.Options{Seed: engine.EpisodeSeed(1, 1)})
		require.NoError(t, err)
		ctrls, err := eval.Controllers(sc, w)
		require.NoError(t, err)
		r := &engine.Runner{World: w, Controllers: ctrls, Record: true, OnTick: func(rec *engine.TickRecord) {
			for _, e := range rec.Events {
				events[e.Source+"/"+e.Type]++
			}
			for _, d := range rec.Decisions {
				if d.Result.Success {
					tools[d.Tool]++
				}
			}
		}}
		res, err := r.Run(context.Background())
		require.NoError(t, err)
		return res, events, tools
	}
	res, events, tools := run()
	t.Logf("%s after %d ticks, mean score %.2f", res.Outcome, res.Ticks, res.MeanScore)
	require.True(t, res.Passed, "%+v", res.Agents)
	require.Equal(t, "objective_met", res.Outcome)
	require.Equal(t, 300, res.Ticks, "the episode ends when the fair market resolves at the end of tick 299")
	for _, e := range []string{"scheduled/news", "scheduled/resolve_market", "social/viral_post", "market/price_move", "market/market_resolved",
		"economy/metric_change", "economy/policy_change", "economy/economic_shock", "world/resource_collected"} {
		require.Positive(t, events[e], "no %s", e)
	}
	for _, tool := range []string{"move_to", "collect", "craft", "create_post", "vote", "follow", "repost", "reply",
		"buy_shares", "sell_shares", "comment_on_market", "set_price", "hire", "invest", "allocate", "apply_policy"} {
		require.Positive(t, tools[tool], "no successful %s", tool)
	}
	again, err := eval.Episode(context.Background(), eval.Config{Scenario: sc, Seed: 1}, 1, nil)
	require.NoError(t, err)
	require.Equal(t, res.FinalStateHash, again.FinalStateHash, "townsfolk are deterministic")
	require.Equal(t, res.Agents, again.Agents)
}
