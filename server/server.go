// Package server owns `arena serve`: the agent slots of a scenario and their
// tokens, the sessions of connected agents and spectators, and the loop that
// runs an episode for them in lockstep or in real time. The loop is the
// engine's Runner; this package plugs in as its Gatherer, on the world's own
// goroutine, while the ipc package's goroutines only move messages.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/rlarrays"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// Options configure a server. Zero fields take the defaults in brackets.
type Options struct {
	Scenario *scenarios.Scenario
	// Seed seeds what agents may see (the world's layout, the bots); the
	// episode's agents never receive it [fresh, engine.FreshSeed].
	Seed uint64
	// SecretSeed seeds hidden information (a role deal), never derivable
	// from anything an agent receives: keep it to reproduce a game exactly
	// [fresh, drawn anew by every server, even with a Seed].
	SecretSeed uint64
	Agents     int // agent slots [the scenario's count]
	// Bots gives the last Bots slots to the scenario's built-in bot.
	Bots int
	Mode string // "lockstep" or "realtime" ["lockstep"]
	// TickRate overrides the scenario's tick rate in realtime mode.
	TickRate float64
	// DecisionTimeout is how long lockstep waits for a decision [5s].
	DecisionTimeout time.Duration
	// StartAfter starts the episode this long after the server starts even if
	// not every slot is connected [0: wait for all].
	StartAfter time.Duration
	// Tokens maps slot ids to tokens; when set, every hello must carry one.
	// The key "spectator" holds the spectators' token; without it, a server
	// with tokens takes no spectators.
	Tokens map[string]string
	// SpectatorToken, when set, is what a spectator's hello must carry (it
	// overrides Tokens["spectator"]). Spectators see every secret, so a
	// server takes none without a token unless OpenSpectators is set.
	SpectatorToken string
	// OpenSpectators lets any client watch as a spectator without a token:
	// for local debugging only, as every hidden role is then public.
	OpenSpectators bool
	Ticks          int // replaces the scenario's time limit when positive
	// Workers is the engine.Runner's Workers: the goroutines that build a
	// tick's observations and plan paths [GOMAXPROCS].
	Workers int
	// Episodes is how many episodes to run, one after the other, each with
	// the seed engine.EpisodeSeed derives from Seed [1].
	Episodes int
	Conn     ipc.ConnOptions
	// MaxConns bounds the connections open at once, sessions of every kind;
	// one more is refused with SERVER_BUSY [DefaultMaxConns, or the agent
	// slots without a bot plus MaxUnauthenticated when that is more]. Fewer
	// than those slots is an error.
	MaxConns int
	// MaxUnauthenticated bounds the connections whose hello has not been
	// accepted yet; one more is refused with SERVER_BUSY
	// [DefaultMaxUnauthenticated]. Such a connection may send frames of at
	// most Conn.MaxHelloFrame bytes and is dropped after Conn.HelloTimeout.
	MaxUnauthenticated int
	// Recorder, when set, journals every episode and keeps its results.
	Recorder engine.Recorder
	// NewBot, when set, builds the agent of each bot slot for each episode
	// instead of the scenario's built-in bot (a language-model agent, say).
	// It runs on the world's goroutine and may keep w and reg to answer its
	// agent's queries in process.
	NewBot func(w *world.World, reg *tools.Registry, agentID string) (bots.Bot, error)
	Log    *slog.Logger
	// Metrics, when set, counts what the server does (see AdminHandler).
	Metrics *Metrics
}

// Connection limits' defaults (see Options).
const (
	DefaultMaxConns           = 4096
	DefaultMaxUnauthenticated = 256
)

