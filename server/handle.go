package server

import (
	"crypto/subtle"
	"fmt"
	"math"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/world"
)

func protoErr(code, format string, args ...any) *ipc.ProtocolError {
	return &ipc.ProtocolError{Code: code, Message: fmt.Sprintf(format, args...)}
}

func (s *Server) fail(c *ipc.Conn, pe *ipc.ProtocolError) {
	c.Send(ipc.NewError(pe))
	if pe.Fatal {
		c.Close()
	}
}

// handle processes one message on the world's goroutine.
func (s *Server) handle(in ipc.Incoming) {
	sess := s.sessions[in.Conn]
	if sess == nil {
		return
	}
	if in.Msg == nil { // the connection ended
		if sess.slot != nil && sess.slot.conn == in.Conn {
			sess.slot.conn = nil
			s.log.Info("agent disconnected", "agent", sess.slot.id, "err", in.Err)
		}
		delete(s.sessions, in.Conn)
		return
	}
	switch m := in.Msg.(type) {
	case *ipc.Hello:
		s.hello(sess, m)
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
	case *ipc.Control:
		s.fail(in.Conn, protoErr(ipc.CodeBadMessage, "control commands are not enabled on this server"))
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
		sess.spectator = true
		c.Send(s.welcome(sess, nil))
		return
	case "agent", "":
	default:
		s.fail(c, &ipc.ProtocolError{Code: ipc.CodeBadMessage, Fatal: true, Message: fmt.Sprintf("role %q is not agent or spectator", h.Role)})
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
			s.fail(c, &ipc.ProtocolError{Code: ipc.CodeUnauthorized, Fatal: true, Message: "the token does not match an agent slot"})
			return
		}
	case h.Agent != "":
		sl = s.slots[h.Agent]
		if sl == nil || sl.bot != nil {
			s.fail(c, &ipc.ProtocolError{Code: ipc.CodeNoSlot, Fatal: true, Message: fmt.Sprintf("no agent slot %q is open to clients", h.Agent)})
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
	if sl.conn != nil {
		s.fail(c, &ipc.ProtocolError{Code: ipc.CodeSlotTaken, Fatal: true, Message: fmt.Sprintf("slot %q already has a connected client", sl.id)})
		return
	}
	sl.conn, sess.slot = c, sl
	c.Send(s.welcome(sess, sl))
	s.log.Info("agent connected", "agent", sl.id, "remote", c.RemoteAddr())
	// Joining (or rejoining) while the world waits for this agent: send the
	// observation it has to answer.
	if s.started && sl.sentTick == s.tick && !sl.decided {
		a := s.w.Agent(sl.id)
		c.SendLatest(ipc.ObservationMsg{Type: "observation", Tick: s.tick, Observation: s.w.Observe(a)})
	}
}

func (s *Server) welcome(sess *session, sl *slot) ipc.Welcome {
	w := ipc.Welcome{Type: "welcome", Protocol: ipc.ProtocolVersion, Session: sess.id, Scenario: s.w.Name(),
		Episode: 1, Seed: s.w.Seed(), Tick: s.w.Tick(), TickRate: s.tickRate(), Mode: s.opt.Mode,
		DecisionTimeoutMS: int(s.opt.DecisionTimeout.Milliseconds()), Tools: s.reg.Specs(), Objective: s.w.Objective()}
	if sl != nil {
		w.AgentID, w.Team = sl.id, sl.team
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
	// Lockstep takes the decision for the observation just sent; real time
	// also takes one for an earlier observation, applied at the next tick.
	known := sl.sentTick >= 0 && (tick == sl.sentTick ||
		(s.opt.Mode == "realtime" && tick < sl.sentTick && tick > sl.decidedTick))
	switch {
	case tick == sl.sentTick && sl.decided, tick >= 0 && tick <= sl.decidedTick:
		s.fail(sess.conn, protoErr(ipc.CodeDuplicateDecision, "a decision for tick %v was already received; the first one stands", d.Tick))
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

func (s *Server) sendFrames() {
	var spectators []*ipc.Conn
	for c, sess := range s.sessions {
		if sess.spectator {
			spectators = append(spectators, c)
		}
	}
	if len(spectators) == 0 {
		return
	}
	f := ipc.Frame{Type: "frame", Tick: s.w.Tick()}
	for _, a := range s.w.Agents() {
		// The agent's own state only: a full observation (perception and all)
		// per agent per tick would cost more than the frame is worth.
		score, _ := s.w.Score(a)
		f.Agents = append(f.Agents, ipc.FrameAgent{ID: a.ID, Team: a.Team, Position: a.Pos, Facing: a.Facing,
			Health: a.Health, Alive: a.Alive, Score: score, Action: a.Action()})
	}
	for _, c := range spectators {
		c.SendLatest(f)
	}
}
