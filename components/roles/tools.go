package roles

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/arena-sim/arena/internal/fuzzy"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// Tools implements tools.Provider. Query tools: get_role_details,
// get_investigation_results, check_will. Action tools: write_will, speak,
// whisper, nominate, vote, night_action, reveal. Each declares its
// persistence; every check comes before any change.
func (g *Game) Tools() []tools.Tool {
	str := func(desc string, max int) *tools.Schema {
		return &tools.Schema{Type: "string", Description: desc, MinLength: tools.Ptr(1), MaxLength: tools.Ptr(max)}
	}
	playerRef := func(desc string) *tools.Schema {
		return str(desc+": an agent id (agent_003) or \"Player N\"", 64)
	}
	P, T := tools.PersistencePermanent, tools.PersistenceTurn
	return []tools.Tool{
		{Name: "get_role_details", Query: true, Persistence: P,
			Description: "Look up a role card by its exact, case-sensitive name (e.g. Investigator): alignment, abilities, attributes, attack, defense and goal. Permanent: the result stays in your knowledge for the whole game.",
			Parameters:  tools.Object(map[string]*tools.Schema{"role": str("The role's exact name", 64)}, "role"),
			Handler:     g.getRoleDetails},
		{Name: "get_investigation_results", Query: true, Persistence: P,
			Description: "List the Investigator's result groups: the roles an investigation cannot tell apart. Permanent.",
			Handler:     g.getInvestigationResults},
		{Name: "check_will", Query: true, Persistence: T,
			Description: "Read a dead player's last will. Turn-Based: the result is shown for the current phase only.",
			Parameters:  tools.Object(map[string]*tools.Schema{"player": playerRef("The dead player")}, "player"),
			Handler:     g.checkWill},
		{Name: "write_will", Persistence: P,
			Description: "Write (replace) your last will, revealed to everyone when you die. Permanent.",
			Parameters:  tools.Object(map[string]*tools.Schema{"text": str("Your will", g.cfg.MaxWillLength)}, "text"),
			Handler:     g.writeWill},
		{Name: "speak", Persistence: T,
			Description: "Say something. By day everyone living hears it; at night only the Mafia can talk (to each other). The dead talk among themselves (a Medium hears them at night).",
			Parameters:  tools.Object(map[string]*tools.Schema{"text": str("What to say", g.cfg.MaxSpeechLength)}, "text"),
			Handler:     g.speak},
		{Name: "whisper", Persistence: T,
			Description: "Whisper to one living player by day. Only they read it; everyone sees that you whispered to them.",
			Parameters: tools.Object(map[string]*tools.Schema{"to": playerRef("Who to whisper to"),
				"text": str("What to whisper", g.cfg.MaxSpeechLength)}, "to", "text"),
			Handler: g.whisper},
		{Name: "nominate", Persistence: T,
			Description: "In the nomination phase, nominate a living player for trial (once per nomination round; not yourself). ⌈living/2⌉ nominations put them on trial.",
			Parameters:  tools.Object(map[string]*tools.Schema{"player": playerRef("The player to nominate")}, "player"),
			Handler:     g.nominate},
		{Name: "vote", Persistence: T,
			Description: "In the judgement phase, vote on the player on trial: guilty, innocent or abstain. Guilty must outnumber innocent to execute; a revealed Mayor's vote counts 3. You may change your vote until the phase ends.",
			Parameters: tools.Object(map[string]*tools.Schema{"verdict": {Type: "string", Description: "guilty, innocent or abstain",
				Enum: []string{"guilty", "innocent", "abstain"}}}, "verdict"),
			Handler: g.vote},
		{Name: "night_action", Persistence: T,
			Description: "At night, use your role's ability on a player (you may change it until the night ends). A Witch names a second target (target2) for her victim; a Forger gives the forged will (text); a Survivor targets herself to put on a vest; a Doctor may heal herself once.",
			Parameters: tools.Object(map[string]*tools.Schema{"target": playerRef("Your target"),
				"target2": playerRef("Witch only: who your victim must target"),
				"text":    str("Forger only: the forged will", g.cfg.MaxWillLength)}, "target"),
			Handler: g.nightAction},
		{Name: "reveal", Persistence: P,
			Description: "Mayor only, by day: reveal yourself as the Mayor. Your vote then counts 3, and Doctors can no longer heal you.",
			Handler:     g.reveal},
		tools.DoNothing(),
	}
}

