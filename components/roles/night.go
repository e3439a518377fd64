package roles

import (
	"fmt"
	"slices"
	"strings"

	"github.com/arena-sim/arena/world"
)

// Night resolution follows classic Town of Salem's priorities:
//
//  0. the Jailor's prisoner (jailed by day) does not act, and every other
//     action aimed at them fails (only the execution and a haunt reach them);
//  1. Transporters swap their two targets in every other action; Veterans go
//     on alert; a lynched Jester picks whom to haunt;
//  2. Escorts and Consorts role block (the role block immune are not
//     blocked; a Serial Killer turns on its blockers, a full-moon Werewolf
//     attacks them too), then Witches control (the victim's action turns onto
//     the Witch's second target);
//  3. Doctors heal, Bodyguards guard (or vest themselves once), Framers frame,
//     Disguisers disguise, Janitors and Forgers mark, Blackmailers blackmail,
//     Arsonists douse, Survivors vest;
//  4. Sheriffs, Investigators and Consiglieres investigate (frames and
//     disguises fool the first two);
//  5. attacks: the Jailor's execution, the Jester's haunt, a guilty
//     Vigilante's suicide, the Mafia's kill, Vigilantes, Serial Killers, the
//     Werewolf's rampage, the youngest Vampire's bite, Vampire Hunters'
//     stakes, ignition, and Veterans' shots at every visitor;
//  6. Lookouts and Spies learn their results; Amnesiacs remember and
//     Retributionists revive.
//
// Within a priority, actors go in seat order. Every visit is known once the
// actions are final (after priority 2), so Veterans, Werewolves and Lookouts
// see all of them. Deaths are then revealed (a cleaned body hides its role
// and will, a forged will replaces the real one) and the win conditions are
// checked after each.
type night struct {
	g        *Game
	w        *world.World
	acts     []*act // the final action of each seat, nil for none
	blocked  []bool
	framed   []bool
	vested   []bool
	alert    []bool
	attacked []bool
	healedBy [][]int
	guardBy  [][]int
	disguise []int // the seat a Mafia member looks like tonight, -1 for none
	cleanBy  []int
	forgeBy  []int
	dies     []string // cause of death tonight
	roleAt   []string // roles at dusk, for the Vigilante's guilt
	visits   [][2]int // visitor, target
	blockers [][]int  // role blockers who visited a Serial Killer or full-moon Werewolf
	notes    [][]string
	convert  []int
	vigShot  [][2]int // Vigilante, target
	revive   [][2]int // Retributionist, target
	fullMoon bool
	mafia    [2]int // the Mafia's killer and target, -1 for none
	bite     [2]int // the biting Vampire and its target, -1 for none
}

// bugged are the kinds of notice a Spy's bug reports about its target.
var bugged = map[string]bool{"roleblocked": true, "controlled": true, "transported": true, "attacked": true,
	"blackmailed": true, "doused": true, "immune": true}

func (n *night) tell(i int, kind, text string) {
	n.g.private(n.w, n.g.players[i], kind, text)
	if bugged[kind] {
		n.notes[i] = append(n.notes[i], text)
	}
}

func (n *night) visit(from, to int) {
	if from != to {
		n.visits = append(n.visits, [2]int{from, to})
	}
}

// actors lists the seats with an action whose role is one of roles.
func (n *night) actors(roles ...string) []int {
	var out []int
	for i, p := range n.g.players {
		if n.acts[i] != nil && slices.Contains(roles, p.role) {
			out = append(out, i)
		}
	}
	return out
}

func (g *Game) resolveNight(w *world.World) {
	c := len(g.players)
	n := &night{g: g, w: w, acts: make([]*act, c), blocked: make([]bool, c), framed: make([]bool, c),
		vested: make([]bool, c), alert: make([]bool, c), attacked: make([]bool, c), healedBy: make([][]int, c),
		guardBy: make([][]int, c), disguise: make([]int, c), cleanBy: make([]int, c), forgeBy: make([]int, c),
		dies: make([]string, c), roleAt: make([]string, c), blockers: make([][]int, c), notes: make([][]string, c),
		fullMoon: g.day%2 == 0, mafia: [2]int{-1, -1}, bite: [2]int{-1, -1}}
	for i, p := range g.players {
		n.disguise[i], n.cleanBy[i], n.forgeBy[i] = -1, -1, -1
		n.roleAt[i] = p.role
		a := g.acts[i]
		switch {
		case p.alive && a != nil:
			cp := *a
			n.acts[i] = &cp
		case !p.alive && p.role == "Jester" && p.hauntNight == g.day:
			n.acts[i] = g.hauntChoice(p, a)
		}
	}
	n.jail()
	n.transport()
	n.block()
	n.control()
	n.plan()
	n.protect()
	n.investigate()
	n.kill()
	n.watch()
	n.settle()
}

