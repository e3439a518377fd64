package bots_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/components/roles"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// isMafia reports whether a role belongs to the Mafia.
func isMafia(role string) bool {
	c, _ := roles.Lookup(role)
	return c.Faction == roles.Mafia
}

// leakScanner wraps each bot and scans every observation it is given for
// secrets the agent should not see.
type leakScanner struct {
	t        *testing.T
	game     *roles.Game
	bot      bots.Bot
	id       string
	whispers *[]whisperRec
	scanned  *int
}

type whisperRec struct{ from, to, token string }

var whisperToken = regexp.MustCompile(`whisper#[^ ]+#\d+`)

func (s *leakScanner) Decide(ctx context.Context, obs *world.Observation) world.Decision {
	s.scan(obs)
	d := s.bot.Decide(ctx, obs)
	if d.Tool == "whisper" {
		tok := whisperToken.FindString(d.Params["text"].(string))
		*s.whispers = append(*s.whispers, whisperRec{s.id, d.Params["to"].(string), tok})
	}
	return d
}

func (s *leakScanner) scan(obs *world.Observation) {
	t, g, v := s.t, s.game, s.id
	*s.scanned++
	raw, err := json.Marshal(obs)
	require.NoError(t, err)
	js := string(raw)
	// Whispers and Mafia chat.
	// Spies and Blackmailers read every whisper.
	for _, w := range *s.whispers {
		if v != w.from && v != w.to && g.Role(v) != "Spy" && g.Role(v) != "Blackmailer" {
			require.NotContains(t, js, w.token, "%s sees a whisper from %s to %s", v, w.from, w.to)
		}
	}
	if !isMafia(g.Role(v)) {
		require.NotContains(t, js, "mafia-chat:", "%s (%s) sees Mafia chat", v, g.Role(v))
	}
	if g.Role(v) != roles.Vampire {
		require.NotContains(t, js, "vampire-chat:", "%s (%s) sees Vampire chat", v, g.Role(v))
	}
	// Private results (night results, investigations, role notices) are only
	// for their owner.
	for _, e := range obs.Events {
		if e.Type == "private" || e.Type == "whisper" {
			if e.Type == "private" {
				require.Equal(t, v, e.Data["for"], "%s sees another's private result: %s", v, e.Text)
			}
		}
	}
	// Roles: strip what agents wrote themselves (chat, speech and whisper
	// events), then look for any other player's id attached to their role.
	var cp world.Observation
	require.NoError(t, json.Unmarshal(raw, &cp))
	sec := map[string]any(cp.Components["roles"])
	var kept []string
	for _, line := range strings.Split(bots.StrOf(sec["text"]), "\n") {
		said := false
		for _, c := range bots.ListOf(sec["chat"]) {
			if strings.HasSuffix(line, ": "+bots.StrOf(bots.MapOf(c)["text"])) {
				said = true
			}
		}
		// The agent's own night results are its own knowledge.
		if strings.HasPrefix(line, "  Night ") || strings.HasPrefix(line, "Your will: ") {
			said = true
		}
		if !said {
			kept = append(kept, line)
		}
	}
	sec["text"] = strings.Join(kept, "\n")
	delete(sec, "chat")
	delete(sec, "night_results")
	delete(bots.MapOf(sec["you"]), "will")
	cp.Events = slices.DeleteFunc(cp.Events, func(e world.EventView) bool { return e.Type == "speak" || e.Type == "whisper" })
	// A death shows the dead player's will, which its owner wrote: check
	// the role it names instead.
	for i, e := range cp.Events {
		if e.Type == "death" {
			if r, ok := e.Data["role"]; ok {
				require.True(t, g.KnowsRole(v, e.Agent), "%s is told %s's role %v", v, e.Agent, r)
			}
			cp.Events[i].Text, cp.Events[i].Data = "", nil
		}
	}
	cp.LastActionResult = nil
	raw, _ = json.Marshal(cp)
	js = string(raw)
	for _, p := range obs.AgentIDs {
		if g.KnowsRole(v, p) {
			continue
		}
		role := g.Role(p)
		re := regexp.MustCompile(regexp.QuoteMeta(p) + `\b[^"\\]{0,60}\b` + regexp.QuoteMeta(role) + `\b`)
		if loc := re.FindStringIndex(js); loc != nil {
			t.Fatalf("%s sees %s's role %s: …%s…", v, p, role, js[max(loc[0]-80, 0):min(loc[1]+40, len(js))])
		}
		for _, e := range bots.ListOf(sec["players"]) {
			m := bots.MapOf(e)
			if m["id"] == p {
				require.Nil(t, m["role"], "%s sees %s's role in the players list", v, p)
			}
		}
	}
	if !isMafia(g.Role(v)) && g.Role(v) != roles.Vampire {
		require.Nil(t, sec["team"], "%s sees a team", v)
	}
}

