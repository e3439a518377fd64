package social

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// env is a small world with n agents (a1, a2, ...) and the social component.
type env struct {
	t   *testing.T
	w   *world.World
	reg *tools.Registry
	s   *Social
}

func newEnv(t *testing.T, n int, config string) *env {
	t.Helper()
	s, err := New([]byte(config))
	require.NoError(t, err)
	w, reg := testutil.ComponentWorld(t, n, s, nil)
	return &env{t: t, w: w, reg: reg, s: s}
}

// do runs a tool call as a decision and returns its result.
func (e *env) do(agent, tool string, params map[string]any) world.ActionResult {
	e.t.Helper()
	return e.reg.Execute(e.w, agent, tool, params, false)
}

// ok runs a call that must succeed.
func (e *env) ok(agent, tool string, params map[string]any) world.ActionResult {
	e.t.Helper()
	res := e.do(agent, tool, params)
	require.True(e.t, res.Success, "%s %v: %+v", tool, params, res)
	return res
}

func (e *env) post(agent, text string) string {
	e.t.Helper()
	return e.ok(agent, "create_post", map[string]any{"text": text}).Data["post_id"].(string)
}

func (e *env) like(agent, id string) { e.ok(agent, "vote", map[string]any{"post_id": id, "value": 1}) }

// round ends the current round (one tick with the default round_ticks).
func (e *env) round() { e.w.Step() }

func (e *env) feed(agent string) []string {
	var ids []string
	for _, f := range e.w.Observe(e.w.Agent(agent)).Components["social"]["feed"].([]any) {
		ids = append(ids, f.(map[string]any)["post_id"].(string))
	}
	return ids
}

func (e *env) text(agent string) string {
	return e.w.Observe(e.w.Agent(agent)).Components["social"]["text"].(string)
}

// The feed's worked example: at M=2 with nothing followed, a new round-2 post
// with no likes scores 0.45; a round-0 post scores 0.427 with one like and
// 0.589 with two, so it needs two likes to beat the new one.
func TestFeedWorkedExample(t *testing.T) {
	e := newEnv(t, 3, "")
	old := e.post("a1", "An old post")
	e.round()
	e.round()
	require.Equal(t, 2, e.s.round)
	fresh := e.post("a2", "A new post")
	e.like("a3", old)
	e.round()
	require.InDelta(t, 0.45, e.s.score(1, false), 1e-12)
	require.InDelta(t, 0.427, e.s.score(0, false), 5e-4)
	require.InDelta(t, 0.4*math.Log(2)+0.15, e.s.score(0, false), 1e-12)
	require.Equal(t, []string{fresh, old}, e.feed("a3"), "one like is not enough")
	e.like("a2", old)
	e.round()
	require.InDelta(t, 0.589, e.s.score(0, false), 5e-4)
	require.Equal(t, []string{old, fresh}, e.feed("a3"), "two likes beat the new post")

	// Following the new post's author adds 0.3·(1 − 0.5) = 0.15 to it.
	e.ok("a3", "follow", map[string]any{"agent_id": "a2"})
	e.round()
	require.InDelta(t, 0.6, e.s.score(1, true), 1e-12)
	require.Equal(t, []string{fresh, old}, e.feed("a3"))
	require.Equal(t, []string{old, fresh}, e.feed("a1"), "a1 follows no one")
}

func TestFeedShowsIDsRepliesAndCounts(t *testing.T) {
	e := newEnv(t, 3, "")
	p := e.post("a1", "Hello all")
	r := e.ok("a2", "reply", map[string]any{"post_id": p, "text": "Hi a1"}).Data["post_id"].(string)
	e.like("a2", p)
	e.round()
	txt := e.text("a3")
	require.Contains(t, txt, "post_id="+p+" author_id=a1: Hello all (likes 1, dislikes 0, reposts 0, replies 1)")
	require.Contains(t, txt, "  -> post_id="+r+" author_id=a2: Hi a1")
	require.Contains(t, e.text("a1"), "post_id="+p+" author_id=a1 [you]")
	require.Contains(t, e.text("a2"), "[you liked]")

	// Up to three replies each; replies to replies join the thread.
	for i := 0; i < 4; i++ {
		e.ok("a3", "reply", map[string]any{"post_id": r, "text": fmt.Sprintf("reply %d", i)})
	}
	e.round()
	obs := e.w.Observe(e.w.Agent("a3")).Components["social"]
	entry := obs["feed"].([]any)[0].(map[string]any)
	require.Equal(t, 5.0, entry["replies"])
	require.Len(t, entry["thread"], 3)
	require.Contains(t, obs["text"], "(2 more replies)")
	require.Len(t, e.feed("a3"), 1, "replies are not ranked as posts")
}

