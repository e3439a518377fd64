package roles

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// table is a game with a fixed setup, every phase one tick long.
type table struct {
	t   *testing.T
	w   *world.World
	g   *Game
	reg *tools.Registry
}

func newTable(t *testing.T, setup ...string) *table {
	t.Helper()
	var ids []string
	for i := range setup {
		ids = append(ids, fmt.Sprintf("p%d", i+1))
	}
	return tableOf(t, ids, setup, func(cfg *world.Config) {
		cfg.Objective.SuccessMetrics = map[string]world.MetricTarget{"roles.game_over": {Target: 1, Required: true}}
	})
}

// tableOf is a game of the setup's roles for players with the ids (in
// order), on short phases; edit, when set, changes the world's config.
func tableOf(t *testing.T, ids, setup []string, edit func(*world.Config)) *table {
	t.Helper()
	cfg := testutil.Config()
	cfg.Agents = nil
	for i, id := range ids {
		cfg.Agents = append(cfg.Agents, world.AgentSpec{ID: id, X: float64(i), Z: 0})
	}
	if edit != nil {
		edit(&cfg)
	}
	rc := DefaultConfig()
	rc.DiscussionTicks, rc.NominationTicks, rc.NightTicks = 1, 1, 1
	rc.Setup = setup
	g, err := NewWithConfig(rc)
	require.NoError(t, err)
	cfg.Components = []world.Component{g}
	w := testutil.World(t, cfg)
	reg, err := tools.ForWorld(w)
	require.NoError(t, err)
	return &table{t: t, w: w, g: g, reg: reg}
}

func (tb *table) do(agent, tool string, params map[string]any) world.ActionResult {
	return tb.reg.Execute(tb.w, agent, tool, params, false)
}

func (tb *table) ok(agent, tool string, params map[string]any) world.ActionResult {
	tb.t.Helper()
	r := tb.do(agent, tool, params)
	require.True(tb.t, r.Success, "%s %s %v: %s", agent, tool, params, r.ErrorMessage)
	return r
}

// to steps the world until the phase is ph.
func (tb *table) to(ph string) {
	tb.t.Helper()
	for i := 0; i < 50 && tb.g.phase != ph; i++ {
		tb.w.Step()
	}
	require.Equal(tb.t, ph, tb.g.phase)
}

// night plays one night with the given actions (actor → target), then steps
// into the next day.
func (tb *table) night(acts map[string]string) {
	tb.t.Helper()
	tb.to(PhaseNight)
	for a, tg := range acts {
		tb.ok(a, "night_action", map[string]any{"target": tg})
	}
	tb.w.Step()
}

func (tb *table) p(id string) *player { return tb.g.players[tb.g.idx[id]] }

func (tb *table) results(id string) string {
	var s []string
	for _, r := range tb.p(id).results {
		s = append(s, r.Text)
	}
	return strings.Join(s, " | ")
}

var seven = []string{"Godfather", "Mafioso", "Doctor", "Sheriff", "Investigator", "Serial Killer", "Escort"}

func TestAttackAgainstDefense(t *testing.T) {
	tb := newTable(t, seven...)
	// The Mafia attack the Serial Killer (Basic against Basic), the Serial
	// Killer attacks the Godfather (Basic against Basic): nobody dies.
	tb.night(map[string]string{"p1": "p6", "p2": "p6", "p6": "p1"})
	require.True(t, tb.p("p6").alive)
	require.True(t, tb.p("p1").alive)
	require.Contains(t, tb.results("p6"), "your defense was too strong")
	require.Contains(t, tb.results("p1"), "your defense was too strong")
	// A Basic attack on a player with no defense kills.
	tb.night(map[string]string{"p1": "p5", "p6": "p4"})
	require.False(t, tb.p("p5").alive)
	require.False(t, tb.p("p4").alive)
	require.Equal(t, "killed at night by a member of the Mafia", tb.p("p5").cause)
	require.Equal(t, "killed at night by a Serial Killer", tb.p("p4").cause)
}

