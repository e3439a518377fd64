package social

import (
	"fmt"
	"math"
	"strings"

	"github.com/arena-sim/arena/world"
)

// Feed ranking (the reference's): only top-level posts are ranked. With M the
// latest round of a top-level post (1 if that is 0), a post made in round c
// has recency 1 − (M − c)/M and popularity ln(1 + likes + reposts) (dislikes
// do not count); relevance is 1 when the viewer follows the author and
// 1 − echo_chamber_strength otherwise. The score is
//
//	recency_weight·recency + popularity_weight·popularity + relevance_weight·relevance
//
// and the feed is the feed_size best, ties going to the newer post. Each
// shows its first replies_shown direct replies.
//
// Every feed is ranked once per round, when the round starts, and the agent's
// observations during the round show that feed (with live counts): the
// reference freezes observations for a round the same way, and it is the feed
// an agent saw that moves its beliefs.

// ranker holds the ranking's per-round work, reused from round to round.
type ranker struct {
	tops     []int32   // every top-level post, oldest first
	authored [][]int32 // per agent: its top-level posts, oldest first
	not, yes []float64 // per post: score when the author is not followed / followed
	global   []int32   // the feed_size best posts for a viewer following no one
	byAuthor [][]int32 // per agent: its feed_size best posts for a follower
	stamp    []int     // per agent: the ranking (count) byAuthor was computed for
	count    int       // rankings done
	buf      []cand    // the feed being ranked
	abuf     []cand    // an author's best posts being ranked
}

type cand struct {
	post  int32
	score float64
}

// better orders candidates: higher score first, then the newer post.
func (c cand) better(d cand) bool {
	return c.score > d.score || (c.score == d.score && c.post > d.post)
}

// insert puts c into buf, kept best first and at most k long.
func insert(buf []cand, k int, c cand) []cand {
	n := len(buf)
	if n == k {
		if !c.better(buf[n-1]) {
			return buf
		}
		n--
	} else {
		buf = append(buf, cand{})
	}
	i := n
	for i > 0 && c.better(buf[i-1]) {
		buf[i] = buf[i-1]
		i--
	}
	buf[i] = c
	return buf
}

// scoreTerms returns the recency-plus-popularity part of post p's score.
func (s *Social) scoreTerms(p *post) float64 {
	m := float64(s.maxTop)
	if s.maxTop == 0 {
		m = 1
	}
	recency := 1 - (m-float64(p.round))/m
	return s.cfg.RecencyWeight*recency + s.cfg.PopularityWeight*math.Log1p(float64(p.likes+p.reposts))
}

// score is post p's score for a viewer who follows (or not) its author.
func (s *Social) score(p int32, followed bool) float64 {
	rel := 1 - s.cfg.EchoChamberStrength
	if followed {
		rel = 1
	}
	return s.scoreTerms(&s.posts[p]) + s.cfg.RelevanceWeight*rel
}

// rankAll ranks every agent's feed for the round that starts.
//
// A followed author's posts get the same bonus for every follower, so the
// best feed_size posts of a viewer are among (a) the best feed_size posts
// overall, scored as not followed, whose authors it does not follow, and (b)
// the best feed_size posts of each author it follows, scored as followed. Both
// lists are computed once per round, so a round costs O(posts) plus
// O(feed_size × (1 + authors followed)) per agent, instead of ranking every
// post for every agent. The result is exactly that of ranking every post
// (rankNaive in the tests).
func (s *Social) rankAll() {
	rk := &s.rk
	rk.count++
	n := len(s.posts)
	rk.not = grow(rk.not, n)
	rk.yes = grow(rk.yes, n)
	wl := s.cfg.RelevanceWeight
	notRel := wl * (1 - s.cfg.EchoChamberStrength)
	k := s.cfg.FeedSize
	buf := rk.buf[:0]
	for _, p := range rk.tops {
		base := s.scoreTerms(&s.posts[p])
		rk.not[p] = base + notRel
		rk.yes[p] = base + wl
		buf = insert(buf, k, cand{p, rk.not[p]})
	}
	rk.global = rk.global[:0]
	for _, c := range buf {
		rk.global = append(rk.global, c.post)
	}
	for len(rk.byAuthor) < len(s.members) {
		rk.byAuthor = append(rk.byAuthor, nil)
		rk.stamp = append(rk.stamp, 0)
	}
	for v := range s.members {
		m := &s.members[v]
		buf = buf[:0]
		for _, p := range rk.global {
			if !m.follows(s.posts[p].author) {
				buf = insert(buf, k, cand{p, rk.not[p]})
			}
		}
		for _, f := range m.following {
			for _, p := range s.authorBest(f) {
				c := cand{p, rk.yes[p]}
				if len(buf) == k && !c.better(buf[k-1]) {
					break // the author's list is sorted: nothing further gets in
				}
				buf = insert(buf, k, c)
			}
		}
		m.feed = m.feed[:0]
		for _, c := range buf {
			m.feed = append(m.feed, feedEntry{post: c.post, replies: int32(s.shownReplies(c.post))})
		}
	}
	rk.buf = buf
}

// authorBest returns an author's feed_size best posts, scored as followed.
func (s *Social) authorBest(a int32) []int32 {
	rk := &s.rk
	if rk.stamp[a] == rk.count {
		return rk.byAuthor[a]
	}
	rk.stamp[a] = rk.count
	buf := rk.abuf[:0]
	if a < int32(len(rk.authored)) {
		for _, p := range rk.authored[a] {
			buf = insert(buf, s.cfg.FeedSize, cand{p, rk.yes[p]})
		}
	}
	out := rk.byAuthor[a][:0]
	for _, c := range buf {
		out = append(out, c.post)
	}
	rk.byAuthor[a], rk.abuf = out, buf
	return out
}