// me returns the caller, or a failure.
func (g *Game) me(c *tools.Call, tool string, aliveOnly bool) (*player, world.ActionResult, bool) {
	i, ok := g.idx[c.Agent.ID]
	if !ok {
		return nil, world.Fail(tool, world.CodeNotAllowed, "%s is not seated in the role game", c.Agent.ID), false
	}
	p := g.players[i]
	if g.phase == PhaseOver && !(c.Query || tool == "get_role_details" || tool == "get_investigation_results" || tool == "check_will") {
		return nil, world.Fail(tool, world.CodeNotAllowed, "The game is over (%s); only query tools work now", g.winner), false
	}
	if aliveOnly && !p.alive {
		return nil, world.Fail(tool, world.CodeDead, "You are dead (%s on day %d) and cannot use %s; the dead may only speak among themselves and use query tools", p.cause, p.deathDay, tool), false
	}
	return p, world.ActionResult{}, true
}

// resolve finds a player by agent id, "Player N" or N.
func (g *Game) resolve(tool, param, ref string) (*player, world.ActionResult, bool) {
	s := strings.TrimSpace(ref)
	if i, ok := g.idx[s]; ok {
		return g.players[i], world.ActionResult{}, true
	}
	num := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(s, "Player"), "player"))
	if n, err := strconv.Atoi(num); err == nil && n >= 1 && n <= len(g.players) {
		return g.players[n-1], world.ActionResult{}, true
	}
	ids := make([]string, len(g.players))
	for i, p := range g.players {
		ids[i] = p.id
	}
	hint := ""
	if best := fuzzy.Closest(s, ids); best != "" {
		hint = fmt.Sprintf("; did you mean '%s'?", best)
	}
	return nil, world.Fail(tool, world.CodeNotFound, "%s: no player '%s'%s Players are agent ids (%s) or \"Player 1\" to \"Player %d\"",
		param, fuzzy.Clip(s), hint, strings.Join(ids, ", "), len(g.players)), false
}

// remember records a result in the caller's knowledge section; an entry with
// the same tool and key is replaced.
func (g *Game) remember(p *player, tool, key, persistence, res string) {
	for i, e := range p.knowledge {
		if e.Tool == tool && e.Key == key {
			p.knowledge = append(p.knowledge[:i], p.knowledge[i+1:]...)
			break
		}
	}
	p.knowledge = append(p.knowledge, entry{Tool: tool, Key: key, Persistence: persistence, Result: res, phaseSeq: g.phaseSeq})
	if len(p.knowledge) > 40 {
		p.knowledge = p.knowledge[len(p.knowledge)-40:]
	}
}

func (g *Game) getRoleDetails(c *tools.Call) world.ActionResult {
	const tool = "get_role_details"
	p, fail, ok := g.me(c, tool, false)
	if !ok {
		return fail
	}
	name := c.String("role", "")
	card, found := Lookup(name)
	if !found {
		return world.Fail(tool, world.CodeNotFound, "No role named '%s' (names are exact and case-sensitive); closest: %s",
			fuzzy.Clip(name), strings.Join(ClosestNames(name, 3), ", "))
	}
	text := card.Text()
	g.remember(p, tool, name, tools.PersistencePermanent, text)
	return world.OK(tool, map[string]any{"role": card.Name, "faction": card.Faction, "alignment": card.Alignment,
		"abilities": card.Abilities, "attributes": card.Attributes, "attack": attackNames[card.Attack],
		"defense": defenseNames[card.Defense], "unique": card.Unique, "goal": card.Goal, "text": text, "persistence": tools.PersistencePermanent})
}

func (g *Game) getInvestigationResults(c *tools.Call) world.ActionResult {
	const tool = "get_investigation_results"
	p, fail, ok := g.me(c, tool, false)
	if !ok {
		return fail
	}
	groups := InvestigatorGroups(g.cfg.Investigator)
	var lines []string
	for i, gr := range groups {
		lines = append(lines, fmt.Sprintf("%d. %s", i+1, strings.Join(gr, ", ")))
	}
	text := fmt.Sprintf("Investigator results (%s):\n%s", g.cfg.Investigator, strings.Join(lines, "\n"))
	g.remember(p, tool, "", tools.PersistencePermanent, text)
	return world.OK(tool, map[string]any{"mode": g.cfg.Investigator, "groups": groups, "text": text, "persistence": tools.PersistencePermanent})
}