type slot struct {
	id, team    string
	bot         bots.Bot
	conn        *ipc.Conn
	token       string
	sentTick    int                // the tick of the last observation sent, -1 before
	obs         *world.Observation // that observation, re-sent on reconnect
	deadline    time.Time          // lockstep: when the world stops waiting for it
	decidedTick int                // the tick of the last decision received, -1 before
	decided     bool
	decision    world.Decision
	queries     int
	toldDead    bool // its last observation, alive:false, was sent
	// The roster (agent_ids) goes to the slot's client whole in welcome and
	// episode_start, then as changes from the roster it is known to hold:
	// the last one it was sent whole, or that of the last observation it
	// answered (sentRoster, when it answers sentTick). fullRoster: its
	// client asked for the whole roster in every observation.
	roster, sentRoster []string
	fullRoster         bool
	// arrays encodes its observations for the connected client, when it
	// asked (observation_arrays); arr is the scratch the encoding goes in.
	arrays *rlarrays.Encoder
	arr    rlarrays.Arrays
	// embed: its observations go as observation_cbor (the client asked
	// for observation_bytes with its layout).
	embed bool
	// awaitingLayout: the client said its layout follows (hello's arrays);
	// its observations are held until it comes.
	awaitingLayout bool
}

// observationMsg is the observation message for the slot's client.
func (sl *slot) observationMsg(tick int, o *world.Observation) ipc.ObservationMsg {
	msg := ipc.ObservationMsg{Type: "observation", Tick: tick, Observation: o, Embed: sl.embed}
	if sl.arrays != nil {
		o.Expand() // the arrays read the lists in view (see Compact)
		sl.arrays.Encode(o, &sl.arr)
		msg.Arrays = &sl.arr
	}
	return msg
}

type session struct {
	conn      *ipc.Conn
	id        string
	slot      *slot // nil for spectators and before hello
	spectator bool
	static    bool   // the spectator has been sent the static entities
	inspect   string // the agent whose observation the spectator's frames carry
	admitted  bool   // its hello was accepted
	pausing   bool   // a spectator that paused (or stepped) the world, until someone resumes it
	refused   bool   // its hello failed authentication: nothing more is handled
}

// Server runs one episode for connected agents.
type Server struct {
	opt      Options
	codec    *ipc.Codec
	w        *world.World
	reg      *tools.Registry
	log      *slog.Logger
	inbox    *ipc.Inbox
	batch    []ipc.Incoming // what was taken from inbox, being handled
	connCtx  context.Context
	accepted chan net.Conn
	// Connections open, and those not admitted yet (no hello accepted),
	// counted up by the accept loops and down by the world's goroutine.
	conns, unauth atomic.Int64
	refusals      chan struct{} // bounds the refusals being written at once
	refusedLog    atomic.Int64  // unix nanoseconds of the last refusal logged
	sessions      map[*ipc.Conn]*session
	authFails     map[string]*authFailures // by host, for failAuth
	slots         map[string]*slot
	order         []*slot
	nextID        int
	started       bool
	episode       int
	// episodeID is the episode's public name: agents get it instead of a seed.
	episodeID string
	tick      int
	// gathering: lockstep is waiting for the decisions of tick. Once it
	// stops, until the next decision point, decisions for tick are late.
	gathering bool
	undecided int // where allDecided resumes
	limit     int
	events    []world.Event          // the last tick's, for frames
	decisions []engine.DecisionEntry // the last tick's, for frames
	runner    *engine.Runner         // the episode's, for inspected observations
	// shared encodes what the observations of a decision point share once
	// for all of them; it is reset when the decision point ends (Gather).
	shared ipc.SharedEncodings
	// obsBatch holds the observations of a run streamed by Observed until
	// they are sent together.
	obsBatch ipc.Batch
	// change is the last roster change computed (see sendObservation).
	change struct {
		from, to, left []string
		grew           bool
	}
	inEpisode bool // episode_start was sent, episode_end not yet

	// Pacing, driven by spectators' control commands and, in real time, the
	// clock: speed multiplies the tick rate (0: as fast as the agents go).
	paused   bool
	steps    int // ticks to run while paused
	speed    float64
	next     time.Time // when the next tick is due
	lastWarn time.Time

	drain     drain     // Drain's state
	status    status    // what the admin endpoints read
	tickStart time.Time // when the tick under way started, for Metrics
}

