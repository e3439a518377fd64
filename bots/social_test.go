package bots_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/components/social"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

func newSocialBot(id string) *bots.Social {
	return bots.NewSocial(bots.Info{AgentID: id, Seed: 1})
}

// socialObs is an observation with a social section: a position on the park
// and a feed of (id, author, stance, likes, your_vote) posts.
func socialObs(pos float64, following []any, posts ...[5]any) *world.Observation {
	var feed []any
	for _, p := range posts {
		feed = append(feed, map[string]any{"post_id": p[0], "author_id": p[1], "text": "…", "stance": p[2],
			"likes": p[3], "dislikes": 0.0, "reposts": 0.0, "replies": 1.0, "your_vote": p[4], "reposted": false, "thread": []any{}})
	}
	return &world.Observation{AgentID: "me", Alive: true, Components: map[string]world.Section{"social": {
		"text": "feed", "feed": feed, "following": following, "followers": 0.0,
		"beliefs": []any{map[string]any{"topic": "the new park", "position": pos, "confidence": 0.5}},
	}}}
}

func TestSocialBotDecisions(t *testing.T) {
	ctx := context.Background()
	b := newSocialBot("me")
	d := b.Decide(ctx, socialObs(0.7, nil))
	require.Equal(t, "create_post", d.Tool, "it speaks first")
	require.Contains(t, strings.ToLower(d.Params["text"].(string)), "the new park")
	require.Greater(t, social.Sentiment(d.Params["text"].(string)), 0.3, "a supporter's post reads as support")

	obs := socialObs(0.7, []any{},
		[5]any{"p1", "me", 0.9, 0.0, 0.0},  // its own: never voted on
		[5]any{"p2", "a2", 0.0, 0.0, 0.0},  // neutral: no vote
		[5]any{"p3", "a3", -0.8, 0.0, 0.0}, // opposed: dislike
		[5]any{"p4", "a4", 0.8, 0.0, 0.0},  // aligned: like
		[5]any{"p5", "a4", 0.6, 0.0, 0.0},  // aligned: like
		[5]any{"p6", "a5", 0.9, 3.0, 1.0})  // liked and popular: repost
	var got []string
	for i := 0; i < 8; i++ {
		d := b.Decide(ctx, obs)
		got = append(got, fmt.Sprintf("%s %v", d.Tool, d.Params))
		// Reflect the vote in the next observation, as the world would.
		if d.Tool == "vote" {
			for _, e := range obs.Components["social"]["feed"].([]any) {
				if m := e.(map[string]any); m["post_id"] == d.Params["post_id"] {
					m["your_vote"] = float64(d.Params["value"].(int))
				}
			}
		}
		if d.Tool == "repost" {
			obs.Components["social"]["feed"].([]any)[5].(map[string]any)["reposted"] = true
		}
		if d.Tool == "follow" {
			obs.Components["social"]["following"] = append(obs.Components["social"]["following"].([]any), d.Params["agent_id"])
		}
	}
	joined := strings.Join(got, "\n")
	require.Contains(t, joined, "repost map[post_id:p6]")
	require.Contains(t, joined, "vote map[post_id:p3 value:-1]")
	require.Contains(t, joined, "vote map[post_id:p4 value:1]")
	require.Contains(t, joined, "vote map[post_id:p5 value:1]")
	require.Contains(t, joined, "follow map[agent_id:a4]", "two likes for a4: follow")
	require.Contains(t, joined, "follow map[agent_id:a5]", "a liked popular post: follow its author")
	require.Equal(t, 1, strings.Count(joined, "create_post"), "the next post comes a few turns later")
	require.NotContains(t, joined, "p1 value", "no vote on its own post")
	require.NotContains(t, joined, "p2 value", "no opinion on a neutral post")

	require.Equal(t, "idle", b.Decide(ctx, &world.Observation{Alive: true}).Tool, "no social section: the universal idle")
}

// Every phrasing the bot uses reads, to the component's scorer, as the
// stance it means.
func TestSocialBotSaysWhatItMeans(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		pos    float64
		lo, hi float64
	}{{0.9, 0.3, 1}, {0.3, 0.1, 1}, {0, 0, 0}, {-0.3, -1, -0.05}, {-0.9, -1, -0.3}} {
		b := newSocialBot("me")
		for i := 0; i < 30; i++ {
			d := b.Decide(ctx, socialObs(c.pos, nil))
			if d.Tool != "create_post" {
				continue
			}
			s := social.Sentiment(d.Params["text"].(string))
			require.True(t, s >= c.lo && s <= c.hi, "position %g: %q scores %g", c.pos, d.Params["text"], s)
		}
	}
}

