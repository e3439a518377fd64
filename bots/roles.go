package bots

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/arena-sim/arena/components/roles"
	"github.com/arena-sim/arena/world"
)

// RolesPlayer is the "roles_player" bot: a player of the role game
// (components.roles). It reads its role, the table, the chat and its private
// results from its section and plays by phase:
//
//   - discussion: keeps its will up to date (Town write their role and
//     results; the Mafia and neutrals write a false Town claim), speaks once a
//     day (an investigator with a suspicious result claims and accuses; the
//     Mafia accuse a Town player), whispers now and then, and a Mayor reveals
//     on day 2;
//   - nomination: nominates its strongest suspect, or else the day's consensus
//     pick (the most accused living player, ties broken by a hash of the day
//     that every bot computes alike), so nominations gather; the Mafia never
//     nominate each other, an Executioner nominates its target;
//   - judgement: votes guilty on suspects, innocent on cleared players and on
//     fellow Mafia, and otherwise guilty more often than not;
//   - night: uses its role's ability (the Godfather names the kill in Mafia
//     chat and the Mafioso, Janitor and Forger follow it; the Vampires name a
//     bite in Vampire chat); a Jailor jails its top suspect by day and
//     executes a suspect; a Veteran alerts now and then; an Arsonist douses
//     two players, then ignites; a Werewolf rampages on full moons; an
//     Amnesiac remembers a dead role; a Retributionist revives a dead Town
//     member; a lynched Jester haunts a guilty voter; a dead Medium holds a
//     seance.
//
// Its choices depend only on its observations and its seed.
type RolesPlayer struct {
	info        Info
	rng         *rand.Rand
	seen        map[string]bool    // chat lines already read
	accused     map[string]float64 // public accusations per player
	claimsInv   map[string]bool    // players who claimed an investigative role
	investigate map[string]bool    // players this bot checked at night
	spokeDay    int
	whisperDay  int
	killTarget  string
	killNight   int
	vests       int
	healedSelf  bool
	lastPlan    map[int]string // night → the Godfather's kill, from Mafia chat
	bitePlan    map[int]string // night → the Vampires' bite, from Vampire chat
	doused      map[string]bool
	jailNight   int // the night this Jailor spoke in the jail
}

// NewRolesPlayer creates a roles_player bot.
func NewRolesPlayer(info Info) *RolesPlayer {
	return &RolesPlayer{info: info, rng: botRand(info), seen: map[string]bool{}, accused: map[string]float64{},
		claimsInv: map[string]bool{}, investigate: map[string]bool{}, vests: 4, lastPlan: map[int]string{},
		bitePlan: map[int]string{}, doused: map[string]bool{}}
}

// factionOf is a role's faction from the role game's data store.
func factionOf(role string) string {
	c, _ := roles.Lookup(role)
	return c.Faction
}

// evilRole reports whether the Town wants a role lynched: the Mafia, the
// Neutral Killing roles, the Vampire and the Witch.
func evilRole(role string) bool {
	c, _ := roles.Lookup(role)
	return c.Faction == roles.Mafia || c.Alignment == "Neutral Killing" || role == roles.Vampire || role == "Witch"
}

type rolesView struct {
	me, role, phase string
	faction         string
	prisoner        string // the Jailor's prisoner
	jailed          bool
	haunt           []string // a lynched Jester's choices
	seanceUsed      bool
	charges         int
	blackmailed     bool
	dead            []string // dead players whose role is known, in seat order
	day             int
	alive           bool
	living          []string // living players other than me, in seat order
	roleOf          map[string]string
	revealed        map[string]bool
	team            map[string]bool
	target          string
	defendant       string
	noms            map[string]float64
	results         []string
	will            string
}