// New builds the world and the slots.
func New(opt Options) (*Server, error) {
	if opt.Scenario == nil {
		return nil, errors.New("server: no scenario")
	}
	if opt.Mode == "" {
		opt.Mode = "lockstep"
	}
	if opt.Mode != "lockstep" && opt.Mode != "realtime" {
		return nil, fmt.Errorf("server: mode %q is not lockstep or realtime", opt.Mode)
	}
	if opt.DecisionTimeout <= 0 {
		opt.DecisionTimeout = 5 * time.Second
	}
	opt.Episodes = max(opt.Episodes, 1)
	if opt.Seed == 0 {
		opt.Seed = engine.FreshSeed()
	}
	if opt.SecretSeed == 0 {
		opt.SecretSeed = engine.FreshSeed()
	}
	if opt.MaxUnauthenticated <= 0 {
		opt.MaxUnauthenticated = DefaultMaxUnauthenticated
	}
	codec, err := ipc.NewCodec(ipc.Limits{})
	if err != nil {
		return nil, err
	}
	s := &Server{opt: opt, codec: codec, log: opt.Log, inbox: ipc.NewInbox(max(256, opt.Agents+64)),
		accepted: make(chan net.Conn), refusals: make(chan struct{}, 64), sessions: map[*ipc.Conn]*session{}, slots: map[string]*slot{},
		limit: opt.Scenario.ToolCallLimit(), drain: drain{ch: make(chan struct{})}}
	if err := s.newWorld(1); err != nil {
		return nil, err
	}
	w := s.w
	if opt.Mode == "realtime" {
		s.speed = 1
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	agents := w.Agents()
	if opt.Bots < 0 || opt.Bots > len(agents) {
		return nil, fmt.Errorf("server: %d bots for %d slots", opt.Bots, len(agents))
	}
	clients := len(agents) - opt.Bots
	switch {
	case opt.MaxConns <= 0:
		s.opt.MaxConns = max(DefaultMaxConns, clients+opt.MaxUnauthenticated)
	case opt.MaxConns < clients:
		return nil, fmt.Errorf("server: at most %d connections (MaxConns) for %d agent slots without a bot", opt.MaxConns, clients)
	}
	for _, a := range agents {
		sl := &slot{id: a.ID, team: a.Team}
		if opt.Tokens != nil {
			sl.token = opt.Tokens[a.ID]
		}
		s.slots[a.ID] = sl
		s.order = append(s.order, sl)
	}
	for id := range opt.Tokens {
		if s.slots[id] == nil && id != spectatorKey {
			return nil, fmt.Errorf("server: tokens name slot %q, which the scenario does not have", id)
		}
	}
	if err := s.resetSlots(); err != nil {
		return nil, err
	}
	s.publish()
	return s, nil
}

// newWorld builds episode ep's world and tool registry.
func (s *Server) newWorld(ep int) error {
	w, err := s.opt.Scenario.NewWorld(scenarios.Options{Seed: engine.EpisodeSeed(s.opt.Seed, ep),
		SecretSeed: engine.EpisodeSeed(s.opt.SecretSeed, ep), Agents: s.opt.Agents, Ticks: s.opt.Ticks})
	if err != nil {
		return fmt.Errorf("episode %d: %w", ep, err)
	}
	reg, err := tools.ForWorld(w)
	if err != nil {
		return fmt.Errorf("episode %d: %w", ep, err)
	}
	s.w, s.reg, s.episode, s.events, s.decisions, s.runner = w, reg, ep, nil, nil, nil
	s.episodeID = engine.FreshID(8)
	return nil
}

// resetSlots readies the slots for a new episode: nothing sent or decided,
// and fresh built-in bots seeded for it. Connections stay.
func (s *Server) resetSlots() error {
	for i, sl := range s.order {
		*sl = slot{id: sl.id, team: sl.team, conn: sl.conn, token: sl.token, sentTick: -1, decidedTick: -1, fullRoster: sl.fullRoster}
		if i >= len(s.order)-s.opt.Bots {
			var b bots.Bot
			var err error
			if s.opt.NewBot != nil {
				b, err = s.opt.NewBot(s.w, s.reg, sl.id)
			} else {
				b, err = bots.New(s.opt.Scenario.Agents.Bot, bots.Info{AgentID: sl.id, Seed: engine.AgentSeed(s.w.Seed(), sl.id), Bounds: s.w.Bounds(), Rules: s.w.Rules()})
			}
			if err != nil {
				return err
			}
			sl.bot = b
		}
	}
	return nil
}

// Seeds are the run's seeds: the public one and the secret one, for the
// operator's records (episode k uses engine.EpisodeSeed of each).
func (s *Server) Seeds() (seed, secret uint64) { return s.opt.Seed, s.opt.SecretSeed }

// World is the server's world; touch it only from the goroutine running Serve.
func (s *Server) World() *world.World { return s.w }

// Serve accepts connections on the listeners, starts the first episode once
// every remote slot is connected (or StartAfter has passed), runs the
// episodes one after the other and returns their results. Connected sessions
// stay from one episode to the next. Cancelling ctx ends the episode under
// way after its current tick ("stopped"), and no other starts.
func (s *Server) Serve(ctx context.Context, listeners ...net.Listener) ([]*engine.Results, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Connections outlive ctx long enough to be told how the episode ended.
	var stopConns context.CancelFunc
	s.connCtx, stopConns = context.WithCancel(context.WithoutCancel(ctx))
	defer stopConns()
	s.addListeners(listeners)
	for _, l := range listeners {
		go s.acceptLoop(ctx, l)
	}
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	if err := s.waitForStart(ctx); err != nil {
		s.broadcast(ipc.EpisodeEnd{Type: "episode_end", Episode: 1, Reason: "stopped", Final: true})
		s.closeAll()
		return nil, err
	}
	s.started = true
	s.status.started.Store(true)
	var all []*engine.Results
	for ep := 1; ; ep++ {
		if ep > 1 {
			if err := s.newWorld(ep); err != nil {
				s.abort(err)
				return all, err
			}
			if err := s.resetSlots(); err != nil {
				s.abort(err)
				return all, err
			}
		}
		res, err := s.runEpisode(ctx)
		if err != nil {
			s.abort(err)
			return all, err
		}
		all = append(all, res)
		s.countEpisode(res)
		s.inEpisode = false
		final := ep >= s.opt.Episodes || ctx.Err() != nil || s.Draining()
		s.endEpisode(ipc.EpisodeEnd{Type: "episode_end", Episode: ep, Tick: s.w.Tick(), Reason: res.EndReason, Final: final, Results: res.ForAgents()})
		if final {
			break
		}
	}
	s.closeAll()
	return all, nil
}

// runEpisode tells every session the episode starts, runs it, and records it.
func (s *Server) runEpisode(ctx context.Context) (*engine.Results, error) {
	var j *engine.Journal
	if s.opt.Recorder != nil {
		var err error
		if j, err = s.opt.Recorder.Begin(s.episode, s.w); err != nil {
			return nil, err
		}
	}
	s.next, s.tickStart = time.Now(), time.Now()
	if s.opt.Metrics != nil {
		s.opt.Metrics.episode.Set(float64(s.episode))
	}
	for _, sess := range s.sessions {
		sess.static = false
	}
	for c, sess := range s.sessions {
		if sess.slot != nil || sess.spectator {
			c.Send(s.episodeStart(sess.slot))
		}
	}
	s.inEpisode = true
	r := &engine.Runner{World: s.w, Tools: s.reg, Gatherer: s, DecisionPeriod: s.opt.Scenario.Limits.DecisionPeriod,
		Workers: s.opt.Workers, MaxTicks: s.w.Objective().TimeLimit, Journal: j, OnTick: func(rec *engine.TickRecord) {
			s.events, s.decisions = rec.Events, rec.Decisions
			s.observeTick(rec)
			s.afterTick(ctx)
		}}
	s.runner = r
	res, err := r.Run(ctx)
	if res != nil {
		res.Episode, res.EpisodeID = s.episode, s.episodeID
	}
	if s.opt.Recorder != nil {
		if rerr := s.opt.Recorder.End(s.episode, s.w, j, res, err); err == nil {
			err = rerr
		}
	}
	return res, err
}

// episodeStart tells a session (sl: its slot, nil for a spectator) the
// episode has begun. An agent's seed is its own (engine.AgentSeed), never the
// world's. It carries the roster, which the slot's client then holds.
func (s *Server) episodeStart(sl *slot) ipc.EpisodeStart {
	roster := s.w.Roster()
	if sl != nil {
		sl.roster = roster
	}
	return ipc.EpisodeStart{Type: "episode_start", Episode: s.episode, EpisodeID: s.episodeID, Seed: s.agentSeed(sl),
		Tick: s.w.Tick(), Objective: s.w.Objective(), AgentIDs: roster}
}

// sendObservation sends the slot's client an observation (or, when b is not
// nil, adds it to b for b.Send), with the roster as changes from the one the
// client holds unless it asked for the whole roster every time.
func (s *Server) sendObservation(sl *slot, msg ipc.ObservationMsg, b *ipc.Batch) {
	to := msg.Observation.AgentIDs
	if !sl.fullRoster {
		if !sameSlice(s.change.from, sl.roster) || !sameSlice(s.change.to, to) {
			// Computed once for every client that holds the same roster.
			left, grew := ipc.RosterChange(sl.roster, to)
			s.change.from, s.change.to, s.change.left, s.change.grew = sl.roster, to, left, grew
		}
		if !s.change.grew {
			msg.OmitAgentIDs, msg.AgentsLeft = true, s.change.left
		}
	}
	sl.sentRoster = to
	if b != nil {
		b.AddObservation(sl.conn, &msg)
	} else {
		sl.conn.SendLatest(msg)
	}
}

// sameSlice reports whether a and b are the same slice (the world's roster
// is replaced, never modified, when it changes).
func sameSlice(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// agentSeed is the seed a session is told: its agent's own, or none for a
// spectator.
func (s *Server) agentSeed(sl *slot) uint64 {
	if sl == nil {
		return 0
	}
	return engine.AgentSeed(s.w.Seed(), sl.id)
}

// broadcast sends msg to every agent and spectator session.
// endEpisode sends end to every session, with, to each agent's, its
// observation after the last tick.
func (s *Server) endEpisode(end ipc.EpisodeEnd) {
	end.ShareResults()
	for c, sess := range s.sessions {
		msg := end
		switch sl := sess.slot; {
		case sl != nil && s.w.Agent(sl.id) != nil:
			om := sl.observationMsg(end.Tick, s.w.Observe(s.w.Agent(sl.id)))
			msg.Observation, msg.Arrays = om.Observation, om.Arrays
		case sl == nil && !sess.spectator:
			continue
		}
		c.Send(msg)
	}
}

func (s *Server) broadcast(msg any) {
	for c, sess := range s.sessions {
		if sess.slot != nil || sess.spectator {
			c.Send(msg)
		}
	}
}

// acceptLoop hands l's connections to the world's goroutine, refusing those
// over the connection limits. It ends when l is closed or ctx is done; any
// other error (too many open files, say) is logged and Accept tried again
// after a pause that doubles, from 5 ms up to a second, while errors last.
func (s *Server) acceptLoop(ctx context.Context, l net.Listener) {
	var pause time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			s.log.Warn("accept failed; retrying", "addr", l.Addr().String(), "err", err, "retry_in", pause)
			t := time.NewTimer(pause)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
			continue
		}
		pause = 0
		if pe := s.reserve(); pe != nil {
			s.refuse(nc, pe)
			continue
		}
		select {
		case s.accepted <- nc:
		case <-ctx.Done():
			s.release(false)
			nc.Close()
			return
		}
	}
}