// hauntChoice is a lynched Jester's haunt: its choice, or a random guilty voter.
func (g *Game) hauntChoice(p *player, a *act) *act {
	var cands []int
	for _, i := range p.haunt {
		if g.players[i].alive {
			cands = append(cands, i)
		}
	}
	if a != nil && slices.Contains(cands, a.target) {
		return &act{target: a.target, target2: -1}
	}
	if len(cands) == 0 {
		return nil
	}
	return &act{target: cands[g.rng.IntN(len(cands))], target2: -1}
}

// jail keeps the prisoner from acting and drops the actions aimed at them.
func (n *night) jail() {
	g := n.g
	if g.prisoner < 0 {
		return
	}
	n.acts[g.prisoner] = nil
	for i, a := range n.acts {
		if a == nil || i == g.jailor() || n.g.players[i].role == "Jester" || g.players[i].role == "Transporter" {
			continue
		}
		if a.target == g.prisoner || (a.target2 == g.prisoner && slices.Contains([]string{"Witch", "Disguiser"}, g.players[i].role)) {
			n.acts[i] = nil
			n.tell(i, "jailed", fmt.Sprintf("Your target %s was in jail last night.", g.players[g.prisoner].id))
		}
	}
}

// transport swaps each Transporter's two targets in every other action.
func (n *night) transport() {
	g := n.g
	for _, i := range n.actors("Transporter") {
		a, b := n.acts[i].target, n.acts[i].target2
		n.visit(i, a)
		n.visit(i, b)
		if a == g.prisoner || b == g.prisoner {
			n.tell(i, "transport", fmt.Sprintf("Your target %s was in jail: the transport failed.", g.players[g.prisoner].id))
			continue
		}
		swap := func(t int) int {
			switch t {
			case a:
				return b
			case b:
				return a
			}
			return t
		}
		for j, o := range n.acts {
			if o == nil || j == i || j == g.jailor() {
				continue
			}
			o.target, o.target2 = swap(o.target), swap(o.target2)
		}
		for _, t := range []int{a, b} {
			n.tell(t, "transported", "You were transported to another location.")
		}
	}
}

// block applies the role blocks: Escorts and Consorts, in seat order.
func (n *night) block() {
	g := n.g
	for _, i := range n.actors("Veteran") {
		p := g.players[i]
		if p.alerts > 0 {
			p.alerts--
			n.alert[i] = true
		}
	}
	for _, i := range n.actors("Escort", "Consort") {
		t := n.acts[i].target
		q := g.players[t]
		switch {
		case q.role == "Serial Killer":
			n.blockers[t] = append(n.blockers[t], i)
			n.acts[t] = nil // it turns on its blocker instead
			n.tell(t, "immune", "Someone tried to role block you: you attack them instead of your target.")
		case q.role == "Werewolf" && n.fullMoon:
			n.blockers[t] = append(n.blockers[t], i)
			n.tell(t, "immune", "Someone tried to role block you on a full moon: you attack them too.")
		case q.card().RoleblockImmune:
			n.tell(t, "immune", "Someone tried to role block you, but you are immune!")
		default:
			n.blocked[t] = true
			n.acts[t] = nil
			n.tell(t, "roleblocked", "Someone occupied your night. You were role blocked!")
		}
	}
}

// controllable are the night abilities a Witch can turn onto another target.
var controllable = map[string]bool{"heal": true, "guard": true, "roleblock": true, "investigate": true, "interrogate": true,
	"watch": true, "bug": true, "shoot": true, "stake": true, "blackmail": true, "frame": true, "clean": true, "forge": true,
	"kill": true, "douse": true, "bite": true, "rampage": true}