// Whole games played by roles_player bots end with a winner, and no agent's
// observation ever shows a secret.
func TestRoleGamesFinishWithoutLeaks(t *testing.T) {
	sc, err := scenarios.Load("role_game")
	require.NoError(t, err)
	winners := map[string]int{}
	fails := map[string]int{}
	calls, totalWhispers := 0, 0
	for _, n := range []int{7, 9, 12, 15} {
		for seed := uint64(1); seed <= 6; seed++ {
			w, err := sc.NewWorld(scenarios.Options{Seed: seed, Agents: n})
			require.NoError(t, err)
			g := w.Component("roles").(*roles.Game)
			var whispers []whisperRec
			scanned := 0
			ctrls := engine.Controllers{}
			for _, a := range w.Agents() {
				b, err := bots.New("roles_player", bots.Info{AgentID: a.ID, Seed: seed})
				require.NoError(t, err)
				ctrls[a.ID] = &leakScanner{t: t, game: g, bot: b, id: a.ID, whispers: &whispers, scanned: &scanned}
			}
			r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: sc.TimeLimit(), Record: true, OnTick: func(rec *engine.TickRecord) {
				for _, d := range rec.Decisions {
					if d.Tool != "idle" {
						calls++
					}
					if !d.Result.Success && d.Tool != "idle" {
						fails[d.Tool+": "+d.Result.ErrorMessage]++
					}
				}
			}}
			res, err := r.Run(context.Background())
			require.NoError(t, err)
			require.True(t, g.Over(), "%d players, seed %d: the game ends", n, seed)
			require.NotEmpty(t, g.Winner())
			require.True(t, res.Passed, "%d players, seed %d", n, seed)
			totalWhispers += len(whispers)
			winners[g.Winner()]++
			_, day := g.Phase()
			t.Logf("%d players, seed %d: %s wins on day %d after %d ticks (%d observations scanned)", n, seed, g.Winner(), day, res.Ticks, scanned)
		}
	}
	t.Logf("winners %v", winners)
	require.Positive(t, totalWhispers)
	nf := 0
	for k, v := range fails {
		nf += v
		t.Logf("failed %d× %s", v, k)
	}
	require.Less(t, nf*20, calls, "at most 5%% of the bots' calls fail")
	require.Less(t, winners[roles.Draw], 6)
}

func rolesObs(sec world.Section) *world.Observation {
	return &world.Observation{AgentID: "agent_001", Alive: true, Components: map[string]world.Section{"roles": sec}}
}

func TestRolesPlayerDecisions(t *testing.T) {
	ctx := context.Background()
	players := []any{
		map[string]any{"id": "agent_001", "alive": true, "role": "Sheriff"},
		map[string]any{"id": "agent_002", "alive": true},
		map[string]any{"id": "agent_003", "alive": true},
	}
	b := bots.NewRolesPlayer(bots.Info{AgentID: "agent_001", Seed: 1})
	you := map[string]any{"id": "agent_001", "role": "Sheriff", "alive": true, "will": ""}
	d := b.Decide(ctx, rolesObs(world.Section{"you": you, "phase": "night", "day": 1.0, "players": players}))
	require.Equal(t, "night_action", d.Tool)
	require.Contains(t, []any{"agent_002", "agent_003"}, d.Params["target"])

	res := []any{map[string]any{"night": 1.0, "text": "Your target agent_003 is suspicious!"}}
	d = b.Decide(ctx, rolesObs(world.Section{"you": you, "phase": "discussion", "day": 2.0, "players": players, "night_results": res}))
	require.Equal(t, "write_will", d.Tool)
	you["will"] = d.Params["text"]
	require.Contains(t, you["will"], "agent_003 is suspicious")
	d = b.Decide(ctx, rolesObs(world.Section{"you": you, "phase": "discussion", "day": 2.0, "players": players, "night_results": res}))
	require.Equal(t, "speak", d.Tool)
	require.Equal(t, "I am the Sheriff. agent_003 is suspicious!", d.Params["text"])
	d = b.Decide(ctx, rolesObs(world.Section{"you": you, "phase": "nomination", "day": 2.0, "players": players, "night_results": res}))
	require.Equal(t, "nominate", d.Tool)
	require.Equal(t, "agent_003", d.Params["player"])
	d = b.Decide(ctx, rolesObs(world.Section{"you": you, "phase": "judgement", "day": 2.0, "players": players, "night_results": res, "defendant": "agent_003"}))
	require.Equal(t, world.Decision{Tool: "vote", Params: map[string]any{"verdict": "guilty"}, Reasoning: "judge"}, d)
	require.True(t, strings.HasPrefix(fmt.Sprint(d.Params), "map["))
}

// Whole games of roles_player bots finish with a winner for every setup list
// over several seeds, and every classic role is played in some game.
func TestRoleGamesFinishForEverySetupList(t *testing.T) {
	raw, err := os.ReadFile("../scenarios/builtin/role_game.json")
	require.NoError(t, err)
	dealt := map[string]bool{}
	for _, list := range roles.SetupLists() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw, &m))
		comp := m["components"].([]any)[0].(map[string]any)
		comp["config"].(map[string]any)["setup_list"] = list
		data, err := json.Marshal(m)
		require.NoError(t, err)
		sc, err := scenarios.Parse("role_game.json", data)
		require.NoError(t, err)
		winners := map[string]int{}
		for seed := uint64(1); seed <= 8; seed++ {
			w, err := sc.NewWorld(scenarios.Options{Seed: seed, Agents: 15})
			require.NoError(t, err)
			g := w.Component("roles").(*roles.Game)
			ctrls := engine.Controllers{}
			for _, a := range w.Agents() {
				b, err := bots.New("roles_player", bots.Info{AgentID: a.ID, Seed: seed})
				require.NoError(t, err)
				ctrls[a.ID] = b
				dealt[g.Role(a.ID)] = true
			}
			r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: sc.TimeLimit()}
			res, err := r.Run(context.Background())
			require.NoError(t, err)
			require.True(t, g.Over(), "%s seed %d: the game ends", list, seed)
			require.NotEmpty(t, g.Winner())
			require.True(t, res.Passed)
			winners[g.Winner()]++
		}
		t.Logf("%s: winners %v", list, winners)
		require.Less(t, winners[roles.Draw], 4, "%s: mostly decided games", list)
	}
	for _, c := range roles.Cards() {
		if c.Name != "Vampire Hunter" { // dealt only beside a rare Vampire; its play is in the rules tests
			require.True(t, dealt[c.Name], "no game dealt the %s", c.Name)
		}
	}
}