func TestEmptyFeed(t *testing.T) {
	e := newEnv(t, 2, "")
	require.Contains(t, e.text("a1"), "(no posts yet)")
}

func TestOneLikeAndRankingByLikes(t *testing.T) {
	e := newEnv(t, 7, "")
	liked := e.post("a1", "Liked post")
	plain := e.post("a2", "Plain post")
	e.like("a3", liked)
	require.EqualValues(t, 1, e.s.posts[0].likes)
	for _, a := range []string{"a4", "a5", "a6", "a7"} {
		e.like(a, liked)
	}
	e.round()
	require.Equal(t, []string{liked, plain}, e.feed("a3"))
}

func TestViralPostFiresOnceAndReachesOthers(t *testing.T) {
	e := newEnv(t, 5, `{"viral_threshold": 2}`)
	p := e.post("a1", "Read this")
	for _, a := range []string{"a2", "a3", "a4"} {
		e.like(a, p)
	}
	e.w.TakeEvents()
	e.round()
	var viral []world.Event
	for _, ev := range e.w.TakeEvents() {
		if ev.Type == "viral_post" {
			viral = append(viral, ev)
		}
	}
	require.Len(t, viral, 1)
	require.Equal(t, "social", viral[0].Source)
	require.Equal(t, p, viral[0].Data["post_id"])
	require.Equal(t, 3.0, viral[0].Data["score"])
	obs := e.w.Observe(e.w.Agent("a2"))
	require.Len(t, obs.Events, 1)
	require.Equal(t, `[Social] Trending: "Read this" by a1 (post_id=p1, 3 likes + reposts)`, obs.Events[0].Text)
	require.Empty(t, e.w.Observe(e.w.Agent("a1")).Events, "the author caused it")
	e.ok("a5", "repost", map[string]any{"post_id": p})
	e.round()
	for _, ev := range e.w.TakeEvents() {
		require.NotEqual(t, "viral_post", ev.Type, "once per post")
	}
	m, ok := e.s.Metric(e.w, "a1", "social.viral_posts")
	require.True(t, ok)
	require.Equal(t, 1.0, m)
}

func TestVotesRepostsAndFollows(t *testing.T) {
	e := newEnv(t, 3, "")
	p := e.post("a1", "Post")
	e.ok("a2", "vote", map[string]any{"post_id": p, "value": -1})
	e.ok("a3", "repost", map[string]any{"post_id": p})
	e.ok("a2", "follow", map[string]any{"agent_id": "a1"})
	e.ok("a3", "follow", map[string]any{"agent_id": "a1"})
	e.ok("a3", "follow", map[string]any{"agent_id": "a2"})
	for name, want := range map[string]float64{"social.posts": 1, "social.dislikes_received": 1, "social.reposts_received": 1, "social.followers": 2, "social.likes_received": 0} {
		got, ok := e.s.Metric(e.w, "a1", name)
		require.True(t, ok)
		require.Equal(t, want, got, name)
	}
	got, _ := e.s.Metric(e.w, "a3", "social.following")
	require.Equal(t, 2.0, got)
	_, ok := e.s.Metric(e.w, "a1", "posts")
	require.False(t, ok)
	e.round()
	obs := e.w.Observe(e.w.Agent("a3")).Components["social"]
	require.Equal(t, []any{"a1", "a2"}, obs["following"])
	require.Contains(t, obs["text"], "You follow a1, a2; 0 follow you")
	require.Contains(t, obs["text"], "[following] [you reposted]")
}