func readRoles(obs *world.Observation) (*rolesView, bool) {
	sec := SectionOf(obs, "roles")
	if sec == nil {
		return nil, false
	}
	you := MapOf(sec["you"])
	v := &rolesView{me: StrOf(you["id"]), role: StrOf(you["role"]), phase: StrOf(sec["phase"]), day: int(NumOf(sec["day"])),
		roleOf: map[string]string{}, revealed: map[string]bool{}, team: map[string]bool{}, noms: map[string]float64{},
		target: StrOf(sec["target"]), defendant: StrOf(sec["defendant"]), will: StrOf(you["will"])}
	v.alive, _ = you["alive"].(bool)
	v.faction = StrOf(you["faction"])
	if v.faction == "" {
		v.faction = factionOf(v.role)
	}
	v.prisoner = StrOf(sec["prisoner"])
	v.jailed, _ = sec["jailed"].(bool)
	v.seanceUsed, _ = sec["seance_used"].(bool)
	v.charges = int(NumOf(sec["charges"]))
	v.blackmailed, _ = sec["blackmailed"].(bool)
	for _, h := range ListOf(sec["haunt"]) {
		v.haunt = append(v.haunt, StrOf(h))
	}
	for _, e := range ListOf(sec["players"]) {
		p := MapOf(e)
		id := StrOf(p["id"])
		if r := StrOf(p["role"]); r != "" {
			v.roleOf[id] = r
		}
		if rv, _ := p["revealed"].(bool); rv {
			v.revealed[id] = true
		}
		al, _ := p["alive"].(bool)
		if al && id != v.me {
			v.living = append(v.living, id)
		}
		if !al && StrOf(p["role"]) != "" && id != v.me {
			v.dead = append(v.dead, id)
		}
	}
	for _, e := range ListOf(sec["team"]) {
		v.team[StrOf(MapOf(e)["id"])] = true
	}
	for k, n := range MapOf(sec["nominations"]) {
		v.noms[k] = NumOf(n)
	}
	for _, e := range ListOf(sec["night_results"]) {
		v.results = append(v.results, StrOf(MapOf(e)["text"]))
	}
	return v, true
}

func (v *rolesView) mafia() bool { return v.faction == roles.Mafia }

// town reports whether the bot plays for the Town.
func (v *rolesView) town() bool { return v.faction == roles.Town }

// suspicion scores a player from this bot's own results and the public
// accusations; below 0 means cleared.
func (b *RolesPlayer) suspicion(v *rolesView) map[string]float64 {
	s := map[string]float64{}
	for id, n := range b.accused {
		s[id] += n
	}
	for _, r := range v.results {
		id := targetIn(r)
		switch {
		case id == "":
		case strings.Contains(r, "is suspicious"):
			s[id] += 10
		case strings.Contains(r, "seems innocent"):
			s[id] -= 20
		case strings.Contains(r, "could be a"):
			// The group's evil roles against its Town roles.
			_, group, _ := strings.Cut(r, "could be a ")
			for _, name := range strings.FieldsFunc(strings.TrimSuffix(group, "."), func(c rune) bool { return c == ',' }) {
				name = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), "or "))
				for _, part := range strings.Split(name, " or ") {
					switch {
					case evilRole(part):
						s[id] += 3
					case factionOf(part) == roles.Town:
						s[id] -= 3
					}
				}
			}
		case strings.Contains(r, "is not a Vampire"):
			s[id] -= 1
		case strings.Contains(r, "is a Vampire"):
			s[id] += 10
		}
	}
	for id := range v.revealed {
		s[id] -= 50
	}
	return s
}

// targetIn finds "target agent_x" in a result text.
func targetIn(text string) string {
	f := strings.Fields(text)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "target" {
			return strings.TrimRight(f[i+1], ".!,")
		}
	}
	return ""
}

// readChat takes in the public chat: accusations ("X is suspicious") and
// claims of investigative roles.
func (b *RolesPlayer) readChat(obs *world.Observation) {
	sec := SectionOf(obs, "roles")
	for _, e := range ListOf(sec["chat"]) {
		m := MapOf(e)
		ch := StrOf(m["channel"])
		if ch == "vampire" {
			if f := strings.Fields(StrOf(m["text"])); len(f) >= 3 && f[0] == "vampire-chat:" && f[1] == "bite" {
				if day := int(NumOf(m["day"])); b.bitePlan[day] == "" {
					b.bitePlan[day] = f[2]
				}
			}
			continue
		}
		if ch != "public" && ch != "mafia" {
			continue
		}
		from, text := StrOf(m["from"]), StrOf(m["text"])
		if StrOf(m["channel"]) == "mafia" {
			if f := strings.Fields(text); len(f) >= 4 && f[0] == "mafia-chat:" && f[2] == "kill" {
				b.lastPlan[int(NumOf(m["day"]))] = f[3]
			}
			continue
		}
		key := fmt.Sprintf("%v|%s|%s|%s", m["day"], m["phase"], from, text)
		if b.seen[key] {
			continue
		}
		b.seen[key] = true
		f := strings.Fields(text)
		for i := 0; i+2 < len(f); i++ {
			if f[i+1] == "is" && strings.HasPrefix(f[i+2], "suspicious") {
				w := 2.0
				if strings.HasPrefix(text, "I am the ") {
					w = 6 // backed by a claimed result
				}
				b.accused[strings.TrimRight(f[i], ".,!")] += w
			}
		}
		for _, r := range []string{"Sheriff", "Investigator", "Lookout"} {
			if strings.Contains(text, "I am the "+r) {
				b.claimsInv[from] = true
			}
		}
	}
}

