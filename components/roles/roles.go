// Package roles is the role game world component: a classic Town-of-Salem-style
// game of 7 to 15 players after the reference's ToSSim. Roles are drawn from
// the world seed; days run through discussion, nomination, defense, judgement
// and last words, and nights resolve every night action in priority order with
// attack against defense and visits. Each agent sees only what its role may
// know (see docs/components.md#roles).
package roles

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/arena-sim/arena/world"
)

// Name is the component's name: its observation section and event source.
const Name = "roles"

// Phases of the game.
const (
	PhaseDiscussion = "discussion"
	PhaseNomination = "nomination"
	PhaseDefense    = "defense"
	PhaseJudgement  = "judgement"
	PhaseLastWords  = "last_words"
	PhaseNight      = "night"
	PhaseOver       = "game_over"
)

// Factions and outcomes.
const (
	Town    = "Town"
	Mafia   = "Mafia"
	Neutral = "Neutral"
	Vampire = "Vampire" // the Vampires' side (and the role)
	Draw    = "Draw"
)

// Game is the component. Build it with New; it is attached to one world.
type Game struct {
	cfg     Config
	rng     *rand.Rand
	players []*player
	idx     map[string]int

	phase     string
	phaseSeq  int // increments at every phase change; Turn-Based knowledge lives one phase
	left      int // ticks left in the phase
	day       int
	trials    int // trials held today
	defendant int // -1 for none
	pending   int // a player nominated to trial this tick, -1 for none
	noms      map[int]int
	votes     map[int]string
	acts      map[int]*act
	chat      []chatLine
	winner    string // the winning faction or role, or Draw, once over
	lastTally string
	prisoner  int // the player jailed for tonight, -1 for none
	vampSeq   int // vampires made so far; a vampire's age is its turn in this count
}

type player struct {
	id, role   string
	num        int // 1-based
	alive      bool
	will       string
	deathDay   int
	cause      string
	cleaned    bool // cleaned by a Janitor: role and will hidden
	cleanedBy  int
	forged     bool
	revealed   bool // a revealed Mayor
	revived    bool // revived by a Retributionist: the role stays public
	won        bool // a Jester lynched, an Executioner whose target was lynched
	bullets    int
	vests      int // a Survivor's vests, a Bodyguard's one self-vest
	cleans     int
	forges     int
	selfHeals  int
	alerts     int  // a Veteran's alerts
	executions int  // a Jailor's executions
	revives    int  // a Retributionist's revival
	barrier    bool // the Witch's magic barrier
	doused     bool // doused by an Arsonist
	guilt      bool // a Vigilante who killed a Town member dies the next night
	silenced   int  // blackmailed: cannot speak on this day (0 for never)
	vampAge    int  // a Vampire's turn among the vampires made, 1 for the first
	seance     int  // a dead Medium's seance target for tonight, -1 for none
	seanceUsed bool
	haunt      []int // a lynched Jester's victims to choose from (guilty voters)
	hauntNight int   // the night a lynched Jester haunts, 0 for none
	target     int   // an Executioner's target, -1 for none
	learned    map[int]string
	results    []result
	knowledge  []entry
	nightDeath bool
}

// result is a private night result, kept for the whole game.
type result struct {
	Night int    `json:"night"`
	Text  string `json:"text"`
}

// entry is one tool result in an agent's knowledge section.
type entry struct {
	Tool        string `json:"tool"`
	Key         string `json:"key"`
	Persistence string `json:"persistence"`
	Result      string `json:"result"`
	phaseSeq    int
}

type act struct {
	target, target2 int
	text            string
	controlled      bool // turned by a Witch
}

type chatLine struct {
	Day     int    `json:"day"`
	Phase   string `json:"phase"`
	From    string `json:"from"`
	Channel string `json:"channel"` // public, whisper, mafia, dead
	To      string `json:"to,omitempty"`
	Text    string `json:"text"`
	to      []int  // nil: everyone
	// Rendered once, when said, and shared by every observation that shows
	// the line (read-only from then on): its section entry and text line.
	view map[string]any
	line string
}