// Every tool refuses bad input with a clear error and changes nothing.
func TestBadInputIsRefusedWithoutStateChange(t *testing.T) {
	e := newEnv(t, 3, "")
	p := e.post("a1", "A post")
	e.like("a2", p)
	e.ok("a2", "repost", map[string]any{"post_id": p})
	e.ok("a2", "follow", map[string]any{"agent_id": "a1"})
	big := strings.Repeat("x", 100_000)
	cases := []struct {
		agent, tool string
		params      map[string]any
		code, msg   string
	}{
		{"a1", "create_post", nil, world.CodeInvalidParams, "param 'text' is required"},
		{"a1", "create_post", map[string]any{"text": ""}, world.CodeInvalidParams, "at least 1 characters"},
		{"a1", "create_post", map[string]any{"text": " \n\t "}, world.CodeInvalidParams, "nothing to post"},
		{"a1", "create_post", map[string]any{"text": "\x00\x01"}, world.CodeInvalidParams, "nothing to post"},
		{"a1", "create_post", map[string]any{"text": big}, world.CodeInvalidParams, "at most 280 characters, got 100000"},
		{"a1", "create_post", map[string]any{"text": 42}, world.CodeInvalidParams, "must be a string, got number"},
		{"a1", "create_post", map[string]any{"text": "hi", "mood": "x"}, world.CodeInvalidParams, "not a parameter"},
		{"a1", "reply", map[string]any{"post_id": "p9", "text": "hi"}, world.CodeNotFound, "Post 'p9' not found (post ids run from p1 to p1"},
		{"a1", "reply", map[string]any{"post_id": "p0", "text": "hi"}, world.CodeNotFound, "not found"},
		{"a1", "reply", map[string]any{"post_id": "p01", "text": "hi"}, world.CodeNotFound, "not found"},
		{"a1", "reply", map[string]any{"post_id": "p-1", "text": "hi"}, world.CodeNotFound, "not found"},
		{"a1", "reply", map[string]any{"post_id": "p+1", "text": "hi"}, world.CodeNotFound, "Post 'p+1' not found"},
		{"a3", "vote", map[string]any{"post_id": "p+1", "value": 1}, world.CodeNotFound, "Post 'p+1' not found"},
		{"a3", "repost", map[string]any{"post_id": "p 1"}, world.CodeNotFound, "Post 'p 1' not found"},
		{"a3", "repost", map[string]any{"post_id": "p1_"}, world.CodeNotFound, "not found"},
		{"a1", "reply", map[string]any{"post_id": big, "text": "hi"}, world.CodeInvalidParams, "at most 200 characters"},
		{"a1", "reply", map[string]any{"post_id": p, "text": big}, world.CodeInvalidParams, "at most 280 characters"},
		{"a1", "reply", map[string]any{"post_id": 1, "text": "hi"}, world.CodeInvalidParams, "must be a string"},
		{"a1", "reply", map[string]any{"post_id": p}, world.CodeInvalidParams, "param 'text' is required"},
		{"a3", "vote", map[string]any{"post_id": p, "value": 0}, world.CodeInvalidParams, "must be 1 (like) or -1 (dislike), got 0"},
		{"a3", "vote", map[string]any{"post_id": p, "value": 2}, world.CodeInvalidParams, "at most 1"},
		{"a3", "vote", map[string]any{"post_id": p, "value": -5}, world.CodeInvalidParams, "at least -1"},
		{"a3", "vote", map[string]any{"post_id": p, "value": 0.5}, world.CodeInvalidParams, "whole number"},
		{"a3", "vote", map[string]any{"post_id": p, "value": math.NaN()}, world.CodeInvalidParams, "finite number"},
		{"a3", "vote", map[string]any{"post_id": p, "value": math.Inf(1)}, world.CodeInvalidParams, "finite number"},
		{"a3", "vote", map[string]any{"post_id": p, "value": "1"}, world.CodeInvalidParams, "must be a number, got string"},
		{"a3", "vote", map[string]any{"post_id": "p2", "value": 1}, world.CodeNotFound, "Post 'p2' not found"},
		{"a3", "vote", map[string]any{"post_id": p}, world.CodeInvalidParams, "param 'value' is required"},
		{"a2", "vote", map[string]any{"post_id": p, "value": -1}, world.CodeNotAllowed, "Already voted: you liked p1"},
		{"a1", "vote", map[string]any{"post_id": p, "value": 1}, world.CodeNotAllowed, "your own post"},
		{"a3", "repost", map[string]any{"post_id": "nope"}, world.CodeNotFound, "Post 'nope' not found"},
		{"a3", "repost", map[string]any{"post_id": nil}, world.CodeInvalidParams, "must be a string, got null"},
		{"a3", "repost", map[string]any{"post_id": []any{"p1"}}, world.CodeInvalidParams, "must be a string, got array"},
		{"a2", "repost", map[string]any{"post_id": p}, world.CodeNotAllowed, "already reposted p1"},
		{"a1", "repost", map[string]any{"post_id": p}, world.CodeNotAllowed, "your own post"},
		{"a3", "follow", map[string]any{"agent_id": "a9"}, world.CodeNotFound, "No agent 'a9' (did you mean 'a1'?)"},
		{"a3", "follow", map[string]any{"agent_id": "nobody_at_all"}, world.CodeNotFound, "No agent 'nobody_at_all'; follow an author_id"},
		{"a3", "follow", map[string]any{"agent_id": ""}, world.CodeInvalidParams, "at least 1 characters"},
		{"a3", "follow", map[string]any{"agent_id": big}, world.CodeInvalidParams, "at most 200 characters"},
		{"a3", "follow", map[string]any{"agent_id": -1}, world.CodeInvalidParams, "must be a string, got number"},
		{"a3", "follow", map[string]any{"agent_id": "a3"}, world.CodeNotAllowed, "cannot follow yourself"},
		{"a2", "follow", map[string]any{"agent_id": "a1"}, world.CodeNotAllowed, "already follow a1"},
		{"a1", "do_nothing", map[string]any{"x": 1}, world.CodeInvalidParams, "not a parameter"},
	}
	for _, c := range cases {
		before := e.w.StateHash()
		res := e.do(c.agent, c.tool, c.params)
		require.False(t, res.Success, "%s %v", c.tool, c.params)
		require.Equal(t, c.code, res.ErrorCode, "%s %v: %s", c.tool, c.params, res.ErrorMessage)
		require.Contains(t, res.ErrorMessage, c.msg, "%s %v", c.tool, c.params)
		require.Less(t, len(res.ErrorMessage), 400, "errors stay short even for 100 kB input")
		require.Equal(t, before, e.w.StateHash(), "%s %v changed the state", c.tool, c.params)
	}
	require.Len(t, e.s.posts, 1)
	require.EqualValues(t, 1, e.s.posts[0].likes)
	require.EqualValues(t, 1, e.s.posts[0].reposts)
	require.True(t, e.ok("a1", "do_nothing", nil).Success)
}