// shownReplies is how many of a post's replies a feed shows.
func (s *Social) shownReplies(p int32) int {
	if !s.cfg.Threading {
		return 0
	}
	return min(len(s.posts[p].replies), s.cfg.RepliesShown)
}

// track records a new post for ranking.
func (s *Social) track(i int) {
	p := &s.posts[i]
	if p.parent >= 0 {
		return
	}
	rk := &s.rk
	rk.tops = append(rk.tops, int32(i))
	for len(rk.authored) <= int(p.author) {
		rk.authored = append(rk.authored, nil)
	}
	rk.authored[p.author] = append(rk.authored[p.author], int32(i))
}

func grow(v []float64, n int) []float64 {
	if cap(v) < n {
		v = append(v[:cap(v)], make([]float64, n-cap(v))...)
	}
	return v[:n]
}

// Observe implements world.Component: the agent's feed, its follows, and its
// beliefs. "text" renders them for language models: every post with its
// post_id and author_id, so that the agent can reply, vote, repost and follow.
func (s *Social) Observe(_ *world.World, agentID string) world.Section {
	v, ok := s.idx[agentID]
	if !ok {
		return nil
	}
	m := &s.members[v]
	var b strings.Builder
	fmt.Fprintf(&b, "Social feed, round %d (%d posts in all). ", s.round, len(s.rk.tops))
	if len(m.following) == 0 {
		b.WriteString("You follow no one")
	} else {
		b.WriteString("You follow ")
		for i, f := range m.following {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(s.ids[f])
		}
	}
	fmt.Fprintf(&b, "; %d follow you. Your posts %d, replies %d, likes received %d, dislikes received %d.\n",
		m.followers, m.stats.posts, m.stats.replies, m.stats.likesReceived, m.stats.dislikesReceived)
	feed := make([]any, 0, len(m.feed))
	if len(m.feed) == 0 {
		b.WriteString("(no posts yet)\n")
	}
	for _, e := range m.feed {
		p := &s.posts[e.post]
		s.renderPost(&b, v, e.post, "")
		entry := s.postView(v, e.post)
		entry["replies"] = float64(len(p.replies))
		thread := make([]any, 0, e.replies)
		for _, r := range p.replies[:e.replies] {
			s.renderPost(&b, v, r, "  -> ")
			thread = append(thread, s.postView(v, r))
		}
		if more := len(p.replies) - int(e.replies); more > 0 && s.cfg.Threading {
			fmt.Fprintf(&b, "  (%d more replies)\n", more)
		}
		entry["thread"] = thread
		feed = append(feed, entry)
	}
	following := make([]any, 0, len(m.following))
	for _, f := range m.following {
		following = append(following, s.ids[f])
	}
	sec := world.Section{
		"round":     float64(s.round),
		"feed":      feed,
		"following": following,
		"followers": float64(m.followers),
		"stats": map[string]any{
			"posts": float64(m.stats.posts), "replies": float64(m.stats.replies),
			"likes_received": float64(m.stats.likesReceived), "dislikes_received": float64(m.stats.dislikesReceived),
			"reposts_received": float64(m.stats.repostsReceived), "votes_cast": float64(m.stats.votesCast),
		},
	}
	if len(m.beliefs) > 0 {
		b.WriteString("Your current beliefs:")
		beliefs := make([]any, 0, len(m.beliefs))
		for t, bl := range m.beliefs {
			b.WriteString("\n" + BeliefLine(s.topics[t].name, bl))
			beliefs = append(beliefs, map[string]any{
				"topic": s.topics[t].name, "position": round4(bl.Position), "confidence": round4(bl.Confidence),
				"position_band": PositionBand(bl.Position), "confidence_band": ConfidenceBand(bl.Confidence),
			})
		}
		sec["beliefs"] = beliefs
	}
	sec["text"] = strings.TrimRight(b.String(), "\n")
	return sec
}

// renderPost writes one line of the feed: ids, markers, text and counts.
func (s *Social) renderPost(b *strings.Builder, viewer int, i int32, indent string) {
	p := &s.posts[i]
	fmt.Fprintf(b, "%spost_id=%s author_id=%s", indent, postID(int(i)), s.ids[p.author])
	switch {
	case int(p.author) == viewer:
		b.WriteString(" [you]")
	case s.members[viewer].follows(p.author):
		b.WriteString(" [following]")
	}
	switch p.voteOf(int32(viewer)) {
	case 1:
		b.WriteString(" [you liked]")
	case -1:
		b.WriteString(" [you disliked]")
	}
	if p.repostedBy(int32(viewer)) {
		b.WriteString(" [you reposted]")
	}
	fmt.Fprintf(b, ": %s (likes %d, dislikes %d, reposts %d", p.text, p.likes, p.dislikes, p.reposts)
	if p.parent < 0 {
		fmt.Fprintf(b, ", replies %d", len(p.replies))
	}
	b.WriteString(")\n")
}

// postView is a post's structured entry (JSON-shaped values only).
func (s *Social) postView(viewer int, i int32) map[string]any {
	p := &s.posts[i]
	return map[string]any{
		"post_id": postID(int(i)), "author_id": s.ids[p.author], "text": p.text,
		"likes": float64(p.likes), "dislikes": float64(p.dislikes), "reposts": float64(p.reposts),
		"round": float64(p.round), "stance": round4(p.stance),
		"your_vote": float64(p.voteOf(int32(viewer))), "reposted": p.repostedBy(int32(viewer)),
		"following": s.members[viewer].follows(p.author),
	}
}