// reserve counts a new connection in, or says why it is refused.
func (s *Server) reserve() *ipc.ProtocolError {
	busy := func(format string, args ...any) *ipc.ProtocolError {
		return &ipc.ProtocolError{Code: ipc.CodeServerBusy, Fatal: true, Message: fmt.Sprintf(format, args...)}
	}
	if n := s.conns.Add(1); n > int64(s.opt.MaxConns) {
		s.conns.Add(-1)
		return busy("the server has %d connections open, its limit; try again later", s.opt.MaxConns)
	}
	if n := s.unauth.Add(1); n > int64(s.opt.MaxUnauthenticated) {
		s.unauth.Add(-1)
		s.conns.Add(-1)
		return busy("%d connections have not said hello yet, the server's limit; try again later", s.opt.MaxUnauthenticated)
	}
	return nil
}

// release counts a connection out once it has ended.
func (s *Server) release(admitted bool) {
	s.conns.Add(-1)
	if !admitted {
		s.unauth.Add(-1)
	}
}

// admit lifts the limits on a session whose hello was accepted.
func (s *Server) admit(sess *session) {
	if !sess.admitted {
		sess.admitted = true
		s.unauth.Add(-1)
		sess.conn.Admit()
	}
}

// refuse tells a connection over the limits why (best effort, without
// holding up the accept loop) and closes it. Refusals are logged at most
// once a second.
func (s *Server) refuse(nc net.Conn, pe *ipc.ProtocolError) {
	now := time.Now().UnixNano()
	if last := s.refusedLog.Load(); now-last >= int64(time.Second) && s.refusedLog.CompareAndSwap(last, now) {
		s.log.Warn("connection refused", "remote", nc.RemoteAddr().String(), "code", pe.Code, "reason", pe.Message)
	}
	select {
	case s.refusals <- struct{}{}:
		go func() {
			ipc.Refuse(nc, s.codec, pe)
			<-s.refusals
		}()
	default: // refusing too many already: just close
		nc.Close()
	}
}

