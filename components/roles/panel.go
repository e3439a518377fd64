package roles

import (
	"fmt"
	"strings"

	"github.com/arena-sim/arena/world"
)

var _ world.Spectated = (*Game)(nil)

// Panel implements world.Spectated: the day, phase and ticks left, the living
// and the dead; the nominations, the player on trial with the votes so far
// and who cast them, the night's actions and the last verdict; and every
// player's role and faction. What the players do not know is marked
// [hidden]: the roles of the living (but a revealed Mayor's), a cleaned
// body's role, the votes before the verdict and the night actions; what
// everyone knows is marked [public]. With more players than lines, several
// share a line.
func (g *Game) Panel(*world.World) world.Panel {
	p := world.Panel{Name: Name, Title: "Role game"}
	alive := g.living()
	dead := len(g.players) - alive
	if g.phase == PhaseOver {
		if g.winner == Draw {
			p.Add("Game over on day %d: a draw · %d alive, %d dead", g.day, alive, dead)
		} else {
			p.Add("Game over on day %d: %s wins · %d alive, %d dead", g.day, g.winner, alive, dead)
		}
	} else {
		p.Add("Day %d · %s · %s left · %d alive, %d dead", g.day, strings.ReplaceAll(g.phase, "_", " "), plural(max(g.left, 0), "tick"), alive, dead)
		g.panelTrial(&p)
	}
	g.panelPlayers(&p)
	return p
}

// panelTrial adds the nominations, the trial and its votes, the night's
// actions and the last verdict.
func (g *Game) panelTrial(p *world.Panel) {
	switch g.phase {
	case PhaseNomination:
		var items []string
		for t, q := range g.players {
			var by []string
			for i := range g.players {
				if v, ok := g.noms[i]; ok && v == t {
					by = append(by, g.players[i].id)
				}
			}
			if len(by) > 0 {
				items = append(items, fmt.Sprintf("%s: %d by %s", q.id, len(by), strings.Join(by, " ")))
			}
		}
		head := fmt.Sprintf("Nominations (%d put on trial; trial %d of %d)", g.Threshold(), g.trials+1, g.cfg.MaxTrials)
		if len(items) == 0 {
			p.Add("%s: none", head)
		} else {
			p.AddList(head+": ", items, 2)
		}
		if g.pending >= 0 {
			p.Add("%s goes on trial", g.players[g.pending].id)
		}
	case PhaseDefense:
		p.Add("On trial: %s (trial %d of %d), defending", g.players[g.defendant].id, g.trials, g.cfg.MaxTrials)
	case PhaseJudgement:
		guilty, innocent, abstain, _, items := g.tally()
		tally := fmt.Sprintf(": guilty %d, innocent %d, abstain %d", guilty, innocent, abstain)
		p.Add("On trial %s%s", world.Clip(g.players[g.defendant].id, world.PanelWidth-len("On trial ")-len(tally)), tally)
		if len(items) > 0 {
			p.AddList("Votes [hidden]: ", items, 2)
		}
	case PhaseLastWords:
		p.Add("Found guilty: %s, last words", g.players[g.defendant].id)
	case PhaseNight:
		var items []string
		for i, q := range g.players {
			a := g.acts[i]
			if a == nil {
				continue
			}
			s := q.id + "→" + g.players[a.target].id
			if q.role == "Witch" && a.target2 >= 0 {
				s += "→" + g.players[a.target2].id
			}
			items = append(items, s)
		}
		if len(items) > 0 {
			p.AddList("Night actions [hidden]: ", items, 2)
		}
	}
	if g.lastTally != "" && g.phase != PhaseJudgement {
		p.Add("Last verdict: %s", g.lastTally)
	}
}

// panelPlayers adds every player: one a line when they fit, else packed
// into an alive and a dead list.
func (g *Game) panelPlayers(p *world.Panel) {
	over := g.phase == PhaseOver
	if len(g.players) <= p.Room() {
		wid := 0
		for _, q := range g.players {
			wid = max(wid, len(q.id))
		}
		wid = min(wid, 12)
		for _, q := range g.players {
			s := fmt.Sprintf("%-*s %s (%s)", wid, q.id, q.role, strings.ToLower(q.faction()))
			switch {
			case !q.alive:
				s += fmt.Sprintf(" dead d%d", q.deathDay)
			case over:
				s += " alive"
			}
			if over && q.won {
				s += " won"
			}
			p.Add("%s %s", s, g.marker(q))
		}
		return
	}
	entry := func(q *player, mark bool) string {
		s := fmt.Sprintf("%s %s (%s)", q.id, q.role, strings.ToLower(q.faction()))
		if !q.alive {
			s += fmt.Sprintf(" d%d", q.deathDay)
		}
		if over && q.won {
			s += " won"
		}
		if mark {
			s += " " + g.marker(q)
		}
		return s
	}
	if over {
		var items []string
		for _, q := range g.players {
			items = append(items, entry(q, false))
		}
		p.AddList("Roles [public]: ", items, p.Room())
		return
	}
	var living, dead []string
	for _, q := range g.players {
		switch {
		case !q.alive:
			dead = append(dead, entry(q, q.cleaned))
		case q.revealed:
			living = append(living, entry(q, true))
		default:
			living = append(living, entry(q, false))
		}
	}
	// Lines each list needs, packed alone (a dry run).
	need := func(prefix string, items []string) int {
		var tmp world.Panel
		tmp.AddList(prefix, items, world.PanelLines)
		return len(tmp.Lines)
	}
	const alivePrefix, deadPrefix = "Alive [hidden]: ", "Dead [public]: "
	room := p.Room()
	dl := min(need(deadPrefix, dead), max(1, room-need(alivePrefix, living)))
	p.AddList(alivePrefix, living, room-dl)
	p.AddList(deadPrefix, dead, dl)
}

// marker tells spectators whether the players know a player's role.
func (g *Game) marker(q *player) string {
	if g.phase == PhaseOver || q.revealed || q.revived || (!q.alive && !q.cleaned) {
		return "[public]"
	}
	return "[hidden]"
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
