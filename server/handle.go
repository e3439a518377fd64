package server

import (
	"crypto/subtle"
	"fmt"
	"github.com/arena-sim/arena/internal/fuzzy"
	"math"
	"net"
	"time"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/rlarrays"
	"github.com/arena-sim/arena/world"
)

// spectatorKey is the tokens-file key of the spectators' token.
const spectatorKey = "spectator"

func protoErr(code, format string, args ...any) *ipc.ProtocolError {
	return &ipc.ProtocolError{Code: code, Message: fmt.Sprintf(format, args...)}
}

func (s *Server) fail(c *ipc.Conn, pe *ipc.ProtocolError) {
	s.countError(pe.Code)
	c.Send(ipc.NewError(pe))
	if pe.Fatal {
		c.Close()
	}
}

// Failed authentications from one host are answered later and later:
// the first at once, the next after authDelay, doubling up to maxAuthDelay.
// A host's count is forgotten authForget after its last failure.
const (
	authDelay    = 250 * time.Millisecond
	maxAuthDelay = 5 * time.Second
	authForget   = 10 * time.Minute
)

// authFailures is what the server remembers of a host's failed
// authentications.
type authFailures struct {
	n    int
	last time.Time
}

// failAuth refuses a hello whose token is wrong: it logs the failure and
// answers after a delay that grows with the host's recent failures, so that
// guessing tokens is slow. Nothing more from the session is handled.
func (s *Server) failAuth(sess *session, pe *ipc.ProtocolError) {
	now := time.Now()
	host := peerHost(sess.conn.RemoteAddr())
	if s.authFails == nil || len(s.authFails) > 4096 {
		for h, f := range s.authFails { // forget old failures
			if now.Sub(f.last) > authForget {
				delete(s.authFails, h)
			}
		}
		if s.authFails == nil || len(s.authFails) > 4096 {
			s.authFails = map[string]*authFailures{}
		}
	}
	f := s.authFails[host]
	if f == nil || now.Sub(f.last) > authForget {
		f = &authFailures{}
		s.authFails[host] = f
	}
	f.n++
	f.last = now
	delay := time.Duration(0)
	if f.n > 1 {
		delay = min(authDelay<<min(f.n-2, 16), maxAuthDelay)
	}
	s.log.Warn("authentication failed", "remote", sess.conn.RemoteAddr().String(), "session", sess.id,
		"failures", f.n, "answered_in", delay, "reason", pe.Message)
	sess.refused = true
	c := sess.conn
	time.AfterFunc(delay, func() { s.fail(c, pe) })
}

// peerHost is the host part of a peer's address: its IP over TCP, "local"
// over a Unix socket.
func peerHost(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	return "local"
}