// pick chooses a player from a list with the bot's random stream.
func (b *RolesPlayer) pick(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[b.rng.IntN(len(ids))]
}

// consensus is the player every bot picks when it has no lead: the most
// accused, ties broken by a hash of the day and the id.
func (b *RolesPlayer) consensus(v *rolesView, cands []string) string {
	best, bestS, bestH := "", -1e9, uint64(0)
	for _, id := range cands {
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/%s", v.day, id)
		hv := h.Sum64()
		sc := b.accused[id]
		if best == "" || sc > bestS || (sc == bestS && hv < bestH) {
			best, bestS, bestH = id, sc, hv
		}
	}
	return best
}

func rolesAct(tool string, params map[string]any, why string) world.Decision {
	return world.Decision{Tool: tool, Params: params, Reasoning: why}
}

// Decide implements Bot.
func (b *RolesPlayer) Decide(_ context.Context, obs *world.Observation) world.Decision {
	v, ok := readRoles(obs)
	if !ok || !obs.Alive {
		return world.Idle("no role game here")
	}
	if v.phase != "game_over" && !v.alive {
		switch {
		case v.phase == "night" && len(v.haunt) > 0:
			return rolesAct("night_action", map[string]any{"target": b.pick(v.haunt)}, "haunt a guilty voter")
		case v.role == "Medium" && !v.seanceUsed && v.phase != "night" && len(v.living) > 0 && b.spokeDay != v.day:
			b.spokeDay = v.day
			return rolesAct("seance", map[string]any{"player": b.pick(v.living)}, "hold my seance")
		}
	}
	if v.phase == "game_over" || !v.alive {
		return world.Idle("the game is over for me")
	}
	b.readChat(obs)
	susp := b.suspicion(v)
	others := slices.DeleteFunc(slices.Clone(v.living), func(id string) bool { return v.team[id] })
	switch v.phase {
	case "discussion":
		if w := b.desiredWill(v); w != v.will {
			return rolesAct("write_will", map[string]any{"text": w}, "keep my will current")
		}
		if v.role == "Mayor" && v.day >= 2 && !v.revealed[v.me] {
			return rolesAct("reveal", nil, "reveal as Mayor")
		}
		if b.spokeDay != v.day && !v.blackmailed {
			b.spokeDay = v.day
			return rolesAct("speak", map[string]any{"text": b.speech(v, susp, others)}, "share my view")
		}
		if v.role == "Jailor" && v.prisoner == "" && len(v.living) > 0 {
			return rolesAct("jail", map[string]any{"player": b.jailee(v, susp)}, "jail a suspect for the night")
		}
		if b.whisperDay != v.day && !v.blackmailed && v.day >= 2 && len(v.living) > 0 && b.rng.IntN(3) == 0 {
			b.whisperDay = v.day
			to := b.pick(v.living)
			return rolesAct("whisper", map[string]any{"to": to, "text": fmt.Sprintf("whisper#%s#%d: keep an eye on the quiet ones.", v.me, v.day)}, "whisper")
		}
	case "nomination":
		if t := b.nominee(v, susp, others); t != "" {
			return rolesAct("nominate", map[string]any{"player": t}, "nominate a suspect")
		}
	case "defense", "last_words":
		if v.defendant == v.me && !v.blackmailed {
			return rolesAct("speak", map[string]any{"text": fmt.Sprintf("I am innocent! %s", b.claim(v))}, "defend myself")
		}
	case "judgement":
		if v.defendant != "" && v.defendant != v.me {
			return rolesAct("vote", map[string]any{"verdict": b.verdict(v, susp)}, "judge")
		}
	case "night":
		return b.night(v, susp, others)
	}
	return world.Idle("nothing to do this phase")
}

// claim is what the bot says its role is: the truth for Town, a Town role
// for everyone else.
func (b *RolesPlayer) claim(v *rolesView) string {
	r := v.role
	if !v.town() {
		r = []string{"Medium", "Escort", "Lookout", "Doctor"}[len(v.me)%4]
	}
	return fmt.Sprintf("I claim %s.", r)
}

func (b *RolesPlayer) desiredWill(v *rolesView) string {
	w := b.claim(v)
	if v.town() {
		for i, r := range v.results {
			if i >= len(v.results)-4 {
				w += " " + r
			}
		}
	}
	return w
}