func (g *Game) checkWill(c *tools.Call) world.ActionResult {
	const tool = "check_will"
	p, fail, ok := g.me(c, tool, false)
	if !ok {
		return fail
	}
	q, fail, ok := g.resolve(tool, "player", c.String("player", ""))
	if !ok {
		return fail
	}
	var text string
	switch {
	case q.alive:
		return world.Fail(tool, world.CodeNotAllowed, "%s is alive; a will can only be read once its owner is dead", q.label())
	case q.cleaned && g.phase != PhaseOver:
		text = fmt.Sprintf("%s's will was cleaned and cannot be read.", q.id)
	case q.will == "":
		return world.Fail(tool, world.CodeNotFound, "%s did not leave a will", q.label())
	case q.forged:
		text = fmt.Sprintf("%s's will: %s (forged by a member of the Mafia)", q.id, q.will)
	default:
		text = fmt.Sprintf("%s's will: %s", q.id, q.will)
	}
	g.remember(p, tool, q.id, tools.PersistenceTurn, text)
	return world.OK(tool, map[string]any{"player": q.id, "text": text, "persistence": tools.PersistenceTurn})
}

func (g *Game) writeWill(c *tools.Call) world.ActionResult {
	const tool = "write_will"
	p, fail, ok := g.me(c, tool, true)
	if !ok {
		return fail
	}
	p.will = strings.TrimSpace(c.String("text", ""))
	return world.OK(tool, map[string]any{"will": p.will})
}

func (g *Game) speak(c *tools.Call) world.ActionResult {
	const tool = "speak"
	p, fail, ok := g.me(c, tool, false)
	if !ok {
		return fail
	}
	channel, audience, refusal := g.speakAudience(p)
	if refusal != "" {
		return world.Fail(tool, world.CodeNotAllowed, "%s", refusal)
	}
	text := strings.TrimSpace(c.String("text", ""))
	line := chatLine{Day: g.day, Phase: g.phase, From: p.id, Channel: channel, Text: text, to: audience}
	var to []string
	for _, i := range audience {
		to = append(to, g.players[i].id)
	}
	if audience != nil && len(to) == 0 {
		to = []string{p.id}
	}
	g.chat = append(g.chat, line)
	g.publish(c.World, world.Event{Type: "speak", Agent: p.id, To: to, Data: map[string]any{"channel": line.Channel,
		"text": fmt.Sprintf("%s%s: %s", channelTag(line.Channel), p.id, text)}})
	return world.OK(tool, map[string]any{"channel": line.Channel})
}

// speakAudience is who hears p speak now: the channel and the seats that
// read it (nil: everyone), or why p may not speak. It is the one rule for
// every way of talking: speak, and the world's send_message (see guard.go).
func (g *Game) speakAudience(p *player) (channel string, to []int, refusal string) {
	switch {
	case !p.alive:
		for i, q := range g.players {
			if !q.alive || (g.phase == PhaseNight && q.role == "Medium" && q.alive) {
				to = append(to, i)
			}
		}
		return "dead", to, ""
	case g.phase == PhaseNight && p.faction() == Mafia:
		for i, q := range g.players {
			if q.alive && q.faction() == Mafia {
				to = append(to, i)
			}
		}
		return "mafia", to, ""
	case g.phase == PhaseNight && p.role == "Medium":
		for i, q := range g.players {
			if !q.alive || q == p {
				to = append(to, i)
			}
		}
		return "dead", to, ""
	case g.phase == PhaseNight:
		return "", nil, "It is night: only the Mafia can talk (and a Medium with the dead). Use night_action, or do_nothing"
	}
	return "public", nil, ""
}

func channelTag(ch string) string {
	switch ch {
	case "mafia":
		return "[Mafia] "
	case "dead":
		return "[Dead] "
	}
	return ""
}