func TestNightResolutionOrder(t *testing.T) {
	tb := newTable(t, seven...)
	// Role blocks (priority 2) come before kills (5): the blocked Mafioso
	// kills no one; the Serial Killer is immune and kills.
	tb.night(map[string]string{"p1": "p4", "p2": "p4", "p7": "p2"})
	require.True(t, tb.p("p4").alive)
	require.Contains(t, tb.results("p2"), "role blocked")
	tb.night(map[string]string{"p7": "p6", "p6": "p5"})
	require.True(t, tb.p("p5").alive, "a role blocked Serial Killer spares its target")
	require.False(t, tb.p("p7").alive, "and kills its role blocker instead")
	require.NotContains(t, tb.results("p6"), "You were role blocked")
	// Investigations (4) run before kills (5): a Sheriff who dies tonight still gets the result.
	tb.night(map[string]string{"p4": "p2", "p2": "p4"})
	require.False(t, tb.p("p4").alive)
	require.Contains(t, tb.results("p4"), "Your target p2 is suspicious!")
}

func TestDoctorSave(t *testing.T) {
	tb := newTable(t, seven...)
	tb.night(map[string]string{"p1": "p4", "p3": "p4"})
	require.True(t, tb.p("p4").alive)
	require.Contains(t, tb.results("p4"), "nursed you back to health")
	require.Contains(t, tb.results("p3"), "Your target p4 was attacked")
	// A revealed Mayor cannot be healed.
	tb2 := newTable(t, "Godfather", "Mafioso", "Doctor", "Mayor", "Sheriff", "Investigator", "Escort")
	tb2.ok("p4", "reveal", nil)
	tb2.night(map[string]string{"p1": "p4", "p3": "p4"})
	require.False(t, tb2.p("p4").alive)
}

func TestBodyguardTrade(t *testing.T) {
	tb := newTable(t, "Godfather", "Mafioso", "Bodyguard", "Sheriff", "Investigator", "Doctor", "Escort")
	tb.night(map[string]string{"p1": "p4", "p3": "p4"})
	require.True(t, tb.p("p4").alive, "the guarded player lives")
	require.False(t, tb.p("p3").alive, "the Bodyguard dies")
	require.False(t, tb.p("p2").alive, "and takes the Mafioso with them")
	require.Equal(t, "killed by a Bodyguard", tb.p("p2").cause)
	require.Contains(t, tb.results("p4"), "fought off your attacker")
}

func TestFramerFoolsSheriffAndInvestigator(t *testing.T) {
	tb := newTable(t, "Godfather", "Framer", "Doctor", "Sheriff", "Investigator", "Escort", "Mayor")
	tb.night(map[string]string{"p2": "p3", "p4": "p3", "p5": "p3"})
	require.Contains(t, tb.results("p4"), "Your target p3 is suspicious!")
	require.Contains(t, tb.results("p5"), "Your target p3 could be a Framer, Vampire or Jester.")
	// Unframed, the truth; the Godfather is detection immune.
	tb.night(map[string]string{"p4": "p1", "p5": "p3"})
	require.Contains(t, tb.results("p4"), "Your target p1 seems innocent.")
	require.Contains(t, tb.results("p5"), "Your target p3 could be a Doctor, Disguiser or Serial Killer.")
}

func TestJanitorCleansWill(t *testing.T) {
	tb := newTable(t, "Godfather", "Janitor", "Doctor", "Sheriff", "Investigator", "Escort", "Mayor")
	tb.ok("p4", "write_will", map[string]any{"text": "I am the Sheriff. p2 is suspicious."})
	tb.night(map[string]string{"p1": "p4", "p2": "p4"})
	require.False(t, tb.p("p4").alive)
	var death world.Event
	for _, e := range tb.w.Events() {
		if e.Type == "death" {
			death = e
		}
	}
	require.NotContains(t, death.Data, "role")
	require.Contains(t, death.Data["text"], "cleaned")
	require.NotContains(t, death.Data["text"], "Sheriff")
	require.Contains(t, tb.results("p2"), "Their role was Sheriff. Their will: I am the Sheriff.")
	r := tb.ok("p3", "check_will", map[string]any{"player": "p4"})
	require.Equal(t, "Player 4's will was cleaned and cannot be read.", r.Data["text"])
	require.False(t, tb.g.KnowsRole("p3", "p4"))
	require.True(t, tb.g.KnowsRole("p2", "p4"))
	require.Nil(t, tb.g.Observe(tb.w, "p3")["players"].([]any)[3].(map[string]any)["role"])
}

