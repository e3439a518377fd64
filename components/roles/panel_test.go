package roles

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// panel returns the game's panel, checking that it changes nothing and keeps
// to the panel limits.
func (tb *table) panel() world.Panel {
	tb.t.Helper()
	p := testutil.Panel(tb.t, tb.w, tb.g)
	require.Equal(tb.t, "Role game", p.Title)
	return p
}

func TestPanelFollowsTheGame(t *testing.T) {
	tb := newTable(t, "Godfather", "Janitor", "Doctor", "Sheriff", "Investigator", "Escort", "Mayor")
	require.Equal(t, []string{
		"Day 1 · discussion · 1 tick left · 7 alive, 0 dead",
		"p1 Godfather (mafia) [hidden]",
		"p2 Janitor (mafia) [hidden]",
		"p3 Doctor (town) [hidden]",
		"p4 Sheriff (town) [hidden]",
		"p5 Investigator (town) [hidden]",
		"p6 Escort (town) [hidden]",
		"p7 Mayor (town) [hidden]",
	}, tb.panel().Lines)

	// Night 1: the Mafia kill the Sheriff and the Janitor cleans the body.
	tb.to(PhaseNight)
	tb.ok("p1", "night_action", map[string]any{"target": "p4"})
	tb.ok("p2", "night_action", map[string]any{"target": "p4"})
	p := tb.panel()
	require.Equal(t, "Day 1 · night · 1 tick left · 7 alive, 0 dead", p.Lines[0])
	require.Equal(t, "Night actions [hidden]: p1→p4, p2→p4", p.Lines[1])
	tb.w.Step()
	require.False(t, tb.p("p4").alive)
	p = tb.panel()
	require.Equal(t, "Day 2 · discussion · 1 tick left · 6 alive, 1 dead", p.Lines[0])
	require.Equal(t, "p4 Sheriff (town) dead d1 [hidden]", p.Lines[4], "a cleaned role stays hidden from the players")

	// Day 2: the Mayor reveals; three nominations put the Godfather on trial.
	tb.to(PhaseNomination)
	tb.ok("p7", "reveal", nil)
	tb.ok("p3", "nominate", map[string]any{"player": "p1"})
	tb.ok("p5", "nominate", map[string]any{"player": "p1"})
	tb.ok("p1", "nominate", map[string]any{"player": "p6"})
	p = tb.panel()
	require.Equal(t, []string{"Nominations (3 put on trial; trial 1 of 3): p1: 2 by p3 p5", "  p6: 1 by p1"}, p.Lines[1:3])
	require.Equal(t, "p7 Mayor (town) [public]", p.Lines[len(p.Lines)-1])
	tb.ok("p6", "nominate", map[string]any{"player": "p1"})
	require.Contains(t, tb.panel().Lines, "p1 goes on trial")
	tb.w.Step()
	require.Equal(t, "On trial: p1 (trial 1 of 3), defending", tb.panel().Lines[1])
	tb.w.Step()
	require.Equal(t, PhaseJudgement, tb.g.phase)
	tb.ok("p7", "vote", map[string]any{"verdict": "guilty"})
	tb.ok("p2", "vote", map[string]any{"verdict": "innocent"})
	tb.ok("p3", "vote", map[string]any{"verdict": "guilty"})
	p = tb.panel()
	require.Equal(t, "Day 2 · judgement · 1 tick left · 6 alive, 1 dead", p.Lines[0])
	require.Equal(t, "On trial p1: guilty 4, innocent 1, abstain 2", p.Lines[1], "the revealed Mayor's vote weighs 3")
	require.Equal(t, "Votes [hidden]: p2 innocent, p3 guilty, p7 guilty", p.Lines[2])
	tb.w.Step()
	p = tb.panel()
	require.Equal(t, "Found guilty: p1, last words", p.Lines[1])
	require.Equal(t, world.Clip("Last verdict: "+tb.g.lastTally, world.PanelWidth), p.Lines[2])
	require.True(t, strings.HasPrefix(p.Lines[2], "Last verdict: p1: 4 guilty, 1 innocent (p2 innocent"), p.Lines[2])
	tb.w.Step()
	require.False(t, tb.p("p1").alive)
	p = tb.panel()
	require.Contains(t, p.Lines, "p1 Godfather (mafia) dead d2 [public]")
	require.Contains(t, p.Lines, fmt.Sprintf("p2 %s (mafia) [hidden]", tb.p("p2").role))

	// The Town wins once the last of the Mafia dies; every role is public.
	tb.end("p2")
	p = tb.panel()
	require.Equal(t, "Game over on day 2: Town wins · 4 alive, 3 dead", p.Lines[0])
	require.Contains(t, p.Lines, "p3 Doctor (town) alive won [public]")
	require.Contains(t, p.Lines, "p4 Sheriff (town) dead d1 won [public]")
	require.Contains(t, p.Lines, fmt.Sprintf("p2 %s (mafia) dead d2 [public]", tb.p("p2").role))
	require.Len(t, p.Lines, 8)
}