func (g *Game) whisper(c *tools.Call) world.ActionResult {
	const tool = "whisper"
	p, fail, ok := g.me(c, tool, true)
	if !ok {
		return fail
	}
	q, fail, ok := g.resolve(tool, "to", c.String("to", ""))
	if !ok {
		return fail
	}
	switch {
	case g.phase == PhaseNight:
		return world.Fail(tool, world.CodeNotAllowed, "You cannot whisper at night")
	case q == p:
		return world.Fail(tool, world.CodeInvalidParams, "whisper: you cannot whisper to yourself")
	case !q.alive:
		return world.Fail(tool, world.CodeNotAllowed, "%s is dead; whisper to a living player", q.label())
	}
	text := strings.TrimSpace(c.String("text", ""))
	g.chat = append(g.chat, chatLine{Day: g.day, Phase: g.phase, From: p.id, To: q.id, Channel: "whisper", Text: text, to: []int{g.idx[p.id], g.idx[q.id]}})
	g.publish(c.World, world.Event{Type: "whisper", Agent: p.id, To: []string{p.id, q.id},
		Data: map[string]any{"to": q.id, "text": fmt.Sprintf("%s whispers to you: %s", p.id, text)}})
	g.publish(c.World, world.Event{Type: "whisper_notice", Agent: p.id, Data: map[string]any{"to": q.id,
		"text": fmt.Sprintf("%s is whispering to %s.", p.id, q.id)}})
	return world.OK(tool, map[string]any{"to": q.id})
}

func (g *Game) nominate(c *tools.Call) world.ActionResult {
	const tool = "nominate"
	p, fail, ok := g.me(c, tool, true)
	if !ok {
		return fail
	}
	if g.phase != PhaseNomination {
		return world.Fail(tool, world.CodeNotAllowed, "Nominations happen in the nomination phase; it is now %s (day %d)", g.phase, g.day)
	}
	q, fail, ok := g.resolve(tool, "player", c.String("player", ""))
	if !ok {
		return fail
	}
	if g.pending >= 0 {
		if g.players[g.pending] == q {
			return world.OK(tool, map[string]any{"player": q.id, "note": fmt.Sprintf("%s is already going on trial", q.id)})
		}
		return world.Fail(tool, world.CodeNotAllowed, "%s is already going on trial; no other nomination counts now", g.players[g.pending].label())
	}
	me := g.idx[p.id]
	switch {
	case q == p:
		return world.Fail(tool, world.CodeInvalidParams, "nominate: you cannot nominate yourself")
	case !q.alive:
		return world.Fail(tool, world.CodeNotAllowed, "%s is dead; nominate a living player", q.label())
	}
	if t, done := g.noms[me]; done {
		return world.Fail(tool, world.CodeNotAllowed, "You already nominated %s this round", g.players[t].id)
	}
	t := g.idx[q.id]
	g.noms[me] = t
	count := 0
	for _, v := range g.noms {
		if v == t {
			count++
		}
	}
	need := g.Threshold()
	g.publish(c.World, world.Event{Type: "nomination", Agent: p.id, Data: map[string]any{"player": q.id, "count": count, "needed": need,
		"text": fmt.Sprintf("%s nominates %s (%d of %d).", p.id, q.id, count, need)}})
	if count >= need {
		g.pending = t
	}
	return world.OK(tool, map[string]any{"player": q.id, "count": count, "needed": need})
}

func (g *Game) vote(c *tools.Call) world.ActionResult {
	const tool = "vote"
	p, fail, ok := g.me(c, tool, true)
	if !ok {
		return fail
	}
	if g.phase != PhaseJudgement {
		return world.Fail(tool, world.CodeNotAllowed, "Votes are cast in the judgement phase; it is now %s (day %d)", g.phase, g.day)
	}
	me := g.idx[p.id]
	if me == g.defendant {
		return world.Fail(tool, world.CodeNotAllowed, "You are on trial and cannot vote on your own judgement")
	}
	v := c.String("verdict", "")
	g.votes[me] = v
	return world.OK(tool, map[string]any{"verdict": v, "defendant": g.players[g.defendant].id})
}

