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
	"time"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// Options configure a server. Zero fields take the defaults in brackets.
type Options struct {
	Scenario *scenarios.Scenario
	Seed     uint64
	Agents   int // agent slots [the scenario's count]
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
	Ticks  int // replaces the scenario's time limit when positive
	Conn   ipc.ConnOptions
	// Journal, when set, records every tick.
	Journal *engine.Journal
	Log     *slog.Logger
}

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
}

type session struct {
	conn      *ipc.Conn
	id        string
	slot      *slot // nil for spectators and before hello
	spectator bool
	static    bool // the spectator has been sent the static entities
}

// Server runs one episode for connected agents.
type Server struct {
	opt      Options
	codec    *ipc.Codec
	w        *world.World
	reg      *tools.Registry
	log      *slog.Logger
	inbox    chan ipc.Incoming
	connCtx  context.Context
	accepted chan net.Conn
	sessions map[*ipc.Conn]*session
	slots    map[string]*slot
	order    []*slot
	nextID   int
	started  bool
	episode  int
	tick     int
	limit    int
	events   []world.Event // the last tick's, for frames

	// Pacing, driven by spectators' control commands and, in real time, the
	// clock: speed multiplies the tick rate (0: as fast as the agents go).
	paused   bool
	steps    int // ticks to run while paused
	speed    float64
	next     time.Time // when the next tick is due
	lastWarn time.Time
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
	codec, err := ipc.NewCodec(ipc.Limits{})
	if err != nil {
		return nil, err
	}
	w, err := opt.Scenario.NewWorld(scenarios.Options{Seed: opt.Seed, Agents: opt.Agents, Ticks: opt.Ticks})
	if err != nil {
		return nil, err
	}
	reg, err := tools.ForWorld(w)
	if err != nil {
		return nil, err
	}
	s := &Server{opt: opt, codec: codec, w: w, reg: reg, log: opt.Log, inbox: make(chan ipc.Incoming, 256),
		accepted: make(chan net.Conn), sessions: map[*ipc.Conn]*session{}, slots: map[string]*slot{},
		limit: opt.Scenario.ToolCallLimit()}
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
	for i, a := range agents {
		sl := &slot{id: a.ID, team: a.Team, sentTick: -1, decidedTick: -1}
		if i >= len(agents)-opt.Bots {
			b, err := bots.New(opt.Scenario.Agents.Bot, bots.Info{AgentID: a.ID, Seed: opt.Seed, Bounds: w.Bounds(), Rules: w.Rules()})
			if err != nil {
				return nil, err
			}
			sl.bot = b
		}
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
	return s, nil
}

// SetJournal records every tick of the episode in j (call before Serve).
func (s *Server) SetJournal(j *engine.Journal) { s.opt.Journal = j }

// World is the server's world; touch it only from the goroutine running Serve.
func (s *Server) World() *world.World { return s.w }

// Serve accepts connections on the listeners, starts the episode once every
// remote slot is connected (or StartAfter has passed), runs it and returns the
// results. Cancelling ctx ends the episode after the current tick ("stopped").
func (s *Server) Serve(ctx context.Context, listeners ...net.Listener) (*engine.Results, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Connections outlive ctx long enough to be told how the episode ended.
	var stopConns context.CancelFunc
	s.connCtx, stopConns = context.WithCancel(context.WithoutCancel(ctx))
	defer stopConns()
	for _, l := range listeners {
		go s.acceptLoop(ctx, l)
	}
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	if err := s.waitForStart(ctx); err != nil {
		s.closeAll("stopped", nil)
		return nil, err
	}
	s.started, s.episode, s.next = true, 1, time.Now()
	for c, sess := range s.sessions {
		if sess.slot != nil || sess.spectator {
			c.Send(ipc.EpisodeStart{Type: "episode_start", Episode: s.episode, Seed: s.w.Seed(), Tick: s.w.Tick(), Objective: s.w.Objective()})
		}
	}
	r := &engine.Runner{World: s.w, Tools: s.reg, Gatherer: s, DecisionPeriod: s.opt.Scenario.Limits.DecisionPeriod,
		MaxTicks: s.w.Objective().TimeLimit, Journal: s.opt.Journal, OnTick: func(_ int, events []world.Event) {
			s.events = events
			s.afterTick(ctx)
		}}
	res, err := r.Run(ctx)
	if err != nil {
		s.closeAll("stopped", nil)
		return nil, err
	}
	s.closeAll(res.EndReason, res)
	return res, nil
}

func (s *Server) acceptLoop(ctx context.Context, l net.Listener) {
	for {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		select {
		case s.accepted <- nc:
		case <-ctx.Done():
			nc.Close()
			return
		}
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
	for !s.remoteSlotsReady() && s.serveOne(ctx, timer) {
	}
	if ctx.Err() != nil {
		return fmt.Errorf("stopped before the episode started: %w", ctx.Err())
	}
	return nil
}

func (s *Server) open(nc net.Conn) {
	c := ipc.NewConn(s.connCtx, nc, s.codec, s.opt.Conn, s.inbox)
	s.nextID++
	s.sessions[c] = &session{conn: c, id: "s" + strconv.Itoa(s.nextID)}
}

// Gather implements engine.Gatherer: bots decide at once; remote agents get
// their observation and, in lockstep, the world waits for every one of them up
// to the decision timeout, answering queries meanwhile.
func (s *Server) Gather(ctx context.Context, tick int, obs []*world.Observation, decisions []world.Decision) error {
	s.tick = tick
	deadlineMS := 0
	if s.opt.Mode == "lockstep" {
		deadlineMS = int(s.opt.DecisionTimeout / time.Millisecond)
	}
	deadline := time.Now().Add(s.opt.DecisionTimeout)
	for i, o := range obs {
		sl := s.order[i]
		sl.queries = 0
		if o == nil {
			s.tellDead(sl)
			continue
		}
		if sl.bot != nil {
			decisions[i] = sl.bot.Decide(ctx, o)
			continue
		}
		if s.opt.Mode == "lockstep" {
			sl.decided, sl.decision = false, world.Decision{}
		}
		sl.sentTick, sl.obs, sl.deadline = tick, o, deadline
		if sl.conn != nil {
			sl.conn.SendLatest(ipc.ObservationMsg{Type: "observation", Tick: tick, DeadlineMS: deadlineMS, Observation: o})
		}
	}
	if s.opt.Mode == "lockstep" {
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		for !s.allDecided(obs) && s.serveOne(ctx, timer.C) {
		}
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

// tickRate is the wall-clock tick rate in real time (--tick-rate, else the
// scenario's).
func (s *Server) tickRate() float64 {
	if s.opt.Mode == "realtime" && s.opt.TickRate > 0 {
		return s.opt.TickRate
	}
	return s.w.TickRate()
}

func (s *Server) allDecided(obs []*world.Observation) bool {
	for i, o := range obs {
		sl := s.order[i]
		if o != nil && sl.bot == nil && sl.conn != nil && !sl.decided {
			return false
		}
	}
	return true
}

// serveOne handles one accepted connection or incoming message, waiting for
// it until until fires or ctx is done (a nil until waits for ever). It
// reports whether it handled something.
func (s *Server) serveOne(ctx context.Context, until <-chan time.Time) bool {
	select {
	case nc := <-s.accepted:
		s.open(nc)
		return true
	case in := <-s.inbox:
		s.handle(in)
		return true
	case <-until:
		return false
	case <-ctx.Done():
		return false
	}
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
	s.sendFrames()
	now := make(chan time.Time)
	close(now)
	for s.serveOne(ctx, now) { // what has already arrived
	}
	for s.paused && s.steps == 0 && ctx.Err() == nil {
		s.serveOne(ctx, nil)
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
	switch late := time.Since(s.next); {
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
	for s.serveOne(ctx, timer.C) {
	}
}

func (s *Server) warn(msg string, args ...any) {
	if time.Since(s.lastWarn) < time.Second {
		return
	}
	s.lastWarn = time.Now()
	s.log.Warn(msg, append(args, "tick", s.w.Tick(), "tick_rate", s.tickRate()*s.speed)...)
}

func (s *Server) closeAll(reason string, res *engine.Results) {
	for c, sess := range s.sessions {
		if sess.slot != nil || sess.spectator {
			c.Send(ipc.EpisodeEnd{Type: "episode_end", Episode: max(s.episode, 1), Tick: s.w.Tick(), Reason: reason, Final: true, Results: res})
		}
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