// handle processes one message on the world's goroutine. What the admin
// endpoints read (publish) changes only when a connection ends or says
// hello.
func (s *Server) handle(in ipc.Incoming) {
	sess := s.sessions[in.Conn]
	if sess == nil || (sess.refused && in.Msg != nil) {
		return
	}
	if in.Msg == nil { // the connection ended
		defer s.publish()
		if sess.slot != nil && sess.slot.conn == in.Conn {
			sess.slot.conn = nil
			s.log.Info("agent disconnected", "agent", sess.slot.id, "err", in.Err)
		}
		delete(s.sessions, in.Conn)
		s.release(sess.admitted)
		if sess.spectator {
			s.log.Info("spectator disconnected", "session", sess.id, "err", in.Err)
		}
		if sess.pausing {
			s.resumeUnlessPaused()
		}
		return
	}
	switch m := in.Msg.(type) {
	case *ipc.Hello:
		s.hello(sess, m)
		s.publish()
	case *ipc.Bye:
		in.Conn.Close()
	case *ipc.Decision:
		if sess.slot == nil {
			s.fail(in.Conn, protoErr(ipc.CodeNotReady, "send hello as an agent before decisions"))
			return
		}
		s.decide(sess, m)
	case *ipc.Query:
		if sess.slot == nil {
			s.fail(in.Conn, protoErr(ipc.CodeNotReady, "send hello as an agent before queries"))
			return
		}
		s.query(sess, m)
	case *ipc.ObservationArrays:
		if sess.slot == nil {
			s.fail(in.Conn, protoErr(ipc.CodeNotReady, "send hello as an agent before observation_arrays"))
			return
		}
		sl := sess.slot
		if sl.conn != in.Conn {
			return // a connection the slot has since left: its layout is not the new one's
		}
		enc, err := rlarrays.Compile(m.Layout)
		if err != nil {
			// Observations no longer wait: the client goes on without arrays.
			s.fail(in.Conn, protoErr(ipc.CodeBadMessage, "observation_arrays: %v", err))
		}
		held := sl.awaitingLayout
		sl.arrays, sl.awaitingLayout = enc, false
		sl.embed = enc != nil && m.ObservationBytes
		if held {
			s.resendPending(sl)
		}
	case *ipc.Control:
		if !sess.spectator {
			s.fail(in.Conn, protoErr(ipc.CodeUnauthorized, "only spectators may send control commands"))
			return
		}
		s.control(sess, m)
	}
}

func (s *Server) hello(sess *session, h *ipc.Hello) {
	c := sess.conn
	if sess.slot != nil || sess.spectator {
		s.fail(c, protoErr(ipc.CodeBadMessage, "this session has already said hello"))
		return
	}
	if h.Protocol != ipc.ProtocolVersion {
		s.fail(c, &ipc.ProtocolError{Code: ipc.CodeUnsupportedProtocol, Fatal: true,
			Message: fmt.Sprintf("protocol %v is not supported; this server speaks %d", h.Protocol, ipc.ProtocolVersion)})
		return
	}
	switch h.Role {
	case "spectator":
		if !s.opt.OpenSpectators {
			want := s.opt.SpectatorToken
			if want == "" {
				want = s.opt.Tokens[spectatorKey]
			}
			if want == "" {
				s.failAuth(sess, &ipc.ProtocolError{Code: ipc.CodeUnauthorized, Fatal: true,
					Message: "this server takes no spectators: spectators see every secret, so they need a token (arena serve prints one, or the tokens file's \"spectator\" entry); --spectators open allows them without one"})
				return
			}
			if subtle.ConstantTimeCompare([]byte(want), []byte(h.Token)) != 1 {
				s.failAuth(sess, &ipc.ProtocolError{Code: ipc.CodeUnauthorized, Fatal: true,
					Message: "spectators need the spectator token (printed by arena serve at start, written beside the results as spectator.token)"})
				return
			}
		}
		sess.spectator = true
		c.Send(s.welcome(sess, nil))
		s.admit(sess) // after the welcome: the reader's answers may follow it at once
		if s.started {
			c.Send(s.episodeStart(nil))
			s.sendFrame(sess, s.frame())
		}
		return
	case "agent", "":
	default:
		s.fail(c, &ipc.ProtocolError{Code: ipc.CodeBadMessage, Fatal: true, Message: fmt.Sprintf("role %q is not agent or spectator", fuzzy.Clip(h.Role))})
		return
	}
	var sl *slot
	switch {
	case s.opt.Tokens != nil:
		for _, cand := range s.order {
			if cand.token != "" && subtle.ConstantTimeCompare([]byte(cand.token), []byte(h.Token)) == 1 {
				sl = cand
			}
		}
		if sl == nil || (h.Agent != "" && h.Agent != sl.id) {
			s.failAuth(sess, &ipc.ProtocolError{Code: ipc.CodeUnauthorized, Fatal: true, Message: "the token does not match an agent slot"})
			return
		}
	case h.Agent != "":
		sl = s.slots[h.Agent]
		if sl == nil || sl.bot != nil {
			s.fail(c, &ipc.ProtocolError{Code: ipc.CodeNoSlot, Fatal: true, Message: fmt.Sprintf("no agent slot %q is open to clients", fuzzy.Clip(h.Agent))})
			return
		}
	default:
		for _, cand := range s.order {
			if cand.bot == nil && cand.conn == nil {
				sl = cand
				break
			}
		}
		if sl == nil {
			s.fail(c, &ipc.ProtocolError{Code: ipc.CodeNoSlot, Fatal: true, Message: "every agent slot is taken"})
			return
		}
	}
	if sl.bot != nil {
		s.fail(c, &ipc.ProtocolError{Code: ipc.CodeNoSlot, Fatal: true, Message: fmt.Sprintf("slot %q is played by a built-in bot", sl.id)})
		return
	}
	if sl.conn != nil && !isDone(sl.conn) {
		s.fail(c, &ipc.ProtocolError{Code: ipc.CodeSlotTaken, Fatal: true, Message: fmt.Sprintf("slot %q already has a connected client", sl.id)})
		return
	}
	sl.conn, sess.slot, sl.fullRoster = c, sl, h.FullRoster
	sl.arrays, sl.awaitingLayout, sl.embed = nil, h.Arrays, false
	s.undecided = 0 // lockstep waits for this slot again (see allDecided)
	c.Send(s.welcome(sess, sl))
	s.admit(sess)
	s.log.Info("agent connected", "agent", sl.id, "remote", c.RemoteAddr())
	if !s.started {
		return
	}
	c.Send(s.episodeStart(sl))
	// Rejoining a dead agent: say so. Joining (or rejoining) an agent whose
	// latest observation is unanswered: send it again, with what is left of
	// its deadline, so the agent can still decide for it.
	if sl.toldDead {
		sl.toldDead = false
		s.tellDead(sl)
		return
	}
	s.resendPending(sl)
}

