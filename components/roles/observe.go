package roles

import (
	"fmt"
	"strings"

	"github.com/arena-sim/arena/world"
)

// chatShown is how many recent chat lines a section carries.
const chatShown = 25

// Observe implements world.Component: the agent's own role, the table as it
// may see it, the chat it may read, its private night results and its
// knowledge (Permanent tool results for the game, Turn-Based ones for the
// current phase).
func (g *Game) Observe(_ *world.World, agentID string) world.Section {
	vi, ok := g.idx[agentID]
	if !ok {
		return nil
	}
	v := g.players[vi]
	card := v.card()
	var b strings.Builder
	you := map[string]any{"id": v.id, "number": v.num, "role": v.role, "faction": card.Faction, "alignment": card.Alignment,
		"goal": card.Goal, "alive": v.alive, "will": v.will}
	fmt.Fprintf(&b, "=== Role game ===\nYou are %s, the %s (%s). Goal: %s\n", v.label(), v.role, card.Alignment, card.Goal)
	if !v.alive {
		fmt.Fprintf(&b, "You are dead (%s, day %d).\n", v.cause, v.deathDay)
	}
	sec := world.Section{"you": you, "phase": g.phase, "day": g.day, "ticks_left": max(g.left, 0),
		"threshold": g.Threshold(), "trials_left": max(g.cfg.MaxTrials-g.trials, 0)}
	if g.phase == PhaseOver {
		fmt.Fprintf(&b, "The game is over: %s. You %s.\n", g.winner, map[bool]string{true: "won", false: "lost"}[v.won])
		sec["winner"] = g.winner
		sec["won"] = v.won
	} else {
		fmt.Fprintf(&b, "Day %d, %s phase (%d ticks left).", g.day, strings.ReplaceAll(g.phase, "_", " "), max(g.left, 0))
		switch g.phase {
		case PhaseNomination:
			fmt.Fprintf(&b, " %d nominations put a player on trial; %d trials left today.", g.Threshold(), g.cfg.MaxTrials-g.trials)
		case PhaseNight:
			if card.NightAction != "" {
				fmt.Fprintf(&b, " Your night ability: %s.", card.NightAction)
			}
		}
		b.WriteString("\n")
	}
	if g.defendant >= 0 {
		sec["defendant"] = g.players[g.defendant].id
		fmt.Fprintf(&b, "On trial: %s.\n", g.players[g.defendant].id)
	}
	if g.phase == PhaseNomination {
		counts := map[string]any{}
		for _, t := range g.noms {
			id := g.players[t].id
			n, _ := counts[id].(int)
			counts[id] = n + 1
		}
		sec["nominations"] = counts
		if t, ok := g.noms[vi]; ok {
			sec["my_nomination"] = g.players[t].id
		}
	}
	if g.phase == PhaseJudgement {
		if vt, ok := g.votes[vi]; ok {
			sec["my_vote"] = vt
		}
	}
	if g.phase == PhaseNight {
		if a := g.acts[vi]; a != nil {
			sec["my_night_action"] = g.players[a.target].id
		}
	}
	if v.target >= 0 && v.role == "Executioner" {
		sec["target"] = g.players[v.target].id
		fmt.Fprintf(&b, "Your target: %s.\n", g.players[v.target].id)
	}
	// The table.
	var players []any
	b.WriteString("Players:\n")
	for i, p := range g.players {
		e := map[string]any{"id": p.id, "number": p.num, "alive": p.alive}
		var tags []string
		if p.alive {
			tags = append(tags, "alive")
		} else {
			tags = append(tags, "dead")
		}
		if role := g.visibleRole(vi, i); role != "" {
			e["role"] = role
			tags = append(tags, role)
		}
		if p.revealed {
			e["revealed"] = true
			tags = append(tags, "revealed Mayor")
		}
		if vi == i {
			tags = append(tags, "you")
		}
		players = append(players, e)
		fmt.Fprintf(&b, "  %d. %s [%s]\n", p.num, p.id, strings.Join(tags, ", "))
	}
	sec["players"] = players
	if v.faction() == Mafia || v.role == Vampire {
		var team []any
		for _, p := range g.players {
			if p != v && ((v.faction() == Mafia && p.faction() == Mafia) || (v.role == Vampire && p.role == Vampire)) {
				team = append(team, map[string]any{"id": p.id, "role": p.role, "alive": p.alive})
			}
		}
		sec["team"] = team
	}
	g.observeRole(v, vi, sec, &b)
	// Chat.
	// The newest chatShown lines the agent may read, oldest first.
	first, n := len(g.chat), 0
	for first > 0 && n < chatShown {
		first--
		if g.canRead(vi, g.chat[first]) {
			n++
		}
	}
	chat := make([]any, 0, n)
	if n > 0 {
		b.WriteString("Recent chat:\n")
	}
	for _, c := range g.chat[first:] {
		if g.canRead(vi, c) {
			chat = append(chat, c.view)
			b.WriteString(c.line)
			b.WriteByte('\n')
		}
	}
	if n == 0 {
		chat = nil
	}
	sec["chat"] = chat
	// Private results and knowledge.
	var res []any
	if len(v.results) > 0 {
		b.WriteString("Your results:\n")
	}
	for _, r := range v.results {
		res = append(res, map[string]any{"night": r.Night, "text": r.Text})
		fmt.Fprintf(&b, "  Night %d: %s\n", r.Night, r.Text)
	}
	sec["night_results"] = res
	var know []any
	for _, e := range v.knowledge {
		if e.Persistence != "permanent" && e.phaseSeq != g.phaseSeq {
			continue
		}
		know = append(know, map[string]any{"tool": e.Tool, "key": e.Key, "persistence": e.Persistence, "result": e.Result})
	}
	sec["knowledge"] = know
	if len(know) > 0 {
		b.WriteString("Knowledge (Permanent results stay; Turn-Based ones last this phase):\n")
		for _, k := range know {
			m := k.(map[string]any)
			fmt.Fprintf(&b, "  [%s %s] %s\n", m["tool"], m["persistence"], m["result"])
		}
	}
	if v.will != "" {
		fmt.Fprintf(&b, "Your will: %s\n", v.will)
	}
	sec["text"] = b.String()
	return sec
}