// say adds a line to the chat.
func (g *Game) say(c chatLine) {
	c.view = map[string]any{"day": c.Day, "phase": c.Phase, "from": c.From, "channel": c.Channel, "text": c.Text}
	if c.To != "" {
		c.view["to"] = c.To
	}
	c.line = "  " + channelTag(c.Channel) + c.From + ": " + c.Text
	g.chat = append(g.chat, c)
}

// New builds a component from its scenario config (nil: the defaults).
func New(raw json.RawMessage) (*Game, error) {
	cfg, err := ParseConfig(raw)
	if err != nil {
		return nil, err
	}
	return &Game{cfg: cfg}, nil
}

// NewWithConfig builds a component from a config.
func NewWithConfig(cfg Config) (*Game, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Game{cfg: cfg}, nil
}

// Factory builds the component for the components registry.
func Factory(raw json.RawMessage) (world.Component, error) { return New(raw) }

// Name implements world.Component.
func (g *Game) Name() string { return Name }

// Config returns the config.
func (g *Game) Config() Config { return g.cfg }

// Attach implements world.Component: it seats the world's agents (7 to 15)
// and deals the roles.
func (g *Game) Attach(w *world.World) error {
	g.rng = w.SecretRand("component:" + Name)
	agents := w.Agents()
	if n := len(agents); n < 7 || n > 15 {
		return fmt.Errorf("roles: a classic game needs 7 to 15 players, the scenario has %d agents", n)
	}
	if len(g.cfg.Setup) > 0 && len(g.cfg.Setup) != len(agents) {
		return fmt.Errorf("roles: config setup lists %d roles for %d agents", len(g.cfg.Setup), len(agents))
	}
	roles := slices.Clone(g.cfg.Setup)
	if len(roles) == 0 {
		var err error
		if roles, err = g.draw(len(agents)); err != nil {
			return err
		}
	}
	g.idx = map[string]int{}
	g.players = nil
	g.prisoner, g.vampSeq = -1, 0
	for i, a := range agents {
		p := &player{id: a.ID, num: i + 1, alive: true, target: -1, cleanedBy: -1, seance: -1, learned: map[int]string{}}
		g.players = append(g.players, p)
		g.idx[a.ID] = i
		g.setRole(p, roles[i])
	}
	for _, p := range g.players {
		if p.role == "Executioner" {
			var town []int
			for j, q := range g.players {
				if q.faction() == Town && q.role != "Mayor" && q.role != "Jailor" {
					town = append(town, j)
				}
			}
			if len(town) > 0 {
				p.target = town[g.rng.IntN(len(town))]
			} else {
				g.setRole(p, "Jester") // no one to hunt: a Jester from the start
			}
		}
	}
	g.day = 1
	g.defendant, g.pending = -1, -1
	g.noms, g.votes, g.acts = map[int]int{}, map[int]string{}, map[int]*act{}
	g.startPhase(w, PhaseDiscussion)
	for _, p := range g.players {
		g.private(w, p, "role", fmt.Sprintf("You are the %s. Goal: %s", p.role, cardByName[p.role].Goal))
	}
	g.promote(w)
	return nil
}

// setRole gives p a role with its starting charges.
func (g *Game) setRole(p *player, role string) {
	p.role = role
	switch role {
	case "Vigilante":
		p.bullets = 3
	case "Survivor":
		p.vests = 4
	case "Bodyguard":
		p.vests = 1
	case "Janitor":
		p.cleans = 3
	case "Forger":
		p.forges = 2
	case "Doctor":
		p.selfHeals = 1
	case "Witch":
		p.barrier = true
	case "Veteran":
		p.alerts = 3
	case "Jailor":
		p.executions = 3
	case "Retributionist":
		p.revives = 1
	case "Vampire":
		g.vampSeq++
		p.vampAge = g.vampSeq
	}
}

func (p *player) card() *Card     { return cardByName[p.role] }
func (p *player) faction() string { return cardByName[p.role].Faction }
func (p *player) side() string    { return sideOf(p.role) }

