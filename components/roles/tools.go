package roles

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/arena-sim/arena/internal/fuzzy"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// Tools implements tools.Provider. Query tools: get_role_details,
// get_investigation_results, check_will. Action tools: write_will, speak,
// whisper, nominate, vote, night_action, reveal, jail, seance. Each declares its
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
			Description: "Say something. By day everyone living hears it (unless you are blackmailed); at night the Mafia talk among themselves, and so do the Vampires; the Jailor and the prisoner talk in the jail (the Jailor anonymously); a dead Medium's seance talks with its living contact. The dead talk among themselves (a living Medium hears them at night).",
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
			Description: "At night, use your role's ability on a player (you may change it until the night ends). A Witch names a second target (target2) for her victim, a Transporter the second player to swap, a Disguiser the non-Mafia player to disguise her Mafia target as; a Forger gives the forged will (text). Target yourself to: vest (Survivor; a Bodyguard once), alert (Veteran), ignite (Arsonist), stay home (Werewolf), heal yourself (Doctor, once). A Jailor executes by targeting the prisoner; an Amnesiac or a Retributionist targets a dead player; a lynched Jester haunts one of the guilty voters.",
			Parameters: tools.Object(map[string]*tools.Schema{"target": playerRef("Your target"),
				"target2": playerRef("Witch, Transporter or Disguiser only: the second player"),
				"text":    str("Forger only: the forged will", g.cfg.MaxWillLength)}, "target"),
			Handler: g.nightAction},
		{Name: "reveal", Persistence: P,
			Description: "Mayor only, by day: reveal yourself as the Mayor. Your vote then counts 3, and Doctors can no longer heal you.",
			Handler:     g.reveal},
		{Name: "jail", Persistence: T,
			Description: "Jailor only, by day: jail a living player for the coming night (you may change it until night falls). Your prisoner cannot act and is safe from attacks; you talk with them anonymously (speak) and may execute them (night_action on them).",
			Parameters:  tools.Object(map[string]*tools.Schema{"player": playerRef("Who to jail")}, "player"),
			Handler:     g.jail},
		{Name: "seance", Persistence: T,
			Description: "A dead Medium only, once, by day: choose a living player to talk with (speak) during the coming night.",
			Parameters:  tools.Object(map[string]*tools.Schema{"player": playerRef("The living player to contact")}, "player"),
			Handler:     g.seance},
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
	groups := InvestigatorGroups()
	// Seed 001's format: a bold heading, one "- " line a group.
	var b strings.Builder
	b.WriteString("**Investigator Results:**")
	for _, gr := range groups {
		b.WriteString("\n- " + strings.Join(gr, ", "))
	}
	text := b.String()
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
	// Seed 001's format, `Player 3's Will: "…"`, with ToSSim's cleaned and
	// forged variants.
	var text string
	name := fmt.Sprintf("Player %d", q.num)
	switch {
	case q.alive:
		return world.Fail(tool, world.CodeNotAllowed, "%s is alive; a will can only be read once its owner is dead", q.label())
	case q.cleaned && g.phase != PhaseOver:
		text = fmt.Sprintf("%s's will was cleaned and cannot be read.", name)
	case q.will == "":
		return world.Fail(tool, world.CodeNotFound, "%s did not leave a will", q.label())
	case q.forged:
		text = fmt.Sprintf("%s's Will: %q (forged by a member of the Mafia)", name, q.will)
	default:
		text = fmt.Sprintf("%s's Will: %q", name, q.will)
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
	from, agent := p.id, p.id
	if channel == "jail" && g.idx[p.id] == g.jailor() {
		from, agent = "Jailor", "" // the Jailor is anonymous in the jail
	}
	line := chatLine{Day: g.day, Phase: g.phase, From: from, Channel: channel, Text: text, to: audience}
	var to []string
	for _, i := range audience {
		to = append(to, g.players[i].id)
	}
	if audience != nil && len(to) == 0 {
		to = []string{p.id}
	}
	g.say(line)
	g.publish(c.World, world.Event{Type: "speak", Agent: agent, To: to, Data: map[string]any{"channel": line.Channel,
		"text": fmt.Sprintf("%s%s: %s", channelTag(line.Channel), from, text)}})
	return world.OK(tool, map[string]any{"channel": line.Channel})
}

