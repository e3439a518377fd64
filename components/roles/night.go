package roles

import (
	"fmt"
	"slices"
	"strings"

	"github.com/arena-sim/arena/world"
)

// Night resolution, in priority order:
//
//  2. Escorts role block (not the role block immune), then Witches control
//     (their victim's action turns onto the Witch's second target);
//  3. Doctors heal, Bodyguards guard, Framers frame, Janitors and Forgers
//     mark their target, Survivors put on a vest;
//  4. Sheriffs, Investigators and Consiglieres investigate (frames fool the
//     first two);
//  5. the Mafia's killer, the Vigilante and the Serial Killer attack: a
//     Bodyguard guarding the target dies in its place and kills the attacker;
//     otherwise the attack kills when it beats the target's defense (a heal
//     raises it to Powerful, a vest to Basic);
//  6. Lookouts learn who visited their target.
//
// Within a priority, actors go in seat order. Deaths are then revealed (a
// cleaned body hides its role and will, a forged will replaces the real
// one) and the win conditions are checked after each.
func (g *Game) resolveNight(w *world.World) {
	n := len(g.players)
	blocked := make([]bool, n)
	framed := make([]bool, n)
	healedBy := make([][]int, n)
	guardedBy := make([][]int, n)
	vested := make([]bool, n)
	cleanBy := make([]int, n)
	forgeBy := make([]int, n)
	attacked := make([]bool, n)
	dies := make([]string, n) // cause of death tonight
	var visits [][2]int       // visitor, target
	for i := range cleanBy {
		cleanBy[i], forgeBy[i] = -1, -1
	}
	acts := map[int]*act{}
	for i, a := range g.acts {
		if g.players[i].alive {
			c := *a
			acts[i] = &c
		}
	}
	order := func(role ...string) []int {
		var out []int
		for i, p := range g.players {
			if p.alive && acts[i] != nil && slices.Contains(role, p.role) {
				out = append(out, i)
			}
		}
		return out
	}
	visit := func(from, to int) { visits = append(visits, [2]int{from, to}) }

	// 2: role blocks, then control.
	for _, i := range order("Escort") {
		t := acts[i].target
		visit(i, t)
		if g.players[t].card().RoleblockImmune {
			continue
		}
		blocked[t] = true
		g.private(w, g.players[t], "roleblocked", "Someone occupied your night. You were role blocked!")
	}
	for _, i := range order("Witch") {
		if blocked[i] {
			continue
		}
		a := acts[i]
		t := a.target
		visit(i, t)
		victim := g.players[t]
		if victim.card().NightAction != "" && victim.card().NightAction != "vest" {
			acts[t] = &act{target: a.target2, target2: a.target2, controlled: true}
		}
		g.players[i].learned[t] = victim.role
		g.private(w, g.players[i], "control", fmt.Sprintf("You controlled %s and made them target %s. Your victim is a %s.", victim.id, g.players[a.target2].id, victim.role))
		g.private(w, victim, "controlled", fmt.Sprintf("You were controlled by a Witch and made to target %s.", g.players[a.target2].id))
	}
	active := func(roles ...string) []int {
		var out []int
		for _, i := range order(roles...) {
			if blocked[i] {
				continue
			}
			out = append(out, i)
		}
		return out
	}

	// 3: protect and deceive.
	for _, i := range active("Doctor", "Bodyguard", "Framer", "Janitor", "Forger", "Survivor") {
		p, a := g.players[i], acts[i]
		t := a.target
		switch p.role {
		case "Doctor":
			visit(i, t)
			if t == i {
				if p.selfHeals <= 0 {
					continue
				}
				p.selfHeals--
			}
			if !g.players[t].revealed {
				healedBy[t] = append(healedBy[t], i)
			}
		case "Bodyguard":
			visit(i, t)
			if t != i {
				guardedBy[t] = append(guardedBy[t], i)
			}
		case "Framer":
			visit(i, t)
			framed[t] = true
		case "Janitor":
			visit(i, t)
			if p.cleans > 0 {
				cleanBy[t] = i
			}
		case "Forger":
			visit(i, t)
			if p.forges > 0 {
				forgeBy[t] = i
			}
		case "Survivor":
			if p.vests > 0 {
				p.vests--
				vested[i] = true
			}
		}
	}

	// 4: investigate.
	for _, i := range active("Sheriff", "Investigator", "Consigliere") {
		p, t := g.players[i], acts[i].target
		q := g.players[t]
		visit(i, t)
		switch p.role {
		case "Sheriff":
			if framed[t] || (q.faction() == Mafia && !q.card().DetectionImmune) {
				g.private(w, p, "investigation", fmt.Sprintf("Your target %s is suspicious!", q.id))
			} else {
				g.private(w, p, "investigation", fmt.Sprintf("You cannot find evidence of wrongdoing. Your target %s seems innocent.", q.id))
			}
		case "Investigator":
			role := q.role
			if framed[t] {
				role = "Framer"
			}
			g.private(w, p, "investigation", fmt.Sprintf("Your target %s could be a %s.", q.id, orList(groupOf(g.cfg.Investigator, role))))
		case "Consigliere":
			p.learned[t] = q.role
			g.private(w, p, "investigation", fmt.Sprintf("Your target %s is a %s.", q.id, q.role))
		}
	}

	// 5: attacks.
	attack := func(from, to, level int) {
		if !g.players[from].alive || dies[from] != "" {
			return
		}
		visit(from, to)
		attacked[to] = true
		if gs := guardedBy[to]; len(gs) > 0 {
			bg := gs[0]
			guardedBy[to] = gs[1:]
			visit(bg, from)
			if len(healedBy[bg]) == 0 {
				dies[bg] = "killed protecting their target"
			}
			if 2 > g.defense(from, healedBy, vested) {
				dies[from] = "killed by a Bodyguard"
			}
			g.private(w, g.players[to], "attacked", "You were attacked but someone fought off your attacker!")
			return
		}
		def := g.defense(to, healedBy, vested)
		q := g.players[to]
		if q.role == "Witch" && q.barrier {
			q.barrier = false
		}
		if level > def {
			if dies[to] == "" {
				dies[to] = fmt.Sprintf("killed at night by %s", killerName(g.players[from].role))
			}
			return
		}
		switch {
		case len(healedBy[to]) > 0 && level > g.players[to].card().Defense && !(vested[to] && level <= 1):
			g.private(w, q, "attacked", "You were attacked but someone nursed you back to health!")
		default:
			g.private(w, q, "attacked", "Someone attacked you but your defense was too strong!")
		}
	}
	// The Mafia's kill: the Mafioso carries out the Godfather's order, or its
	// own choice; the Godfather kills himself when there is no Mafioso.
	gf, mo := -1, -1
	for i, p := range g.players {
		if p.alive && p.role == "Godfather" {
			gf = i
		}
		if p.alive && p.role == "Mafioso" {
			mo = i
		}
	}
	if mo >= 0 && !blocked[mo] {
		t := -1
		if acts[mo] != nil {
			t = acts[mo].target
		}
		if gf >= 0 && acts[gf] != nil && !blocked[gf] && (acts[mo] == nil || !acts[mo].controlled) {
			t = acts[gf].target
		}
		if t >= 0 && g.players[t].faction() != Mafia {
			attack(mo, t, 1)
		}
	} else if mo < 0 && gf >= 0 && acts[gf] != nil && !blocked[gf] {
		attack(gf, acts[gf].target, 1)
	}
	for _, i := range active("Vigilante", "Serial Killer") {
		p := g.players[i]
		if p.role == "Vigilante" {
			if g.day < 2 || p.bullets <= 0 {
				continue
			}
			p.bullets--
		}
		attack(i, acts[i].target, p.card().Attack)
	}
	for t, docs := range healedBy {
		if attacked[t] && dies[t] == "" {
			for _, doc := range docs {
				g.private(w, g.players[doc], "heal", fmt.Sprintf("Your target %s was attacked last night!", g.players[t].id))
			}
		}
	}

	// 6: lookouts.
	for _, i := range active("Lookout") {
		t := acts[i].target
		visit(i, t)
		var seen []string
		for _, v := range visits {
			if v[1] == t && v[0] != i && v[0] != t && !slices.Contains(seen, g.players[v[0]].id) {
				seen = append(seen, g.players[v[0]].id)
			}
		}
		slices.Sort(seen)
		if len(seen) == 0 {
			g.private(w, g.players[i], "watch", fmt.Sprintf("No one visited your target %s.", g.players[t].id))
		} else {
			g.private(w, g.players[i], "watch", fmt.Sprintf("%s visited your target %s.", strings.Join(seen, ", "), g.players[t].id))
		}
	}

	// Deaths.
	for i, cause := range dies {
		if cause == "" {
			continue
		}
		p := g.players[i]
		if j := cleanBy[i]; j >= 0 {
			jan := g.players[j]
			jan.cleans--
			p.cleaned, p.cleanedBy = true, j
			jan.learned[i] = p.role
			will := p.will
			if will == "" {
				will = "(no will)"
			}
			g.private(w, jan, "clean", fmt.Sprintf("You cleaned %s's body. Their role was %s. Their will: %s", p.id, p.role, will))
		} else if j := forgeBy[i]; j >= 0 {
			fg := g.players[j]
			fg.forges--
			p.will, p.forged = acts[j].text, true
		}
		p.nightDeath = true
		g.kill(w, p, cause)
		for _, e := range g.players {
			if e.role == "Executioner" && e.alive && e.target == i {
				e.role = "Jester"
				g.private(w, e, "role", fmt.Sprintf("Your target %s died at night. You are now a Jester.", p.id))
			}
		}
		g.checkWin(w)
	}
	g.promote(w)
	g.acts = map[int]*act{}
}

