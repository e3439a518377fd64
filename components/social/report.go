package social

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/arena-sim/arena/world"
)

// What the component reports once an episode is over (world.Reporter): the
// reference's extractors, from the component's own records rather than a
// chat log.

// topPostsLimit is how many posts the top_posts table lists.
const topPostsLimit = 20

// beliefBins is how many bins the belief distribution plot has over [-1, 1].
const beliefBins = 10

// roundStats counts what happened on the feed during one round.
type roundStats struct {
	posts, replies, likes, dislikes, reposts, follows, viral, active int
}

// roundRecord is one finished round, for the reports.
type roundRecord struct {
	round, tick int
	stats       roundStats
	beliefs     []float64 // per agent, per topic: position, confidence
}

// reports is the component's record of an episode. It decides nothing, so it
// is not part of the state hash.
type reports struct {
	start  []float64 // the starting beliefs
	cur    roundStats
	active []bool // per agent: made a successful call this round
	rounds []roundRecord
}

// acted marks an agent active in the current round.
func (s *Social) acted(a int) {
	r := &s.rep
	if len(r.active) < len(s.members) {
		r.active = make([]bool, len(s.members))
	}
	if !r.active[a] {
		r.active[a] = true
		r.cur.active++
	}
}

// beliefSnapshot is every agent's position and confidence on every topic.
func (s *Social) beliefSnapshot() []float64 {
	if !s.cfg.Beliefs {
		return nil
	}
	out := make([]float64, 0, 2*len(s.members)*len(s.topics))
	for i := range s.members {
		for _, b := range s.members[i].beliefs {
			out = append(out, b.Position, b.Confidence)
		}
	}
	return out
}

// closeRound records the round that just ended.
func (s *Social) closeRound(tick int) {
	r := &s.rep
	r.rounds = append(r.rounds, roundRecord{round: s.round, tick: tick, stats: r.cur, beliefs: s.beliefSnapshot()})
	r.cur = roundStats{}
	clear(r.active)
}

// Tables implements world.Reporter:
//   - rounds: per round, the posts, replies, likes, dislikes, reposts, follows
//     and viral posts, the agents who acted, and the mean position and
//     confidence on the first topic;
//   - top_posts: the 20 top-level posts with the most engagement
//     (likes + reposts + replies);
//   - social_graph: every follow, and whether it is mutual;
//   - belief_trajectories: every agent's position and confidence on every
//     topic at the start (round 0) and after each round.
func (s *Social) Tables() []world.Table {
	rounds := world.Table{Name: "rounds", Columns: []string{"round", "tick", "posts", "replies", "likes", "dislikes", "reposts",
		"follows", "viral_posts", "active_agents", "mean_position", "mean_confidence"}}
	for _, rr := range s.rep.rounds {
		st := rr.stats
		pos, conf := s.meanBelief(rr.beliefs, 0)
		rounds.Rows = append(rounds.Rows, []any{float64(rr.round), float64(rr.tick), float64(st.posts), float64(st.replies), float64(st.likes),
			float64(st.dislikes), float64(st.reposts), float64(st.follows), float64(st.viral), float64(st.active), pos, conf})
	}

	top := world.Table{Name: "top_posts", Columns: []string{"post_id", "author_id", "round", "text", "likes", "dislikes", "reposts", "replies", "engagement", "stance"}}
	ids := append([]int32(nil), s.rk.tops...)
	engagement := func(p int32) int {
		pp := &s.posts[p]
		return int(pp.likes+pp.reposts) + len(pp.replies)
	}
	slices.SortStableFunc(ids, func(a, b int32) int { return cmp.Compare(engagement(b), engagement(a)) })
	for _, p := range ids[:min(len(ids), topPostsLimit)] {
		pp := &s.posts[p]
		top.Rows = append(top.Rows, []any{postID(int(p)), s.ids[pp.author], float64(pp.round), pp.text, float64(pp.likes), float64(pp.dislikes),
			float64(pp.reposts), float64(len(pp.replies)), float64(engagement(p)), round4(pp.stance)})
	}

	graph := world.Table{Name: "social_graph", Columns: []string{"follower", "followed", "mutual"}}
	for i := range s.members {
		for _, j := range s.members[i].following {
			graph.Rows = append(graph.Rows, []any{s.ids[i], s.ids[j], s.members[j].follows(int32(i))})
		}
	}

	traj := world.Table{Name: "belief_trajectories", Columns: []string{"round", "agent_id", "topic", "position", "confidence"}}
	if s.cfg.Beliefs {
		s.eachSnapshot(func(round int, b []float64) {
			for i, id := range s.ids {
				for t, tp := range s.topics {
					k := 2 * (i*len(s.topics) + t)
					traj.Rows = append(traj.Rows, []any{float64(round), id, tp.name, round4(b[k]), round4(b[k+1])})
				}
			}
		})
	}
	return []world.Table{rounds, top, graph, traj}
}