// sideOf is the side a role plays for, the one whose survival ends the game:
// Town, Mafia, Vampire, or a Neutral Killing role on its own; "" for the
// neutrals who win beside others (Survivor, Witch, Jester, Executioner,
// Amnesiac).
func sideOf(role string) string {
	c := cardByName[role]
	switch {
	case c.Faction == Town || c.Faction == Mafia:
		return c.Faction
	case role == Vampire:
		return Vampire
	case c.Alignment == "Neutral Killing":
		return role
	}
	return ""
}
func (p *player) label() string { return fmt.Sprintf("Player %d (%s)", p.num, p.id) }
func (g *Game) living() (n int) {
	for _, p := range g.players {
		if p.alive {
			n++
		}
	}
	return n
}

// Threshold is the nominations a trial needs: ⌈living/2⌉.
func (g *Game) Threshold() int { return (g.living() + 1) / 2 }

func (g *Game) phaseTicks(ph string) int {
	switch ph {
	case PhaseDiscussion:
		return g.cfg.DiscussionTicks
	case PhaseNomination:
		return g.cfg.NominationTicks
	case PhaseDefense:
		return g.cfg.DefenseTicks
	case PhaseJudgement:
		return g.cfg.JudgementTicks
	case PhaseLastWords:
		return g.cfg.LastWordsTicks
	case PhaseNight:
		return g.cfg.NightTicks
	}
	return 0
}

func (g *Game) startPhase(w *world.World, ph string) {
	if g.phase == PhaseOver {
		return
	}
	g.phase = ph
	g.phaseSeq++
	g.left = g.phaseTicks(ph)
	for _, p := range g.players {
		p.knowledge = slices.DeleteFunc(p.knowledge, func(e entry) bool { return e.Persistence != "permanent" && e.phaseSeq != g.phaseSeq })
	}
	var text string
	switch ph {
	case PhaseDiscussion:
		text = fmt.Sprintf("Day %d begins: discussion.", g.day)
	case PhaseNomination:
		g.noms = map[int]int{}
		text = fmt.Sprintf("Day %d: nominations are open (%d nominations put a player on trial; trial %d of at most %d).", g.day, g.Threshold(), g.trials+1, g.cfg.MaxTrials)
	case PhaseDefense:
		text = fmt.Sprintf("%s is on trial. Defend yourself.", g.players[g.defendant].label())
	case PhaseJudgement:
		g.votes = map[int]string{}
		text = fmt.Sprintf("Judgement of %s: vote guilty, innocent or abstain.", g.players[g.defendant].label())
	case PhaseLastWords:
		text = fmt.Sprintf("%s has been found guilty. Any last words?", g.players[g.defendant].label())
	case PhaseNight:
		g.acts = map[int]*act{}
		text = fmt.Sprintf("Night %d falls.", g.day)
		if g.day%2 == 0 {
			text = fmt.Sprintf("Night %d falls. There is a full moon out tonight.", g.day)
		}
	}
	g.publish(w, world.Event{Type: "phase", Data: map[string]any{"phase": ph, "day": g.day, "text": text}})
	if ph == PhaseNight {
		g.dusk(w)
	}
}

// dusk tells the Jailor's prisoner and a seance's contact what the night
// holds for them.
func (g *Game) dusk(w *world.World) {
	if j := g.jailor(); g.prisoner >= 0 && (j < 0 || !g.players[g.prisoner].alive) {
		g.prisoner = -1
	}
	if g.prisoner >= 0 {
		q := g.players[g.prisoner]
		g.private(w, q, "jailed", "You were hauled off to jail! You cannot act tonight, and you are safe from attacks. The Jailor may talk to you (speak) and may execute you.")
		g.private(w, g.players[g.jailor()], "jail", fmt.Sprintf("You jailed %s. Talk to them with speak (anonymously); execute them with night_action on them.", q.id))
	}
	for _, p := range g.players {
		if p.alive || p.role != "Medium" || p.seance < 0 {
			continue
		}
		if q := g.players[p.seance]; q.alive {
			p.seanceUsed = true
			g.private(w, q, "seance", fmt.Sprintf("A dead Medium, %s, is speaking to you from the grave tonight (speak to answer).", p.id))
		} else {
			p.seance = -1
		}
	}
}

