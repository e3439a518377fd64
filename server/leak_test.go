package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/components/roles"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/server"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

// The leak test: adversarial agents play whole role games over the real
// wire, record everything each one receives, and a checker independent of
// the game's own secrecy code asserts that nothing reveals another player's
// role, will, night action or faction chat before the rules allow it.
//
// Each agent plays the built-in roles_player, and on the phases' last ticks
// tries what an adversary would: send_message to everyone at night (as the
// Mafia, as a Town member, as the dead), words for one player by day, a
// spectator's hello without a token, check_will on everyone. Everything
// they write carries a canary (WILL-agent_003, NIGHT-agent_003-12, ...) so
// that the checker knows whose words may reach whom.

// heard is one message an agent received, at the tick of its latest
// observation.
type heard struct {
	tick int
	kind string // the message type, or "result:TOOL" for a query's answer
	body any    // decoded CBOR: maps are map[any]any
}

// transcript is everything one agent received, and what it learned of
// itself: its role at every tick.
type transcript struct {
	id   string
	mu   sync.Mutex // a spectator's frames arrive on their own goroutine
	msgs []heard
	role map[int]string // tick → own role, from its own observations
	dead map[int]bool   // tick → whether it was dead in the game
}

// leakGame plays one role game with n adversarial agents over a Unix socket.
type leakGame struct {
	seed, secret uint64
	n            int
	// plant, when set, runs the server with open spectators and has every
	// agent also watch as one: a planted leak the checker must catch.
	plant bool
}

func (lg leakGame) play(t *testing.T) (map[string]*transcript, *engine.Results, server.Options) {
	t.Helper()
	sc, err := scenarios.Load("role_game")
	require.NoError(t, err)
	opt := server.Options{Scenario: sc, Seed: lg.seed, SecretSeed: lg.secret, Agents: lg.n, DecisionTimeout: 20 * time.Second,
		OpenSpectators: lg.plant}
	srv, err := server.New(opt)
	require.NoError(t, err)
	addr, l := listen(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	served := make(chan []*engine.Results, 1)
	go func() {
		all, err := srv.Serve(ctx, l)
		if err != nil {
			t.Error(err)
		}
		served <- all
	}()
	ids := sc.AgentIDs(lg.n)
	out := map[string]*transcript{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr, err := adversary(ctx, addr, id, lg.seed+uint64(i), lg.plant)
			if err != nil {
				t.Errorf("%s: %v", id, err)
				cancel() // the game cannot go on: stop the server now
			}
			mu.Lock()
			out[id] = tr
			mu.Unlock()
		}()
	}
	wg.Wait()
	all := <-served
	if t.Failed() {
		t.FailNow()
	}
	require.Len(t, all, 1)
	opt.Seed, opt.SecretSeed = srv.Seeds()
	return out, all[0], opt
}

// wireConn is a protocol client that decodes to generic values.
type wireConn struct {
	nc  interface{ Close() error }
	raw func() ([]byte, error)
	put func(v any) error
}

func connect(ctx context.Context, addr string) (*wireConn, error) {
	nc, err := ipc.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	return &wireConn{nc: nc,
		raw: func() ([]byte, error) {
			nc.SetReadDeadline(time.Now().Add(30 * time.Second))
			return ipc.ReadFrame(nc, ipc.DefaultMaxFrame, nil)
		},
		put: func(v any) error {
			b, err := cbor.Marshal(v)
			if err != nil {
				return err
			}
			return ipc.WriteFrame(nc, b)
		}}, nil
}

func (c *wireConn) next() (map[string]any, []byte, error) {
	f, err := c.raw()
	if err != nil {
		return nil, nil, err
	}
	var m map[string]any
	if err := cbor.Unmarshal(f, &m); err != nil {
		return nil, nil, err
	}
	return m, append([]byte(nil), f...), nil
}