// control turns each Witch's victim onto her second target.
func (n *night) control() {
	g := n.g
	for _, i := range n.actors("Witch") {
		a := n.acts[i]
		t, t2 := a.target, a.target2
		victim := g.players[t]
		g.players[i].learned[t] = victim.role
		card := victim.card()
		if card.ControlImmune || !controllable[card.NightAction] || n.blocked[t] {
			n.tell(i, "control", fmt.Sprintf("Your victim %s could not be controlled. They are a %s.", victim.id, victim.role))
			continue
		}
		old := n.acts[t]
		na := &act{target: t2, target2: -1, controlled: true}
		if old != nil {
			na.text = old.text
		}
		n.acts[t] = na
		n.tell(i, "control", fmt.Sprintf("You controlled %s and made them target %s. Your victim is a %s.", victim.id, g.players[t2].id, victim.role))
		n.tell(t, "controlled", fmt.Sprintf("You were controlled by a Witch and made to target %s.", g.players[t2].id))
	}
}

// plan settles who attacks for the Mafia and the Vampires, then records
// every visit of the final actions.
func (n *night) plan() {
	g := n.g
	gf, mo, vamps := g.killers()
	// The Mafioso carries out the Godfather's order (or its own choice); the
	// Godfather kills himself when there is no Mafioso.
	switch {
	case mo >= 0 && !n.blocked[mo] && g.prisoner != mo:
		t := -1
		if n.acts[mo] != nil {
			t = n.acts[mo].target
		}
		if gf >= 0 && n.acts[gf] != nil && (n.acts[mo] == nil || !n.acts[mo].controlled) {
			t = n.acts[gf].target
		}
		if t >= 0 && g.players[t].faction() != Mafia {
			n.mafia = [2]int{mo, t}
		}
	case mo < 0 && gf >= 0 && n.acts[gf] != nil && g.players[n.acts[gf].target].faction() != Mafia:
		n.mafia = [2]int{gf, n.acts[gf].target}
	}
	// The youngest Vampire bites the target the youngest choosing Vampire named.
	slices.SortFunc(vamps, func(a, b int) int { return g.players[b].vampAge - g.players[a].vampAge })
	for _, v := range vamps {
		if a := n.acts[v]; a != nil && g.players[a.target].role != Vampire {
			biter := vamps[0]
			if n.blocked[biter] || g.prisoner == biter {
				biter = v
			}
			n.bite = [2]int{biter, a.target}
			break
		}
	}
	for i, a := range n.acts {
		if a == nil {
			continue
		}
		p := g.players[i]
		switch p.card().NightAction {
		case "transport", "alert", "vest", "execute", "haunt", "remember", "revive":
		case "kill", "bite":
		case "rampage":
			if n.fullMoon {
				n.visit(i, a.target)
			}
		default:
			n.visit(i, a.target)
		}
	}
	for t, bs := range n.blockers {
		for _, b := range bs {
			if g.players[t].role == "Serial Killer" {
				n.visit(t, b) // it attacks its blockers at their homes
			}
		}
	}
	if n.mafia[0] >= 0 {
		n.visit(n.mafia[0], n.mafia[1])
	}
	if n.bite[0] >= 0 {
		n.visit(n.bite[0], n.bite[1])
	}
}

// protect resolves priority 3: protection and deception.
func (n *night) protect() {
	g := n.g
	for _, i := range n.actors("Doctor", "Bodyguard", "Framer", "Disguiser", "Janitor", "Forger", "Survivor", "Blackmailer", "Arsonist") {
		p, a := g.players[i], n.acts[i]
		t := a.target
		switch p.role {
		case "Doctor":
			if t == i {
				if p.selfHeals <= 0 {
					continue
				}
				p.selfHeals--
			}
			if !g.players[t].revealed {
				n.healedBy[t] = append(n.healedBy[t], i)
			}
		case "Bodyguard":
			if t == i {
				if p.vests > 0 {
					p.vests--
					n.vested[i] = true
				}
				continue
			}
			n.guardBy[t] = append(n.guardBy[t], i)
		case "Framer":
			n.framed[t] = true
		case "Disguiser":
			if g.players[t].faction() == Mafia && a.target2 >= 0 && g.players[a.target2].faction() != Mafia {
				n.disguise[t] = a.target2
			}
		case "Janitor":
			if p.cleans > 0 {
				n.cleanBy[t] = i
			}
		case "Forger":
			if p.forges > 0 && a.text != "" {
				n.forgeBy[t] = i
			}
		case "Survivor":
			if p.vests > 0 && t == i {
				p.vests--
				n.vested[i] = true
			}
		case "Blackmailer":
			g.players[t].silenced = g.day + 1
			n.tell(t, "blackmailed", "Someone threatened to reveal your secrets. You are blackmailed: you cannot speak or whisper tomorrow.")
		case "Arsonist":
			if t != i && !g.players[t].doused {
				g.players[t].doused = true
				n.notes[t] = append(n.notes[t], "Your target was doused in gasoline.")
			}
		}
	}
}

