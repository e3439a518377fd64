package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/sdk"
	"github.com/arena-sim/arena/server"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// townsfolk plays one agent with the built-in townsfolk bot and records what
// it was shown and what it decided. It is an sdk.EpisodeObserver, so it is
// built afresh with the episode's seed; in process it is built directly.
type townsfolk struct {
	info      bots.Info
	bot       *bots.Townsfolk
	digests   map[int][]world.EventView // observation tick → its events
	decisions map[int]world.Decision
}

func newTownsfolk(info bots.Info) *townsfolk {
	return &townsfolk{info: info, bot: bots.NewTownsfolk(info), digests: map[int][]world.EventView{}, decisions: map[int]world.Decision{}}
}

func (c *townsfolk) StartEpisode(_ context.Context, e *sdk.EpisodeStart) {
	info := c.info
	info.Seed = e.Seed
	*c = *newTownsfolk(info)
}

func (c *townsfolk) EndEpisode(context.Context, *sdk.EpisodeEnd) {}

func (c *townsfolk) Decide(ctx context.Context, obs *world.Observation) world.Decision {
	c.digests[obs.Tick] = slices.Clone(obs.Events)
	d := c.bot.Decide(ctx, obs)
	c.decisions[obs.Tick] = d
	return d
}

// playTown connects a townsfolk through the Go SDK and plays until the
// server's last episode ends.
func playTown(t *testing.T, addr string, sc *scenarios.Scenario) (string, *townsfolk) {
	ctx := context.Background()
	c, err := sdk.Connect(ctx, addr, sdk.Options{Name: "townsfolk"})
	if err != nil {
		t.Error(err)
		return "", nil
	}
	defer c.Close()
	w, err := sc.NewWorld(scenarios.Options{Seed: c.Welcome().Seed})
	if err != nil {
		t.Error(err)
		return "", nil
	}
	tf := newTownsfolk(bots.Info{AgentID: c.AgentID(), Bounds: w.Bounds(), Rules: w.Rules()})
	end, err := c.Run(ctx, tf)
	if err != nil {
		t.Error(err)
		return "", nil
	}
	if end.Results == nil {
		t.Error("no results at the end")
	}
	return c.AgentID(), tf
}

// eventKey identifies a bridge event among those of its tick.
func eventKey(tick int, source, typ, agent string, data map[string]any) string {
	key := fmt.Sprintf("%d|%s|%s|%s", tick, source, typ, agent)
	for _, k := range []string{"metric", "market_id", "post_id", "to", "policy", "text"} {
		if s, ok := data[k].(string); ok {
			key += "|" + k + "=" + s
		}
	}
	return key
}

// wantText is what the digest line of an event must say, from its fields.
func wantText(e world.Event) []string {
	str := func(k string) string { s, _ := e.Data[k].(string); return s }
	switch e.Source + "/" + e.Type {
	case "scheduled/news", "scheduled/resolve_market":
		return []string{"[Scheduled] " + str("text")}
	case "social/viral_post":
		return []string{"[Social] Trending: ", "by " + e.Agent, "(post_id=" + str("post_id") + ","}
	case "economy/metric_change":
		return []string{"[Economy] " + str("metric") + " "}
	case "economy/policy_change":
		return []string{"[Policy] " + e.Agent + " enacted " + str("policy")}
	case "economy/transfer":
		return []string{"[Economy] " + e.Agent + " sent you "}
	case "economy/economic_shock":
		return []string{"[Economy] Shock in round "}
	case "market/price_move", "market/market_resolved":
		return []string{"[Market] " + str("question"), "[" + str("market_id") + "]"}
	}
	return []string{"[" + e.Source + "]"}
}