// adversary plays agent id to the end of the episode and returns what it
// received.
func adversary(ctx context.Context, addr, id string, seed uint64, spectate bool) (_ *transcript, err error) {
	tr := &transcript{id: id, role: map[int]string{}, dead: map[int]bool{}}
	// A spectator's hello without a token, beside the agent's own session:
	// refused (the server answers failed hellos more and more slowly),
	// unless the leak is planted; then its frames are the agent's reading.
	probed := make(chan error, 1)
	spec, err := connect(ctx, addr)
	if err != nil {
		return tr, err
	}
	defer spec.nc.Close()
	go func() { probed <- probe(spec, tr, spectate) }()
	defer func() {
		if spectate {
			// Its frames go on to the end of the game: stop reading them,
			// and wait until the probe has stopped writing to tr.
			spec.nc.Close()
			<-probed
			return
		}
		if perr := <-probed; err == nil {
			err = perr
		}
	}()
	c, err := connect(ctx, addr)
	if err != nil {
		return tr, err
	}
	defer c.nc.Close()
	if err := c.put(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "agent": id}); err != nil {
		return tr, err
	}
	bot, err := bots.New("roles_player", bots.Info{AgentID: id, Seed: seed})
	if err != nil {
		return tr, err
	}
	rng := rand.New(rand.NewPCG(seed, 3))
	tick, queryID := -1, 0
	pending := map[string]string{} // query id → tool
	var roster ipc.Roster          // the observations' agent_ids, as the SDKs keep it
	for {
		m, raw, err := c.next()
		if err != nil {
			return tr, err
		}
		typ, _ := m["type"].(string)
		kind := typ
		if typ == "result" {
			qid := fmt.Sprint(m["id"])
			kind = "result:" + pending[qid]
		}
		at := tr.add(tick, kind, m)
		switch typ {
		case "ping":
			if err := c.put(map[string]any{"type": "pong", "id": m["id"]}); err != nil {
				return tr, err
			}
		case "episode_end":
			// It carries the final observation: what it says is of its tick.
			var msg ipc.EpisodeEnd
			if err := cbor.Unmarshal(raw, &msg); err != nil {
				return tr, err
			}
			tr.setTick(at, msg.Tick)
			if obs := msg.Observation; obs != nil {
				you, _ := obs.Components["roles"]["you"].(map[any]any)
				role, _ := you["role"].(string)
				alive, _ := you["alive"].(bool)
				tr.role[msg.Tick], tr.dead[msg.Tick] = role, !alive
			}
			return tr, nil
		case "welcome", "episode_start":
			var msg ipc.EpisodeStart
			if err := cbor.Unmarshal(raw, &msg); err != nil {
				return tr, err
			}
			roster.Reset(msg.AgentIDs)
		case "observation":
			var msg ipc.ObservationMsg
			if err := cbor.Unmarshal(raw, &msg); err != nil {
				return tr, err
			}
			obs := msg.Observation
			roster.Observe(obs, msg.AgentsLeft)
			tick = msg.Tick
			tr.setTick(at, tick)
			sec := obs.Components["roles"]
			you, _ := sec["you"].(map[any]any)
			role, _ := you["role"].(string)
			alive, _ := you["alive"].(bool)
			tr.role[tick], tr.dead[tick] = role, !alive
			// Free queries: read someone's will.
			players, _ := sec["players"].([]any)
			if len(players) > 0 {
				p, _ := players[rng.IntN(len(players))].(map[any]any)
				queryID++
				pending[fmt.Sprint(queryID)] = "check_will"
				if err := c.put(map[string]any{"type": "query", "id": queryID, "tool": "check_will", "params": map[string]any{"player": p["id"]}}); err != nil {
					return tr, err
				}
			}
			d := adversarialMove(obs, sec, tick, rng)
			if d == nil {
				dd := bot.Decide(ctx, obs)
				d = &dd
			}
			if err := c.put(map[string]any{"type": "decision", "tick": tick, "tool": d.Tool, "params": d.Params}); err != nil {
				return tr, err
			}
		}
	}
}