func TestForgerForgesWill(t *testing.T) {
	tb := newTable(t, "Godfather", "Forger", "Doctor", "Sheriff", "Investigator", "Escort", "Mayor")
	tb.ok("p4", "write_will", map[string]any{"text": "p2 is suspicious."})
	tb.to(PhaseNight)
	tb.ok("p1", "night_action", map[string]any{"target": "p4"})
	tb.ok("p2", "night_action", map[string]any{"target": "p4", "text": "I am the Sheriff. p3 is the Godfather."})
	tb.w.Step()
	require.False(t, tb.p("p4").alive)
	r := tb.ok("p5", "check_will", map[string]any{"player": "Player 4"})
	require.Contains(t, r.Data["text"], "I am the Sheriff. p3 is the Godfather.")
	require.NotContains(t, r.Data["text"], "p2 is suspicious")
	require.Equal(t, 1, tb.p("p2").forges)
}

// put puts a player on trial by nominations from the given players.
func (tb *table) trial(target string, by ...string) {
	tb.t.Helper()
	tb.to(PhaseNomination)
	for _, a := range by {
		tb.ok(a, "nominate", map[string]any{"player": target})
	}
	tb.w.Step()
	require.Equal(tb.t, PhaseDefense, tb.g.phase)
	tb.w.Step()
	require.Equal(tb.t, PhaseJudgement, tb.g.phase)
}

func TestNominationThresholdAndVerdictTies(t *testing.T) {
	tb := newTable(t, "Godfather", "Mafioso", "Doctor", "Sheriff", "Investigator", "Escort", "Mayor")
	tb.to(PhaseNight)
	tb.w.Step()
	tb.to(PhaseNomination)
	require.Equal(t, 4, tb.g.Threshold(), "⌈7/2⌉")
	r := tb.do("p1", "nominate", map[string]any{"player": "p1"})
	require.Equal(t, world.CodeInvalidParams, r.ErrorCode)
	for _, a := range []string{"p1", "p2", "p3"} {
		tb.ok(a, "nominate", map[string]any{"player": "p4"})
	}
	require.Equal(t, world.CodeNotAllowed, tb.do("p1", "nominate", map[string]any{"player": "p5"}).ErrorCode, "one nomination a round")
	require.Equal(t, -1, tb.g.pending, "3 of 4 is not enough")
	tb.ok("p5", "nominate", map[string]any{"player": "p4"})
	require.Equal(t, 3, tb.g.players[tb.g.pending].num-1)
	tb.w.Step()
	tb.w.Step()
	require.Equal(t, PhaseJudgement, tb.g.phase)
	require.Equal(t, world.CodeNotAllowed, tb.do("p4", "vote", map[string]any{"verdict": "guilty"}).ErrorCode)
	// 3 guilty, 3 innocent: a tie frees.
	for i, a := range []string{"p1", "p2", "p3", "p5", "p6", "p7"} {
		tb.ok(a, "vote", map[string]any{"verdict": []string{"guilty", "innocent"}[i%2]})
	}
	tb.w.Step()
	require.Equal(t, PhaseNomination, tb.g.phase, "freed; nominations reopen")
	require.True(t, tb.p("p4").alive)
	// A revealed Mayor's vote weighs 3: 3 guilty against 2 innocent.
	tb.ok("p7", "reveal", nil)
	for _, a := range []string{"p1", "p2", "p3", "p5"} {
		tb.ok(a, "nominate", map[string]any{"player": "p6"})
	}
	tb.w.Step()
	tb.w.Step()
	tb.ok("p7", "vote", map[string]any{"verdict": "guilty"})
	tb.ok("p1", "vote", map[string]any{"verdict": "innocent"})
	tb.ok("p2", "vote", map[string]any{"verdict": "innocent"})
	tb.w.Step()
	require.Equal(t, PhaseLastWords, tb.g.phase)
	tb.w.Step()
	require.False(t, tb.p("p6").alive)
	require.Equal(t, PhaseNight, tb.g.phase)
}