// TestTownSquareOverIPC serves town_square on a Unix socket, in lockstep,
// to six remote agents that each run the built-in townsfolk bot through the
// Go SDK, and checks that:
//
//   - the episode's results equal an in-process run with the same seed (the
//     protocol changes nothing), and every agent was shown the same digests;
//   - every event a component or the schedule published at tick T reaches
//     every other agent allowed to see it in its observation of tick T+1,
//     once, with a digest line made from the event's fields; never the
//     agent that caused it (a post that went viral, a policy enacted), and
//     scheduled events reach everyone;
//   - the agents act on them: each one tells the town the news it heard.
func TestTownSquareOverIPC(t *testing.T) {
	const seed, secret, ticks = 1, 5, 200
	sc, err := scenarios.Load("town_square")
	require.NoError(t, err)
	addr, done, _ := startScenario(t, sc, server.Options{Seed: seed, SecretSeed: secret, Ticks: ticks, DecisionTimeout: 10 * time.Second})

	n := sc.Agents.Count
	remote := map[string]*townsfolk{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, tf := playTown(t, addr, sc)
			mu.Lock()
			remote[id] = tf
			mu.Unlock()
		}()
	}
	var res *engine.Results
	select {
	case res = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the episode did not finish")
	}
	require.NotNil(t, res)
	wg.Wait()
	require.Len(t, remote, n)
	require.Equal(t, ticks, res.Ticks)
	require.Equal(t, "time_limit", res.EndReason)

	// The same episode in process, with the event log.
	w, err := sc.NewWorld(scenarios.Options{Seed: engine.EpisodeSeed(seed, 1), SecretSeed: secret, Ticks: ticks})
	require.NoError(t, err)
	local := map[string]*townsfolk{}
	ctrls := map[string]engine.Controller{}
	for _, a := range w.Agents() {
		local[a.ID] = newTownsfolk(bots.Info{AgentID: a.ID, Seed: engine.AgentSeed(w.Seed(), a.ID), Bounds: w.Bounds(), Rules: w.Rules()})
		ctrls[a.ID] = local[a.ID]
	}
	var published []world.Event
	r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: w.Objective().TimeLimit, OnTick: func(rec *engine.TickRecord) {
		for _, e := range rec.Events {
			if e.Source != "world" {
				published = append(published, e)
			}
		}
	}}
	want, err := r.Run(context.Background())
	require.NoError(t, err)
	require.Equal(t, want.FinalStateHash, res.FinalStateHash, "the protocol changes nothing")
	require.Equal(t, want.Agents, res.Agents)

	ids := make([]string, 0, n)
	for _, a := range w.Agents() {
		ids = append(ids, a.ID)
		require.Contains(t, remote, a.ID)
		for tick := 0; tick < ticks; tick++ {
			got, exp := remote[a.ID].digests[tick], local[a.ID].digests[tick]
			require.Equal(t, len(exp), len(got), "%s at tick %d", a.ID, tick)
			for i := range exp {
				require.Equal(t, [4]any{exp[i].Tick, exp[i].Source, exp[i].Type, exp[i].Text}, [4]any{got[i].Tick, got[i].Source, got[i].Type, got[i].Text},
					"%s at tick %d: the digest is the same over the socket", a.ID, tick)
			}
		}
	}

	// Where each event reached, as the remote agents saw it.
	type sighting struct {
		agent string
		tick  int // the observation's
		text  string
	}
	seen := map[string][]sighting{}
	for id, tf := range remote {
		for tick, evs := range tf.digests {
			require.LessOrEqual(t, len(evs), 20)
			for _, v := range evs {
				k := eventKey(v.Tick, v.Source, v.Type, v.Agent, v.Data)
				seen[k] = append(seen[k], sighting{id, tick, v.Text})
			}
		}
	}
	checked := map[string]int{}
	notToCauser := 0
	for _, e := range published {
		if e.Tick >= ticks-1 {
			continue // no observation after the last tick
		}
		k := eventKey(e.Tick, e.Source, e.Type, e.Agent, e.Data)
		var got []string
		for _, s := range seen[k] {
			require.Equal(t, e.Tick+1, s.tick, "%s reached %s at tick %d, not in the next round", k, s.agent, s.tick)
			for _, part := range wantText(e) {
				require.Contains(t, s.text, part, "%s: digest line %q", k, s.text)
			}
			got = append(got, s.agent)
		}
		slices.Sort(got)
		var exp []string
		for _, id := range ids {
			if id != e.Agent && e.VisibleTo(id) {
				exp = append(exp, id)
			}
		}
		require.Equal(t, exp, got, "%s reaches every other agent allowed to see it, once", k)
		if e.Agent != "" && len(e.To) == 0 {
			notToCauser++
		}
		if e.Source == "scheduled" {
			require.Len(t, got, n, "%s reaches everyone", k)
		}
		checked[e.Source+"/"+e.Type]++
	}
	t.Logf("events checked: %v", checked)
	for _, typ := range []string{"scheduled/news", "social/viral_post", "economy/policy_change", "economy/metric_change", "market/price_move", "market/market_resolved",
		"economy/economic_shock", "economy/transfer", "scheduled/resolve_market"} {
		require.Positive(t, checked[typ], "no %s in %d ticks", typ, ticks)
	}
	require.Positive(t, notToCauser, "events caused by an agent were checked")

	// The agents act on what they hear: each tells the town the weather
	// news of tick 60, from its digest of tick 61.
	for id, tf := range remote {
		told := -1
		for tick := 61; tick < ticks && told < 0; tick++ {
			d := tf.decisions[tick]
			if text, _ := d.Params["text"].(string); d.Tool == "create_post" && strings.HasPrefix(text, "Heard the news: The weather service") {
				told = tick
			}
		}
		require.GreaterOrEqual(t, told, 61, "%s never told the weather news", id)
	}
}