// visibleRole is the role viewer may see for player i, or "".
func (g *Game) visibleRole(vi, i int) string {
	v, p := g.players[vi], g.players[i]
	switch {
	case vi == i, g.phase == PhaseOver:
		return p.role
	case !p.alive && !p.cleaned:
		return p.role
	case !p.alive && p.cleaned && p.cleanedBy == vi:
		return p.role
	case p.revealed:
		return "Mayor"
	case p.revived:
		return p.role
	case v.faction() == Mafia && p.faction() == Mafia:
		return p.role
	case v.role == Vampire && p.role == Vampire:
		return p.role
	}
	return ""
}

func (g *Game) canRead(vi int, c chatLine) bool {
	if c.to == nil {
		return true
	}
	for _, i := range c.to {
		if i == vi {
			return true
		}
	}
	return false
}

// FormatEvent implements world.EventFormatter: every event carries its text.
func (g *Game) FormatEvent(e world.Event) (string, bool) {
	if t, ok := e.Data["text"].(string); ok {
		return t, true
	}
	return "", false
}

// observeRole adds what a role's own abilities need: the Jailor's prisoner
// (or that you are jailed), a lynched Jester's haunt choices, a dead Medium's
// seance, the charges left, and whether tonight is a full moon.
func (g *Game) observeRole(v *player, vi int, sec world.Section, b *strings.Builder) {
	if g.prisoner >= 0 {
		switch vi {
		case g.prisoner:
			sec["jailed"] = true
			b.WriteString("You are in jail.\n")
		case g.jailor():
			sec["prisoner"] = g.players[g.prisoner].id
			fmt.Fprintf(b, "Your prisoner: %s.\n", g.players[g.prisoner].id)
		}
	}
	if v.hauntNight == g.day && len(v.haunt) > 0 {
		var ids []any
		for _, i := range v.haunt {
			if g.players[i].alive {
				ids = append(ids, g.players[i].id)
			}
		}
		sec["haunt"] = ids
	}
	if v.role == "Medium" && !v.alive {
		sec["seance_used"] = v.seanceUsed
	}
	if v.silenced == g.day && g.phase != PhaseNight {
		sec["blackmailed"] = true
		b.WriteString("You are blackmailed today: you cannot speak or whisper.\n")
	}
	switch v.role {
	case "Vigilante":
		sec["charges"] = v.bullets
	case "Survivor", "Bodyguard":
		sec["charges"] = v.vests
	case "Janitor":
		sec["charges"] = v.cleans
	case "Forger":
		sec["charges"] = v.forges
	case "Veteran":
		sec["charges"] = v.alerts
	case "Jailor":
		sec["charges"] = v.executions
	case "Retributionist":
		sec["charges"] = v.revives
	case "Doctor":
		sec["charges"] = v.selfHeals
	}
	if v.role == "Werewolf" {
		sec["full_moon"] = g.day%2 == 0
	}
}
