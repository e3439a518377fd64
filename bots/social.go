package bots

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/arena-sim/arena/world"
)

// Social is the "social" bot: an agent of the social feed (components.social)
// that speaks its mind. It reads its position on the first belief topic from
// its own section and, each turn, does the first of these that applies:
//
//  1. posts about its stance when its turn to post comes (its first turn, then
//     every few turns);
//  2. follows an author it has liked twice, or whose popular post it liked;
//  3. reposts a popular post it liked;
//  4. replies, now and then, to a post with no replies yet, in its own words;
//  5. votes on a post it has not voted on: a like when the post's stance is
//     close to its own, a dislike when it is clearly on the other side (a
//     trending post from the event digest first);
//  6. otherwise does nothing.
//
// It never votes on or reposts its own posts, never votes twice and never
// follows twice, so its calls succeed. Its choices depend only on its
// observations and its seed.
type Social struct {
	info      Info
	rng       *rand.Rand
	turn      int
	nextPost  int            // the turn of its next post
	posted    int            // posts made
	liked     map[string]int // author → likes given
	replied   map[string]bool
	followed  map[string]bool
	phrasings int // which template comes next
}

// How the social bot behaves.
const (
	socialPostEvery   = 5    // turns between posts, give or take one
	socialAgree       = 0.6  // |post stance − own position| at most this: like
	socialOpposed     = 0.25 // a post this far on the other side of 0: dislike
	socialFollowAt    = 2    // likes given to an author before following it
	socialLeaderLikes = 3    // or the likes of a post of its that it liked
	socialReplyOdds   = 0.2  // chance of replying when nothing else applies
)

// NewSocial creates a social bot.
func NewSocial(info Info) *Social {
	rng := botRand(info)
	return &Social{info: info, rng: rng, nextPost: 0, liked: map[string]int{}, replied: map[string]bool{},
		followed: map[string]bool{}, phrasings: rng.IntN(3)}
}

// feedPost is one post of the feed as the bot reads it.
type feedPost struct {
	id, author string
	stance     float64
	likes      float64
	replies    float64
	yourVote   float64
	reposted   bool
	topLevel   bool
}

// Decide implements Bot.
func (b *Social) Decide(_ context.Context, obs *world.Observation) world.Decision {
	sec := SectionOf(obs, "social")
	if sec == nil || !obs.Alive {
		return world.Idle("no social feed here")
	}
	turn := b.turn
	b.turn++
	topic, pos := "the topic", 0.0
	if bl := ListOf(sec["beliefs"]); len(bl) > 0 {
		m := MapOf(bl[0])
		topic, pos = shortTopic(StrOf(m["topic"])), NumOf(m["position"])
	}
	for _, f := range ListOf(sec["following"]) {
		b.followed[StrOf(f)] = true
	}
	posts := b.readFeed(sec)

	// 1. Post.
	if turn >= b.nextPost {
		b.nextPost = turn + socialPostEvery - 1 + b.rng.IntN(3)
		b.posted++
		text := b.stanceText(topic, pos)
		return world.Decision{Tool: "create_post", Params: map[string]any{"text": text},
			Reasoning: fmt.Sprintf("time to post my view (position %.2f)", pos)}
	}
	// 2. Follow an author it keeps liking (in feed order).
	for _, p := range posts {
		leader := p.topLevel && p.yourVote > 0 && p.likes >= socialLeaderLikes
		if p.author != b.info.AgentID && !b.followed[p.author] && (b.liked[p.author] >= socialFollowAt || leader) {
			b.followed[p.author] = true
			return world.Decision{Tool: "follow", Params: map[string]any{"agent_id": p.author},
				Reasoning: fmt.Sprintf("I liked %d of %s's posts", b.liked[p.author], p.author)}
		}
	}
	// 3. Repost a popular post it liked.
	for _, p := range posts {
		if p.topLevel && p.author != b.info.AgentID && p.yourVote > 0 && !p.reposted && p.likes >= 2 {
			return world.Decision{Tool: "repost", Params: map[string]any{"post_id": p.id},
				Reasoning: "a popular post I agree with"}
		}
	}
	// 4. Reply now and then to a post no one answered yet.
	if b.rng.Float64() < socialReplyOdds {
		for _, p := range posts {
			if p.topLevel && p.author != b.info.AgentID && p.replies == 0 && !b.replied[p.id] {
				b.replied[p.id] = true
				return world.Decision{Tool: "reply", Params: map[string]any{"post_id": p.id, "text": replyText(p.author, p.stance, pos)},
					Reasoning: "answering an unanswered post"}
			}
		}
	}
	// 5. Vote, trending posts first.
	trending := map[string]bool{}
	for _, e := range obs.Events {
		if e.Source == "social" && e.Type == "viral_post" {
			trending[StrOf(e.Data["post_id"])] = true
		}
	}
	for pass := 0; pass < 2; pass++ {
		for _, p := range posts {
			if p.author == b.info.AgentID || p.yourVote != 0 || trending[p.id] != (pass == 0) {
				continue
			}
			if v := b.opinion(p.stance, pos); v != 0 {
				if v > 0 {
					b.liked[p.author]++
				}
				return world.Decision{Tool: "vote", Params: map[string]any{"post_id": p.id, "value": v},
					Reasoning: fmt.Sprintf("post stance %.2f against my position %.2f", p.stance, pos)}
			}
		}
	}
	return world.Decision{Tool: "do_nothing", Reasoning: "nothing new to react to"}
}