func (g *Game) publish(w *world.World, e world.Event) {
	e.Source = Name
	if w != nil {
		w.Publish(e)
	}
}

// private sends one player a private result; it is kept as a night result.
func (g *Game) private(w *world.World, p *player, kind, text string) {
	g.publish(w, world.Event{Type: "private", Agent: p.id, To: []string{p.id},
		Data: map[string]any{"for": p.id, "kind": kind, "text": text}})
	if kind != "role" {
		p.results = append(p.results, result{Night: g.day, Text: text})
	}
}

// Tick implements world.Component: it counts down the phase and moves on.
func (g *Game) Tick(w *world.World) {
	if g.phase == PhaseOver {
		return
	}
	g.left--
	if g.phase == PhaseNomination && g.pending >= 0 {
		g.defendant, g.pending = g.pending, -1
		g.trials++
		g.startPhase(w, PhaseDefense)
		return
	}
	if g.left > 0 {
		return
	}
	switch g.phase {
	case PhaseDiscussion:
		if g.day == 1 {
			g.startPhase(w, PhaseNight)
		} else {
			g.startPhase(w, PhaseNomination)
		}
	case PhaseNomination:
		g.startPhase(w, PhaseNight)
	case PhaseDefense:
		g.startPhase(w, PhaseJudgement)
	case PhaseJudgement:
		if g.judge(w) {
			g.startPhase(w, PhaseLastWords)
		} else {
			g.defendant = -1
			if g.trials < g.cfg.MaxTrials {
				g.startPhase(w, PhaseNomination)
			} else {
				g.startPhase(w, PhaseNight)
			}
		}
	case PhaseLastWords:
		g.lynch(w)
		g.startPhase(w, PhaseNight)
	case PhaseNight:
		g.resolveNight(w)
		if g.phase == PhaseOver {
			return
		}
		g.day++
		if g.day > g.cfg.MaxDays {
			g.finish(w, Draw)
			return
		}
		g.startPhase(w, PhaseDiscussion)
	}
}

// tally counts the judgement's votes so far: a revealed Mayor's vote weighs
// MayorVotes; a missing vote is an abstention. parts are "id vote" for every
// living voter; cast, for those who voted.
func (g *Game) tally() (guilty, innocent, abstain int, parts, cast []string) {
	for i, p := range g.players {
		if !p.alive || i == g.defendant {
			continue
		}
		v, voted := g.votes[i]
		if v == "" {
			v = "abstain"
		}
		wt := 1
		if p.revealed {
			wt = g.cfg.MayorVotes
		}
		switch v {
		case "guilty":
			guilty += wt
		case "innocent":
			innocent += wt
		default:
			abstain++
		}
		parts = append(parts, p.id+" "+v)
		if voted {
			cast = append(cast, p.id+" "+v)
		}
	}
	return guilty, innocent, abstain, parts, cast
}

// judge tallies the judgement; true means guilty. A tie frees.
func (g *Game) judge(w *world.World) bool {
	guilty, innocent, _, parts, _ := g.tally()
	d := g.players[g.defendant]
	verdict := "innocent"
	if guilty > innocent {
		verdict = "guilty"
	}
	g.lastTally = fmt.Sprintf("%s: %d guilty, %d innocent (%s)", d.id, guilty, innocent, strings.Join(parts, ", "))
	g.publish(w, world.Event{Type: "verdict", Agent: d.id, Data: map[string]any{"defendant": d.id, "guilty": guilty, "innocent": innocent,
		"verdict": verdict, "text": fmt.Sprintf("The Town finds %s %s, %d to %d. Votes: %s.", d.label(), verdict, guilty, innocent, strings.Join(parts, ", "))}})
	return verdict == "guilty"
}

