// Package social is the social feed world component: agents post, reply in
// threads, like or dislike (one vote per agent per post), repost and follow;
// each agent sees a ranked feed; posts that take off are announced to everyone
// as viral_post; and each agent's beliefs on the scenario's topics move with
// what it reads. It follows the reference system (SimSwarm's social
// environment and belief model) where that is specified, and fixes its
// documented gaps (see docs/components.md#social).
package social

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/arena-sim/arena/world"
)

// Name is the component's name: its observation section and event source.
const Name = "social"

// Social is the component. Build it with New; it is attached to one world.
type Social struct {
	cfg     Config
	topics  []topic
	ids     []string       // agent ids in scenario order
	idx     map[string]int // agent id → index
	posts   []post         // post i has id "p<i+1>"
	members []member
	round   int // rounds completed; posts made now get this round
	maxTop  int // latest round of a top-level post

	rk  ranker  // ranking scratch, reused every round
	rep reports // the episode's record, for Tables and Plots
}

type topic struct {
	name     string
	keywords []string // lower case
}

type post struct {
	author    int32
	parent    int32 // -1 for a top-level post
	round     int32 // the round it was made in
	likes     int32
	dislikes  int32
	reposts   int32
	viral     bool
	topics    uint8 // bit t: counts for topic t
	stance    float64
	text      string
	key       uint64 // exposure key: FNV-1a 64 of the reference's r<round>:<author>:<fnv32(text)>
	votes     []vote
	reposters []int32
	replies   []int32 // direct replies, oldest first
}

type vote struct {
	agent int32
	value int8 // 1 like, -1 dislike
}

type member struct {
	following []int32 // sorted agent indices
	followers int
	stats     stats
	// Engagement on the agent's own posts during the current round, per topic.
	roundLikes, roundDislikes []int
	feed                      []feedEntry // the feed ranked at the round's start
	beliefs                   []Belief    // per topic
	history                   []uint64    // exposure keys, oldest first, at most ExposureCap
	seen                      map[uint64]int32
}

type stats struct {
	posts, replies, likesReceived, dislikesReceived, repostsReceived int
	votesCast, repostsMade, viralPosts                               int
}

// feedEntry is one post of a ranked feed and how many of its replies were shown.
type feedEntry struct {
	post    int32
	replies int32
}

// New builds a component from its scenario config (nil: the defaults).
func New(raw json.RawMessage) (*Social, error) {
	cfg, err := ParseConfig(raw)
	if err != nil {
		return nil, err
	}
	return NewWithConfig(cfg)
}

// NewWithConfig builds a component from a config.
func NewWithConfig(cfg Config) (*Social, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Social{cfg: cfg}, nil
}

// Config returns the component's config.
func (s *Social) Config() Config { return s.cfg }

// Name implements world.Component.
func (s *Social) Name() string { return Name }

// Attach implements world.Component: it registers the world's agents, sets up
// the topics and starting beliefs, and ranks the (empty) first feeds.
func (s *Social) Attach(w *world.World) error {
	var ids []string
	for _, a := range w.Agents() {
		ids = append(ids, a.ID)
	}
	topics := s.cfg.Topics
	if len(topics) == 0 {
		name := strings.Join(strings.Fields(w.Objective().Description), " ")
		if r := []rune(name); len(r) > maxTopicLength {
			name = string(r[:maxTopicLength])
		}
		if name == "" {
			name = "topic"
		}
		topics = []Topic{{Name: name}}
	}
	spread := s.cfg.InitialPositionSpread
	var rnd func() float64
	if spread > 0 {
		r := w.SecretRand("component:" + Name)
		rnd = func() float64 { return (2*r.Float64() - 1) * spread }
	}
	s.setup(ids, topics, rnd)
	return nil
}

// setup registers agents and topics; rnd, when set, draws starting positions.
func (s *Social) setup(ids []string, topics []Topic, rnd func() float64) {
	s.ids = ids
	s.idx = make(map[string]int, len(ids))
	for i, id := range ids {
		s.idx[id] = i
	}
	s.topics = s.topics[:0]
	for _, t := range topics {
		tp := topic{name: strings.TrimSpace(t.Name)}
		for _, k := range t.Keywords {
			tp.keywords = append(tp.keywords, strings.ToLower(strings.TrimSpace(k)))
		}
		s.topics = append(s.topics, tp)
	}
	s.members = make([]member, len(ids))
	for i := range s.members {
		m := &s.members[i]
		m.roundLikes = make([]int, len(s.topics))
		m.roundDislikes = make([]int, len(s.topics))
		m.seen = map[uint64]int32{}
		if s.cfg.Beliefs {
			m.beliefs = make([]Belief, len(s.topics))
			for t := range m.beliefs {
				m.beliefs[t] = NewBelief()
				if rnd != nil {
					m.beliefs[t].Position = rnd()
				}
			}
		}
	}
	s.rep = reports{start: s.beliefSnapshot()}
	s.rankAll()
}