func TestAtMostThreeTrialsADay(t *testing.T) {
	tb := newTable(t, "Godfather", "Mafioso", "Doctor", "Sheriff", "Investigator", "Escort", "Mayor")
	tb.to(PhaseNight)
	tb.w.Step()
	for i := 0; i < 3; i++ {
		tb.trial("p4", "p1", "p2", "p3", "p5")
		tb.w.Step() // no votes: acquitted
	}
	require.Equal(t, PhaseNight, tb.g.phase)
	require.Equal(t, 3, tb.g.trials)
}

func TestJesterLynchWin(t *testing.T) {
	tb := newTable(t, "Godfather", "Mafioso", "Doctor", "Sheriff", "Investigator", "Jester", "Mayor")
	tb.to(PhaseNight)
	tb.w.Step()
	tb.trial("p6", "p1", "p2", "p3", "p4")
	for _, a := range []string{"p1", "p2", "p3", "p4"} {
		tb.ok(a, "vote", map[string]any{"verdict": "guilty"})
	}
	tb.to(PhaseNight)
	require.False(t, tb.p("p6").alive)
	require.True(t, tb.g.Won("p6"), "a lynched Jester wins")
	require.False(t, tb.g.Over(), "and the game goes on")
	v, _ := tb.g.Metric(tb.w, "p6", "roles.won")
	require.Equal(t, 1.0, v)
}

func TestExecutionerTarget(t *testing.T) {
	tb := newTable(t, "Godfather", "Mafioso", "Doctor", "Sheriff", "Investigator", "Executioner", "Mayor")
	tb.p("p6").target = 3 // p4
	require.Equal(t, "p4", tb.g.Observe(tb.w, "p6")["target"])
	require.Nil(t, tb.g.Observe(tb.w, "p5")["target"])
	tb.to(PhaseNight)
	tb.w.Step()
	tb.trial("p4", "p1", "p2", "p6", "p5")
	for _, a := range []string{"p1", "p2", "p6"} {
		tb.ok(a, "vote", map[string]any{"verdict": "guilty"})
	}
	tb.to(PhaseNight)
	require.True(t, tb.g.Won("p6"))
	// An Executioner whose target dies at night becomes a Jester.
	tb2 := newTable(t, "Godfather", "Mafioso", "Doctor", "Sheriff", "Investigator", "Executioner", "Mayor")
	tb2.p("p6").target = 3
	tb2.night(map[string]string{"p1": "p4"})
	require.Equal(t, "Jester", tb2.p("p6").role)
	require.False(t, tb2.g.Won("p6"))
}

// end kills players directly (as nights and lynches do) and checks the win.
func (tb *table) end(ids ...string) {
	for _, id := range ids {
		tb.g.kill(tb.w, tb.p(id), "test")
		tb.g.checkWin(tb.w)
	}
}

func TestWinConditions(t *testing.T) {
	setup := []string{"Godfather", "Mafioso", "Doctor", "Sheriff", "Serial Killer", "Survivor", "Witch", "Jester"}
	cases := []struct {
		dead    []string
		winner  string
		winners []string
	}{
		{[]string{"p1", "p2", "p5", "p7"}, Town, []string{"p3", "p4", "p6"}},            // Town, with the living Survivor
		{[]string{"p3", "p4", "p5"}, Mafia, []string{"p1", "p2", "p6", "p7"}},           // Mafia, Witch and Survivor
		{[]string{"p1", "p2", "p6", "p3", "p4"}, "Serial Killer", []string{"p5", "p7"}}, // SK and the Witch
		{[]string{"p1", "p2", "p3", "p5", "p4"}, Draw, []string{"p6", "p7"}},            // only neutrals: a draw
	}
	for _, c := range cases {
		tb := newTable(t, setup...)
		tb.end(c.dead[:len(c.dead)-1]...)
		require.False(t, tb.g.Over(), "%v: not before the last death", c.dead)
		tb.end(c.dead[len(c.dead)-1])
		require.True(t, tb.g.Over())
		require.Equal(t, c.winner, tb.g.Winner())
		var won []string
		for _, p := range tb.g.players {
			if p.won {
				won = append(won, p.id)
			}
		}
		require.Equal(t, c.winners, won, "%s", c.winner)
		v, _ := tb.g.Metric(tb.w, "p1", "roles.game_over")
		require.Equal(t, 1.0, v)
		require.Equal(t, world.CodeNotAllowed, tb.do("p8", "speak", map[string]any{"text": "hi"}).ErrorCode)
	}
	// A Witch alive keeps the Town from winning.
	tb := newTable(t, setup...)
	tb.end("p1", "p2", "p5")
	require.False(t, tb.g.Over())
}