func (g *Game) lynch(w *world.World) {
	d := g.players[g.defendant]
	g.defendant = -1
	if d.role == "Jester" {
		d.haunt, d.hauntNight = nil, g.day
		for i, p := range g.players {
			if p.alive && g.votes[i] == "guilty" {
				d.haunt = append(d.haunt, i)
			}
		}
	}
	g.kill(w, d, "lynched by the Town")
	if d.role == "Jester" {
		d.won = true
		if len(d.haunt) > 0 {
			g.private(w, d, "haunt", "You were lynched: you have won! Tonight, haunt one of those who voted guilty (night_action).")
		}
	}
	for _, p := range g.players {
		if p.role == "Executioner" && p.target == d.num-1 && p.alive {
			p.won = true
			g.private(w, p, "win", fmt.Sprintf("Your target %s was lynched. You have won!", d.id))
		}
	}
	g.checkWin(w)
	g.promote(w)
}

// kill marks a player dead and reveals the death, role and will to everyone
// (or hides them when the body was cleaned). As the seed has it, the will is
// shown once, in the death announcement (the event every agent's next
// observation carries); the chat keeps the death and role but not the will,
// which check_will reads afterwards.
func (g *Game) kill(w *world.World, p *player, cause string) {
	p.alive = false
	p.deathDay = g.day
	p.cause = cause
	role, will, hint := p.role, "They left no last will.", ""
	if p.will != "" {
		will = "We found a will next to their body: " + p.will
		if p.forged {
			will += " (the will was forged by a member of the Mafia)"
		}
		hint = fmt.Sprintf(" They left a will (check_will %s).", p.id)
	}
	if p.cleaned {
		role, will, hint = "", "Their will was cleaned and cannot be read.", " Their will was cleaned."
	}
	died := fmt.Sprintf("%s died: %s.", p.label(), cause)
	reveal := "We could not determine their role."
	data := map[string]any{"player": p.id, "cause": cause, "day": g.day}
	if role != "" {
		reveal = fmt.Sprintf("Their role was %s.", role)
		data["role"] = role
	}
	data["text"] = died + " " + will + " " + reveal
	g.publish(w, world.Event{Type: "death", Agent: p.id, Data: data})
	g.say(chatLine{Day: g.day, Phase: g.phase, From: "Narrator", Channel: "public", Text: died + hint + " " + reveal})
}

// checkWin ends the game when a side has won; it runs after every death.
func (g *Game) checkWin(w *world.World) {
	if g.phase == PhaseOver {
		return
	}
	var alive []string // the sides with a living member, in seat order
	witch := false
	for _, p := range g.players {
		if !p.alive {
			continue
		}
		if s := p.side(); s != "" && !slices.Contains(alive, s) {
			alive = append(alive, s)
		}
		witch = witch || p.role == "Witch"
	}
	switch {
	case len(alive) == 0:
		g.finish(w, Draw)
	case len(alive) == 1 && !(alive[0] == Town && witch):
		g.finish(w, alive[0])
	}
}

// finish ends the game with a winner and marks every winning player.
func (g *Game) finish(w *world.World, winner string) {
	g.winner = winner
	g.phase = PhaseOver
	g.phaseSeq++
	for _, p := range g.players {
		if winner != Draw && p.side() == winner {
			p.won = true
		}
		if p.alive && (p.role == "Survivor" || (p.role == "Witch" && winner != Town)) {
			p.won = true
		}
	}
	var ws []string
	for _, p := range g.players {
		if p.won {
			ws = append(ws, fmt.Sprintf("%s (%s)", p.id, p.role))
		}
	}
	text := fmt.Sprintf("The game is over: %s wins. Winners: %s.", winner, strings.Join(ws, ", "))
	if winner == Draw {
		text = fmt.Sprintf("The game is over: a draw. Winners: %s.", strings.Join(ws, ", "))
	}
	if len(ws) == 0 {
		text = fmt.Sprintf("The game is over: %s. No one won.", strings.ToLower(winner))
	}
	// Every role is revealed at the end of the game.
	var reveal []string
	for _, p := range g.players {
		reveal = append(reveal, fmt.Sprintf("%s (%s)", p.id, p.role))
	}
	text += " Roles: " + strings.Join(reveal, ", ") + "."
	g.publish(w, world.Event{Type: "game_over", Data: map[string]any{"winner": winner, "text": text}})
}

// Over reports whether the game has ended.
func (g *Game) Over() bool { return g.phase == PhaseOver }

// Winner returns the winning faction or role, Draw, or "" while the game runs.
func (g *Game) Winner() string { return g.winner }

