package roles

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// act plays one night action with every parameter.
func (tb *table) act(agent, target, target2, text string) world.ActionResult {
	p := map[string]any{"target": target}
	if target2 != "" {
		p["target2"] = target2
	}
	if text != "" {
		p["text"] = text
	}
	return tb.do(agent, "night_action", p)
}

// nightDo plays one night: each step is an actor, a target and an optional
// second target, all of which must be accepted.
func (tb *table) nightDo(steps ...[3]string) {
	tb.t.Helper()
	tb.to(PhaseNight)
	for _, s := range steps {
		r := tb.act(s[0], s[1], s[2], "")
		require.True(tb.t, r.Success, "%v: %s", s, r.ErrorMessage)
	}
	tb.w.Step()
}

// lynchDay plays day 2 (from night 1) through a lynch of target with
// guilty votes from the voters.
func (tb *table) lynch(target string, voters ...string) {
	tb.t.Helper()
	tb.trial(target, voters...)
	for _, a := range voters {
		tb.ok(a, "vote", map[string]any{"verdict": "guilty"})
	}
	tb.to(PhaseNight)
	require.False(tb.t, tb.p(target).alive)
}

func (tb *table) chatOf(id string) []any { return tb.g.Observe(tb.w, id)["chat"].([]any) }

// Every classic role's ability, one case each (several for the richer ones).
func TestClassicRoleActions(t *testing.T) {
	cases := []struct {
		name  string
		setup []string
		play  func(t *testing.T, tb *table)
	}{
		{"Bodyguard vests once", []string{"Godfather", "Mafioso", "Bodyguard", "Serial Killer", "Doctor", "Sheriff", "Escort"}, func(t *testing.T, tb *table) {
			tb.nightDo([3]string{"p3", "p3"}, [3]string{"p4", "p3"})
			require.True(t, tb.p("p3").alive)
			require.Contains(t, tb.results("p3"), "your defense was too strong")
			tb.to(PhaseNight)
			r := tb.act("p3", "p3", "", "")
			require.Equal(t, world.CodeNotAllowed, r.ErrorCode)
			require.Contains(t, r.ErrorMessage, "already used your vest")
		}},
		{"Escort blocks, Consort blocks a Doctor", []string{"Godfather", "Mafioso", "Consort", "Doctor", "Sheriff", "Investigator", "Escort"}, func(t *testing.T, tb *table) {
			tb.nightDo([3]string{"p2", "p5"}, [3]string{"p4", "p5"}, [3]string{"p3", "p4"})
			require.False(t, tb.p("p5").alive, "the blocked Doctor's heal never happens")
			require.Contains(t, tb.results("p4"), "You were role blocked!")
			tb.nightDo([3]string{"p2", "p6"}, [3]string{"p7", "p2"})
			require.True(t, tb.p("p6").alive)
		}},
		{"Jailor jails, talks, executes", []string{"Godfather", "Mafioso", "Jailor", "Serial Killer", "Doctor", "Sheriff", "Escort"}, func(t *testing.T, tb *table) {
			require.Equal(t, world.CodeNotAllowed, tb.do("p5", "jail", map[string]any{"player": "p2"}).ErrorCode)
			require.Equal(t, world.CodeInvalidParams, tb.do("p3", "jail", map[string]any{"player": "p3"}).ErrorCode)
			tb.ok("p3", "jail", map[string]any{"player": "p2"})
			tb.to(PhaseNight)
			require.Contains(t, tb.results("p2"), "hauled off to jail")
			r := tb.act("p2", "p6", "", "")
			require.Equal(t, world.CodeNotAllowed, r.ErrorCode)
			require.Contains(t, r.ErrorMessage, "in jail")
			require.Contains(t, tb.act("p3", "p2", "", "").ErrorMessage, "first night")
			require.Contains(t, tb.act("p3", "p5", "", "").ErrorMessage, "only execute your prisoner")
			// The jail channel: the Jailor is anonymous, only the two read it.
			r = tb.ok("p3", "speak", map[string]any{"text": "who are you?"})
			require.Equal(t, "jail", r.Data["channel"])
			tb.ok("p2", "speak", map[string]any{"text": "a Doctor"})
			last := func(id string) map[string]any { c := tb.chatOf(id); return c[len(c)-1].(map[string]any) }
			require.Equal(t, "a Doctor", last("p3")["text"])
			require.Equal(t, "Jailor", tb.chatOf("p2")[len(tb.chatOf("p2"))-2].(map[string]any)["from"])
			for _, e := range tb.w.Events() {
				if e.Type == "speak" && e.Data["channel"] == "jail" {
					require.NotEqual(t, "p3", e.Agent)
					require.Equal(t, []string{"p3", "p2"}, e.To)
				}
			}
			for _, c := range tb.chatOf("p1") {
				require.NotEqual(t, "jail", c.(map[string]any)["channel"], "the Mafia does not read the jail")
			}
			tb.ok("p4", "night_action", map[string]any{"target": "p2"})
			tb.w.Step()
			require.True(t, tb.p("p2").alive, "the prisoner is safe from the Serial Killer")
			// Night 2: execute.
			tb.ok("p3", "jail", map[string]any{"player": "p2"})
			tb.nightDo([3]string{"p3", "p2"})
			require.False(t, tb.p("p2").alive)
			require.Equal(t, "executed by the Jailor", tb.p("p2").cause)
			require.Equal(t, 2, tb.p("p3").executions)
			// Executing a Town member costs every execution left.
			tb.to(PhaseDiscussion)
			tb.ok("p3", "jail", map[string]any{"player": "p6"})
			tb.nightDo([3]string{"p3", "p6"})
			require.False(t, tb.p("p6").alive)
			require.Equal(t, 0, tb.p("p3").executions)
		}},
		{"a jailed Serial Killer kills the Jailor", []string{"Godfather", "Mafioso", "Jailor", "Serial Killer", "Doctor", "Sheriff", "Escort"}, func(t *testing.T, tb *table) {
			tb.ok("p3", "jail", map[string]any{"player": "p4"})
			tb.nightDo([3]string{"p6", "p4"})
			require.False(t, tb.p("p3").alive)
			require.Equal(t, "killed by the Serial Killer they jailed", tb.p("p3").cause)
			require.Contains(t, tb.results("p6"), "Your target p4 was in jail")
		}},
		{"Lookout and Disguiser", []string{"Godfather", "Mafioso", "Disguiser", "Lookout", "Investigator", "Doctor", "Sheriff"}, func(t *testing.T, tb *table) {
			tb.to(PhaseNight)
			require.Equal(t, world.CodeInvalidParams, tb.act("p3", "p4", "p6", "").ErrorCode, "the disguised must be Mafia")
			require.Equal(t, world.CodeInvalidParams, tb.act("p3", "p2", "p1", "").ErrorCode, "the disguise must not be")
			tb.nightDo([3]string{"p3", "p2", "p6"}, [3]string{"p2", "p7"}, [3]string{"p4", "p7"}, [3]string{"p5", "p2"}, [3]string{"p7", "p2"})
			require.False(t, tb.p("p7").alive)
			require.Contains(t, tb.results("p4"), "p6 visited your target p7.")
			require.Contains(t, tb.results("p5"), "Your target p2 could be a Doctor, Disguiser or Serial Killer.")
			require.Contains(t, tb.results("p7"), "Your target p2 seems innocent.")
			tb.nightDo([3]string{"p2", "p5"}, [3]string{"p4", "p5"}, [3]string{"p6", "p5"})
			require.Contains(t, tb.results("p4"), "p2, p6 visited your target p5.")
		}},
		{"Medium: the living hear the dead, a dead Medium holds one seance", []string{"Godfather", "Mafioso", "Medium", "Sheriff", "Doctor", "Investigator", "Escort"}, func(t *testing.T, tb *table) {
			tb.to(PhaseNight)
			r := tb.ok("p3", "speak", map[string]any{"text": "anyone there?"})
			require.Equal(t, "dead", r.Data["channel"])
			require.Equal(t, world.CodeNotAllowed, tb.do("p3", "seance", map[string]any{"player": "p4"}).ErrorCode, "alive")
			tb.w.Step()
			tb.g.kill(tb.w, tb.p("p3"), "test")
			tb.ok("p3", "seance", map[string]any{"player": "p4"})
			tb.to(PhaseNight)
			require.Contains(t, tb.results("p4"), "A dead Medium, p3, is speaking to you")
			r = tb.ok("p3", "speak", map[string]any{"text": "I see you"})
			require.Equal(t, "seance", r.Data["channel"])
			r = tb.ok("p4", "speak", map[string]any{"text": "hello"})
			require.Equal(t, "seance", r.Data["channel"])
			require.NotContains(t, tb.chatOf("p5"), "hello")
			require.Equal(t, world.CodeNotAllowed, tb.do("p5", "speak", map[string]any{"text": "x"}).ErrorCode)
			tb.w.Step()
			r = tb.do("p3", "seance", map[string]any{"player": "p5"})
			require.Contains(t, r.ErrorMessage, "already held")
		}},
		{"Retributionist revives a Town member once", []string{"Godfather", "Mafioso", "Retributionist", "Sheriff", "Doctor", "Investigator", "Escort"}, func(t *testing.T, tb *table) {
			tb.nightDo([3]string{"p2", "p4"})
			require.False(t, tb.p("p4").alive)
			tb.to(PhaseNight)
			require.Contains(t, tb.act("p3", "p5", "", "").ErrorMessage, "is alive")
			tb.g.kill(tb.w, tb.p("p1"), "test")
			require.Contains(t, tb.act("p3", "p1", "", "").ErrorMessage, "only revive a member of the Town")
			tb.ok("p3", "night_action", map[string]any{"target": "p4"})
			tb.w.Step()
			require.True(t, tb.p("p4").alive)
			require.True(t, tb.g.KnowsRole("p5", "p4"), "a revived player's role stays public")
			tb.to(PhaseNight)
			tb.g.kill(tb.w, tb.p("p6"), "test")
			require.Contains(t, tb.act("p3", "p6", "", "").ErrorMessage, "already revived")
		}},
		{"Sheriff: who is suspicious", []string{"Godfather", "Mafioso", "Serial Killer", "Arsonist", "Werewolf", "Vampire", "Sheriff", "Sheriff", "Sheriff", "Sheriff", "Sheriff", "Sheriff"}, func(t *testing.T, tb *table) {
			want := []string{"seems innocent", "is suspicious", "is suspicious", "seems innocent", "seems innocent", "seems innocent"}
			var steps [][3]string
			for i := range want {
				steps = append(steps, [3]string{tb.g.players[6+i].id, tb.g.players[i].id, ""})
			}
			tb.nightDo(steps...)
			for i, w := range want {
				require.Contains(t, tb.results(tb.g.players[6+i].id), w, "night 1, %s", tb.g.players[i].role)
			}
			tb.nightDo([3]string{"p11", "p5"})
			require.Contains(t, tb.results("p11"), "Your target p5 is suspicious!", "a Werewolf on a full moon")
		}},
		{"Spy: Mafia visits, bugs and whispers", []string{"Godfather", "Mafioso", "Spy", "Escort", "Sheriff", "Doctor", "Framer"}, func(t *testing.T, tb *table) {
			tb.ok("p4", "whisper", map[string]any{"to": "p6", "text": "I am the Escort"})
			require.Equal(t, "I am the Escort", tb.chatOf("p3")[0].(map[string]any)["text"])
			require.Empty(t, tb.chatOf("p5"))
			tb.nightDo([3]string{"p2", "p5"}, [3]string{"p7", "p6"}, [3]string{"p4", "p6"}, [3]string{"p3", "p6"})
			require.Contains(t, tb.results("p3"), "A member of the Mafia visited p5 or p6.")
			require.Contains(t, tb.results("p3"), "Your bug on p6: Someone occupied your night. You were role blocked!")
		}},
		{"Transporter swaps two targets", []string{"Godfather", "Mafioso", "Transporter", "Sheriff", "Investigator", "Doctor", "Escort"}, func(t *testing.T, tb *table) {
			tb.to(PhaseNight)
			require.Equal(t, world.CodeInvalidParams, tb.act("p3", "p4", "", "").ErrorCode, "target2 is required")
			require.Equal(t, world.CodeInvalidParams, tb.act("p3", "p4", "p4", "").ErrorCode)
			tb.nightDo([3]string{"p2", "p4"}, [3]string{"p3", "p4", "p5"}, [3]string{"p6", "p5"})
			require.True(t, tb.p("p4").alive)
			require.False(t, tb.p("p5").alive, "the attack lands on the other player, and the heal on the first")
			require.Contains(t, tb.results("p4"), "You were transported")
		}},
		{"Vampire Hunter checks, stakes, and becomes a Vigilante", []string{"Godfather", "Mafioso", "Vampire Hunter", "Vampire", "Doctor", "Sheriff", "Investigator"}, func(t *testing.T, tb *table) {
			tb.nightDo([3]string{"p3", "p5"})
			require.Contains(t, tb.results("p3"), "Your target p5 is not a Vampire.")
			tb.nightDo([3]string{"p3", "p4"})
			require.False(t, tb.p("p4").alive)
			require.Equal(t, "staked by a Vampire Hunter", tb.p("p4").cause)
			require.Equal(t, "Vigilante", tb.p("p3").role)
			require.Equal(t, 1, tb.p("p3").bullets)
		}},
		{"a Vampire who bites a Vampire Hunter is staked", []string{"Godfather", "Mafioso", "Vampire Hunter", "Vampire", "Doctor", "Sheriff", "Investigator"}, func(t *testing.T, tb *table) {
			tb.nightDo([3]string{"p4", "p3"})
			require.False(t, tb.p("p4").alive)
			require.Equal(t, "staked by a Vampire Hunter", tb.p("p4").cause)
			require.Equal(t, "Vigilante", tb.p("p3").role, "no Vampire is left")
		}},
		{"Veteran on alert kills every visitor", []string{"Godfather", "Mafioso", "Veteran", "Doctor", "Lookout", "Sheriff", "Escort"}, func(t *testing.T, tb *table) {
			tb.to(PhaseNight)
			require.Equal(t, world.CodeInvalidParams, tb.act("p3", "p4", "", "").ErrorCode)
			tb.nightDo([3]string{"p3", "p3"}, [3]string{"p2", "p3"}, [3]string{"p4", "p3"}, [3]string{"p5", "p3"}, [3]string{"p7", "p3"})
			require.True(t, tb.p("p3").alive)
			for _, id := range []string{"p2", "p4", "p5", "p7"} {
				require.False(t, tb.p(id).alive, id)
				require.Equal(t, "shot by the Veteran they visited", tb.p(id).cause)
			}
			require.Equal(t, 2, tb.p("p3").alerts)
			require.True(t, tb.p("p6").alive)
		}},
		{"Vigilante dies of guilt after shooting Town", []string{"Godfather", "Mafioso", "Vigilante", "Sheriff", "Doctor", "Investigator", "Escort"}, func(t *testing.T, tb *table) {
			tb.to(PhaseNight)
			require.Contains(t, tb.act("p3", "p4", "", "").ErrorMessage, "first night")
			tb.w.Step()
			tb.nightDo([3]string{"p3", "p4"})
			require.False(t, tb.p("p4").alive)
			require.Equal(t, "shot at night by a Vigilante", tb.p("p4").cause)
			require.True(t, tb.p("p3").guilt)
			tb.to(PhaseNight)
			require.Contains(t, tb.act("p3", "p1", "", "").ErrorMessage, "guilt")
			tb.w.Step()
			require.False(t, tb.p("p3").alive)
			require.Contains(t, tb.p("p3").cause, "guilt")
		}},
		{"Blackmailer silences for the next day", []string{"Godfather", "Mafioso", "Blackmailer", "Sheriff", "Doctor", "Investigator", "Escort"}, func(t *testing.T, tb *table) {
			tb.nightDo([3]string{"p3", "p4"})
			r := tb.do("p4", "speak", map[string]any{"text": "hi"})
			require.Equal(t, world.CodeNotAllowed, r.ErrorCode)
			require.Contains(t, r.ErrorMessage, "blackmailed")
			require.Equal(t, world.CodeNotAllowed, tb.do("p4", "whisper", map[string]any{"to": "p5", "text": "hi"}).ErrorCode)
			require.Equal(t, true, tb.g.Observe(tb.w, "p4")["blackmailed"])
			tb.ok("p5", "speak", map[string]any{"text": "hi"})
			tb.night(nil)
			tb.ok("p4", "speak", map[string]any{"text": "free again"})
		}},
		{"Consigliere sees the exact role", []string{"Godfather", "Mafioso", "Consigliere", "Sheriff", "Doctor", "Investigator", "Escort"}, func(t *testing.T, tb *table) {
			tb.nightDo([3]string{"p3", "p5"})
			require.Contains(t, tb.results("p3"), "Your target p5 is a Doctor.")
			require.True(t, tb.g.KnowsRole("p3", "p5"))
		}},
		{"Godfather kills without a Mafioso", []string{"Godfather", "Framer", "Doctor", "Sheriff", "Investigator", "Escort", "Lookout"}, func(t *testing.T, tb *table) {
			tb.nightDo([3]string{"p1", "p4"})
			require.False(t, tb.p("p4").alive)
			require.Equal(t, "killed at night by a member of the Mafia", tb.p("p4").cause)
		}},
		{"Amnesiac remembers a dead role", []string{"Godfather", "Mafioso", "Amnesiac", "Doctor", "Mayor", "Sheriff", "Escort"}, func(t *testing.T, tb *table) {
			tb.g.kill(tb.w, tb.p("p4"), "test")
			tb.g.kill(tb.w, tb.p("p5"), "test")
			tb.to(PhaseNight)
			require.Contains(t, tb.act("p3", "p5", "", "").ErrorMessage, "cannot remember the Mayor")
			require.Contains(t, tb.act("p3", "p6", "", "").ErrorMessage, "is alive")
			tb.ok("p3", "night_action", map[string]any{"target": "p4"})
			tb.w.Step()
			require.Equal(t, "Doctor", tb.p("p3").role)
			require.Equal(t, 1, tb.p("p3").selfHeals)
			var seen bool
			for _, e := range tb.w.Events() {
				if e.Type == "remember" {
					seen = true
					require.Empty(t, e.Agent, "the Town learns the role, not who")
					require.Contains(t, e.Data["text"], "Doctor")
				}
			}
			require.True(t, seen)
		}},
		{"Arsonist douses, then ignites through heals", []string{"Godfather", "Mafioso", "Arsonist", "Doctor", "Sheriff", "Investigator", "Escort"}, func(t *testing.T, tb *table) {
			tb.nightDo([3]string{"p3", "p5"}, [3]string{"p2", "p3"}, [3]string{"p5", "p3"})
			require.True(t, tb.p("p3").alive, "Basic defense")
			require.Contains(t, tb.results("p5"), "Your target p3 seems innocent.")
			require.True(t, tb.p("p5").doused)
			tb.nightDo([3]string{"p3", "p6"})
			tb.nightDo([3]string{"p3", "p3"}, [3]string{"p4", "p5"})
			require.False(t, tb.p("p5").alive, "a heal does not stop an Unstoppable attack")
			require.False(t, tb.p("p6").alive)
			require.Equal(t, "burned to death by an Arsonist", tb.p("p6").cause)
			require.False(t, tb.p("p7").doused)
		}},
		{"a lynched Jester haunts a guilty voter", []string{"Godfather", "Mafioso", "Doctor", "Sheriff", "Investigator", "Jester", "Mayor"}, func(t *testing.T, tb *table) {
			tb.to(PhaseNight)
			require.Contains(t, tb.act("p6", "p3", "", "").ErrorMessage, "only haunts")
			tb.w.Step()
			tb.lynch("p6", "p1", "p2", "p3", "p4")
			require.Equal(t, []any{"p1", "p2", "p3", "p4"}, tb.g.Observe(tb.w, "p6")["haunt"])
			require.Contains(t, tb.act("p6", "p5", "", "").ErrorMessage, "voted guilty")
			tb.ok("p6", "night_action", map[string]any{"target": "p3"})
			tb.ok("p3", "night_action", map[string]any{"target": "p3"})
			tb.w.Step()
			require.False(t, tb.p("p3").alive, "the haunt ignores the heal")
			require.Equal(t, "haunted by the Jester", tb.p("p3").cause)
			tb.to(PhaseNight)
			require.Equal(t, world.CodeDead, tb.act("p6", "p4", "", "").ErrorCode, "one haunt")
		}},
		{"a Jester who names no one haunts a random guilty voter", []string{"Godfather", "Mafioso", "Doctor", "Sheriff", "Investigator", "Jester", "Mayor"}, func(t *testing.T, tb *table) {
			tb.night(nil)
			tb.lynch("p6", "p2", "p3", "p4", "p5")
			tb.w.Step()
			dead := 0
			for _, id := range []string{"p2", "p3", "p4", "p5"} {
				if !tb.p(id).alive {
					dead++
					require.Equal(t, "haunted by the Jester", tb.p(id).cause)
				}
			}
			require.Equal(t, 1, dead)
		}},
		{"Survivor vests", []string{"Godfather", "Mafioso", "Survivor", "Sheriff", "Doctor", "Investigator", "Escort"}, func(t *testing.T, tb *table) {
			tb.to(PhaseNight)
			require.Equal(t, world.CodeInvalidParams, tb.act("p3", "p4", "", "").ErrorCode)
			tb.nightDo([3]string{"p3", "p3"}, [3]string{"p2", "p3"})
			require.True(t, tb.p("p3").alive)
			require.Equal(t, 3, tb.p("p3").vests)
		}},
		{"Vampires convert, and attack the Mafia", []string{"Godfather", "Mafioso", "Vampire", "Vampire", "Doctor", "Sheriff", "Investigator", "Escort"}, func(t *testing.T, tb *table) {
			tb.to(PhaseNight)
			require.Contains(t, tb.act("p3", "p4", "", "").ErrorMessage, "fellow Vampire")
			r := tb.ok("p3", "speak", map[string]any{"text": "bite p6"})
			require.Equal(t, "vampire", r.Data["channel"])
			require.Len(t, tb.chatOf("p4"), 1)
			require.Empty(t, tb.chatOf("p1"))
			tb.ok("p3", "night_action", map[string]any{"target": "p6"})
			tb.w.Step()
			require.Equal(t, Vampire, tb.p("p6").role, "the youngest bites the older one's choice")
			require.True(t, tb.g.KnowsRole("p6", "p3"))
			require.Equal(t, 3, tb.p("p6").vampAge)
			tb.nightDo([3]string{"p6", "p2"})
			require.False(t, tb.p("p2").alive, "a bite on the Mafia attacks")
			require.Equal(t, "bitten to death by a Vampire", tb.p("p2").cause)
			tb.nightDo([3]string{"p3", "p7"}, [3]string{"p5", "p7"})
			require.Equal(t, "Investigator", tb.p("p7").role, "no conversion through a heal")
			require.True(t, tb.p("p7").alive)
			tb.nightDo([3]string{"p3", "p7"})
			require.Equal(t, Vampire, tb.p("p7").role)
			tb.nightDo([3]string{"p3", "p8"})
			require.False(t, tb.p("p8").alive, "four Vampires attack instead of converting")
		}},
		{"Werewolf rampages on full moons", []string{"Godfather", "Mafioso", "Werewolf", "Doctor", "Sheriff", "Lookout", "Escort"}, func(t *testing.T, tb *table) {
			tb.to(PhaseNight)
			require.Contains(t, tb.act("p3", "p5", "", "").ErrorMessage, "full-moon")
			tb.w.Step()
			tb.nightDo([3]string{"p3", "p5"}, [3]string{"p4", "p5"}, [3]string{"p6", "p5"})
			require.True(t, tb.p("p5").alive, "healed against a Powerful attack")
			require.False(t, tb.p("p4").alive)
			require.False(t, tb.p("p6").alive)
			require.Equal(t, "mauled by a Werewolf", tb.p("p6").cause)
			tb.night(nil)
			tb.nightDo([3]string{"p3", "p3"}, [3]string{"p7", "p3"})
			require.False(t, tb.p("p7").alive, "staying home kills the role blocker")
		}},
		{"Witch controls a Serial Killer", []string{"Godfather", "Mafioso", "Witch", "Serial Killer", "Doctor", "Sheriff", "Veteran"}, func(t *testing.T, tb *table) {
			tb.nightDo([3]string{"p4", "p5"}, [3]string{"p3", "p4", "p6"})
			require.True(t, tb.p("p5").alive)
			require.False(t, tb.p("p6").alive)
			require.Contains(t, tb.results("p3"), "Your victim is a Serial Killer.")
			tb.nightDo([3]string{"p3", "p7", "p5"})
			require.Contains(t, tb.results("p3"), "could not be controlled")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.play(t, newTable(t, c.setup...)) })
	}
}