func (b *RolesPlayer) speech(v *rolesView, susp map[string]float64, others []string) string {
	if v.town() || v.role == "Survivor" || v.role == "Amnesiac" {
		top, best := "", 0.0
		for _, id := range v.living {
			if susp[id] > best {
				top, best = id, susp[id]
			}
		}
		if top != "" && best >= 5 && slices.Contains([]string{"Sheriff", "Investigator", "Lookout", "Spy", "Vampire Hunter"}, v.role) {
			return fmt.Sprintf("I am the %s. %s is suspicious!", v.role, top)
		}
		return "I have nothing solid yet. " + b.claim(v)
	}
	if v.role == "Executioner" && v.target != "" && slices.Contains(v.living, v.target) {
		return fmt.Sprintf("%s is suspicious, I am sure of it.", v.target)
	}
	if len(others) > 0 && b.rng.IntN(3) == 0 {
		return fmt.Sprintf("%s is suspicious to me.", b.pick(others))
	}
	return "Nothing to report. " + b.claim(v)
}

func (b *RolesPlayer) nominee(v *rolesView, susp map[string]float64, others []string) string {
	cands := slices.DeleteFunc(slices.Clone(others), func(id string) bool { return v.revealed[id] })
	if len(cands) == 0 {
		return ""
	}
	if v.role == "Executioner" && slices.Contains(cands, v.target) {
		return v.target
	}
	top, best := "", 4.0
	if !v.mafia() {
		for _, id := range cands {
			if susp[id] > best {
				top, best = id, susp[id]
			}
		}
	}
	if top != "" {
		return top
	}
	// Join the leading nomination, if it is not cleared.
	lead, most := "", 0.0
	for _, id := range cands {
		if v.noms[id] > most && susp[id] >= 0 {
			lead, most = id, v.noms[id]
		}
	}
	if lead != "" {
		return lead
	}
	c := b.consensus(v, slices.DeleteFunc(slices.Clone(cands), func(id string) bool { return susp[id] < 0 && !v.mafia() }))
	if c == "" {
		c = b.consensus(v, cands)
	}
	return c
}

func (b *RolesPlayer) verdict(v *rolesView, susp map[string]float64) string {
	d := v.defendant
	switch {
	case v.team[d]:
		return "innocent"
	case !v.town() && v.role != "Survivor" && v.role != "Amnesiac":
		return "guilty"
	case v.role == "Executioner" && d == v.target:
		return "guilty"
	case susp[d] < 0:
		return "innocent"
	case susp[d] > 0:
		return "guilty"
	}
	if b.rng.Float64() < 0.5 {
		return "guilty"
	}
	return "innocent"
}

