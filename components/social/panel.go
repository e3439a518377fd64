package social

import (
	"fmt"

	"github.com/arena-sim/arena/world"
)

var _ world.Spectated = (*Social)(nil)

// Panel implements world.Spectated: the round, the counts of posts, replies,
// follows and viral posts, the agents' mean belief on each topic, and the
// top posts as the feed ranks them now for a reader who follows no one, each
// with its author, likes, dislikes and reposts and its text.
func (s *Social) Panel(*world.World) world.Panel {
	p := world.Panel{Name: Name, Title: "Social feed"}
	replies, viral, follows := 0, 0, 0
	for i := range s.posts {
		if s.posts[i].parent >= 0 {
			replies++
		}
		if s.posts[i].viral {
			viral++
		}
	}
	for i := range s.members {
		follows += len(s.members[i].following)
	}
	p.Add("Round %d · %d posts, %d replies · %d follows · %d viral", s.round, len(s.rk.tops), replies, follows, viral)
	if s.cfg.Beliefs && len(s.members) > 0 {
		var items []string
		for t, tp := range s.topics {
			var pos, conf float64
			for i := range s.members {
				pos += s.members[i].beliefs[t].Position
				conf += s.members[i].beliefs[t].Confidence
			}
			n := float64(len(s.members))
			items = append(items, fmt.Sprintf("%s %+.2f (conf %.2f)", world.Clip(tp.name, 24), pos/n, conf/n))
		}
		p.AddList("Mean belief: ", items, 2)
	}
	if len(s.rk.tops) == 0 {
		p.Add("No posts yet")
		return p
	}
	// The feed's ranking (rankAll), for a reader following no one, without
	// touching the component's ranking scratch.
	var top []cand
	if k := min(s.cfg.FeedSize, p.Room()); k > 0 {
		for _, i := range s.rk.tops {
			top = insert(top, k, cand{i, s.score(i, false)})
		}
	}
	for n, c := range top {
		q := &s.posts[c.post]
		p.Add("%d. %s (%s): %s", n+1, s.ids[q.author], counts(q), q.text)
	}
	return p
}

// counts renders a post's votes and reposts.
func counts(q *post) string {
	s := fmt.Sprintf("likes %d", q.likes)
	if q.dislikes > 0 {
		s += fmt.Sprintf(", dislikes %d", q.dislikes)
	}
	if q.reposts > 0 {
		s += fmt.Sprintf(", reposts %d", q.reposts)
	}
	if len(q.replies) > 0 {
		s += fmt.Sprintf(", replies %d", len(q.replies))
	}
	return s
}