func (s *Server) remoteSlotsReady() bool {
	for _, sl := range s.order {
		if sl.bot == nil && sl.conn == nil {
			return false
		}
	}
	return true
}

func (s *Server) waitForStart(ctx context.Context) error {
	var timer <-chan time.Time
	if s.opt.StartAfter > 0 {
		timer = time.After(s.opt.StartAfter)
	}
	waitCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-s.drain.ch: // no episode under way: draining stops at once
			stop()
		case <-waitCtx.Done():
		}
	}()
	for !s.remoteSlotsReady() && s.serveOne(waitCtx, timer, 1) {
	}
	if s.Draining() && ctx.Err() == nil {
		return ErrDrained
	}
	if ctx.Err() != nil {
		return fmt.Errorf("stopped before the episode started: %w", ctx.Err())
	}
	return nil
}

func (s *Server) open(nc net.Conn) {
	c := ipc.NewConn(s.connCtx, s.counted(nc), s.codec, s.opt.Conn, s.inbox)
	s.nextID++
	s.sessions[c] = &session{conn: c, id: "s" + strconv.Itoa(s.nextID)}
	s.publish()
}

// Gather implements engine.Gatherer: bots decide at once; remote agents have
// their observation (sent by Observed as it was built) and, in lockstep, the
// world waits for every one of them up to the decision timeout, answering
// queries meanwhile.
func (s *Server) Gather(ctx context.Context, tick int, obs []*world.Observation, decisions []world.Decision) error {
	s.tick = tick
	defer s.shared.Reset() // the world changes next
	for i, o := range obs {
		sl := s.order[i]
		if o == nil {
			sl.queries = 0
			s.tellDead(sl)
			continue
		}
		if sl.bot != nil {
			sl.queries = 0
			decisions[i] = sl.bot.Decide(ctx, o)
		}
		// Remote agents were sent theirs by Observed as it was built.
	}
	if s.opt.Mode == "lockstep" {
		// The observations went out as they were built; the last one's
		// deadline is now plus the timeout.
		timer := time.NewTimer(s.opt.DecisionTimeout)
		defer timer.Stop()
		s.gathering, s.undecided = true, 0
		for !s.allDecided(obs) {
			// Woken once every decision awaited is in (or by anything else).
			if !s.serveOne(ctx, timer.C, s.awaited(obs)) {
				s.serveReady() // what arrived before the deadline counts
				break
			}
		}
		s.gathering = false
	}
	for i, o := range obs {
		sl := s.order[i]
		if o == nil || sl.bot != nil {
			continue
		}
		switch {
		case sl.decided:
			decisions[i] = sl.decision
			sl.decided = false
		case s.opt.Mode == "lockstep" && sl.conn != nil:
			decisions[i] = world.Decision{Tool: "idle", Reasoning: "no decision before the deadline", TimedOut: true}
		}
	}
	return nil
}

