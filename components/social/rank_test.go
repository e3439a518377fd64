package social

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// rankNaive ranks every top-level post for a viewer: the definition that
// rankAll computes faster.
func (s *Social) rankNaive(viewer int) []int32 {
	var all []cand
	for _, p := range s.rk.tops {
		all = append(all, cand{p, s.score(p, s.members[viewer].follows(s.posts[p].author))})
	}
	slices.SortFunc(all, func(a, b cand) int {
		switch {
		case a.better(b):
			return -1
		case b.better(a):
			return 1
		}
		return 0
	})
	var out []int32
	for _, c := range all[:min(len(all), s.cfg.FeedSize)] {
		out = append(out, c.post)
	}
	return out
}

// synthetic fills a component with agents, posts over rounds, votes, reposts,
// replies and follows, without a world.
func synthetic(agents, posts, follows int, seed uint64) *Social {
	s, err := NewWithConfig(DefaultConfig())
	if err != nil {
		panic(err)
	}
	ids := make([]string, agents)
	for i := range ids {
		ids[i] = fmt.Sprintf("agent_%04d", i+1)
	}
	s.setup(ids, []Topic{{Name: "topic"}}, nil)
	r := rand.New(rand.NewPCG(seed, 1))
	perRound := max(1, posts/20)
	for i := 0; i < posts; i++ {
		if i > 0 && i%perRound == 0 {
			s.round++
		}
		parent := int32(-1)
		if i > 10 && r.IntN(5) == 0 {
			parent = s.rk.tops[r.IntN(len(s.rk.tops))]
		}
		j := s.addPost(r.IntN(agents), parent, "post text")
		p := &s.posts[j]
		p.likes = int32(r.IntN(4) * r.IntN(4))
		p.reposts = int32(r.IntN(2) * r.IntN(3))
	}
	for v := range s.members {
		for k := 0; k < follows; k++ {
			f := int32(r.IntN(agents))
			if int(f) == v {
				continue
			}
			m := &s.members[v]
			if pos, found := slices.BinarySearch(m.following, f); !found {
				m.following = slices.Insert(m.following, pos, f)
			}
		}
	}
	return s
}

func TestRankAllEqualsNaiveRanking(t *testing.T) {
	for _, c := range []struct{ agents, posts, follows int }{{5, 0, 2}, {5, 3, 2}, {30, 400, 5}, {200, 3000, 20}, {50, 500, 49}} {
		for _, echo := range []float64{0, 0.5, 1} {
			s := synthetic(c.agents, c.posts, c.follows, uint64(c.posts)+7)
			s.cfg.EchoChamberStrength = echo
			s.rankAll()
			for v := range s.members {
				var got []int32
				for _, e := range s.members[v].feed {
					got = append(got, e.post)
				}
				require.Equal(t, s.rankNaive(v), got, "case %+v echo %g viewer %d", c, echo, v)
			}
		}
	}
}

// BenchmarkFeedRanking ranks every agent's feed for one round: 10,000 posts
// (about 8,000 top-level, the rest replies) by 1,000 agents who follow 20
// others each.
func BenchmarkFeedRanking(b *testing.B) {
	s := synthetic(1000, 10000, 20, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s.rankAll()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/round")
}

// BenchmarkFeedRankingNaive is the same round ranked the obvious way, for
// comparison: every post scored for every agent, keeping the best feed_size.
func BenchmarkFeedRankingNaive(b *testing.B) {
	s := synthetic(1000, 10000, 20, 1)
	s.rankAll()
	b.ResetTimer()
	var buf []cand
	for b.Loop() {
		for v := range s.members {
			m := &s.members[v]
			buf = buf[:0]
			for _, p := range s.rk.tops {
				buf = insert(buf, s.cfg.FeedSize, cand{p, s.score(p, m.follows(s.posts[p].author))})
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/round")
}

// Ranking a round reuses the previous round's memory.
func TestRankAllDoesNotAllocate(t *testing.T) {
	s := synthetic(300, 3000, 10, 3)
	s.rankAll()
	require.Zero(t, testing.AllocsPerRun(5, s.rankAll))
}