// Tick implements world.Component: at the last tick of each round, beliefs move
// with what each agent saw this round, the round counter advances, posts that
// reached the viral threshold are announced, and every feed is ranked afresh
// for the next round.
func (s *Social) Tick(w *world.World) {
	if (w.Tick()+1)%s.cfg.RoundTicks != 0 {
		return
	}
	if s.cfg.Beliefs {
		s.updateBeliefs()
	}
	s.round++
	for i := range s.posts {
		p := &s.posts[i]
		if p.viral || int(p.likes+p.reposts) < s.cfg.ViralThreshold {
			continue
		}
		p.viral = true
		s.members[p.author].stats.viralPosts++
		s.rep.cur.viral++
		w.Publish(world.Event{Source: Name, Type: "viral_post", Agent: s.ids[p.author], Data: map[string]any{
			"post_id": postID(i), "author": s.ids[p.author], "text": p.text,
			"likes": float64(p.likes), "reposts": float64(p.reposts), "score": float64(p.likes + p.reposts),
		}})
	}
	s.closeRound(w.Tick())
	s.rankAll()
}

// FormatEvent implements world.EventFormatter: the reference's trending line,
// with the post's id so that agents can act on it.
func (s *Social) FormatEvent(e world.Event) (string, bool) {
	if e.Type != "viral_post" {
		return "", false
	}
	text, _ := e.Data["text"].(string)
	author, _ := e.Data["author"].(string)
	id, _ := e.Data["post_id"].(string)
	score, _ := e.Data["score"].(float64)
	return fmt.Sprintf("[Social] Trending: %q by %s (post_id=%s, %g likes + reposts)", clip(text, 80), author, id, score), true
}