// defense is a player's defense tonight: its card's, raised by a heal or a vest.
func (g *Game) defense(i int, healedBy [][]int, vested []bool) int {
	p := g.players[i]
	d := p.card().Defense
	if p.role == "Witch" && !p.barrier {
		d = 0
	}
	if vested[i] {
		d = max(d, 1)
	}
	if len(healedBy[i]) > 0 {
		d = max(d, 2)
	}
	return d
}

// promote keeps a Mafia killer alive: a Mafioso succeeds a dead Godfather, and
// another member becomes the Mafioso when no killer is left.
func (g *Game) promote(w *world.World) {
	if g.phase == PhaseOver {
		return
	}
	gf, mo := -1, -1
	for i, p := range g.players {
		if p.alive && p.role == "Godfather" {
			gf = i
		}
		if p.alive && p.role == "Mafioso" {
			mo = i
		}
	}
	if gf < 0 && mo >= 0 {
		g.players[mo].role = "Godfather"
		g.private(w, g.players[mo], "role", "The Godfather is dead. You are the new Godfather.")
		return
	}
	if gf < 0 && mo < 0 {
		for _, p := range g.players {
			if p.alive && p.faction() == Mafia {
				g.private(w, p, "role", fmt.Sprintf("No Mafia killer is left. You were a %s; you are now the Mafioso.", p.role))
				p.role = "Mafioso"
				return
			}
		}
	}
}

func killerName(role string) string {
	switch role {
	case "Mafioso", "Godfather":
		return "a member of the Mafia"
	case "Serial Killer":
		return "a Serial Killer"
	case "Vigilante":
		return "a Vigilante"
	}
	return "an attacker"
}

func orList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