// Observed implements engine.Streamer: a remote agent's observation is sent
// as soon as it is built, so that the agent decides while the others are
// built. Its deadline starts then.
func (s *Server) Observed(tick, lo int, obs []*world.Observation) {
	for k, o := range obs {
		if o != nil {
			s.observed(tick, s.order[lo+k], o)
		}
	}
	s.obsBatch.Send()
}

// Compact implements engine.CompactStreamer. In lockstep, nothing but the
// encoder reads a remote agent's observation until the next decision point
// (it is resent only while the decision point lasts), so it is built
// compact unless the session asked for arrays (which read the entities in
// view; a layout sent later expands it: observationMsg) or a bot plays the
// agent. A spectator that inspects it gets it expanded (sendFrame). In
// realtime the world may move on before a resend: observations are whole.
func (s *Server) Compact(i int) bool {
	sl := s.order[i]
	return s.opt.Mode == "lockstep" && sl.bot == nil && sl.arrays == nil
}

// observed adds a remote agent's observation to s.obsBatch.
func (s *Server) observed(tick int, sl *slot, o *world.Observation) {
	if sl.bot != nil {
		return
	}
	sl.queries = 0
	if s.opt.Mode == "lockstep" {
		sl.decided, sl.decision = false, world.Decision{}
	}
	sl.sentTick, sl.obs, sl.deadline = tick, o, time.Now().Add(s.opt.DecisionTimeout)
	if sl.conn != nil && !sl.awaitingLayout {
		deadlineMS := 0
		if s.opt.Mode == "lockstep" {
			deadlineMS = int(s.opt.DecisionTimeout / time.Millisecond)
		}
		msg := sl.observationMsg(tick, o)
		msg.DeadlineMS, msg.Shared = deadlineMS, &s.shared
		if s.opt.Mode == "lockstep" {
			sl.conn.Await(tick)
		}
		s.sendObservation(sl, msg, &s.obsBatch)
	}
}