// probe says hello as a spectator without a token; without spectate it
// must be refused: UNAUTHORIZED, or, as the server answers failed hellos
// more and more slowly, the connection closed at the end of the game before
// the answer, never a welcome or a frame. With spectate, every frame is
// recorded.
func probe(spec *wireConn, tr *transcript, spectate bool) error {
	if err := spec.put(map[string]any{"type": "hello", "protocol": 1, "role": "spectator"}); err != nil {
		return err
	}
	for {
		m, _, err := spec.next()
		if err != nil {
			return nil // closed without a welcome or a frame (or, planted, at the end)
		}
		switch {
		case m["type"] == "ping":
			if err := spec.put(map[string]any{"type": "pong", "id": m["id"]}); err != nil {
				return err
			}
		case spectate:
			if m["type"] == "frame" {
				tr.addSpectated(m)
			}
		case m["type"] == "error" && m["code"] == ipc.CodeUnauthorized:
			return nil
		default:
			return fmt.Errorf("a spectator without a token got %v", m)
		}
	}
}

// adversarialMove is what the adversary does instead of the bot's move, or
// nil to let the bot play.
func adversarialMove(obs *world.Observation, sec world.Section, tick int, rng *rand.Rand) *world.Decision {
	id := obs.AgentID
	phase, _ := sec["phase"].(string)
	left := num(sec["ticks_left"])
	you, _ := sec["you"].(map[any]any)
	alive, _ := you["alive"].(bool)
	will, _ := you["will"].(string)
	send := func(to, text string) *world.Decision {
		return &world.Decision{Tool: "send_message", Params: map[string]any{"target_agent": to, "message": text}}
	}
	others := slices.DeleteFunc(slices.Clone(obs.AgentIDs), func(s string) bool { return s == id })
	switch {
	case phase == roles.PhaseOver:
		return nil
	case alive && !strings.Contains(will, "WILL-"+id):
		return &world.Decision{Tool: "write_will", Params: map[string]any{"text": fmt.Sprintf("WILL-%s is my will", id)}}
	case !alive:
		if tick%2 == 0 {
			return &world.Decision{Tool: "speak", Params: map[string]any{"text": fmt.Sprintf("DEAD-%s-%d", id, tick)}}
		}
		return send("all", fmt.Sprintf("DEAD-%s-%d", id, tick))
	case phase == roles.PhaseNight && left <= 1:
		if (num(sec["day"])+num(you["number"]))%2 == 0 {
			return send("all", fmt.Sprintf("NIGHT-%s-%d", id, tick))
		}
		return &world.Decision{Tool: "speak", Params: map[string]any{"text": fmt.Sprintf("NIGHT-%s-%d", id, tick)}}
	case phase == roles.PhaseDiscussion && left <= 1 && len(others) > 0:
		return send(others[rng.IntN(len(others))], fmt.Sprintf("DM-%s-%d", id, tick))
	}
	return nil
}

// num reads a decoded CBOR integer.
func num(v any) int64 {
	switch x := v.(type) {
	case uint64:
		return int64(x)
	case int64:
		return x
	}
	return 0
}

func (tr *transcript) add(tick int, kind string, body any) int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.msgs = append(tr.msgs, heard{tick: tick, kind: kind, body: body})
	return len(tr.msgs) - 1
}

func (tr *transcript) setTick(i, tick int) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.msgs[i].tick = tick
}

func (tr *transcript) addSpectated(m map[string]any) {
	tick := -1
	if t, ok := m["tick"].(uint64); ok {
		tick = int(t)
	}
	tr.add(tick, "frame", m)
}

// truth is the game as the players lived it, assembled from every
// transcript: each player's role at each tick, deaths, reveals, the end.
type truth struct {
	ids        []string
	role       map[string]map[int]string
	firstRole  map[string]string
	deadAt     map[string]int    // tick a death was announced
	shownRole  map[string]string // the role a death announced ("" if cleaned)
	revealedAt map[string]int    // a Mayor's reveal
	overAt     int
}

