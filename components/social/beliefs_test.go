package social

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func post1(author string, stance float64, likes int, novel bool) []Exposure {
	return []Exposure{{Author: author, Stance: stance, Likes: likes, Novel: novel}}
}

// The worked example: default state, one new post with stance +1 and no likes.
func TestBeliefWorkedExample(t *testing.T) {
	b := NewBelief()
	require.InDelta(t, 0.65, ResistanceBase+ResistancePerConfidence*b.Confidence, 1e-12)
	require.InDelta(t, 0.34615, b.TrustIn("x")*SocialProofBase*NoveltyNew/0.65, 5e-6)
	out := Update(b, post1("x", 1, 0, true), 0, 0)
	require.InDelta(t, 0.034615, out.Position, 5e-7)
	require.InDelta(t, 0.500865, out.Trust["x"], 5e-7)
	require.Equal(t, 0.5, out.Confidence)
	require.Nil(t, b.Trust, "the input is not changed")
	require.Equal(t, 0.0, b.Position)
}

// Trust 1, confidence 0, no likes: the position moves 0.15.
func TestBeliefFullTrustNoConfidence(t *testing.T) {
	b := Belief{Position: 0, Confidence: 0, Trust: map[string]float64{"x": 1}}
	out := Update(b, post1("x", 1, 0, true), 0, 0)
	require.Greater(t, out.Position, 0.04)
	require.InDelta(t, 0.15, out.Position, 1e-12)
	require.Equal(t, 1.0, b.Trust["x"], "the input's trust map is not changed")
}

func TestBeliefRules(t *testing.T) {
	def := NewBelief()
	t.Run("moves toward the stance", func(t *testing.T) {
		require.Greater(t, Update(def, post1("x", 0.8, 0, true), 0, 0).Position, 0.0)
		require.Less(t, Update(def, post1("x", -0.8, 0, true), 0, 0).Position, 0.0)
	})
	t.Run("a repeat moves it less", func(t *testing.T) {
		novel := Update(def, post1("x", 1, 0, true), 0, 0).Position
		repeat := Update(def, post1("x", 1, 0, false), 0, 0).Position
		require.Greater(t, repeat, 0.0)
		require.Less(t, repeat, novel)
		require.InDelta(t, novel/3, repeat, 1e-12)
	})
	t.Run("a post at its own stance does not move it", func(t *testing.T) {
		b := Belief{Position: 0.4, Confidence: 0.5}
		require.Equal(t, 0.4, Update(b, post1("x", 0.4, 3, true), 0, 0).Position)
	})
	t.Run("0.9 exposed to 0.5 ends between", func(t *testing.T) {
		b := Belief{Position: 0.9, Confidence: 0.5}
		p := Update(b, post1("x", 0.5, 0, true), 0, 0).Position
		require.Greater(t, p, 0.5)
		require.Less(t, p, 0.9)
	})
	t.Run("confidence resists", func(t *testing.T) {
		low := Update(Belief{Confidence: 0}, post1("x", 1, 0, true), 0, 0).Position
		high := Update(Belief{Confidence: 1}, post1("x", 1, 0, true), 0, 0).Position
		require.Greater(t, low, 2.5*high)
	})
	t.Run("likes are social proof", func(t *testing.T) {
		none := Update(def, post1("x", 1, 0, true), 0, 0).Position
		ten := Update(def, post1("x", 1, 10, true), 0, 0).Position
		require.InDelta(t, none*(0.3+0.7)/0.3, ten, 1e-12)
	})
	t.Run("own likes raise confidence, own dislikes lower it", func(t *testing.T) {
		require.InDelta(t, 0.55, Update(def, nil, 10, 0).Confidence, 1e-12)
		require.InDelta(t, 0.42, Update(def, nil, 0, 10).Confidence, 1e-12)
		require.Equal(t, 0.0, Update(def, nil, 10, 0).Position, "engagement alone does not move the position")
	})
	t.Run("trust follows alignment", func(t *testing.T) {
		b := Belief{Position: 0.8, Confidence: 0.5}
		out := Update(b, []Exposure{{Author: "ally", Stance: 0.9, Novel: true}, {Author: "foe", Stance: -0.9, Novel: true}}, 0, 0)
		require.Greater(t, out.Trust["ally"], DefaultTrust)
		require.Less(t, out.Trust["foe"], DefaultTrust)
	})
	t.Run("everything is clamped", func(t *testing.T) {
		b := Belief{Position: 0.99, Confidence: 0, Trust: map[string]float64{"x": 1}}
		var many []Exposure
		for i := 0; i < 50; i++ {
			many = append(many, Exposure{Author: "x", Stance: 1, Likes: 100, Novel: true})
		}
		out := Update(b, many, 1000, 0)
		require.Equal(t, 1.0, out.Position)
		require.Equal(t, 1.0, out.Confidence)
		require.Equal(t, 1.0, out.Trust["x"])
		out = Update(Belief{Position: -0.99, Confidence: 1, Trust: map[string]float64{"x": 0}}, []Exposure{{Author: "x", Stance: 1, Novel: true}}, 0, 1000)
		require.Equal(t, 0.0, out.Confidence)
		require.Equal(t, 0.0, out.Trust["x"])
		require.GreaterOrEqual(t, out.Position, -1.0)
	})
}