func (b *RolesPlayer) night(v *rolesView, susp map[string]float64, others []string) world.Decision {
	target := func(t string) world.Decision {
		return rolesAct("night_action", map[string]any{"target": t}, "use my ability")
	}
	if len(v.living) == 0 || v.jailed {
		return world.Idle("nothing I can do tonight")
	}
	// top is the most suspicious of ids above a threshold, or "".
	top := func(ids []string, above float64) string {
		t, best := "", above
		for _, id := range ids {
			if susp[id] > best {
				t, best = id, susp[id]
			}
		}
		return t
	}
	// fresh prefers the players this bot has not targeted yet.
	fresh := func(ids []string) string {
		var f []string
		for _, id := range ids {
			if !b.investigate[id] && v.roleOf[id] == "" {
				f = append(f, id)
			}
		}
		if len(f) == 0 {
			f = ids
		}
		t := b.pick(f)
		b.investigate[t] = true
		return t
	}
	switch v.role {
	case "Godfather":
		if b.killNight != v.day {
			// Prefer a claimed investigator.
			var inv []string
			for _, id := range others {
				if b.claimsInv[id] {
					inv = append(inv, id)
				}
			}
			if len(inv) == 0 {
				inv = others
			}
			b.killTarget, b.killNight = b.pick(inv), v.day
			return rolesAct("speak", map[string]any{"text": fmt.Sprintf("mafia-chat: we kill %s tonight.", b.killTarget)}, "order the kill")
		}
		if slices.Contains(others, b.killTarget) {
			return target(b.killTarget)
		}
	case "Mafioso", "Janitor", "Forger":
		t := b.mafiaPlan(v)
		if t == "" {
			if v.role != "Mafioso" {
				return world.Idle("waiting for the Godfather's order")
			}
			t = b.pick(others)
		}
		if v.role == "Forger" {
			if v.charges <= 0 {
				return world.Idle("no forgeries left")
			}
			return rolesAct("night_action", map[string]any{"target": t, "text": "I claim Medium. I trust everyone."}, "forge")
		}
		return target(t)
	case "Framer", "Consigliere", "Blackmailer", "Consort":
		if len(others) > 0 {
			return target(fresh(others))
		}
	case "Disguiser":
		if len(others) > 0 {
			mates := []string{v.me}
			for _, id := range v.living {
				if v.team[id] {
					mates = append(mates, id)
				}
			}
			return rolesAct("night_action", map[string]any{"target": b.pick(mates), "target2": b.pick(others)}, "disguise")
		}
	case "Sheriff", "Investigator", "Spy", "Vampire Hunter":
		return target(fresh(v.living))
	case "Lookout", "Doctor", "Bodyguard":
		var inv []string
		for _, id := range v.living {
			if b.claimsInv[id] {
				inv = append(inv, id)
			}
		}
		if len(inv) == 0 || b.rng.IntN(2) == 0 {
			inv = v.living
		}
		if v.role == "Doctor" && !b.healedSelf && v.charges > 0 && b.rng.IntN(4) == 0 {
			b.healedSelf = true
			return target(v.me)
		}
		return target(b.pick(inv))
	case "Escort":
		t := top(v.living, 0)
		if t == "" {
			t = b.pick(v.living)
		}
		return target(t)
	case "Transporter":
		if len(v.living) >= 2 {
			x := b.pick(v.living)
			return rolesAct("night_action", map[string]any{"target": v.me, "target2": x}, "transport")
		}
	case "Vigilante":
		if t := top(v.living, 4); t != "" && v.day >= 2 {
			return target(t)
		}
	case "Jailor":
		if v.prisoner != "" && b.jailNight != v.day {
			b.jailNight = v.day
			return rolesAct("speak", map[string]any{"text": "jail-chat: tell me your role."}, "question my prisoner")
		}
		if v.prisoner != "" && v.day >= 2 && susp[v.prisoner] >= 5 {
			return target(v.prisoner)
		}
	case "Veteran":
		if v.day >= 2 && v.charges > 0 && b.rng.IntN(3) == 0 {
			return target(v.me)
		}
	case "Retributionist":
		for _, id := range v.dead {
			if factionOf(v.roleOf[id]) == roles.Town && v.charges > 0 {
				return target(id)
			}
		}
	case "Amnesiac":
		for _, id := range v.dead {
			if c, _ := roles.Lookup(v.roleOf[id]); !c.Unique && c.Name != roles.Vampire {
				return target(id)
			}
		}
	case "Serial Killer":
		return target(b.pick(v.living))
	case "Werewolf":
		if v.day%2 == 0 {
			return target(b.pick(append(slices.Clone(v.living), v.me)))
		}
	case "Arsonist":
		n := 0
		for id := range b.doused {
			if slices.Contains(v.living, id) {
				n++
			}
		}
		if n >= 2 {
			clear(b.doused)
			return target(v.me)
		}
		t := b.pick(v.living)
		b.doused[t] = true
		return target(t)
	case roles.Vampire:
		if b.killNight != v.day {
			b.killNight = v.day
			if t := b.pick(others); t != "" {
				return rolesAct("speak", map[string]any{"text": fmt.Sprintf("vampire-chat: bite %s tonight.", t)}, "name a bite")
			}
		}
		if t := b.bitePlan[v.day]; slices.Contains(others, t) {
			return target(t)
		}
	case "Witch":
		if len(v.living) >= 2 {
			x := b.pick(v.living)
			rest := slices.DeleteFunc(slices.Clone(v.living), func(id string) bool { return id == x })
			return rolesAct("night_action", map[string]any{"target": x, "target2": b.pick(rest)}, "control")
		}
	case "Survivor":
		if v.day >= 2 && b.vests > 0 {
			b.vests--
			return target(v.me)
		}
	}
	return world.Idle("nothing to do tonight")
}

// jailee is whom a Jailor jails: its top suspect, or a claimed investigator's
// pick of nobody, a random living player who is not a revealed Mayor.
func (b *RolesPlayer) jailee(v *rolesView, susp map[string]float64) string {
	cands := slices.DeleteFunc(slices.Clone(v.living), func(id string) bool { return v.revealed[id] })
	if len(cands) == 0 {
		cands = v.living
	}
	t, best := "", 2.0
	for _, id := range cands {
		if susp[id] > best {
			t, best = id, susp[id]
		}
	}
	if t == "" {
		t = b.pick(cands)
	}
	return t
}

// mafiaPlan reads tonight's kill from Mafia chat.
func (b *RolesPlayer) mafiaPlan(v *rolesView) string {
	return b.lastPlan[v.day]
}