func (g *Game) nightAction(c *tools.Call) world.ActionResult {
	const tool = "night_action"
	p, fail, ok := g.me(c, tool, true)
	if !ok {
		return fail
	}
	if g.phase != PhaseNight {
		return world.Fail(tool, world.CodeNotAllowed, "Night actions are for the night; it is now %s (day %d)", g.phase, g.day)
	}
	card := p.card()
	if card.NightAction == "" {
		return world.Fail(tool, world.CodeNotAllowed, "The %s has no night action; use do_nothing (or speak, for the Mafia and the Medium)", p.role)
	}
	q, fail, ok := g.resolve(tool, "target", c.String("target", ""))
	if !ok {
		return fail
	}
	me, t := g.idx[p.id], g.idx[q.id]
	a := &act{target: t, target2: -1}
	switch {
	case !q.alive:
		return world.Fail(tool, world.CodeNotAllowed, "%s is dead; choose a living target", q.label())
	case p.role == "Survivor":
		if t != me {
			return world.Fail(tool, world.CodeInvalidParams, "night_action: a Survivor can only target herself (to put on a vest)")
		}
		if p.vests <= 0 {
			return world.Fail(tool, world.CodeNotAllowed, "You have no vests left")
		}
	case t == me && p.role != "Doctor" && p.role != "Bodyguard":
		return world.Fail(tool, world.CodeInvalidParams, "night_action: the %s cannot target themselves", p.role)
	case t == me && p.role == "Doctor" && p.selfHeals <= 0:
		return world.Fail(tool, world.CodeNotAllowed, "You have already healed yourself once")
	case p.faction() == Mafia && q.faction() == Mafia && (card.NightAction == "kill" || card.NightAction == "frame"):
		return world.Fail(tool, world.CodeNotAllowed, "%s is a fellow member of the Mafia", q.id)
	case p.role == "Vigilante" && g.day < 2:
		return world.Fail(tool, world.CodeNotAllowed, "The Vigilante cannot shoot on the first night")
	case p.role == "Vigilante" && p.bullets <= 0:
		return world.Fail(tool, world.CodeNotAllowed, "You have no bullets left")
	case p.role == "Janitor" && p.cleans <= 0:
		return world.Fail(tool, world.CodeNotAllowed, "You have no cleanings left")
	case p.role == "Forger" && p.forges <= 0:
		return world.Fail(tool, world.CodeNotAllowed, "You have no forgeries left")
	}
	if p.role == "Witch" {
		ref := c.String("target2", "")
		if ref == "" {
			return world.Fail(tool, world.CodeInvalidParams, "night_action: a Witch must give target2, the player her victim will target")
		}
		q2, fail, ok := g.resolve(tool, "target2", ref)
		if !ok {
			return fail
		}
		if !q2.alive {
			return world.Fail(tool, world.CodeNotAllowed, "%s is dead; choose a living second target", q2.label())
		}
		a.target2 = g.idx[q2.id]
	}
	if p.role == "Forger" {
		a.text = strings.TrimSpace(c.String("text", ""))
		if a.text == "" {
			return world.Fail(tool, world.CodeInvalidParams, "night_action: a Forger must give text, the forged will")
		}
	}
	g.acts[me] = a
	return world.OK(tool, map[string]any{"ability": card.NightAction, "target": q.id})
}

func (g *Game) reveal(c *tools.Call) world.ActionResult {
	const tool = "reveal"
	p, fail, ok := g.me(c, tool, true)
	if !ok {
		return fail
	}
	switch {
	case p.role != "Mayor":
		return world.Fail(tool, world.CodeNotAllowed, "Only the Mayor can reveal; you are the %s", p.role)
	case p.revealed:
		return world.Fail(tool, world.CodeNotAllowed, "You have already revealed yourself")
	case g.phase == PhaseNight:
		return world.Fail(tool, world.CodeNotAllowed, "The Mayor reveals by day")
	}
	p.revealed = true
	g.publish(c.World, world.Event{Type: "reveal", Agent: p.id, Data: map[string]any{"role": "Mayor",
		"text": fmt.Sprintf("%s has revealed themselves as the Mayor!", p.label())}})
	return world.OK(tool, nil)
}

// hasTool reports whether the component offers a tool.
func (g *Game) hasTool(name string) bool {
	for _, t := range g.Tools() {
		if t.Name == name {
			return true
		}
	}
	return false
}