func TestCleanTextAndReplyToReply(t *testing.T) {
	e := newEnv(t, 2, "")
	p := e.post("a1", "  two\n\nlines\x07 here ")
	require.Equal(t, "two lines here", e.s.posts[0].text)
	r := e.ok("a2", "reply", map[string]any{"post_id": p, "text": "first"}).Data["post_id"].(string)
	res := e.ok("a1", "reply", map[string]any{"post_id": r, "text": "second"})
	require.Equal(t, map[string]any{"post_id": "p3", "thread": p, "in_reply_to": r, "round": 0.0}, res.Data)
	require.Len(t, e.s.posts[0].replies, 2)
	// Exactly 280 characters is fine; multi-byte characters count once.
	e.ok("a1", "create_post", map[string]any{"text": strings.Repeat("é", 280)})
}

func TestOneSharedDoNothing(t *testing.T) {
	e := newEnv(t, 2, "")
	n := 0
	for _, f := range e.reg.OpenAI() {
		if f.Function.Name == "do_nothing" {
			n++
		}
	}
	require.Equal(t, 1, n)
	// A second component offering the shared do_nothing registers fine.
	var r tools.Registry
	require.NoError(t, r.Register(e.s.Tools()...))
	require.NoError(t, r.Register(tools.DoNothing()))
}

func TestRoundTicks(t *testing.T) {
	e := newEnv(t, 2, `{"round_ticks": 3}`)
	p := e.post("a1", "Slow rounds")
	e.w.Step()
	e.w.Step()
	require.Empty(t, e.feed("a2"), "the feed is ranked when a round starts")
	e.w.Step()
	require.Equal(t, []string{p}, e.feed("a2"))
	require.Equal(t, 1, e.s.round)
}