func assemble(trs map[string]*transcript) *truth {
	tt := &truth{role: map[string]map[int]string{}, firstRole: map[string]string{}, deadAt: map[string]int{},
		shownRole: map[string]string{}, revealedAt: map[string]int{}, overAt: 1 << 30}
	for id, tr := range trs {
		tt.ids = append(tt.ids, id)
		tt.role[id] = tr.role
		first := 1 << 30
		for tick, r := range tr.role {
			if tick < first {
				first, tt.firstRole[id] = tick, r
			}
		}
		for _, m := range tr.msgs {
			if m.kind != "observation" && m.kind != "episode_end" { // episode_end: the final observation
				continue
			}
			for _, e := range eventsOf(m.body) {
				switch e["type"] {
				case "death":
					p, _ := e["agent"].(string)
					if _, ok := tt.deadAt[p]; !ok || m.tick < tt.deadAt[p] {
						tt.deadAt[p] = m.tick
						data, _ := e["data"].(map[any]any)
						r, _ := data["role"].(string)
						tt.shownRole[p] = r
					}
				case "reveal":
					p, _ := e["agent"].(string)
					if _, ok := tt.revealedAt[p]; !ok || m.tick < tt.revealedAt[p] {
						tt.revealedAt[p] = m.tick
					}
				case "game_over":
					tt.overAt = min(tt.overAt, m.tick)
				}
			}
		}
	}
	slices.Sort(tt.ids)
	return tt
}

func eventsOf(body any) []map[any]any {
	obs, _ := sections(body)
	return mapsIn(obs["events"])
}

// sections are a message's observation and its role game section (empty
// maps when it has none).
func sections(body any) (obs, roles map[any]any) {
	m, _ := body.(map[string]any)
	obs, _ = m["observation"].(map[any]any)
	comps, _ := obs["components"].(map[any]any)
	roles, _ = comps["roles"].(map[any]any)
	return obs, roles
}