// tickRate is the wall-clock tick rate in real time (--tick-rate, else the
// scenario's).
func (s *Server) tickRate() float64 {
	if s.opt.Mode == "realtime" && s.opt.TickRate > 0 {
		return s.opt.TickRate
	}
	return s.w.TickRate()
}

// allDecided reports whether every connected agent with an observation has
// decided. It resumes where it stopped the last time (s.undecided, from 0
// for each tick and when an agent connects), as a slot that has decided
// stays decided until the tick ends: checked after every message, a tick's
// checks cost O(agents), not O(agents²).
func (s *Server) allDecided(obs []*world.Observation) bool {
	for ; s.undecided < len(obs); s.undecided++ {
		sl := s.order[s.undecided]
		if obs[s.undecided] != nil && sl.bot == nil && sl.conn != nil && !sl.decided {
			return false
		}
	}
	return true
}

// awaited is how many decisions lockstep still waits for (allDecided has
// just stopped at the first).
func (s *Server) awaited(obs []*world.Observation) int {
	n := 0
	for i := s.undecided; i < len(obs); i++ {
		if sl := s.order[i]; obs[i] != nil && sl.bot == nil && sl.conn != nil && !sl.decided {
			n++
		}
	}
	return n
}

// serveOne handles accepted connections and incoming messages, waiting for
// them until until fires or ctx is done (a nil until waits for ever). It
// reports whether it handled something. It is woken by a decision only once
// want decisions are in (less than 2: any), by anything else at once.
func (s *Server) serveOne(ctx context.Context, until <-chan time.Time, want int) bool {
	if s.serveReady() {
		return true
	}
	s.inbox.Arm(want)
	select {
	case nc := <-s.accepted:
		s.open(nc)
		s.serveReady()
		return true
	case <-s.inbox.Ready():
		s.serveReady()
		return true // perhaps nothing, after a stale signal: the caller looks again
	case <-until:
		return false
	case <-ctx.Done():
		return false
	}
}