// speakAudience is who hears p speak now: the channel and the seats that
// read it (nil: everyone), or why p may not speak. It is the one rule for
// every way of talking: speak, and the world's send_message (see guard.go).
func (g *Game) speakAudience(p *player) (channel string, to []int, refusal string) {
	me := g.idx[p.id]
	night := g.phase == PhaseNight
	switch {
	case !p.alive && night && p.role == "Medium" && p.seance >= 0:
		return "seance", []int{me, p.seance}, ""
	case p.alive && !night && p.silenced == g.day:
		return "", nil, "You are blackmailed: you cannot speak or whisper today"
	case night && g.prisoner >= 0 && (me == g.prisoner || me == g.jailor()):
		return "jail", []int{g.jailor(), g.prisoner}, ""
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
	case g.phase == PhaseNight && p.role == Vampire:
		for i, q := range g.players {
			if q.alive && q.role == Vampire {
				to = append(to, i)
			}
		}
		return "vampire", to, ""
	case p.alive && night && g.medium(me) >= 0:
		// A seance reaches a player with no night chat of its own; the
		// Mafia and the Vampires keep talking in theirs.
		return "seance", []int{g.medium(me), me}, ""
	case g.phase == PhaseNight && p.role == "Medium":
		for i, q := range g.players {
			if !q.alive || q == p {
				to = append(to, i)
			}
		}
		return "dead", to, ""
	case g.phase == PhaseNight:
		return "", nil, "It is night: only the Mafia and the Vampires talk among themselves (and a Medium with the dead, the Jailor with the prisoner). Use night_action, or do_nothing"
	}
	return "public", nil, ""
}

// medium is the seat of the dead Medium holding a seance with seat i tonight, or -1.
func (g *Game) medium(i int) int {
	for j, q := range g.players {
		if !q.alive && q.role == "Medium" && q.seance == i && i >= 0 {
			return j
		}
	}
	return -1
}

