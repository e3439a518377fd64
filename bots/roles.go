package bots

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"

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
//     chat and the Mafioso, Janitor and Forger follow it).
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
}

// NewRolesPlayer creates a roles_player bot.
func NewRolesPlayer(info Info) *RolesPlayer {
	return &RolesPlayer{info: info, rng: botRand(info), seen: map[string]bool{}, accused: map[string]float64{},
		claimsInv: map[string]bool{}, investigate: map[string]bool{}, vests: 4, lastPlan: map[int]string{}}
}

var mafiaRoles = []string{"Godfather", "Mafioso", "Consigliere", "Framer", "Janitor", "Forger"}

type rolesView struct {
	me, role, phase string
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
	for _, e := range ListOf(sec["players"]) {
		p := MapOf(e)
		id := StrOf(p["id"])
		if r := StrOf(p["role"]); r != "" {
			v.roleOf[id] = r
		}
		if rv, _ := p["revealed"].(bool); rv {
			v.revealed[id] = true
		}
		if al, _ := p["alive"].(bool); al && id != v.me {
			v.living = append(v.living, id)
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

func (v *rolesView) mafia() bool { return slices.Contains(mafiaRoles, v.role) }

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
			evil := false
			for _, m := range append(slices.Clone(mafiaRoles), "Serial Killer", "Witch") {
				if strings.Contains(r, m) {
					evil = true
				}
			}
			if evil {
				s[id] += 5
			} else {
				s[id] -= 3
			}
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
		if ch := StrOf(m["channel"]); ch != "public" && ch != "mafia" {
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
		if b.spokeDay != v.day {
			b.spokeDay = v.day
			return rolesAct("speak", map[string]any{"text": b.speech(v, susp, others)}, "share my view")
		}
		if b.whisperDay != v.day && v.day >= 2 && len(v.living) > 0 && b.rng.IntN(3) == 0 {
			b.whisperDay = v.day
			to := b.pick(v.living)
			return rolesAct("whisper", map[string]any{"to": to, "text": fmt.Sprintf("whisper#%s#%d: keep an eye on the quiet ones.", v.me, v.day)}, "whisper")
		}
	case "nomination":
		if t := b.nominee(v, susp, others); t != "" {
			return rolesAct("nominate", map[string]any{"player": t}, "nominate a suspect")
		}
	case "defense", "last_words":
		if v.defendant == v.me {
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
	card := map[string]bool{"Investigator": true, "Sheriff": true, "Lookout": true, "Doctor": true, "Bodyguard": true,
		"Vigilante": true, "Escort": true, "Mayor": true, "Medium": true}
	if !card[r] {
		r = []string{"Medium", "Escort", "Lookout", "Doctor"}[len(v.me)%4]
	}
	return fmt.Sprintf("I claim %s.", r)
}

func (b *RolesPlayer) desiredWill(v *rolesView) string {
	w := b.claim(v)
	if !v.mafia() && !slices.Contains([]string{"Jester", "Executioner", "Serial Killer", "Witch", "Survivor"}, v.role) {
		for i, r := range v.results {
			if i >= len(v.results)-4 {
				w += " " + r
			}
		}
	}
	return w
}

func (b *RolesPlayer) speech(v *rolesView, susp map[string]float64, others []string) string {
	town := !v.mafia() && !slices.Contains([]string{"Jester", "Executioner", "Serial Killer", "Witch"}, v.role)
	if town {
		top, best := "", 0.0
		for _, id := range v.living {
			if susp[id] > best {
				top, best = id, susp[id]
			}
		}
		if top != "" && best >= 5 && slices.Contains([]string{"Sheriff", "Investigator", "Lookout"}, v.role) {
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
	case v.mafia(), v.role == "Jester", v.role == "Serial Killer", v.role == "Witch":
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
	if len(v.living) == 0 {
		return world.Idle("no one left")
	}
	// The Mafia's plan, from Mafia chat.
	plan := ""
	if v.mafia() {
		if b.killNight == v.day {
			plan = b.killTarget
		}
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
		if plan != "" && slices.Contains(others, plan) {
			return target(plan)
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
			return rolesAct("night_action", map[string]any{"target": t, "text": "I claim Medium. I trust everyone."}, "forge")
		}
		return target(t)
	case "Framer", "Consigliere":
		var fresh []string
		for _, id := range others {
			if !b.investigate[id] {
				fresh = append(fresh, id)
			}
		}
		if len(fresh) == 0 {
			fresh = others
		}
		t := b.pick(fresh)
		b.investigate[t] = true
		return target(t)
	case "Sheriff", "Investigator":
		var fresh []string
		for _, id := range v.living {
			if !b.investigate[id] && v.roleOf[id] == "" {
				fresh = append(fresh, id)
			}
		}
		if len(fresh) == 0 {
			fresh = v.living
		}
		t := b.pick(fresh)
		b.investigate[t] = true
		return target(t)
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
		if v.role == "Doctor" && !b.healedSelf && b.rng.IntN(4) == 0 {
			b.healedSelf = true
			return target(v.me)
		}
		return target(b.pick(inv))
	case "Escort":
		top, best := "", 0.0
		for _, id := range v.living {
			if susp[id] > best {
				top, best = id, susp[id]
			}
		}
		if top == "" {
			top = b.pick(v.living)
		}
		return target(top)
	case "Vigilante":
		top, best := "", 4.0
		for _, id := range v.living {
			if susp[id] > best {
				top, best = id, susp[id]
			}
		}
		if top != "" && v.day >= 2 {
			return target(top)
		}
	case "Serial Killer":
		return target(b.pick(v.living))
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

// mafiaPlan reads tonight's kill from Mafia chat.
func (b *RolesPlayer) mafiaPlan(v *rolesView) string {
	return b.lastPlan[v.day]
}