// serveReady handles the accepted connections and incoming messages that are
// already waiting, and reports whether there were any.
func (s *Server) serveReady() bool {
	handled := false
	for {
		select {
		case nc := <-s.accepted:
			s.open(nc)
			handled = true
			continue
		default:
		}
		break
	}
	s.batch = s.inbox.Take(s.batch[:0])
	for _, in := range s.batch {
		s.handle(in)
	}
	clear(s.batch) // let the messages go
	return handled || len(s.batch) > 0
}

// maxLag is how far behind its schedule the loop may fall before it stops
// catching up and skips ahead.
const maxLag = 5

// afterTick sends spectators their frame and handles what arrived, then paces
// the loop: it waits while paused (spectators may step it), and waits for the
// next tick's due time in real time or when a spectator set a speed. A tick
// that overran its period is caught up by running the next one at once; when
// the loop falls more than maxLag periods behind it skips ahead instead. Both
// are logged, at most once a second.
func (s *Server) afterTick(ctx context.Context) {
	defer func() { s.tickStart = time.Now() }()
	s.noticeDrain()
	s.sendFrames()
	for s.serveReady() {
	}
	for s.paused && s.steps == 0 && ctx.Err() == nil {
		s.serveOne(ctx, nil, 1)
	}
	if s.steps > 0 {
		s.steps--
		return
	}
	if s.speed <= 0 {
		return
	}
	period := time.Duration(float64(time.Second) / (s.tickRate() * s.speed))
	s.next = s.next.Add(period)
	late := time.Since(s.next)
	s.setLag(late)
	switch {
	case late > maxLag*period:
		s.warn("tick overran; skipping ahead", "behind", late.Round(time.Millisecond), "ticks_skipped", int(late/period))
		s.next = time.Now()
		return
	case late > 0:
		s.warn("tick overran; catching up", "behind", late.Round(time.Millisecond))
		return
	}
	timer := time.NewTimer(time.Until(s.next))
	defer timer.Stop()
	for s.serveOne(ctx, timer.C, 1) {
	}
}

func (s *Server) warn(msg string, args ...any) {
	if time.Since(s.lastWarn) < time.Second {
		return
	}
	s.lastWarn = time.Now()
	s.log.Warn(msg, append(args, "tick", s.w.Tick(), "tick_rate", s.tickRate()*s.speed)...)
}

// abort tells every session that the server cannot go on (its disk is full,
// say): an episode_end with reason "error" if an episode was under way, then
// the fatal SERVER_ERROR; and closes them.
func (s *Server) abort(err error) {
	s.log.Error("stopping on an error", "episode", s.episode, "tick", s.w.Tick(), "err", err)
	if s.inEpisode {
		s.broadcast(ipc.EpisodeEnd{Type: "episode_end", Episode: s.episode, Tick: s.w.Tick(), Reason: "error", Final: true})
	}
	pe := &ipc.ProtocolError{Code: ipc.CodeServerError, Fatal: true, Message: "the server stopped on an error: " + err.Error()}
	for c := range s.sessions {
		s.fail(c, pe)
	}
	s.closeAll()
}

// closeAll closes every session once what is queued for it is written.
func (s *Server) closeAll() {
	for c := range s.sessions {
		c.Close()
	}
	deadline := time.After(2 * time.Second)
	for c := range s.sessions {
		select {
		case <-c.Done():
		case <-deadline:
			return
		}
	}
}