// resendPending sends the slot's client its latest observation again if it
// is unanswered, with what is left of its deadline, so the agent can still
// decide for it (a client that has just joined, or sent its layout).
func (s *Server) resendPending(sl *slot) {
	if sl.conn == nil || sl.awaitingLayout {
		return
	}
	if sl.obs != nil && sl.sentTick > sl.decidedTick && (s.opt.Mode != "lockstep" || s.gathering) {
		msg := sl.observationMsg(sl.sentTick, sl.obs)
		if s.opt.Mode == "lockstep" {
			msg.DeadlineMS = max(int(time.Until(sl.deadline).Milliseconds()), 1)
			sl.conn.Await(sl.sentTick)
		}
		s.sendObservation(sl, msg, nil)
	}
}

// isDone reports whether the connection has ended (its end notice may still
// be on its way).
func isDone(c *ipc.Conn) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

// tellDead sends a dead agent's client its last observation (alive:false),
// once; no decision is expected for it.
func (s *Server) tellDead(sl *slot) {
	if sl.toldDead || sl.conn == nil {
		return
	}
	sl.toldDead, sl.obs = true, nil
	s.sendObservation(sl, sl.observationMsg(s.w.Tick(), s.w.Observe(s.w.Agent(sl.id))), nil)
}

// welcome answers a session's hello (sl: its slot, nil for a spectator). It
// carries the roster, which the slot's client then holds.
func (s *Server) welcome(sess *session, sl *slot) ipc.Welcome {
	w := ipc.Welcome{Type: "welcome", Protocol: ipc.ProtocolVersion, Session: sess.id, Scenario: s.w.Name(),
		Episode: max(s.episode, 1), EpisodeID: s.episodeID, Seed: s.agentSeed(sl), Tick: s.w.Tick(), TickRate: s.tickRate(), Mode: s.opt.Mode,
		DecisionTimeoutMS: int(s.opt.DecisionTimeout.Milliseconds()), Tools: s.reg.Specs(), Objective: s.w.Objective(), AgentIDs: s.w.Roster()}
	if sl != nil {
		w.AgentID, w.Team = sl.id, sl.team
		w.Tools = s.reg.SpecsFor(sl.id) // the tools this agent is offered
		sl.roster = w.AgentIDs
	}
	return w
}