// Same seed and decisions give the same state, tick by tick.
func TestDeterministic(t *testing.T) {
	run := func() []uint64 {
		e := newEnv(t, 4, `{"initial_position_spread": 0.8, "topics": [{"name": "the park"}, {"name": "taxes", "keywords": ["tax"]}]}`)
		var hashes []uint64
		for r := 0; r < 6; r++ {
			for i, a := range []string{"a1", "a2", "a3", "a4"} {
				switch (r + i) % 4 {
				case 0:
					e.do(a, "create_post", map[string]any{"text": fmt.Sprintf("The park is great, tax is bad %d", r)})
				case 1:
					e.do(a, "vote", map[string]any{"post_id": fmt.Sprintf("p%d", r+1), "value": 1})
				case 2:
					e.do(a, "follow", map[string]any{"agent_id": fmt.Sprintf("a%d", (i+r)%4+1)})
				case 3:
					e.do(a, "reply", map[string]any{"post_id": "p1", "text": "I disagree, terrible idea"})
				}
			}
			e.round()
			hashes = append(hashes, e.w.StateHash())
		}
		return hashes
	}
	a, b := run(), run()
	require.Equal(t, a, b)
	require.NotEqual(t, a[0], a[1])
}

func TestHashCoversState(t *testing.T) {
	e := newEnv(t, 3, "")
	h0 := e.w.StateHash()
	p := e.post("a1", "x")
	h1 := e.w.StateHash()
	require.NotEqual(t, h0, h1)
	e.like("a2", p)
	h2 := e.w.StateHash()
	require.NotEqual(t, h1, h2)
	e.ok("a3", "follow", map[string]any{"agent_id": "a2"})
	require.NotEqual(t, h2, e.w.StateHash())
}

// Sections hold JSON-shaped values only, so a bot reads them alike in
// process and off the wire.
func TestSectionIsJSONShaped(t *testing.T) {
	e := newEnv(t, 3, "")
	p := e.post("a1", "Good news")
	e.ok("a2", "reply", map[string]any{"post_id": p, "text": "Bad news"})
	e.ok("a3", "follow", map[string]any{"agent_id": "a1"})
	e.round()
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(path+"."+k, e)
			}
		case world.Section:
			for k, e := range x {
				walk(path+"."+k, e)
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case string, float64, bool:
		default:
			t.Fatalf("%s holds a %T", path, v)
		}
	}
	sec := e.w.Observe(e.w.Agent("a3")).Components["social"]
	walk("social", sec)
	for _, k := range []string{"text", "feed", "following", "followers", "beliefs", "round", "stats"} {
		require.Contains(t, sec, k)
	}
	entry := sec["feed"].([]any)[0].(map[string]any)
	for _, k := range []string{"post_id", "author_id", "text", "likes", "dislikes", "reposts", "replies", "thread", "stance", "your_vote", "following"} {
		require.Contains(t, entry, k)
	}
	require.Nil(t, e.s.Observe(e.w, "stranger"))
}

func TestConfigErrors(t *testing.T) {
	for cfg, want := range map[string]string{
		`{"feed_size": 0}`:                           "config.feed_size: must be from 1 to 100, got 0",
		`{"round_ticks": -1}`:                        "config.round_ticks",
		`{"echo_chamber_strength": 1.5}`:             "config.echo_chamber_strength: must be from 0 to 1",
		`{"recency_weight": -0.1}`:                   "config.recency_weight",
		`{"viral_threshold": 0}`:                     "config.viral_threshold",
		`{"max_post_length": 100000}`:                "config.max_post_length",
		`{"replies_shown": 11}`:                      "config.replies_shown",
		`{"voting_mode": "likes_only"}`:              `unknown field "voting_mode"`,
		`{"feed_size": "20"}`:                        "config.feed_size: must be a whole number, got JSON string",
		`{"topics": [{"name": ""}]}`:                 "config.topics[0].name: is required",
		`{"topics": [{"name": "a"}, {"name": "a"}]}`: `"a" is already a topic`,
		`[1]`: "config",
	} {
		_, err := New([]byte(cfg))
		require.ErrorContains(t, err, want, cfg)
	}
	s, err := New(nil)
	require.NoError(t, err)
	require.Equal(t, DefaultConfig(), s.Config())
	d := DefaultConfig()
	require.Equal(t, []float64{0.3, 0.4, 0.3, 0.5}, []float64{d.RecencyWeight, d.PopularityWeight, d.RelevanceWeight, d.EchoChamberStrength})
	require.Equal(t, []int{20, 3, 5, 1}, []int{d.FeedSize, d.RepliesShown, d.ViralThreshold, d.RoundTicks})
}