// wins lists the winners' ids.
func (tb *table) wins() []string {
	var won []string
	for _, p := range tb.g.players {
		if p.won {
			won = append(won, p.id)
		}
	}
	return won
}

func TestClassicWinConditions(t *testing.T) {
	setup := []string{"Godfather", "Vampire", "Doctor", "Arsonist", "Werewolf", "Survivor", "Amnesiac", "Witch"}
	cases := []struct {
		dead    []string
		winner  string
		winners []string
	}{
		{[]string{"p1", "p4", "p5", "p3"}, Vampire, []string{"p2", "p6", "p8"}},
		{[]string{"p1", "p2", "p5", "p3"}, "Arsonist", []string{"p4", "p6", "p8"}},
		{[]string{"p1", "p2", "p4", "p3"}, "Werewolf", []string{"p5", "p6", "p8"}},
		{[]string{"p2", "p4", "p5", "p8", "p1"}, Town, []string{"p3", "p6"}},
		{[]string{"p2", "p3", "p4", "p5"}, Mafia, []string{"p1", "p6", "p8"}},
		{[]string{"p1", "p2", "p4", "p5", "p3"}, Draw, []string{"p6", "p8"}},
	}
	for _, c := range cases {
		tb := newTable(t, setup...)
		tb.end(c.dead[:len(c.dead)-1]...)
		require.False(t, tb.g.Over(), "%v: not before the last death", c.dead)
		tb.end(c.dead[len(c.dead)-1])
		require.True(t, tb.g.Over(), "%v", c.dead)
		require.Equal(t, c.winner, tb.g.Winner())
		require.Equal(t, c.winners, tb.wins(), "%s: the side (dead members too), a living Survivor, a living Witch unless the Town won; never an Amnesiac", c.winner)
	}
	// A game that outlasts max_days is a draw.
	tb := newTable(t, setup...)
	tb.g.cfg.MaxDays = 2
	for range 2 {
		tb.night(nil)
	}
	require.Equal(t, Draw, tb.g.Winner())
	// Two Serial Killers win together; a Jester who was lynched keeps the win.
	tb = newTable(t, "Serial Killer", "Serial Killer", "Doctor", "Sheriff", "Jester", "Godfather", "Investigator")
	tb.end("p6", "p3", "p4", "p7")
	require.Equal(t, "Serial Killer", tb.g.Winner())
	require.Equal(t, []string{"p1", "p2"}, tb.wins())
}