func TestSocialBotIsDeterministicAndReadsTheWire(t *testing.T) {
	ctx := context.Background()
	obs := socialObs(-0.5, []any{"a9"}, [5]any{"p1", "a2", -0.7, 1.0, 0.0}, [5]any{"p2", "a3", 0.7, 0.0, 0.0})
	raw, err := cbor.Marshal(obs)
	require.NoError(t, err)
	var wire world.Observation
	require.NoError(t, cbor.Unmarshal(raw, &wire))
	a, b, c := newSocialBot("me"), newSocialBot("me"), newSocialBot("me")
	for i := 0; i < 10; i++ {
		da, db, dc := a.Decide(ctx, obs), b.Decide(ctx, obs), c.Decide(ctx, &wire)
		require.Equal(t, da, db)
		require.Equal(t, fmt.Sprint(da), fmt.Sprint(dc), "in process and off the wire alike")
	}
}

// The social scenario with built-in social bots, as `arena run --scenario
// social` plays it: every call succeeds, the objective is met, beliefs move,
// and a trending post reaches the other agents.
func TestSocialBotsPassTheSocialScenario(t *testing.T) {
	sc, err := scenarios.Load("social")
	require.NoError(t, err)
	for _, agents := range []int{2, sc.Agents.Count, sc.Agents.Max} {
		t.Run(fmt.Sprintf("%d agents", agents), func(t *testing.T) {
			w, err := sc.NewWorld(scenarios.Options{Seed: 1, Agents: agents})
			require.NoError(t, err)
			ctrls, err := eval.Controllers(sc, w)
			require.NoError(t, err)
			start := map[string]float64{}
			for _, a := range w.Agents() {
				start[a.ID], _ = w.Component("social").(world.MetricSource).Metric(w, a.ID, "social.belief_position")
			}
			tools := map[string]int{}
			viral := 0
			r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: sc.TimeLimit(), Record: true, OnTick: func(rec *engine.TickRecord) {
				for _, d := range rec.Decisions {
					require.True(t, d.Result.Success, "tick %d %s %s %v: %s", rec.Tick, d.Agent, d.Tool, d.Params, d.Result.ErrorMessage)
					tools[d.Tool]++
				}
				for _, e := range rec.Events {
					if e.Type == "viral_post" {
						viral++
					}
				}
			}}
			res, err := r.Run(context.Background())
			require.NoError(t, err)
			t.Logf("%d agents: %s after %d ticks, mean score %.2f, calls %v, %d viral", agents, res.Outcome, res.Ticks, res.MeanScore, tools, viral)
			require.True(t, res.Passed)
			require.Equal(t, "objective_met", res.Outcome)
			for _, tool := range []string{"create_post", "vote", "follow"} {
				require.Positive(t, tools[tool], tool)
			}
			if agents >= 6 {
				require.Positive(t, tools["reply"])
				require.Positive(t, tools["repost"])
				require.Positive(t, viral)
			}
			moved := 0
			for _, a := range w.Agents() {
				p, _ := w.Component("social").(world.MetricSource).Metric(w, a.ID, "social.belief_position")
				if p != start[a.ID] {
					moved++
				}
			}
			require.Equal(t, agents, moved, "every agent's belief moved")
		})
	}
}

// What the feed looks like to a language model, mid-debate.
func TestSocialScenarioObservationText(t *testing.T) {
	sc, err := scenarios.Load("social")
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: 1})
	require.NoError(t, err)
	ctrls := map[string]engine.Controller{}
	for _, a := range w.Agents() {
		ctrls[a.ID] = bots.NewSocial(bots.Info{AgentID: a.ID, Seed: 1})
	}
	_, err = (&engine.Runner{World: w, Controllers: ctrls, MaxTicks: 12}).Run(context.Background())
	require.NoError(t, err)
	obs := w.Observe(w.Agent("agent_001"))
	txt := obs.Components["social"]["text"].(string)
	t.Logf("\n%s\n%v\n%s", txt, obs.Events, obs.VariablesText)
	require.Contains(t, txt, "post_id=p1 author_id=agent_")
	require.Contains(t, txt, "On the new park: you are")
	require.Contains(t, obs.VariablesText, "park_budget: 250000")
}

// The same seed gives the same episode, to the state hash.
func TestSocialScenarioIsDeterministic(t *testing.T) {
	sc, err := scenarios.Load("social")
	require.NoError(t, err)
	run := func(seed uint64) string {
		w, err := sc.NewWorld(scenarios.Options{Seed: seed, Agents: 10})
		require.NoError(t, err)
		ctrls := map[string]engine.Controller{}
		for _, a := range w.Agents() {
			b, err := bots.New("social", bots.Info{AgentID: a.ID, Seed: seed})
			require.NoError(t, err)
			ctrls[a.ID] = b
		}
		res, err := (&engine.Runner{World: w, Controllers: ctrls, MaxTicks: sc.TimeLimit()}).Run(context.Background())
		require.NoError(t, err)
		return res.FinalStateHash
	}
	require.Equal(t, run(3), run(3))
	require.NotEqual(t, run(3), run(4))
}
