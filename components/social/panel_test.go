package social

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// panel returns the component's panel, checking that it changes nothing and
// keeps to the panel limits.
func (e *env) panel() world.Panel {
	e.t.Helper()
	return testutil.Panel(e.t, e.w, e.s)
}

func TestPanelShowsTopPostsByFeedRanking(t *testing.T) {
	e := newEnv(t, 3, "")
	p := e.panel()
	require.Equal(t, "Social feed", p.Title)
	require.Equal(t, []string{"Round 0 · 0 posts, 0 replies · 0 follows · 0 viral", "Mean belief: topic +0.00 (conf 0.50)", "No posts yet"}, p.Lines)

	old := e.post("a1", "Hello all")
	e.round()
	e.round()
	fresh := e.post("a2", "A new post")
	e.ok("a3", "reply", map[string]any{"post_id": fresh, "text": "Welcome"})
	e.ok("a1", "follow", map[string]any{"agent_id": "a2"})
	e.like("a3", old)
	e.round()
	// One like is not enough for the old post to beat the new one.
	p = e.panel()
	require.Equal(t, "Round 3 · 2 posts, 1 replies · 1 follows · 0 viral", p.Lines[0])
	require.Equal(t, "2. a1 (likes 1): Hello all", p.Lines[3])
	require.Equal(t, "1. a2 (likes 0, replies 1): A new post", p.Lines[2])
	require.Equal(t, []string{fresh, old}, e.feed("a3"), "the panel ranks as the feed of a reader following no one")

	// Two likes and a repost put it first, as they do in the feed.
	e.like("a2", old)
	e.ok("a2", "repost", map[string]any{"post_id": old})
	e.ok("a3", "vote", map[string]any{"post_id": fresh, "value": -1})
	e.round()
	p = e.panel()
	require.Equal(t, "1. a1 (likes 2, reposts 1): Hello all", p.Lines[2])
	require.Equal(t, "2. a2 (likes 0, dislikes 1, replies 1): A new post", p.Lines[3])
	require.Equal(t, []string{old, fresh}, e.feed("a3"))
}

func TestPanelLimits(t *testing.T) {
	e := newEnv(t, 6, `{"topics": [{"name": "energy"}, {"name": "climate"}, {"name": "taxes"}, {"name": "a very long topic name indeed, longer than most"}]}`)
	long := strings.Repeat("word ", 50)
	for i := range 30 {
		e.post(fmt.Sprintf("a%d", i%6+1), fmt.Sprintf("post %d %s", i, long))
	}
	e.round()
	p := e.panel()
	require.Len(t, p.Lines, world.PanelLines)
	require.Contains(t, p.Lines[0], "30 posts")
	require.True(t, strings.HasPrefix(p.Lines[1], "Mean belief: energy +0.00"), p.Lines[1])
	require.True(t, strings.HasPrefix(p.Lines[len(p.Lines)-1], "11. "), p.Lines[len(p.Lines)-1])
	require.True(t, strings.HasSuffix(p.Lines[3], "…"), "long posts are clipped")
}
