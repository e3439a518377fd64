package social

import (
	"fmt"
	"slices"

	"github.com/arena-sim/arena/internal/fuzzy"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// maxIDLength bounds post and agent ids sent to the tools.
const maxIDLength = 200

// Tools implements tools.Provider: create_post, reply, vote, repost, follow
// and the shared do_nothing. Every check comes before any change, so a
// refused call changes nothing.
func (s *Social) Tools() []tools.Tool {
	text := func(desc string) *tools.Schema {
		return &tools.Schema{Type: "string", Description: fmt.Sprintf("%s (1 to %d characters)", desc, s.cfg.MaxPostLength),
			MinLength: tools.Ptr(1), MaxLength: tools.Ptr(s.cfg.MaxPostLength)}
	}
	postRef := func(desc string) *tools.Schema {
		return &tools.Schema{Type: "string", Description: desc, MinLength: tools.Ptr(1), MaxLength: tools.Ptr(maxIDLength)}
	}
	return []tools.Tool{
		{
			Name: "create_post",
			Description: "Publish a post on the social feed. Other agents see it in their ranked feeds from the next round " +
				"(recent, popular posts and posts by authors they follow rank higher). Returns the new post_id.",
			Parameters: tools.Object(map[string]*tools.Schema{"text": text("What to post")}, "text"),
			Handler:    s.createPost,
		},
		{
			Name: "reply",
			Description: "Reply to a post, by its post_id from your feed. The reply joins the post's thread; " +
				"a reply to a reply joins the same thread. Returns the reply's post_id.",
			Parameters: tools.Object(map[string]*tools.Schema{
				"post_id": postRef("The post to reply to, e.g. p3"),
				"text":    text("The reply"),
			}, "post_id", "text"),
			Handler: s.reply,
		},
		{
			Name:        "vote",
			Description: "Like (value 1) or dislike (value -1) another agent's post, by its post_id. One vote per post; it cannot be changed.",
			Parameters: tools.Object(map[string]*tools.Schema{
				"post_id": postRef("The post to vote on, e.g. p3"),
				"value":   {Type: "integer", Description: "1 to like, -1 to dislike", Minimum: tools.Ptr(-1.0), Maximum: tools.Ptr(1.0)},
			}, "post_id", "value"),
			Check: func(p map[string]any) string {
				if v, _ := p["value"].(float64); v == 0 {
					return "param 'value' must be 1 (like) or -1 (dislike), got 0"
				}
				return ""
			},
			Handler: s.vote,
		},
		{
			Name:        "repost",
			Description: "Repost another agent's post, by its post_id: it counts toward the post's popularity like a like does. Once per post.",
			Parameters:  tools.Object(map[string]*tools.Schema{"post_id": postRef("The post to repost, e.g. p3")}, "post_id"),
			Handler:     s.repost,
		},
		{
			Name: "follow",
			Description: "Follow another agent, by the author_id shown in your feed: its posts rank higher in your feed " +
				"(how much higher depends on the scenario's echo chamber strength).",
			Parameters: tools.Object(map[string]*tools.Schema{
				"agent_id": {Type: "string", Description: "The agent to follow, e.g. agent_002", MinLength: tools.Ptr(1), MaxLength: tools.Ptr(maxIDLength)},
			}, "agent_id"),
			Handler: s.follow,
		},
		tools.DoNothing(),
	}
}

// caller returns the calling agent's index, or a failure for an agent the
// component does not know (one added after it was attached).
func (s *Social) caller(c *tools.Call, tool string) (int, world.ActionResult, bool) {
	i, ok := s.idx[c.Agent.ID]
	if !ok {
		return 0, world.Fail(tool, world.CodeNotAllowed, "%s is not a member of the social feed", c.Agent.ID), false
	}
	return i, world.ActionResult{}, true
}

// postText reads and cleans a text parameter.
func (s *Social) postText(c *tools.Call, tool string) (string, world.ActionResult, bool) {
	t := cleanText(c.String("text", ""))
	if t == "" {
		return "", world.Fail(tool, world.CodeInvalidParams, "%s: param 'text' has nothing to post once white space and control characters are removed", tool), false
	}
	return t, world.ActionResult{}, true
}

// findPost reads the post_id parameter.
func (s *Social) findPost(c *tools.Call, tool string) (int, world.ActionResult, bool) {
	id := c.String("post_id", "")
	i, ok := s.postIndex(id)
	if !ok {
		hint := "there are no posts yet"
		if n := len(s.posts); n > 0 {
			hint = fmt.Sprintf("post ids run from p1 to p%d; use a post_id shown in your feed", n)
		}
		return 0, world.Fail(tool, world.CodeNotFound, "Post '%s' not found (%s)", fuzzy.Clip(id), hint), false
	}
	return i, world.ActionResult{}, true
}

func (s *Social) createPost(c *tools.Call) world.ActionResult {
	const tool = "create_post"
	a, res, ok := s.caller(c, tool)
	if !ok {
		return res
	}
	t, res, ok := s.postText(c, tool)
	if !ok {
		return res
	}
	i := s.addPost(a, -1, t)
	return world.OK(tool, map[string]any{"post_id": postID(i), "round": float64(s.round)})
}

func (s *Social) reply(c *tools.Call) world.ActionResult {
	const tool = "reply"
	a, res, ok := s.caller(c, tool)
	if !ok {
		return res
	}
	parent, res, ok := s.findPost(c, tool)
	if !ok {
		return res
	}
	t, res, ok := s.postText(c, tool)
	if !ok {
		return res
	}
	root := parent
	if r := s.posts[parent].parent; r >= 0 {
		root = int(r)
	}
	i := s.addPost(a, int32(root), t)
	data := map[string]any{"post_id": postID(i), "thread": postID(root), "round": float64(s.round)}
	if root != parent {
		data["in_reply_to"] = postID(parent)
	}
	return world.OK(tool, data)
}

func (s *Social) vote(c *tools.Call) world.ActionResult {
	const tool = "vote"
	a, res, ok := s.caller(c, tool)
	if !ok {
		return res
	}
	i, res, ok := s.findPost(c, tool)
	if !ok {
		return res
	}
	p := &s.posts[i]
	id := postID(i)
	if int(p.author) == a {
		return world.Fail(tool, world.CodeNotAllowed, "%s is your own post; you can vote only on other agents' posts", id)
	}
	if v := p.voteOf(int32(a)); v != 0 {
		return world.Fail(tool, world.CodeNotAllowed, "Already voted: you %s %s; one vote per post", map[int8]string{1: "liked", -1: "disliked"}[v], id)
	}
	value := int8(1)
	if c.Float("value", 0) < 0 {
		value = -1
	}
	p.votes = append(p.votes, vote{agent: int32(a), value: value})
	au := &s.members[p.author]
	if value > 0 {
		p.likes++
		au.stats.likesReceived++
	} else {
		p.dislikes++
		au.stats.dislikesReceived++
	}
	for t := range s.topics {
		if p.topics&(1<<t) == 0 {
			continue
		}
		if value > 0 {
			au.roundLikes[t]++
		} else {
			au.roundDislikes[t]++
		}
	}
	s.members[a].stats.votesCast++
	if value > 0 {
		s.rep.cur.likes++
	} else {
		s.rep.cur.dislikes++
	}
	s.acted(a)
	return world.OK(tool, map[string]any{"post_id": id, "value": float64(value), "likes": float64(p.likes), "dislikes": float64(p.dislikes)})
}

func (s *Social) repost(c *tools.Call) world.ActionResult {
	const tool = "repost"
	a, res, ok := s.caller(c, tool)
	if !ok {
		return res
	}
	i, res, ok := s.findPost(c, tool)
	if !ok {
		return res
	}
	p := &s.posts[i]
	id := postID(i)
	if int(p.author) == a {
		return world.Fail(tool, world.CodeNotAllowed, "%s is your own post; you can repost only other agents' posts", id)
	}
	if p.repostedBy(int32(a)) {
		return world.Fail(tool, world.CodeNotAllowed, "You already reposted %s; once per post", id)
	}
	p.reposters = append(p.reposters, int32(a))
	p.reposts++
	s.members[p.author].stats.repostsReceived++
	s.members[a].stats.repostsMade++
	s.rep.cur.reposts++
	s.acted(a)
	return world.OK(tool, map[string]any{"post_id": id, "reposts": float64(p.reposts)})
}

func (s *Social) follow(c *tools.Call) world.ActionResult {
	const tool = "follow"
	a, res, ok := s.caller(c, tool)
	if !ok {
		return res
	}
	id := c.String("agent_id", "")
	j, ok := s.idx[id]
	if !ok {
		hint := ""
		if best := fuzzy.Closest(id, s.ids); best != "" {
			hint = fmt.Sprintf(" (did you mean '%s'?)", best)
		}
		return world.Fail(tool, world.CodeNotFound, "No agent '%s'%s; follow an author_id shown in your feed", fuzzy.Clip(id), hint)
	}
	if j == a {
		return world.Fail(tool, world.CodeNotAllowed, "You cannot follow yourself")
	}
	m := &s.members[a]
	pos, found := slices.BinarySearch(m.following, int32(j))
	if found {
		return world.Fail(tool, world.CodeNotAllowed, "You already follow %s", id)
	}
	m.following = slices.Insert(m.following, pos, int32(j))
	s.members[j].followers++
	s.rep.cur.follows++
	s.acted(a)
	return world.OK(tool, map[string]any{"followed": id, "following": float64(len(m.following))})
}