func TestDataStore(t *testing.T) {
	require.Len(t, cards, 33)
	count := map[string]int{}
	for _, c := range cards {
		count[c.Faction]++
		require.NotEmpty(t, c.Goal, c.Name)
		require.NotEmpty(t, c.Abilities, c.Name)
		if c.NightAction != "" {
			require.Positive(t, c.Priority, c.Name)
		}
		require.Contains(t, []string{"Town", "Mafia", "Neutral"}, c.Faction, c.Name)
	}
	require.Equal(t, map[string]int{Town: 15, Mafia: 9, Neutral: 9}, count)
	groups := InvestigatorGroups()
	require.Len(t, groups, 11)
	for _, g := range groups {
		require.Len(t, g, 3)
	}
	require.NoError(t, checkStore())
	// Planted defects: a group naming a role the store lacks, a role in no
	// group, a role in two, a category naming an unknown role.
	defer func(g [][]string, c []string) { invGroups, categories["Any"] = g, c }(invGroups, categories["Any"])
	orig := InvestigatorGroups()
	invGroups = InvestigatorGroups()
	invGroups[7] = append(invGroups[7], "Hypnotist")
	require.ErrorContains(t, checkStore(), "Hypnotist")
	invGroups = orig[1:]
	require.ErrorContains(t, checkStore(), "in 0 investigator groups")
	invGroups = append(slices.Clone(orig), []string{"Mafioso"})
	require.ErrorContains(t, checkStore(), "Mafioso is in 2")
	invGroups = orig
	categories["Any"] = append(Category("Any"), "Pirate")
	require.ErrorContains(t, checkStore(), "Pirate")
}