// readFeed reads the feed's posts and the replies shown under them.
func (b *Social) readFeed(sec map[string]any) []feedPost {
	var out []feedPost
	read := func(v any, top bool) feedPost {
		m := MapOf(v)
		rp, _ := m["reposted"].(bool)
		return feedPost{id: StrOf(m["post_id"]), author: StrOf(m["author_id"]), stance: NumOf(m["stance"]), likes: NumOf(m["likes"]),
			replies: NumOf(m["replies"]), yourVote: NumOf(m["your_vote"]), reposted: rp, topLevel: top}
	}
	for _, e := range ListOf(sec["feed"]) {
		out = append(out, read(e, true))
		for _, r := range ListOf(MapOf(e)["thread"]) {
			out = append(out, read(r, false))
		}
	}
	return out
}

// opinion is 1 (like), -1 (dislike) or 0 (no vote) for a post's stance.
func (b *Social) opinion(stance, pos float64) int {
	switch {
	case math.Abs(stance-pos) <= socialAgree && (stance != 0 || math.Abs(pos) < 0.2):
		return 1
	case pos >= 0.2 && stance <= -socialOpposed, pos <= -0.2 && stance >= socialOpposed:
		return -1
	}
	return 0
}

// stanceText is a post stating the bot's position.
func (b *Social) stanceText(topic string, pos float64) string {
	var forms []string
	switch {
	case pos >= 0.6:
		forms = []string{"I strongly support %s. It would be great for everyone!", "%s is a brilliant idea and really worth it.", "Absolutely in favour of %s: the benefits are huge and I love it."}
	case pos >= 0.2:
		forms = []string{"I support %s; it would be good for us.", "%s seems a good idea, worth trying.", "Leaning yes on %s: it could help."}
	case pos > -0.2:
		forms = []string{"Still undecided about %s. What are the facts?", "Not sure about %s yet; tell me more.", "Weighing both sides of %s."}
	case pos > -0.6:
		forms = []string{"I have doubts about %s; it looks costly.", "%s seems a risky idea to me.", "Leaning no on %s: too many problems."}
	default:
		forms = []string{"I oppose %s. It is a bad idea and a waste of money.", "%s would be a terrible mistake; I am against it.", "No to %s: it is harmful and wasteful."}
	}
	b.phrasings++
	f := forms[b.phrasings%len(forms)]
	text := fmt.Sprintf(f, topic)
	r, n := utf8.DecodeRuneInString(text)
	return string(unicode.ToUpper(r)) + text[n:]
}

// replyText answers a post in the bot's own stance.
func replyText(author string, stance, pos float64) string {
	agree := math.Abs(stance-pos) <= socialAgree
	switch {
	case pos >= 0.2 && agree:
		return fmt.Sprintf("Agreed, %s: great point!", author)
	case pos >= 0.2:
		return fmt.Sprintf("%s, I see it differently: it would be good for us.", author)
	case pos <= -0.2 && agree:
		return fmt.Sprintf("Right, %s: it is a bad idea.", author)
	case pos <= -0.2:
		return fmt.Sprintf("%s, I disagree: it would be a costly mistake.", author)
	}
	return fmt.Sprintf("Interesting point, %s. Why do you think so?", author)
}

// shortTopic keeps a topic short enough for a post.
func shortTopic(t string) string {
	t = strings.TrimSpace(t)
	if t == "" {
		return "the topic"
	}
	if r := []rune(t); len(r) > 60 {
		t = strings.TrimSpace(string(r[:60]))
	}
	return t
}