// suspicious is the Sheriff's verdict on a role tonight.
func (n *night) suspicious(role string) bool {
	c := cardByName[role]
	switch {
	case c.Faction == Mafia:
		return !c.DetectionImmune
	case role == "Serial Killer":
		return true
	case role == "Werewolf":
		return n.fullMoon
	}
	return false
}

// investigate resolves priority 4.
func (n *night) investigate() {
	g := n.g
	for _, i := range n.actors("Sheriff", "Investigator", "Consigliere") {
		p, t := g.players[i], n.acts[i].target
		q := g.players[t]
		seen := q.role // what the Sheriff and the Investigator see
		if d := n.disguise[t]; d >= 0 {
			seen = g.players[d].role
		}
		switch p.role {
		case "Sheriff":
			if n.framed[t] || n.suspicious(seen) {
				n.tell(i, "investigation", fmt.Sprintf("Your target %s is suspicious!", q.id))
			} else {
				n.tell(i, "investigation", fmt.Sprintf("You cannot find evidence of wrongdoing. Your target %s seems innocent.", q.id))
			}
		case "Investigator":
			if n.framed[t] {
				seen = "Framer"
			}
			n.tell(i, "investigation", fmt.Sprintf("Your target %s could be a %s.", q.id, orList(groupOf(seen))))
		case "Consigliere":
			p.learned[t] = q.role
			n.tell(i, "investigation", fmt.Sprintf("Your target %s is a %s.", q.id, q.role))
		}
	}
}

// hit is one attack.
type hit struct {
	from, to, level int
	cause           string
	direct          bool // a Bodyguard can step in
	sure            bool // nothing stops it: no jail, defense or Bodyguard (an execution, a haunt)
}

// attack resolves one attack: the jail, a Bodyguard, then attack against defense.
func (n *night) attack(h hit) {
	g := n.g
	if !h.sure && (!g.players[h.from].alive || n.dies[h.from] != "") {
		return
	}
	q := g.players[h.to]
	if !q.alive {
		return
	}
	n.attacked[h.to] = true
	if !h.sure && h.to == g.prisoner {
		return
	}
	if gs := n.guardBy[h.to]; h.direct && !h.sure && len(gs) > 0 {
		bg := gs[0]
		n.guardBy[h.to] = gs[1:]
		if len(n.healedBy[bg]) == 0 {
			n.dies[bg] = "killed protecting their target"
		}
		if 2 > n.defense(h.from) {
			n.dies[h.from] = "killed by a Bodyguard"
		}
		n.tell(h.to, "attacked", "You were attacked but someone fought off your attacker!")
		return
	}
	def := n.defense(h.to)
	if h.sure {
		def = 0
	}
	if q.role == "Witch" && q.barrier {
		q.barrier = false
	}
	if h.level > def {
		if n.dies[h.to] == "" {
			n.dies[h.to] = h.cause
		}
		return
	}
	if len(n.healedBy[h.to]) > 0 && h.level > q.card().Defense && !n.alert[h.to] && !(n.vested[h.to] && h.level <= 1) {
		n.tell(h.to, "attacked", "You were attacked but someone nursed you back to health!")
	} else {
		n.tell(h.to, "attacked", "Someone attacked you but your defense was too strong!")
	}
}

// defense is a player's defense tonight: its card's, raised by a heal, a
// vest or an alert.
func (n *night) defense(i int) int {
	p := n.g.players[i]
	d := p.card().Defense
	if p.role == "Witch" && !p.barrier {
		d = 0
	}
	if n.vested[i] {
		d = max(d, 1)
	}
	if len(n.healedBy[i]) > 0 {
		d = max(d, 2)
	}
	if n.alert[i] {
		d = 3
	}
	return d
}