func (s *Server) decide(sess *session, d *ipc.Decision) {
	sl := sess.slot
	if d.Tool == "" {
		s.fail(sess.conn, protoErr(ipc.CodeBadMessage, "a decision needs a tool (use \"idle\" to take no new action)"))
		return
	}
	if d.Tick != math.Trunc(d.Tick) || math.Abs(d.Tick) > 1<<53 {
		s.fail(sess.conn, protoErr(ipc.CodeUnknownTick, "tick %v is not a tick number", d.Tick))
		return
	}
	tick := int(d.Tick)
	if tick == sl.sentTick && sess.conn == sl.conn {
		sl.roster = sl.sentRoster // it read that observation
	}
	if a := s.w.Agent(sl.id); !a.Alive {
		s.fail(sess.conn, protoErr(world.CodeDead, "agent %s is dead and takes no more decisions", sl.id))
		return
	}
	// Lockstep takes the decision for the observation just sent. Real time
	// takes the newest decision for the newest observation: one for an
	// earlier observation too, if it is newer than the last decision taken,
	// which it replaces if that one is still waiting for the next tick.
	known := sl.sentTick >= 0 && (tick == sl.sentTick ||
		(s.opt.Mode == "realtime" && tick < sl.sentTick && tick > sl.decidedTick))
	switch {
	case tick >= 0 && tick == sl.decidedTick:
		s.fail(sess.conn, protoErr(ipc.CodeDuplicateDecision, "a decision for tick %d was already received; the first one stands", tick))
	case tick >= 0 && tick < sl.decidedTick:
		s.fail(sess.conn, protoErr(ipc.CodeDuplicateDecision, "a decision for tick %d, a newer observation, was already received; it stands", sl.decidedTick))
	case known && s.opt.Mode == "lockstep" && !s.gathering:
		s.fail(sess.conn, protoErr(ipc.CodeUnknownTick, "the decision for tick %d arrived after its deadline; the agent idled that tick", tick))
	case !known && tick >= 0 && tick < sl.sentTick:
		s.fail(sess.conn, protoErr(ipc.CodeUnknownTick, "the decision for tick %d arrived after the world moved on; answer the observation of tick %d", tick, sl.sentTick))
	case !known:
		s.fail(sess.conn, protoErr(ipc.CodeUnknownTick, "tick %v is not the tick of an observation you were sent (the latest is %d)", d.Tick, sl.sentTick))
	default:
		sl.decided, sl.decidedTick = true, tick
		sl.decision = world.Decision{Tool: d.Tool, Params: d.Params, Reasoning: d.Reasoning}
	}
}

func (s *Server) query(sess *session, q *ipc.Query) {
	sl := sess.slot
	res := ipc.Result{Type: "result", ID: q.ID}
	if sl.queries >= s.limit {
		res.ErrorCode = world.CodeLimitExceeded
		res.ErrorMessage = fmt.Sprintf("%d queries were already made for this observation (the limit, failed calls included)", s.limit)
		sess.conn.Send(res)
		return
	}
	sl.queries++
	r := s.reg.Execute(s.w, sl.id, q.Tool, q.Params, true)
	res.Success, res.Data, res.ErrorCode, res.ErrorMessage = r.Success, r.Data, r.ErrorCode, r.ErrorMessage
	sess.conn.Send(res)
}