// Phase returns the current phase and day.
func (g *Game) Phase() (string, int) { return g.phase, g.day }

// Role returns an agent's role, or "".
func (g *Game) Role(agentID string) string {
	if i, ok := g.idx[agentID]; ok {
		return g.players[i].role
	}
	return ""
}

// Alive reports whether an agent is alive in the game.
func (g *Game) Alive(agentID string) bool {
	i, ok := g.idx[agentID]
	return ok && g.players[i].alive
}

// Won reports whether an agent has won.
func (g *Game) Won(agentID string) bool {
	i, ok := g.idx[agentID]
	return ok && g.players[i].won
}

// KnowsRole reports whether viewer may know subject's role: its own, a dead
// player's uncleaned role, a revealed Mayor, a fellow Mafia member, one the
// viewer learned at night, or anyone's once the game is over.
func (g *Game) KnowsRole(viewer, subject string) bool {
	vi, ok1 := g.idx[viewer]
	si, ok2 := g.idx[subject]
	if !ok1 || !ok2 {
		return false
	}
	v, s := g.players[vi], g.players[si]
	switch {
	case vi == si, g.phase == PhaseOver, !s.alive && !s.cleaned, s.revealed, s.revived, v.faction() == Mafia && s.faction() == Mafia,
		v.role == Vampire && s.role == Vampire:
		return true
	}
	_, learned := v.learned[si]
	return learned
}

// metricNames are the metrics a scenario's objective may name.
var metricNames = []string{"roles.game_over", "roles.won", "roles.alive", "roles.days"}

// MetricNames lists the metrics the component defines.
func (g *Game) MetricNames() []string { return slices.Clone(metricNames) }

// Metric implements world.MetricSource: roles.game_over is 1 once the game has
// ended with a winner (a draw counts), roles.won 1 for a winner, roles.alive 1
// while alive, roles.days the day number.
func (g *Game) Metric(_ *world.World, agentID, name string) (float64, bool) {
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	switch name {
	case "roles.game_over":
		return b(g.Over()), true
	case "roles.won":
		return b(g.Won(agentID)), true
	case "roles.alive":
		return b(g.Alive(agentID)), true
	case "roles.days":
		return float64(g.day), true
	}
	return 0, false
}

// Hash implements world.Component.
func (g *Game) Hash(h *world.Hasher) {
	h.String(g.phase)
	h.Int(g.phaseSeq)
	h.Int(g.left)
	h.Int(g.day)
	h.Int(g.trials)
	h.Int(g.defendant)
	h.Int(g.pending)
	h.String(g.winner)
	h.Int(g.prisoner)
	h.Int(g.vampSeq)
	for _, p := range g.players {
		h.String(p.id)
		h.String(p.role)
		h.Bool(p.alive)
		h.String(p.will)
		h.Bool(p.cleaned)
		h.Bool(p.forged)
		h.Bool(p.revealed)
		h.Bool(p.revived)
		h.Bool(p.won)
		h.Int(p.bullets + 10*p.vests + 100*p.cleans + 1000*p.forges + 10000*p.selfHeals)
		h.Int(p.alerts + 10*p.executions + 100*p.revives + 1000*p.silenced)
		h.Bool(p.barrier)
		h.Bool(p.doused)
		h.Bool(p.guilt)
		h.Bool(p.seanceUsed)
		h.Int(p.seance)
		h.Int(p.vampAge)
		h.Int(p.hauntNight)
		h.Int(len(p.haunt))
		h.Int(p.target)
		h.Int(len(p.results))
		h.Int(len(p.knowledge))
	}
	for i := range g.players {
		if t, ok := g.noms[i]; ok {
			h.Int(t + 1)
		} else {
			h.Int(0)
		}
		h.String(g.votes[i])
		if a := g.acts[i]; a != nil {
			h.Int(a.target)
			h.Int(a.target2)
			h.String(a.text)
		} else {
			h.Int(-2)
		}
	}
	h.Int(len(g.chat))
	for _, c := range g.chat {
		h.String(c.From)
		h.String(c.Text)
	}
}