// kill resolves priority 5.
func (n *night) kill() {
	g := n.g
	// The Jailor's execution; a Serial Killer or full-moon Werewolf left alive in jail kills the Jailor.
	if j, pr := g.jailor(), g.prisoner; pr >= 0 && j >= 0 {
		if a := n.acts[j]; a != nil && a.target == pr && g.players[j].executions > 0 {
			jl, q := g.players[j], g.players[pr]
			jl.executions--
			n.attack(hit{from: j, to: pr, level: 3, cause: "executed by the Jailor", sure: true})
			if q.faction() == Town {
				jl.executions = 0
				n.tell(j, "execute", "You executed a member of the Town. You can no longer execute anyone.")
			}
		} else if q := g.players[pr]; q.role == "Serial Killer" || (q.role == "Werewolf" && n.fullMoon) {
			n.attack(hit{from: pr, to: j, level: q.card().Attack, cause: fmt.Sprintf("killed by the %s they jailed", q.role)})
		}
	}
	for _, i := range n.actors("Jester") {
		if !g.players[i].alive {
			n.attack(hit{from: i, to: n.acts[i].target, level: 3, cause: "haunted by the Jester", sure: true})
		}
	}
	for i, p := range g.players {
		if p.alive && p.guilt {
			p.guilt = false
			n.dies[i] = "committed suicide over the guilt of killing a Town member"
		}
	}
	if m := n.mafia; m[0] >= 0 {
		n.attack(hit{from: m[0], to: m[1], level: 1, cause: "killed at night by a member of the Mafia", direct: true})
	}
	for _, i := range n.actors("Vigilante") {
		p := g.players[i]
		if g.day < 2 || p.bullets <= 0 {
			continue
		}
		p.bullets--
		n.vigShot = append(n.vigShot, [2]int{i, n.acts[i].target})
		n.attack(hit{from: i, to: n.acts[i].target, level: 1, cause: "shot at night by a Vigilante", direct: true})
	}
	for i, p := range g.players {
		if p.role == "Serial Killer" && p.alive {
			for _, b := range n.blockers[i] {
				n.attack(hit{from: i, to: b, level: 1, cause: "killed at night by a Serial Killer", direct: true})
			}
			if a := n.acts[i]; a != nil {
				n.attack(hit{from: i, to: a.target, level: 1, cause: "killed at night by a Serial Killer", direct: true})
			}
		}
	}
	for _, i := range n.actors("Werewolf") {
		if !n.fullMoon {
			continue
		}
		const cause = "mauled by a Werewolf"
		at := n.acts[i].target
		hitSeats := []int{}
		if at != i {
			n.attack(hit{from: i, to: at, level: 2, cause: cause, direct: true})
			hitSeats = append(hitSeats, at)
		}
		for _, v := range n.visits {
			if v[1] == at && v[0] != i && !slices.Contains(hitSeats, v[0]) {
				hitSeats = append(hitSeats, v[0])
				n.attack(hit{from: i, to: v[0], level: 2, cause: cause})
			}
		}
		for _, b := range n.blockers[i] {
			if !slices.Contains(hitSeats, b) {
				n.attack(hit{from: i, to: b, level: 2, cause: cause})
			}
		}
	}
	if b := n.bite; b[0] >= 0 {
		v, t := b[0], b[1]
		q := g.players[t]
		vamps := 0
		for _, p := range g.players {
			if p.alive && p.role == Vampire {
				vamps++
			}
		}
		switch {
		case q.role == "Vampire Hunter":
			n.attack(hit{from: t, to: v, level: 2, cause: "staked by a Vampire Hunter"})
		case q.faction() == Mafia || vamps >= 4 || n.defense(t) > 0 || len(n.guardBy[t]) > 0:
			n.attack(hit{from: v, to: t, level: 1, cause: "bitten to death by a Vampire", direct: true})
		case t != g.prisoner && n.dies[v] == "":
			n.convert = append(n.convert, t)
		}
	}
	for _, i := range n.actors("Vampire Hunter") {
		t := n.acts[i].target
		if g.players[t].role == Vampire {
			n.tell(i, "stake", fmt.Sprintf("Your target %s is a Vampire! You stake them.", g.players[t].id))
			n.attack(hit{from: i, to: t, level: 2, cause: "staked by a Vampire Hunter", direct: true})
		} else {
			n.tell(i, "stake", fmt.Sprintf("Your target %s is not a Vampire.", g.players[t].id))
		}
	}
	for _, i := range n.actors("Arsonist") {
		if n.acts[i].target != i {
			continue
		}
		for j, q := range g.players {
			if q.doused && q.alive && j != i {
				q.doused = false
				n.attack(hit{from: i, to: j, level: 3, cause: "burned to death by an Arsonist"})
			}
		}
	}
	for i, on := range n.alert {
		if !on {
			continue
		}
		var shot []int
		for _, v := range n.visits {
			if v[1] == i && !slices.Contains(shot, v[0]) {
				shot = append(shot, v[0])
				n.attack(hit{from: i, to: v[0], level: 2, cause: "shot by the Veteran they visited"})
			}
		}
	}
	for t, docs := range n.healedBy {
		if n.attacked[t] && n.dies[t] == "" {
			for _, doc := range docs {
				n.tell(doc, "heal", fmt.Sprintf("Your target %s was attacked last night!", g.players[t].id))
			}
		}
	}
}