func TestExposureHistoryIsCapped(t *testing.T) {
	m := member{seen: map[uint64]int32{}}
	for i := 0; i < ExposureCap+500; i++ {
		m.remember(uint64(i))
	}
	m.remember(ExposureCap + 499) // seen twice
	require.Len(t, m.history, ExposureCap)
	require.Len(t, m.seen, ExposureCap-1)
	require.Zero(t, m.seen[0], "the oldest are forgotten")
	require.Zero(t, m.seen[500])
	require.EqualValues(t, 1, m.seen[501])
	require.EqualValues(t, 2, m.seen[ExposureCap+499])
}

func TestBands(t *testing.T) {
	require.Equal(t, "strongly supportive", PositionBand(0.85))
	require.Equal(t, "undecided", PositionBand(0.05))
	for p, want := range map[float64]string{1: "strongly supportive", 0.6: "strongly supportive", 0.59: "leaning supportive", 0.2: "leaning supportive",
		0.19: "undecided", -0.19: "undecided", -0.2: "leaning opposed", -0.59: "leaning opposed", -0.6: "strongly opposed", -1: "strongly opposed"} {
		require.Equal(t, want, PositionBand(p), "%g", p)
	}
	for c, want := range map[float64]string{1: "firmly held", 0.75: "firmly held", 0.74: "moderate", 0.45: "moderate", 0.44: "tentative", 0.2: "tentative", 0.19: "uncertain", 0: "uncertain"} {
		require.Equal(t, want, ConfidenceBand(c), "%g", c)
	}
	require.Equal(t, "On the park: you are leaning opposed (confidence: firmly held)", BeliefLine("the park", Belief{Position: -0.3, Confidence: 0.8}))
}

// In the component: beliefs move once per round with the posts of the feed
// the agent was shown, never its own, and with its own posts' engagement.
func TestBeliefsInTheComponent(t *testing.T) {
	e := newEnv(t, 3, "")
	p := e.post("a1", "This is great, I love it!")
	stance := e.s.posts[0].stance
	require.Greater(t, stance, 0.5)
	e.round() // a2 and a3 are shown p1 from now on
	require.Equal(t, 0.0, e.s.members[1].beliefs[0].Position, "not seen yet")
	e.like("a2", p)
	e.round()
	b2 := e.s.members[1].beliefs[0]
	want := Update(NewBelief(), []Exposure{{Author: "a1", Stance: stance, Likes: 1, Novel: true}}, 0, 0)
	require.InDelta(t, want.Position, b2.Position, 1e-15)
	require.InDelta(t, want.Trust["a1"], b2.Trust["a1"], 1e-15)
	b1 := e.s.members[0].beliefs[0]
	require.Equal(t, 0.0, b1.Position, "no self-influence")
	require.InDelta(t, 0.505, b1.Confidence, 1e-12, "the like a1's post got this round")
	first := b2.Position

	// Seen again: a repeat, a smaller step.
	e.round()
	second := e.s.members[1].beliefs[0].Position - first
	require.Greater(t, second, 0.0)
	require.Less(t, second, first)
	require.Equal(t, 0.505, e.s.members[0].beliefs[0].Confidence, "likes count once, in the round they came")

	// A dislike lowers the author's confidence.
	e.ok("a3", "vote", map[string]any{"post_id": p, "value": -1})
	e.round()
	require.InDelta(t, 0.497, e.s.members[0].beliefs[0].Confidence, 1e-12)
	require.Contains(t, e.text("a2"), "Your current beliefs:\nOn topic: you are undecided (confidence: moderate)")
	pos, _ := e.s.Metric(e.w, "a2", "social.belief_position")
	require.Equal(t, round4(e.s.members[1].beliefs[0].Position), pos)
}

func TestBeliefTopicsAndKeywords(t *testing.T) {
	e := newEnv(t, 2, `{"topics": [{"name": "the park", "keywords": ["park"]}, {"name": "taxes", "keywords": ["TAX"]}]}`)
	e.post("a1", "The park is wonderful")
	e.post("a1", "Taxes are terrible")
	e.round()
	e.round()
	b := e.s.members[1].beliefs
	require.Greater(t, b[0].Position, 0.0)
	require.Less(t, b[1].Position, 0.0)
	txt := e.text("a2")
	require.Contains(t, txt, "On the park: you are")
	require.Contains(t, txt, "On taxes: you are")
}

func TestBeliefsOffAndSpread(t *testing.T) {
	e := newEnv(t, 2, `{"beliefs": false}`)
	e.post("a1", "Great")
	e.round()
	e.round()
	require.Empty(t, e.s.members[1].beliefs)
	require.NotContains(t, e.text("a2"), "beliefs")
	_, ok := e.w.Observe(e.w.Agent("a2")).Components["social"]["beliefs"]
	require.False(t, ok)

	e = newEnv(t, 6, `{"initial_position_spread": 0.5}`)
	distinct := map[float64]bool{}
	for _, m := range e.s.members {
		p := m.beliefs[0].Position
		require.LessOrEqual(t, math.Abs(p), 0.5)
		distinct[p] = true
	}
	require.Len(t, distinct, 6)
}