// mapsIn is the maps of a decoded CBOR array.
func mapsIn(list any) []map[any]any {
	l, _ := list.([]any)
	var out []map[any]any
	for _, e := range l {
		if m, ok := e.(map[any]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// roleAt is x's role at tick (its latest known role at or before it).
func (tt *truth) roleAt(x string, tick int) string {
	best, r := -1, tt.firstRole[x]
	for t, role := range tt.role[x] {
		if t <= tick && t > best {
			best, r = t, role
		}
	}
	return r
}

func factionOf(role string) string {
	if c, ok := roles.Lookup(role); ok {
		if role == "Vampire" {
			return "Vampire"
		}
		return c.Faction
	}
	return ""
}

// mayKnow says whether viewer may know subject's role at tick: its own, a
// death announced it, a revealed Mayor, a fellow member of the Mafia (or of
// the Vampires), the end of the game, or a private result of the viewer's
// own naming the subject (learned holds those).
func (tt *truth) mayKnow(viewer, subject string, tick int, learned map[string]int) bool {
	if viewer == subject || tick >= tt.overAt {
		return true
	}
	if d, ok := tt.deadAt[subject]; ok && d <= tick && tt.shownRole[subject] != "" {
		return true
	}
	if r, ok := tt.revealedAt[subject]; ok && r <= tick {
		return true
	}
	vf, sf := factionOf(tt.roleAt(viewer, tick)), factionOf(tt.roleAt(subject, tick))
	if (vf == roles.Mafia || vf == "Vampire") && vf == sf {
		return true
	}
	if l, ok := learned[subject]; ok && l <= tick {
		return true
	}
	return false
}

// leak is one thing an agent received that it may not know.
type leak struct {
	agent string
	tick  int
	kind  string
	what  string
}

func (l leak) String() string {
	return fmt.Sprintf("%s at tick %d (%s): %s", l.agent, l.tick, l.kind, l.what)
}

var (
	// speech is a line a player wrote (a claim is the player's, not a leak).
	speech   = regexp.MustCompile(`^\s*(\[[A-Za-z]+\] )?(agent_\d+|Player \d+)( whispers to you)?: `)
	canaryRe = regexp.MustCompile(`\b(WILL|NIGHT|DEAD|DM)-(agent_\d+)(-(\d+))?`)
	sentence = regexp.MustCompile(`[.!?;\n]+\s*`)
)

// check runs every rule over every transcript and returns the leaks.
func check(trs map[string]*transcript) []leak {
	tt := assemble(trs)
	var leaks []leak
	names := roleNames()
	for _, b := range tt.ids {
		tr := trs[b]
		learned := map[string]int{} // subject → tick the viewer's own result named it
		willShown := map[string]int{}
		for _, m := range tr.msgs {
			// The viewer's own private results: they name whom they concern.
			own, said, channels := map[string]bool{}, speechOf(m.body), channelsOf(m.body)
			// A will is shown once per death, in its announcement: the
			// same announcement in two observations is a will kept.
			announced := map[string]bool{}
			for _, e := range eventsOf(m.body) {
				p, _ := e["agent"].(string)
				text, _ := e["text"].(string)
				if e["type"] != "death" || !strings.Contains(text, "WILL-"+p) {
					continue
				}
				announced["WILL-"+p] = true
				key := fmt.Sprintf("%s@%d", p, num(e["tick"]))
				if first, ok := willShown[key]; ok && first != m.tick {
					leaks = append(leaks, leak{b, m.tick, m.kind, fmt.Sprintf("%s's will shown again (first at tick %d)", p, first)})
				}
				willShown[key] = m.tick
			}
			for _, s := range privateTexts(m.body) {
				own[s] = true
				for _, x := range tt.ids {
					if x != b && namesPlayer(s, x) {
						if _, ok := learned[x]; !ok {
							learned[x] = m.tick
						}
					}
				}
			}
			walkStrings(m.body, nil, func(path []string, s string) {
				for _, line := range strings.Split(s, "\n") {
					if strings.HasPrefix(line, "  [check_will ") && len(path) > 1 && path[len(path)-2] == "roles" {
						continue // the section's rendering of the viewer's check_will answers
					}
					for _, c := range canaryRe.FindAllStringSubmatch(line, -1) {
						if l := tt.canary(b, m, path, c, announced, channels); l != "" {
							leaks = append(leaks, leak{b, m.tick, m.kind, l})
						}
					}
				}
				if own[s] || said[s] || isKnowledge(path) || m.kind == "welcome" && slices.Contains(path, "tools") {
					return // the viewer's own results and query answers; players' words
				}
				for _, line := range strings.Split(s, "\n") {
					if speech.MatchString(line) {
						line = "" // a player's words: checked by canaries below
					}
					for _, sent := range sentence.Split(line, -1) {
						for _, x := range tt.ids {
							if x == b || !namesPlayer(sent, x) || tt.mayKnow(b, x, m.tick, learned) {
								continue
							}
							for _, r := range []string{tt.roleAt(x, m.tick), tt.firstRole[x]} {
								if r != "" && names[r].MatchString(sent) {
									leaks = append(leaks, leak{b, m.tick, m.kind, fmt.Sprintf("%s's role %s in %q", x, r, sent)})
								}
							}
						}
					}
				}
			})
		}
	}
	return leaks
}

// canary rules on one canary in what b received: who wrote it and when
// say who may read it.
func (tt *truth) canary(b string, m heard, path []string, c []string, announced map[string]bool, channels map[string]string) string {
	kind, author := c[1], c[2]
	if author == b {
		return ""
	}
	at := -1
	if c[4] != "" {
		fmt.Sscan(c[4], &at)
	}
	deadB := func(tick int) bool { d, ok := tt.deadAt[b]; return ok && d <= tick }
	switch kind {
	case "WILL":
		d, dead := tt.deadAt[author]
		switch {
		case !dead || d > m.tick:
			return fmt.Sprintf("%s's will before their death", author)
		case tt.shownRole[author] == "" && m.tick < tt.overAt:
			return fmt.Sprintf("%s's will, cleaned", author)
		case isKnowledge(path) || m.kind == "result:check_will":
			// read with check_will: the seed's way to see it again
		case slices.Contains(path, "events") && (m.kind == "observation" || m.kind == "episode_end"):
			if !announced[c[0]] {
				return fmt.Sprintf("%s's will in an event that is not their death's announcement", author)
			}
		default:
			return fmt.Sprintf("%s's will kept after the death announcement (%v)", author, path)
		}
	case "NIGHT", "DEAD":
		// Words at night, and the dead's, reach only the channel the rules
		// give: the speaker's faction (Mafia, Vampires), the jail (one side
		// the Jailor), a seance (one side a dead Medium), the dead (and a
		// Medium). Where the words travelled is read off the message itself.
		ar, br := tt.roleAt(author, at), tt.roleAt(b, at)
		deadA := func() bool { d, ok := tt.deadAt[author]; return ok && d <= at }
		ch := channels[c[0]]
		ok := false
		switch ch {
		case "mafia":
			ok = factionOf(ar) == roles.Mafia && factionOf(br) == roles.Mafia && !deadB(at)
		case "vampire":
			ok = ar == "Vampire" && br == "Vampire" && !deadB(at)
		case "jail":
			ok = ar == "Jailor" || br == "Jailor"
		case "seance":
			ok = ar == "Medium" || br == "Medium"
		case "dead":
			ok = (deadA() || ar == "Medium") && (deadB(at+1) || br == "Medium")
		case "message": // send_message: the guard's audience is speak's
			ok = factionOf(ar) == roles.Mafia && factionOf(br) == roles.Mafia && !deadB(at) ||
				ar == "Vampire" && br == "Vampire" && !deadB(at) ||
				(deadA() || ar == "Medium") && (deadB(at+1) || br == "Medium")
		}
		if !ok {
			return fmt.Sprintf("%s's words (%s, %s) reached %s (%s) on channel %q", author, kind, ar, b, br, ch)
		}
	case "DM":
		return fmt.Sprintf("%s's message for one player by day reached %s without a whisper", author, b)
	}
	return ""
}

func roleNames() map[string]*regexp.Regexp {
	out := map[string]*regexp.Regexp{}
	for _, c := range roles.Cards() {
		out[c.Name] = regexp.MustCompile(`\b` + regexp.QuoteMeta(c.Name) + `\b`)
	}
	return out
}

func namesPlayer(s, id string) bool {
	if !strings.Contains(s, id) {
		return false
	}
	i := strings.Index(s, id) + len(id)
	return i >= len(s) || s[i] < '0' || s[i] > '9'
}

// privateTexts are the viewer's own results in a message: its night results
// and the private events addressed to it.
func privateTexts(body any) []string {
	var out []string
	_, sec := sections(body)
	for _, r := range mapsIn(sec["night_results"]) {
		if s, ok := r["text"].(string); ok {
			out = append(out, s)
		}
	}
	for _, e := range eventsOf(body) {
		if s, ok := e["text"].(string); ok && e["type"] == "private" {
			out = append(out, s)
		}
	}
	return out
}

// speechOf is what players wrote in a message: chat lines not the
// Narrator's, and world messages. A claim is a player's, not a leak.
func speechOf(body any) map[string]bool {
	out := map[string]bool{}
	obs, sec := sections(body)
	for _, c := range mapsIn(sec["chat"]) {
		if s, ok := c["text"].(string); ok && c["from"] != "Narrator" {
			out[s] = true
		}
	}
	for _, c := range mapsIn(obs["messages"]) {
		if s, ok := c["content"].(string); ok {
			out[s] = true
		}
	}
	return out
}

// channelsOf maps each canary in a message's chat lines, speak events and
// world messages to the channel it came by ("message" for send_message).
func channelsOf(body any) map[string]string {
	out := map[string]string{}
	note := func(s any, ch string) {
		if str, ok := s.(string); ok {
			for _, c := range canaryRe.FindAllString(str, -1) {
				out[c] = ch
			}
		}
	}
	obs, sec := sections(body)
	for _, c := range mapsIn(sec["chat"]) {
		note(c["text"], fmt.Sprint(c["channel"]))
	}
	for _, e := range eventsOf(body) {
		data, _ := e["data"].(map[any]any)
		if ch, ok := data["channel"].(string); ok {
			note(e["text"], ch)
			note(data["text"], ch)
		}
	}
	for _, c := range mapsIn(obs["messages"]) {
		note(c["content"], "message")
	}
	return out
}

// isKnowledge says a string is the viewer's own query answers.
func isKnowledge(path []string) bool {
	return slices.Contains(path, "knowledge") || slices.Contains(path, "last_action_result") || slices.Contains(path, "data") && len(path) > 0 && path[0] == "data"
}

// walkStrings calls fn for every string in a decoded CBOR value, with the
// map keys on its path. A role game section's text rendering repeats its
// fields: its own results are cut out of it by the caller.
func walkStrings(v any, path []string, fn func(path []string, s string)) {
	switch x := v.(type) {
	case string:
		fn(path, x)
	case map[string]any:
		for k, e := range x {
			walkStrings(e, append(path, k), fn)
		}
	case map[any]any:
		for k, e := range x {
			walkStrings(e, append(path, fmt.Sprint(k)), fn)
		}
	case []any:
		for _, e := range x {
			walkStrings(e, path, fn)
		}
	}
}

func TestNoSecretLeaksOverTheWire(t *testing.T) {
	games, want := 0, uint64(12)
	if raceDetector {
		want = 3
	}
	for seed := uint64(1); seed <= want; seed++ {
		n := 7 + int(seed)%9 // 7 to 15 players
		t.Run(fmt.Sprintf("seed%d_%dplayers", seed, n), func(t *testing.T) {
			trs, res, opt := leakGame{seed: seed, secret: seed * 7919, n: n}.play(t)
			require.Equal(t, "objective_met", res.Outcome, "the game finished")
			leaks := check(trs)
			require.Empty(t, leaks, "%d leaks; the first: %v", len(leaks), first(leaks))
			// The seed an agent gets is its own: not the world's, not the
			// secret one, and re-running the world from it deals other roles.
			for id, tr := range trs {
				w := tr.msgs[0].body.(map[string]any)
				require.Equal(t, "welcome", w["type"])
				got := w["seed"].(uint64)
				require.NotEqual(t, opt.Seed, got, id)
				require.NotEqual(t, opt.SecretSeed, got, id)
				require.Equal(t, engine.AgentSeed(opt.Seed, id), got)
				require.NotEmpty(t, w["episode_id"])
			}
			requireDealNotDerivable(t, trs, opt)
			// The guard said no, with a reason, to what the rules forbid.
			refused := refusals(trs)
			require.Positive(t, refused["It is night"], "send_message at night by a player who may not speak: %v", refused)
			require.Positive(t, refused["whisper"], "send_message for one player by day: %v", refused)
			games++
		})
	}
	require.Equal(t, int(want), games)
}

// requireDealNotDerivable re-runs the scenario from every seed an agent
// received (an agent could do it) and checks none deals the game's roles.
func requireDealNotDerivable(t *testing.T, trs map[string]*transcript, opt server.Options) {
	t.Helper()
	sc, err := scenarios.Load("role_game")
	require.NoError(t, err)
	tt := assemble(trs)
	for id, tr := range trs {
		seed := tr.msgs[0].body.(map[string]any)["seed"].(uint64)
		for _, s := range []uint64{seed, opt.Seed} { // the world's public seed too
			w, err := sc.NewWorld(scenarios.Options{Seed: s, Agents: len(trs)})
			require.NoError(t, err)
			g := w.Components()[0].(*roles.Game)
			same := 0
			for _, x := range tt.ids {
				if g.Role(x) == tt.firstRole[x] {
					same++
				}
			}
			require.Less(t, same, len(tt.ids), "%s: the seed %d it can see deals the game's roles", id, s)
		}
	}
}

// refusals counts the send_message refusals (NOT_ALLOWED) the agents were
// told of, by a key phrase of their message.
func refusals(trs map[string]*transcript) map[string]int {
	out := map[string]int{}
	for _, tr := range trs {
		for _, m := range tr.msgs {
			body, _ := m.body.(map[string]any)
			obs, _ := body["observation"].(map[any]any)
			r, _ := obs["last_action_result"].(map[any]any)
			if r["tool"] != "send_message" || r["error_code"] != "NOT_ALLOWED" {
				continue
			}
			msg, _ := r["error_message"].(string)
			for _, key := range []string{"It is night", "whisper"} {
				if strings.Contains(msg, key) {
					out[key]++
				}
			}
		}
	}
	return out
}

func first(l []leak) string {
	if len(l) == 0 {
		return ""
	}
	return l[0].String()
}

// The checker must be able to fail: with spectators open (the explicit
// opt-out) an agent that also connects as a spectator reads every role from
// the panels, and the checker says so; a leak planted into a clean
// transcript is caught too.
func TestLeakCheckCatchesPlantedLeaks(t *testing.T) {
	trs, _, _ := leakGame{seed: 3, secret: 11, n: 9, plant: true}.play(t)
	leaks := check(trs)
	require.NotEmpty(t, leaks, "open spectators reveal every role: the checker must see it")
	require.Contains(t, first(leaks), "frame")

	trs, _, _ = leakGame{seed: 3, secret: 11, n: 9}.play(t)
	require.Empty(t, check(trs))
	tt := assemble(trs)
	// Plant: a Narrator line naming a living player's role, in a public
	// chat line of another player's first observation.
	var victim, viewer string
	for _, x := range tt.ids {
		if d, dead := tt.deadAt[x]; (!dead || d > 0) && factionOf(tt.firstRole[x]) == roles.Town { // alive at the first observation
			victim = x
		}
	}
	for _, x := range tt.ids {
		if x != victim && factionOf(tt.firstRole[x]) == roles.Town {
			viewer = x
		}
	}
	require.NotEmpty(t, victim)
	require.NotEmpty(t, viewer)
	plant := func(s string) {
		tr := trs[viewer]
		for i, m := range tr.msgs {
			if m.kind == "observation" {
				tr.msgs = slices.Insert(tr.msgs, i, heard{tick: m.tick, kind: "observation",
					body: map[string]any{"observation": map[any]any{"components": map[any]any{"roles": map[any]any{"chat": []any{
						map[any]any{"from": "Narrator", "text": s}}}}}}})
				return
			}
		}
	}
	plant(fmt.Sprintf("Everyone knows that %s is the %s.", victim, tt.firstRole[victim]))
	require.NotEmpty(t, check(trs), "a role named in a public line")
	trs[viewer].msgs = trs[viewer].msgs[1:]
	plant(fmt.Sprintf("WILL-%s is my will", victim))
	require.NotEmpty(t, check(trs), "a living player's will")
}

// Finding 4 of the secrecy issue, over the wire: every role an investigation
// can name is a role of the game's data store, in a group of three, so a
// result never names exactly one role; and the Coven table, whose roles the
// game lacks, is refused.
func TestInvestigationResultsNameOnlyRealRoles(t *testing.T) {
	sc, err := scenarios.Load("role_game")
	require.NoError(t, err)
	addr, _, _ := startScenario(t, sc, server.Options{Seed: 1, Bots: 8, DecisionTimeout: 20 * time.Second})
	c := dial(t, addr)
	c.helloAgent("", "")
	// Queries are limited per observation: answer each observation after a
	// few, and go on with the next one.
	tick, used := -1, 0
	next := func() {
		if tick >= 0 {
			c.send(map[string]any{"type": "decision", "tick": tick, "tool": "do_nothing"})
		}
		for {
			m, _ := c.recv()
			if m["type"] == "observation" {
				tick, used = int(num(m["tick"])), 0
				return
			}
		}
	}
	next()
	ask := func(id int, tool string, params map[string]any) map[string]any {
		if used == 5 {
			next()
		}
		used++
		c.send(map[string]any{"type": "query", "id": id, "tool": tool, "params": params})
		for {
			m, _ := c.recv()
			if m["type"] == "result" && num(m["id"]) == int64(id) {
				return m
			}
		}
	}
	res := ask(1, "get_investigation_results", map[string]any{})
	require.Equal(t, true, res["success"], "%v", res)
	data := res["data"].(map[any]any)
	groups := data["groups"].([]any)
	require.Len(t, groups, 11)
	seen := map[string]bool{}
	for i, g := range groups {
		names := g.([]any)
		require.Len(t, names, 3, "group %d: %v", i+1, names)
		for _, n := range names {
			name := n.(string)
			require.False(t, seen[name], "%s is in two groups", name)
			seen[name] = true
			r := ask(100+len(seen), "get_role_details", map[string]any{"role": name})
			require.Equal(t, true, r["success"], "%s is named by investigations but is not in the data store: %v", name, r)
		}
	}
	require.Len(t, seen, len(roles.Cards()), "every role of the store is in exactly one group")

	_, err = roles.New([]byte(`{"investigator": "coven"}`))
	require.ErrorContains(t, err, "coven")
}