func TestConfigInvestigatorAndSetupList(t *testing.T) {
	_, err := ParseConfig(json.RawMessage(`{"investigator":"coven"}`))
	require.ErrorContains(t, err, "removed")
	_, err = ParseConfig(json.RawMessage(`{"setup_list":"ranked"}`))
	require.ErrorContains(t, err, "all_any, classic, default, ranked_practice")
	cfg, err := ParseConfig(json.RawMessage(`{"setup_list":"all_any"}`))
	require.NoError(t, err)
	require.Equal(t, "all_any", cfg.SetupList)
}

// Deals from every list: uniques once, a Vampire Hunter only beside a
// Vampire, the named roles of the classic lists, two sides at least, and
// every classic role reachable.
func TestSetupListsDeal(t *testing.T) {
	seen := map[string]bool{}
	for _, list := range SetupLists() {
		for _, n := range []int{7, 15} {
			if n < setupLists[list].min {
				g := &Game{cfg: Config{SetupList: list}, rng: rand.New(rand.NewPCG(1, 2))}
				_, err := g.draw(n)
				require.ErrorContains(t, err, "for 15 to 15 players")
				continue
			}
			for seed := range uint64(300) {
				g := &Game{cfg: Config{SetupList: list}, rng: rand.New(rand.NewPCG(seed, 7))}
				deal, err := g.draw(n)
				require.NoError(t, err)
				require.Len(t, deal, n)
				for _, r := range deal {
					seen[r] = true
					if cardByName[r].Unique {
						require.Equal(t, 1, count(deal, r), "%s: unique %s", list, r)
					}
				}
				if slices.Contains(deal, "Vampire Hunter") {
					require.Contains(t, deal, Vampire, "%s seed %d", list, seed)
				}
				require.GreaterOrEqual(t, sides(deal), 2)
				for _, s := range setupLists[list].slots[:n] {
					if cardByName[s] != nil {
						require.Contains(t, deal, s, "%s: a named slot is always dealt", list)
					}
				}
			}
		}
	}
	for _, c := range cards {
		require.True(t, seen[c.Name], "%s is never dealt", c.Name)
	}
	require.Equal(t, []string{"Godfather", "Mafioso"}, []string{setupLists["ranked_practice"].slots[9], setupLists["ranked_practice"].slots[10]})
}

func count(xs []string, x string) (n int) {
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}