// watch resolves priority 6: Lookouts, Spies, Amnesiacs and Retributionists.
func (n *night) watch() {
	g := n.g
	for _, i := range n.actors("Lookout") {
		t := n.acts[i].target
		var seen []string
		for _, v := range n.visits {
			who := v[0]
			if d := n.disguise[who]; d >= 0 {
				who = d
			}
			if v[1] == t && v[0] != i && !slices.Contains(seen, g.players[who].id) {
				seen = append(seen, g.players[who].id)
			}
		}
		slices.Sort(seen)
		if len(seen) == 0 {
			n.tell(i, "watch", fmt.Sprintf("No one visited your target %s.", g.players[t].id))
		} else {
			n.tell(i, "watch", fmt.Sprintf("%s visited your target %s.", strings.Join(seen, ", "), g.players[t].id))
		}
	}
	for i, p := range g.players {
		if p.role != "Spy" || !p.alive || n.blocked[i] || g.prisoner == i {
			continue
		}
		var targets []string
		for t := range g.players {
			for _, v := range n.visits {
				if v[1] == t && g.players[v[0]].faction() == Mafia && !slices.Contains(targets, g.players[t].id) {
					targets = append(targets, g.players[t].id)
				}
			}
		}
		if len(targets) == 0 {
			n.tell(i, "spy", "The Mafia visited no one.")
		} else {
			n.tell(i, "spy", fmt.Sprintf("A member of the Mafia visited %s.", orList(targets)))
		}
		if a := n.acts[i]; a != nil {
			t := g.players[a.target]
			if len(n.notes[a.target]) == 0 {
				n.tell(i, "bug", fmt.Sprintf("Your bug on %s heard nothing unusual.", t.id))
			} else {
				n.tell(i, "bug", fmt.Sprintf("Your bug on %s: %s", t.id, strings.Join(n.notes[a.target], " ")))
			}
		}
	}
	for _, i := range n.actors("Amnesiac", "Retributionist") {
		p, t := g.players[i], n.acts[i].target
		q := g.players[t]
		if q.alive || q.cleaned || n.dies[i] != "" {
			continue
		}
		if p.role == "Retributionist" && p.revives > 0 && q.faction() == Town {
			n.revive = append(n.revive, [2]int{i, t})
		}
		if p.role == "Amnesiac" && !q.card().Unique && q.role != Vampire {
			g.setRole(p, q.role)
			n.tell(i, "role", fmt.Sprintf("You remembered that you were like %s: you are now the %s. Goal: %s", q.id, q.role, q.card().Goal))
			g.publish(n.w, world.Event{Type: "remember", Data: map[string]any{"role": q.role,
				"text": fmt.Sprintf("An Amnesiac has remembered that they were the %s!", q.role)}})
		}
	}
}

