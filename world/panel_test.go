package world_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 5, "hello"},
		{"hello", 10, "hello"},
		{"hello world", 5, "hell…"},
		{"héllo wörld", 4, "hél…"},
		{"hello", 1, "…"},
		{"hello", 0, ""},
		{"", 3, ""},
	} {
		require.Equal(t, tc.want, world.Clip(tc.in, tc.n), "Clip(%q, %d)", tc.in, tc.n)
	}
}

func TestPanelAddClipsAndDrops(t *testing.T) {
	var p world.Panel
	p.Add("round %d", 3)
	p.Add("%s", strings.Repeat("é", world.PanelWidth+5))
	p.Add("two\nlines\tand a tab")
	require.Equal(t, "round 3", p.Lines[0])
	require.Equal(t, world.PanelWidth, utf8.RuneCountInString(p.Lines[1]))
	require.True(t, strings.HasSuffix(p.Lines[1], "é…"))
	require.Equal(t, "two lines and a tab", p.Lines[2])
	for i := range 20 {
		p.Add("line %d", i)
	}
	require.Len(t, p.Lines, world.PanelLines)
	require.Equal(t, 0, p.Room())
	require.Equal(t, fmt.Sprintf("line %d", world.PanelLines-4), p.Lines[world.PanelLines-1])
}

func TestPanelAddList(t *testing.T) {
	items := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("player%02d Sheriff", i+1)) // 16 characters
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		items    []string
		maxLines int
		want     []string
	}{
		{"none", nil, 3, nil},
		{"one line", items(2), 3, []string{"Alive: player01 Sheriff, player02 Sheriff"}},
		{"wraps", items(5), 3, []string{
			"Alive: player01 Sheriff, player02 Sheriff, player03 Sheriff",
			"  player04 Sheriff, player05 Sheriff",
		}},
		{"overflow", items(9), 2, []string{
			"Alive: player01 Sheriff, player02 Sheriff, player03 Sheriff",
			"  player04 Sheriff, player05 Sheriff, +4 more",
		}},
		{"overflow on the first line", items(4), 1, []string{"Alive: player01 Sheriff, player02 Sheriff, +2 more"}},
		{"long item", []string{strings.Repeat("x", 100)}, 2, []string{"Alive: " + strings.Repeat("x", 52) + "…"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p world.Panel
			p.AddList("Alive: ", tc.items, tc.maxLines)
			require.Equal(t, tc.want, p.Lines)
		})
	}
}

func TestPanelAddListKeepsWithinRoom(t *testing.T) {
	var p world.Panel
	for i := range world.PanelLines - 2 {
		p.Add("line %d", i)
	}
	var items []string
	for i := range 100 {
		items = append(items, fmt.Sprintf("item %d", i))
	}
	p.AddList("Items: ", items, 10)
	require.Len(t, p.Lines, world.PanelLines)
	require.True(t, strings.HasSuffix(p.Lines[world.PanelLines-1], " more"), p.Lines[world.PanelLines-1])
	for _, l := range p.Lines {
		require.LessOrEqual(t, utf8.RuneCountInString(l), world.PanelWidth)
	}
	// Every item is either shown or counted.
	shown := 0
	for _, l := range p.Lines[world.PanelLines-2:] {
		shown += strings.Count(l, "item ")
	}
	var rest int
	_, err := fmt.Sscanf(p.Lines[world.PanelLines-1][strings.LastIndex(p.Lines[world.PanelLines-1], "+"):], "+%d more", &rest)
	require.NoError(t, err)
	require.Equal(t, 100, shown+rest)
}