// control applies a spectator's command between ticks: pause, resume, step
// (run value ticks, default 1, then stay paused), speed (multiply the tick
// rate by value; in lockstep 0 means as fast as the agents decide) or
// inspect (this spectator's frames carry the agent's last observation). Every
// spectator gets a frame showing the new state at once.
func (s *Server) control(sess *session, m *ipc.Control) {
	c := sess.conn
	switch m.Command {
	case "inspect":
		if m.Agent != "" && s.slots[m.Agent] == nil {
			s.fail(c, protoErr(ipc.CodeBadMessage, "inspect: no agent %q", fuzzy.Clip(m.Agent)))
			return
		}
		sess.inspect = m.Agent
	case "pause":
		s.paused, sess.pausing = true, true
	case "resume":
		s.resume()
	case "step":
		n := 1.0
		if m.Value != 0 {
			n = m.Value
		}
		if n < 1 || n > 1e6 || n != math.Trunc(n) {
			s.fail(c, protoErr(ipc.CodeBadMessage, "step takes a whole number of ticks from 1 to 1000000, not %v", m.Value))
			return
		}
		s.paused, s.steps, sess.pausing = true, s.steps+int(n), true
	case "speed":
		if !(m.Value >= 0 && m.Value <= 100) || (m.Value < 0.01 && (m.Value != 0 || s.opt.Mode == "realtime")) {
			s.fail(c, protoErr(ipc.CodeBadMessage, "speed multiplies the tick rate: from 0.01 to 100 (0, as fast as possible, in lockstep only), not %v", m.Value))
			return
		}
		s.speed, s.next = m.Value, time.Now()
	default:
		s.fail(c, protoErr(ipc.CodeBadMessage, "control command %q is not pause, resume, step, speed or inspect", fuzzy.Clip(m.Command)))
		return
	}
	s.log.Info("control", "command", m.Command, "value", m.Value, "remote", c.RemoteAddr())
	if s.started {
		s.sendFrames()
	}
}

// resume runs the world again, dropping any steps still to run. No session
// holds it paused any more.
func (s *Server) resume() {
	s.paused, s.steps, s.next = false, 0, time.Now()
	for _, sess := range s.sessions {
		sess.pausing = false
	}
}

// resumeUnlessPaused resumes a paused world once no session that paused it
// (or stepped it) is connected: a pause does not outlive its spectators.
func (s *Server) resumeUnlessPaused() {
	if !s.paused {
		return
	}
	for _, sess := range s.sessions {
		if sess.pausing {
			return
		}
	}
	s.resume()
	s.log.Info("resumed: no spectator that paused the world is connected")
	if s.started {
		s.sendFrames()
	}
}

// frame is the whole world as spectators see it: every agent with its action,
// every entity but the obstacles (which never change), the components'
// panels, and the last tick's events (private ones included: spectators are
// trusted; with tokens they need one) and decisions.
func (s *Server) frame() ipc.Frame {
	f := ipc.WorldFrame(s.w)
	f.Episode, f.Paused, f.Events, f.Decisions = s.episode, s.paused, s.events, s.decisions
	return f
}

// sendFrame sends one spectator f, with the observation of the agent it
// inspects. Its first frame of an episode also carries the world's
// description and the obstacles, and is queued, so that it is never
// replaced by a newer one.
func (s *Server) sendFrame(sess *session, f ipc.Frame) {
	if sess.inspect != "" && s.runner != nil {
		o := s.runner.Observation(sess.inspect)
		if o != nil {
			o.Expand() // a compact one (Compact)
		}
		f.Inspect = ipc.Inspection(sess.inspect, o)
	}
	if sess.static {
		sess.conn.SendLatest(f)
		return
	}
	sess.static = true
	ipc.Greet(&f, s.w, s.opt.Mode, s.opt.Scenario.Limits.DecisionPeriod)
	f.World.TickRate = s.tickRate()
	sess.conn.Send(f)
}

func (s *Server) sendFrames() {
	var f *ipc.Frame
	for _, sess := range s.sessions {
		if !sess.spectator {
			continue
		}
		if f == nil {
			fr := s.frame()
			f = &fr
		}
		s.sendFrame(sess, *f)
	}
}