var fifteen = []string{"Godfather", "Mafioso", "Doctor", "Sheriff", "Investigator", "Escort", "Mayor", "Lookout",
	"Bodyguard", "Vigilante", "Serial Killer", "Jester", "Consigliere", "Framer", "Survivor"}

// bigTable is a game of fifteen players with the given ids.
func bigTable(t *testing.T, ids []string) *table {
	t.Helper()
	return tableOf(t, ids, fifteen, nil)
}

func TestPanelFifteenPlayersFit(t *testing.T) {
	short := make([]string, 15)
	long := make([]string, 15)
	for i := range 15 {
		short[i] = fmt.Sprintf("p%d", i+1)
		long[i] = fmt.Sprintf("a-rather-long-agent-name-%02d", i+1)
	}
	for _, tc := range []struct {
		name string
		ids  []string
		more []string // the lines counting players not shown
	}{{"short ids", short, nil}, {"long ids", long, []string{"  +5 more", "Dead [public]: +2 more"}}} {
		t.Run(tc.name, func(t *testing.T) {
			tb := bigTable(t, tc.ids)
			id := func(i int) string { return tc.ids[i-1] }
			// Night 1 kills two; day 2 puts a third on trial with many votes.
			tb.night(map[string]string{id(1): id(4), id(11): id(5), id(3): id(6)})
			require.False(t, tb.p(id(4)).alive)
			require.False(t, tb.p(id(5)).alive)
			tb.to(PhaseNomination)
			for _, n := range []int{1, 2, 3, 6, 7, 8, 9} {
				tb.ok(id(n), "nominate", map[string]any{"player": id(12)})
			}
			tb.w.Step()
			tb.w.Step()
			require.Equal(t, PhaseJudgement, tb.g.phase)
			for i, n := range []int{1, 2, 3, 6, 7, 8, 9, 10, 11, 13, 14} {
				tb.ok(id(n), "vote", map[string]any{"verdict": []string{"guilty", "innocent", "abstain"}[i%3]})
			}
			p := tb.panel()
			require.Equal(t, world.Clip("On trial "+id(12), 27)+": guilty 4, innocent 4, abstain 4", p.Lines[1])
			all := strings.Join(p.Lines, "\n")
			require.Contains(t, all, shown("Alive [hidden]: "+id(1)+" Godfather (mafia)"))
			for _, l := range tc.more {
				require.Contains(t, p.Lines, l)
			}
			if tc.more == nil {
				require.Contains(t, all, "Dead [public]: "+id(4)+" Sheriff (town) d1")
				for n := range 15 {
					require.Contains(t, all, fmt.Sprintf("p%d %s (", n+1, fifteen[n]))
				}
			}

			// At the end every role is public, packed as well.
			tb.end(id(1), id(2), id(11), id(12), id(13), id(14))
			require.True(t, tb.g.Over())
			p = tb.panel()
			require.LessOrEqual(t, len(p.Lines), world.PanelLines)
			require.True(t, strings.HasPrefix(p.Lines[1], shown("Roles [public]: "+id(1)+" Godfather (mafia) d2")), p.Lines[1])
		})
	}
}

// shown is what a line shows of s: s clipped to the panel's width, without
// the mark of the cut.
func shown(s string) string { return strings.TrimSuffix(world.Clip(s, world.PanelWidth), "…") }