func TestToolsAndKnowledge(t *testing.T) {
	tb := newTable(t, seven...)
	r := tb.reg.Execute(tb.w, "p3", "get_role_details", map[string]any{"role": "Investigator"}, true)
	require.True(t, r.Success)
	require.Equal(t, "Town Investigative", r.Data["alignment"])
	r = tb.do("p3", "get_role_details", map[string]any{"role": "investigator"})
	require.Equal(t, world.CodeNotFound, r.ErrorCode)
	require.Contains(t, r.ErrorMessage, "closest: Investigator")
	r = tb.do("p3", "get_investigation_results", nil)
	require.Len(t, r.Data["groups"], 11)
	r = tb.do("p3", "check_will", map[string]any{"player": "p4"})
	require.Equal(t, world.CodeNotAllowed, r.ErrorCode)
	require.Contains(t, r.ErrorMessage, "alive")
	r = tb.do("p3", "check_will", map[string]any{"player": "p99"})
	require.Equal(t, world.CodeNotFound, r.ErrorCode)
	// Knowledge: Permanent results stay, Turn-Based ones last a phase.
	know := func() []any { return tb.g.Observe(tb.w, "p3")["knowledge"].([]any) }
	require.Len(t, know(), 2)
	tb.ok("p5", "write_will", map[string]any{"text": "I am the Investigator."})
	tb.night(map[string]string{"p1": "p5"})
	r = tb.ok("p3", "check_will", map[string]any{"player": "p5"})
	require.Equal(t, `Player 5's Will: "I am the Investigator."`, r.Data["text"], "seed 001's check_will format")
	require.Len(t, know(), 3)
	tb.w.Step()
	require.Len(t, know(), 2, "the Turn-Based will is gone in the next phase")
	tb.g.kill(tb.w, tb.p("p7"), "test")
	r = tb.do("p3", "check_will", map[string]any{"player": "p7"})
	require.Equal(t, world.CodeNotFound, r.ErrorCode, "no will is not the same error as alive")
	require.Contains(t, r.ErrorMessage, "did not leave a will")
	// The dead get DEAD errors.
	r = tb.do("p5", "write_will", map[string]any{"text": "too late"})
	require.Equal(t, world.CodeDead, r.ErrorCode)
	for _, tl := range tb.reg.Tools() {
		if tl.Name != "do_nothing" && tb.g.hasTool(tl.Name) {
			require.Contains(t, []string{tools.PersistencePermanent, tools.PersistenceTurn}, tl.Persistence, tl.Name)
		}
	}
}

// The three data-store tools answer in seed 001's formats, byte for byte
// (its examples: the Investigator's card and the results heading).
func TestSeedToolFormats(t *testing.T) {
	tb := newTable(t, "Investigator", "Godfather", "Doctor", "Sheriff", "Mafioso", "Lookout", "Jester")
	r := tb.ok("p1", "get_role_details", map[string]any{"role": "Investigator"})
	require.Equal(t, "**Role: Investigator**\n- **Alignment:** Town Investigative\n"+
		"- **Abilities:** Each night, investigate one person for a clue to their role.\n"+
		"- **Attributes:** None\n- **Goal:** Lynch every criminal and evildoer.", r.Data["text"])
	r = tb.ok("p1", "get_investigation_results", nil)
	text := r.Data["text"].(string)
	require.True(t, strings.HasPrefix(text, "**Investigator Results:**\n- Vigilante, Veteran, Mafioso\n"), text)
	require.Equal(t, 12, strings.Count(text, "\n")+1, "the heading and 11 groups")
}