// Hash implements world.Component.
func (s *Social) Hash(h *world.Hasher) {
	h.Int(s.round)
	h.Int(len(s.ids))
	for _, id := range s.ids {
		h.String(id)
	}
	h.Int(len(s.posts))
	for i := range s.posts {
		p := &s.posts[i]
		h.Int(int(p.author))
		h.Int(int(p.parent))
		h.Int(int(p.round))
		h.Int(int(p.likes))
		h.Int(int(p.dislikes))
		h.Int(int(p.reposts))
		h.Bool(p.viral)
		h.String(p.text)
		h.Int(len(p.votes))
		for _, v := range p.votes {
			h.Int(int(v.agent))
			h.Int(int(v.value))
		}
		h.Int(len(p.reposters))
		for _, r := range p.reposters {
			h.Int(int(r))
		}
	}
	for i := range s.members {
		m := &s.members[i]
		h.Int(len(m.following))
		for _, f := range m.following {
			h.Int(int(f))
		}
		h.Int(m.followers)
		st := m.stats
		for _, v := range []int{st.posts, st.replies, st.likesReceived, st.dislikesReceived, st.repostsReceived, st.votesCast, st.repostsMade, st.viralPosts} {
			h.Int(v)
		}
		for t := range m.roundLikes {
			h.Int(m.roundLikes[t])
			h.Int(m.roundDislikes[t])
		}
		h.Int(len(m.feed))
		for _, e := range m.feed {
			h.Int(int(e.post))
			h.Int(int(e.replies))
		}
		h.Int(len(m.beliefs))
		for _, b := range m.beliefs {
			h.Float(b.Position)
			h.Float(b.Confidence)
			keys := make([]string, 0, len(b.Trust))
			for k := range b.Trust {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			h.Int(len(keys))
			for _, k := range keys {
				h.String(k)
				h.Float(b.Trust[k])
			}
		}
		h.Int(len(m.history))
		for _, k := range m.history {
			h.Uint(k)
		}
	}
}

// metricNames are the metrics the component defines, per agent.
var metricNames = []string{
	"social.posts", "social.replies", "social.likes_received", "social.dislikes_received", "social.reposts_received",
	"social.followers", "social.following", "social.votes_cast", "social.reposts_made", "social.viral_posts",
	"social.belief_position", "social.belief_confidence",
}

// MetricNames lists the metrics a scenario's objective may name.
func (s *Social) MetricNames() []string { return slices.Clone(metricNames) }

// Metric implements world.MetricSource. Its metrics are named social.<name>;
// social.belief_position and social.belief_confidence are the agent's on the
// first topic.
func (s *Social) Metric(_ *world.World, agentID, name string) (float64, bool) {
	if !slices.Contains(metricNames, name) {
		return 0, false
	}
	i, ok := s.idx[agentID]
	if !ok {
		return 0, true
	}
	m := &s.members[i]
	switch strings.TrimPrefix(name, Name+".") {
	case "posts":
		return float64(m.stats.posts), true
	case "replies":
		return float64(m.stats.replies), true
	case "likes_received":
		return float64(m.stats.likesReceived), true
	case "dislikes_received":
		return float64(m.stats.dislikesReceived), true
	case "reposts_received":
		return float64(m.stats.repostsReceived), true
	case "followers":
		return float64(m.followers), true
	case "following":
		return float64(len(m.following)), true
	case "votes_cast":
		return float64(m.stats.votesCast), true
	case "reposts_made":
		return float64(m.stats.repostsMade), true
	case "viral_posts":
		return float64(m.stats.viralPosts), true
	case "belief_position":
		if len(m.beliefs) > 0 {
			return round4(m.beliefs[0].Position), true
		}
	case "belief_confidence":
		if len(m.beliefs) > 0 {
			return round4(m.beliefs[0].Confidence), true
		}
	}
	return 0, true
}

// updateBeliefs moves every agent's beliefs by the posts of the feed it was
// shown this round (the feed ranked at the round's start: the top-level posts
// and the replies under them), other agents' posts only, and by the likes and
// dislikes its own posts received this round. An agent with neither is left
// alone.
func (s *Social) updateBeliefs() {
	var seen []int32
	var exps []Exposure
	for i := range s.members {
		m := &s.members[i]
		seen = seen[:0]
		for _, e := range m.feed {
			seen = s.appendSeen(seen, int32(i), e.post)
			for _, r := range s.posts[e.post].replies[:e.replies] {
				seen = s.appendSeen(seen, int32(i), r)
			}
		}
		novel := make([]bool, len(seen))
		for k, p := range seen {
			key := s.posts[p].key
			novel[k] = m.seen[key] == 0
			for _, q := range seen[:k] {
				if s.posts[q].key == key {
					novel[k] = false // the same text by the same author in the same round
					break
				}
			}
		}
		for t := range s.topics {
			exps = exps[:0]
			for k, p := range seen {
				pp := &s.posts[p]
				if pp.topics&(1<<t) == 0 {
					continue
				}
				exps = append(exps, Exposure{Author: s.ids[pp.author], Stance: pp.stance, Likes: int(pp.likes), Novel: novel[k]})
			}
			if len(exps) == 0 && m.roundLikes[t] == 0 && m.roundDislikes[t] == 0 {
				continue
			}
			m.beliefs[t] = Update(m.beliefs[t], exps, m.roundLikes[t], m.roundDislikes[t])
		}
		for _, p := range seen {
			m.remember(s.posts[p].key)
		}
		clear(m.roundLikes)
		clear(m.roundDislikes)
	}
}

// appendSeen adds a post an agent was shown, unless the agent wrote it.
func (s *Social) appendSeen(seen []int32, viewer, p int32) []int32 {
	if s.posts[p].author == viewer {
		return seen
	}
	return append(seen, p)
}

// remember adds an exposure key, forgetting the oldest beyond ExposureCap.
func (m *member) remember(key uint64) {
	m.history = append(m.history, key)
	m.seen[key]++
	if over := len(m.history) - ExposureCap; over > 0 {
		for _, k := range m.history[:over] {
			if m.seen[k]--; m.seen[k] == 0 {
				delete(m.seen, k)
			}
		}
		m.history = append(m.history[:0], m.history[over:]...)
	}
}

// addPost stores a post or reply made now and returns its index.
func (s *Social) addPost(author int, parent int32, text string) int {
	p := post{author: int32(author), parent: parent, round: int32(s.round), text: text, stance: Sentiment(text)}
	h := fnv.New32a()
	h.Write([]byte(text))
	k := fnv.New64a()
	fmt.Fprintf(k, "r%d:%s:%08x", s.round, s.ids[author], h.Sum32())
	p.key = k.Sum64()
	lower := strings.ToLower(text)
	for t, tp := range s.topics {
		if len(tp.keywords) == 0 || slices.ContainsFunc(tp.keywords, func(k string) bool { return strings.Contains(lower, k) }) {
			p.topics |= 1 << t
		}
	}
	s.posts = append(s.posts, p)
	i := len(s.posts) - 1
	s.track(i)
	if parent >= 0 {
		s.posts[parent].replies = append(s.posts[parent].replies, int32(i))
		s.members[author].stats.replies++
		s.rep.cur.replies++
	} else {
		s.members[author].stats.posts++
		s.maxTop = max(s.maxTop, s.round)
		s.rep.cur.posts++
	}
	s.acted(author)
	return i
}

func postID(i int) string { return "p" + strconv.Itoa(i+1) }

// postIndex parses a post id ("p1", "p2", ...) into an index: "p" and
// decimal digits without a leading zero, nothing else ("p+1" and "p 1" are
// no post ids).
func (s *Social) postIndex(id string) (int, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(id), "p")
	if !ok || rest == "" || len(rest) > 10 || rest[0] == '0' || strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 1 || n > len(s.posts) {
		return 0, false
	}
	return n - 1, true
}

func (m *member) follows(j int32) bool {
	_, ok := slices.BinarySearch(m.following, j)
	return ok
}

func (p *post) voteOf(agent int32) int8 {
	for _, v := range p.votes {
		if v.agent == agent {
			return v.value
		}
	}
	return 0
}

func (p *post) repostedBy(agent int32) bool { return slices.Contains(p.reposters, agent) }

// cleanText makes a post's text one line of valid UTF-8 without control
// characters, with runs of white space collapsed.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// clip cuts text to n characters, marking the cut with "…".
func clip(text string, n int) string {
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	r := []rune(text)
	return string(r[:n-1]) + "…"
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// Factory builds the component from a scenario's config, for the components
// registry.
func Factory(raw json.RawMessage) (world.Component, error) {
	s, err := New(raw)
	if err != nil {
		return nil, err
	}
	return s, nil
}