// Plots implements world.Reporter: per topic, the distribution of positions
// at the start, at a third, at two thirds and at the end (agents per bin), and the
// mean, lowest and highest position over the rounds; and the feed's activity
// per round.
func (s *Social) Plots() []world.Plot {
	var plots []world.Plot
	if s.cfg.Beliefs && len(s.members) > 0 {
		var snaps []int
		var shots [][]float64
		s.eachSnapshot(func(round int, b []float64) {
			snaps = append(snaps, round)
			shots = append(shots, b)
		})
		for t, tp := range s.topics {
			suffix := ""
			if t > 0 {
				suffix = fmt.Sprintf("_%d", t+1)
			}
			// The distribution as counts per 0.2-wide bin of [-1, 1] (the same
			// bins for every round, so the rounds compare).
			hist := world.Plot{Name: "belief_distribution" + suffix, Title: "Positions on " + clip(tp.name, 60), X: "position (bin centre)", Y: "agents"}
			picked := map[int]bool{}
			for _, q := range []int{0, 1, 2, 3} {
				k := q * (len(shots) - 1) / 3
				if picked[k] {
					continue
				}
				picked[k] = true
				counts := make([]float64, beliefBins)
				for i := range s.members {
					p := shots[k][2*(i*len(s.topics)+t)]
					counts[min(beliefBins-1, int((p+1)/2*beliefBins))]++
				}
				ser := world.Series{Label: fmt.Sprintf("round %d", snaps[k])}
				for b, c := range counts {
					ser.X = append(ser.X, -1+(float64(b)+0.5)*2/beliefBins)
					ser.Y = append(ser.Y, c)
				}
				hist.Series = append(hist.Series, ser)
			}
			lines := world.Plot{Name: "belief_positions" + suffix, Title: "Positions on " + clip(tp.name, 60), X: "round", Y: "position"}
			var mean, lo, hi world.Series
			mean.Label, lo.Label, hi.Label = "mean", "lowest", "highest"
			for k, b := range shots {
				x := float64(snaps[k])
				m, _ := s.meanBelief(b, t)
				l, h := 1.0, -1.0
				for i := range s.members {
					p := b[2*(i*len(s.topics)+t)]
					l, h = min(l, p), max(h, p)
				}
				mean.X, mean.Y = append(mean.X, x), append(mean.Y, m)
				lo.X, lo.Y = append(lo.X, x), append(lo.Y, l)
				hi.X, hi.Y = append(hi.X, x), append(hi.Y, h)
			}
			lines.Series = []world.Series{mean, lo, hi}
			plots = append(plots, hist, lines)
		}
	}
	act := world.Plot{Name: "activity", Title: "Social feed activity per round", X: "round", Y: "count"}
	var posts, likes, active world.Series
	posts.Label, likes.Label, active.Label = "posts and replies", "likes", "active agents"
	for _, rr := range s.rep.rounds {
		x := float64(rr.round)
		posts.X, posts.Y = append(posts.X, x), append(posts.Y, float64(rr.stats.posts+rr.stats.replies))
		likes.X, likes.Y = append(likes.X, x), append(likes.Y, float64(rr.stats.likes))
		active.X, active.Y = append(active.X, x), append(active.Y, float64(rr.stats.active))
	}
	act.Series = []world.Series{posts, likes, active}
	return append(plots, act)
}

// eachSnapshot calls f with the starting beliefs (round 0) and those after
// each recorded round.
func (s *Social) eachSnapshot(f func(round int, b []float64)) {
	if s.rep.start != nil {
		f(0, s.rep.start)
	}
	for _, rr := range s.rep.rounds {
		if rr.beliefs != nil {
			f(rr.round, rr.beliefs)
		}
	}
}

// meanBelief is the mean position and confidence on topic t of a snapshot.
func (s *Social) meanBelief(b []float64, t int) (float64, float64) {
	if len(b) == 0 || len(s.members) == 0 || t >= len(s.topics) {
		return 0, 0
	}
	var p, c float64
	for i := range s.members {
		k := 2 * (i*len(s.topics) + t)
		p += b[k]
		c += b[k+1]
	}
	n := float64(len(s.members))
	return round4(p / n), round4(c / n)
}