func channelTag(ch string) string {
	switch ch {
	case "mafia":
		return "[Mafia] "
	case "dead":
		return "[Dead] "
	case "jail":
		return "[Jail] "
	case "vampire":
		return "[Vampire] "
	case "seance":
		return "[Seance] "
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
	case p.silenced == g.day:
		return world.Fail(tool, world.CodeNotAllowed, "You are blackmailed: you cannot speak or whisper today")
	case q == p:
		return world.Fail(tool, world.CodeInvalidParams, "whisper: you cannot whisper to yourself")
	case !q.alive:
		return world.Fail(tool, world.CodeNotAllowed, "%s is dead; whisper to a living player", q.label())
	}
	text := strings.TrimSpace(c.String("text", ""))
	// Spies and Blackmailers read every whisper.
	to := []int{g.idx[p.id], g.idx[q.id]}
	var spies []string
	for i, r := range g.players {
		if r.alive && (r.role == "Spy" || r.role == "Blackmailer") && r != p && r != q {
			to = append(to, i)
			spies = append(spies, r.id)
		}
	}
	g.say(chatLine{Day: g.day, Phase: g.phase, From: p.id, To: q.id, Channel: "whisper", Text: text, to: to})
	g.publish(c.World, world.Event{Type: "whisper", Agent: p.id, To: []string{p.id, q.id},
		Data: map[string]any{"to": q.id, "text": fmt.Sprintf("%s whispers to you: %s", p.id, text)}})
	if len(spies) > 0 {
		g.publish(c.World, world.Event{Type: "whisper_overheard", Agent: p.id, To: spies,
			Data: map[string]any{"to": q.id, "text": fmt.Sprintf("You overhear %s whispering to %s: %s", p.id, q.id, text)}})
	}
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
	p, fail, ok := g.me(c, tool, false)
	if !ok {
		return fail
	}
	haunting := !p.alive && p.role == "Jester" && p.hauntNight == g.day
	if !p.alive && !haunting {
		return world.Fail(tool, world.CodeDead, "You are dead (%s on day %d) and cannot use %s; the dead may only speak among themselves and use query tools", p.cause, p.deathDay, tool)
	}
	if g.phase != PhaseNight {
		return world.Fail(tool, world.CodeNotAllowed, "Night actions are for the night; it is now %s (day %d)", g.phase, g.day)
	}
	card := p.card()
	me := g.idx[p.id]
	switch {
	case card.NightAction == "":
		return world.Fail(tool, world.CodeNotAllowed, "The %s has no night action; use do_nothing (or speak, for those with a night channel)", p.role)
	case p.role == "Jester" && !haunting:
		return world.Fail(tool, world.CodeNotAllowed, "A Jester only haunts, on the night after being lynched")
	case me == g.prisoner:
		return world.Fail(tool, world.CodeNotAllowed, "You are in jail tonight and cannot act; you may speak with the Jailor")
	}
	q, fail, ok := g.resolve(tool, "target", c.String("target", ""))
	if !ok {
		return fail
	}
	t := g.idx[q.id]
	a := &act{target: t, target2: -1}
	if msg, code := g.checkNightTarget(p, q, me, t); msg != "" {
		return world.Fail(tool, code, "%s", msg)
	}
	if needsTarget2[card.NightAction] != "" {
		ref := c.String("target2", "")
		if ref == "" {
			return world.Fail(tool, world.CodeInvalidParams, "night_action: a %s must give target2, %s", p.role, needsTarget2[card.NightAction])
		}
		q2, fail, ok := g.resolve(tool, "target2", ref)
		if !ok {
			return fail
		}
		switch {
		case !q2.alive:
			return world.Fail(tool, world.CodeNotAllowed, "%s is dead; choose a living second target", q2.label())
		case p.role == "Transporter" && q2 == q:
			return world.Fail(tool, world.CodeInvalidParams, "night_action: a Transporter swaps two different players")
		case p.role == "Disguiser" && q2.faction() == Mafia:
			return world.Fail(tool, world.CodeInvalidParams, "night_action: target2 must be a player outside the Mafia, the disguise")
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
	ability := card.NightAction
	switch {
	case p.role == "Arsonist" && t == me:
		ability = "ignite"
	case p.role == "Bodyguard" && t == me:
		ability = "vest"
	case p.role == "Werewolf" && t == me:
		ability = "stay home"
	}
	return world.OK(tool, map[string]any{"ability": ability, "target": q.id})
}

// needsTarget2 are the abilities with a second target, and what it is.
var needsTarget2 = map[string]string{"control": "the player her victim will target", "transport": "the second player to swap",
	"disguise": "the player outside the Mafia to disguise her target as"}

// selfTarget are the abilities that may (or, for vest and alert, must) target oneself.
var selfTarget = map[string]bool{"heal": true, "guard": true, "transport": true, "douse": true, "rampage": true,
	"disguise": true, "vest": true, "alert": true}

// checkNightTarget checks a night action's target q (seat t) for actor p
// (seat me): a message and an error code, or "".
func (g *Game) checkNightTarget(p, q *player, me, t int) (string, string) {
	card := p.card()
	act := card.NightAction
	dead := act == "remember" || act == "revive"
	na, ip := world.CodeNotAllowed, world.CodeInvalidParams
	switch {
	case dead && q.alive:
		return fmt.Sprintf("%s is alive; the %s targets a dead player", q.label(), p.role), na
	case !dead && !q.alive:
		return fmt.Sprintf("%s is dead; choose a living target", q.label()), na
	case (act == "vest" || act == "alert") && t != me:
		return fmt.Sprintf("night_action: the %s can only target themselves", p.role), ip
	case t == me && !selfTarget[act]:
		return fmt.Sprintf("night_action: the %s cannot target themselves", p.role), ip
	case p.faction() == Mafia && q.faction() == Mafia && (act == "kill" || act == "frame"):
		return fmt.Sprintf("%s is a fellow member of the Mafia", q.id), na
	case act == "bite" && q.role == Vampire:
		return fmt.Sprintf("%s is a fellow Vampire", q.id), na
	}
	switch p.role {
	case "Survivor":
		if p.vests <= 0 {
			return "You have no vests left", na
		}
	case "Bodyguard":
		if t == me && p.vests <= 0 {
			return "You have already used your vest", na
		}
	case "Doctor":
		if t == me && p.selfHeals <= 0 {
			return "You have already healed yourself once", na
		}
	case "Veteran":
		if p.alerts <= 0 {
			return "You have no alerts left", na
		}
	case "Vigilante":
		if g.day < 2 {
			return "The Vigilante cannot shoot on the first night", na
		}
		if p.bullets <= 0 {
			return "You have no bullets left", na
		}
		if p.guilt {
			return "You are overcome with guilt and cannot shoot", na
		}
	case "Janitor":
		if p.cleans <= 0 {
			return "You have no cleanings left", na
		}
	case "Forger":
		if p.forges <= 0 {
			return "You have no forgeries left", na
		}
	case "Jailor":
		switch {
		case g.prisoner < 0:
			return "You jailed no one today (jail someone by day to execute them at night)", na
		case t != g.prisoner:
			return fmt.Sprintf("You can only execute your prisoner, %s", g.players[g.prisoner].id), na
		case g.day < 2:
			return "The Jailor cannot execute on the first night", na
		case p.executions <= 0:
			return "You have no executions left", na
		}
	case "Werewolf":
		if g.day%2 != 0 {
			return fmt.Sprintf("The Werewolf only transforms on full-moon nights (even nights); tonight is night %d", g.day), na
		}
	case "Jester":
		if !slices.Contains(p.haunt, t) {
			var ids []string
			for _, i := range p.haunt {
				if g.players[i].alive {
					ids = append(ids, g.players[i].id)
				}
			}
			return fmt.Sprintf("You can only haunt a living player who voted guilty: %s", strings.Join(ids, ", ")), na
		}
	case "Retributionist":
		switch {
		case p.revives <= 0:
			return "You have already revived someone", na
		case q.faction() != Town:
			return fmt.Sprintf("%s was the %s; you can only revive a member of the Town", q.id, q.role), na
		case q.cleaned:
			return fmt.Sprintf("%s's body was cleaned; you cannot revive them", q.id), na
		}
	case "Amnesiac":
		switch {
		case q.cleaned:
			return fmt.Sprintf("%s's body was cleaned; you cannot remember their role", q.id), na
		case q.card().Unique || q.role == Vampire:
			return fmt.Sprintf("You cannot remember the %s (unique roles and Vampires cannot be remembered)", q.role), na
		}
	case "Disguiser":
		if q.faction() != Mafia {
			return fmt.Sprintf("night_action: a Disguiser's target must be a member of the Mafia (%s is not)", q.id), ip
		}
	}
	return "", ""
}

func (g *Game) jail(c *tools.Call) world.ActionResult {
	const tool = "jail"
	p, fail, ok := g.me(c, tool, true)
	if !ok {
		return fail
	}
	switch {
	case p.role != "Jailor":
		return world.Fail(tool, world.CodeNotAllowed, "Only the Jailor can jail; you are the %s", p.role)
	case g.phase == PhaseNight:
		return world.Fail(tool, world.CodeNotAllowed, "The Jailor jails by day, for the coming night")
	}
	q, fail, ok := g.resolve(tool, "player", c.String("player", ""))
	if !ok {
		return fail
	}
	switch {
	case q == p:
		return world.Fail(tool, world.CodeInvalidParams, "jail: you cannot jail yourself")
	case !q.alive:
		return world.Fail(tool, world.CodeNotAllowed, "%s is dead; jail a living player", q.label())
	}
	g.prisoner = g.idx[q.id]
	return world.OK(tool, map[string]any{"prisoner": q.id})
}

func (g *Game) seance(c *tools.Call) world.ActionResult {
	const tool = "seance"
	p, fail, ok := g.me(c, tool, false)
	if !ok {
		return fail
	}
	switch {
	case p.role != "Medium":
		return world.Fail(tool, world.CodeNotAllowed, "Only a dead Medium can hold a seance; you are the %s", p.role)
	case p.alive:
		return world.Fail(tool, world.CodeNotAllowed, "A Medium holds a seance once dead; alive, you hear the dead at night")
	case p.seanceUsed:
		return world.Fail(tool, world.CodeNotAllowed, "You have already held your seance")
	case g.phase == PhaseNight:
		return world.Fail(tool, world.CodeNotAllowed, "Choose your seance by day, for the coming night")
	}
	q, fail, ok := g.resolve(tool, "player", c.String("player", ""))
	if !ok {
		return fail
	}
	if !q.alive {
		return world.Fail(tool, world.CodeNotAllowed, "%s is dead; a seance contacts a living player", q.label())
	}
	p.seance = g.idx[q.id]
	return world.OK(tool, map[string]any{"player": q.id})
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