// settle applies the night: conversions, revivals, deaths (each followed by
// the win check), the Vigilante's guilt, successions; then clears the night.
func (n *night) settle() {
	g, w := n.g, n.w
	for _, t := range n.convert {
		if p := g.players[t]; p.alive && n.dies[t] == "" {
			g.setRole(p, Vampire)
			g.private(w, p, "role", "You were bitten by a Vampire: you are now a Vampire. Goal: "+p.card().Goal)
		}
	}
	for _, r := range n.revive {
		p, q := g.players[r[0]], g.players[r[1]]
		if q.alive {
			continue
		}
		p.revives--
		q.alive, q.revived, q.cause, q.deathDay, q.nightDeath = true, true, "", 0, false
		g.publish(w, world.Event{Type: "revive", Agent: q.id, Data: map[string]any{"player": q.id, "role": q.role,
			"text": fmt.Sprintf("%s has been resurrected by a Retributionist! They are the %s.", q.label(), q.role)}})
	}
	for i, cause := range n.dies {
		if cause == "" {
			continue
		}
		p := g.players[i]
		if j := n.cleanBy[i]; j >= 0 {
			jan := g.players[j]
			jan.cleans--
			p.cleaned, p.cleanedBy = true, j
			jan.learned[i] = p.role
			will := p.will
			if will == "" {
				will = "(no will)"
			}
			g.private(w, jan, "clean", fmt.Sprintf("You cleaned %s's body. Their role was %s. Their will: %s", p.id, p.role, will))
		} else if j := n.forgeBy[i]; j >= 0 {
			fg := g.players[j]
			fg.forges--
			p.will, p.forged = n.acts[j].text, true
		}
		p.nightDeath = true
		g.kill(w, p, cause)
		for _, e := range g.players {
			if e.role == "Executioner" && e.alive && e.target == i {
				g.setRole(e, "Jester")
				g.private(w, e, "role", fmt.Sprintf("Your target %s died at night. You are now a Jester.", p.id))
			}
		}
		g.checkWin(w)
	}
	for _, s := range n.vigShot {
		if n.dies[s[1]] != "" && cardByName[n.roleAt[s[1]]].Faction == Town && g.players[s[0]].alive {
			g.players[s[0]].guilt = true
			g.private(w, g.players[s[0]], "guilt", "You shot a member of the Town. You will die of guilt tomorrow night.")
		}
	}
	for _, p := range g.players {
		p.seance = -1
		if p.hauntNight == g.day {
			p.hauntNight, p.haunt = 0, nil
		}
	}
	g.prisoner = -1
	g.promote(w)
	g.acts = map[int]*act{}
}

// jailor is the living Jailor's seat, or -1.
func (g *Game) jailor() int {
	for i, p := range g.players {
		if p.alive && p.role == "Jailor" {
			return i
		}
	}
	return -1
}

// promote keeps a Mafia killer alive (a Mafioso succeeds a dead Godfather,
// and another member becomes the Mafioso when no killer is left) and turns
// Vampire Hunters into Vigilantes once no Vampire is left.
func (g *Game) promote(w *world.World) {
	if g.phase == PhaseOver {
		return
	}
	gf, mo, vamps := g.killers()
	if len(vamps) == 0 {
		for _, p := range g.players {
			if p.alive && p.role == "Vampire Hunter" {
				g.setRole(p, "Vigilante")
				p.bullets = 1
				g.private(w, p, "role", "No Vampire is left: you are now a Vigilante, with 1 bullet.")
			}
		}
	}
	if gf < 0 && mo >= 0 {
		g.setRole(g.players[mo], "Godfather")
		g.private(w, g.players[mo], "role", "The Godfather is dead. You are the new Godfather.")
		return
	}
	if gf < 0 && mo < 0 {
		for _, p := range g.players {
			if p.alive && p.faction() == Mafia {
				g.private(w, p, "role", fmt.Sprintf("No Mafia killer is left. You were a %s; you are now the Mafioso.", p.role))
				g.setRole(p, "Mafioso")
				return
			}
		}
	}
}

// killers are the living Godfather's and Mafioso's seats (-1 for none) and
// the living Vampires', in seat order.
func (g *Game) killers() (gf, mo int, vamps []int) {
	gf, mo = -1, -1
	for i, p := range g.players {
		switch {
		case !p.alive:
		case p.role == "Godfather":
			gf = i
		case p.role == "Mafioso":
			mo = i
		case p.role == Vampire:
			vamps = append(vamps, i)
		}
	}
	return gf, mo, vamps
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
