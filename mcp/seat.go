package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/sdk/llm"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// Error codes of calls that the world never saw, beside the tools' own
// (world.CodeInvalidParams, world.CodeDead, ...).
const (
	// CodeEpisodeOver: the episode has ended; observe returns its results.
	CodeEpisodeOver = "EPISODE_OVER"
	// CodeDisconnected: the seat lost its connection to the world.
	CodeDisconnected = "DISCONNECTED"
)

// callError is a refused call: a code and a message a model can act on.
type callError struct{ Code, Message string }

func (e *callError) Error() string { return e.Code + ": " + e.Message }

func refuse(code, format string, args ...any) error {
	return &callError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// snapshot is one observation of the seat's agent, kept as JSON (the world
// reuses its observations) beside its rendering for language models.
type snapshot struct {
	seq    int // 1 for the first of the seat, then one more for each
	tick   int
	alive  bool
	obs    json.RawMessage
	text   string
	result *world.ActionResult // the observation's last_action_result
}

// snap builds a snapshot of o; call it where o may be read (for the world's
// own observations, on the world's goroutine).
func snap(o *world.Observation) *snapshot {
	b, err := json.Marshal(o)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": fmt.Sprintf("observation could not be encoded: %v", err)})
	}
	s := &snapshot{tick: o.Tick, alive: o.Alive, obs: b, text: llm.ObservationText(o)}
	if o.LastActionResult != nil {
		r := *o.LastActionResult
		s.result = &r
	}
	return s
}

// backend is what plays the seat's agent in a world: an episode in this
// process, or a connection to an arena server.
type backend interface {
	// decide hands the world the decision for the observation of tick.
	decide(ctx context.Context, tick int, d world.Decision) error
	// query calls a query tool at once.
	query(ctx context.Context, tool string, params map[string]any) (world.ActionResult, error)
	// close lets go of the agent slot.
	close()
}

// seat is one agent slot played through MCP: the latest observation, the
// episode's end, and the calls waiting for the world. The backend feeds it
// (publish, refused, ended); the MCP handlers read it and wait on it.
type seat struct {
	agent string
	mode  string // lockstep or realtime
	specs []tools.Spec
	be    backend
	// progressEvery is how often a waiting call reports progress.
	progressEvery time.Duration
	// onChange, when set, is told that the observation changed, and whether
	// the results did. It must not block: it is called from the world's
	// goroutine.
	onChange func(results bool)

	act       sync.Mutex // one action at a time
	quit      chan struct{}
	closeOnce sync.Once

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at every change
	cur     *snapshot     // the latest observation; nil before the first of an episode
	died    *snapshot     // the agent's first observation dead, this episode
	seq     int
	episode int             // the episode under way (or last)
	ended   int             // the last episode that ended
	results *engine.Results // its results
	over    bool            // no episode follows: calls are refused
	lost    error           // why the connection ended, when it did before the end
	refusal *callError      // the world refused the decision in flight
}

func newSeat(agent, mode string, specs []tools.Spec, be backend, progressEvery time.Duration) *seat {
	s := &seat{agent: agent, mode: mode, specs: specs, be: be, progressEvery: progressEvery,
		changed: make(chan struct{}), quit: make(chan struct{}), episode: 1}
	if s.progressEvery <= 0 {
		s.progressEvery = time.Second
	}
	return s
}

// What an update changed, for resource subscribers.
const (
	changedNothing = iota
	changedObservation
	changedResults // and the observation
)

// update changes the seat's state under its lock and wakes every waiter.
func (s *seat) update(f func(), what int) {
	s.mu.Lock()
	f()
	close(s.changed)
	s.changed = make(chan struct{})
	cb := s.onChange
	s.mu.Unlock()
	if cb != nil && what != changedNothing {
		cb(what == changedResults)
	}
}

// close lets go of the seat's slot and stops its notifications.
func (s *seat) close() {
	s.closeOnce.Do(func() {
		close(s.quit)
		s.be.close()
	})
}

// publish records a new observation of the agent.
func (s *seat) publish(sn *snapshot) {
	s.update(func() {
		s.seq++
		sn.seq = s.seq
		s.cur = sn
		if !sn.alive && s.died == nil {
			s.died = sn
		}
	}, changedObservation)
}

// refused records that the world refused the decision in flight.
func (s *seat) refused(code, msg string) {
	s.update(func() { s.refusal = &callError{Code: code, Message: msg} }, changedNothing)
}

// startEpisode readies the seat for episode ep: no observation yet.
func (s *seat) startEpisode(ep int) {
	s.update(func() {
		if ep != s.episode {
			s.cur, s.died = nil, nil
		}
		s.episode = ep
	}, changedObservation)
}

// endEpisode records an episode's end: final is the last, after which every
// call is refused. final, when set, is the agent's last observation.
func (s *seat) endEpisode(ep int, res *engine.Results, last *snapshot, final bool) {
	s.update(func() {
		if last != nil {
			s.seq++
			last.seq = s.seq
			s.cur = last
		}
		s.ended, s.results = ep, res.ForAgents()
		s.over = s.over || final
	}, changedResults)
}

// disconnect records that the backend is gone for good.
func (s *seat) disconnect(err error) {
	s.update(func() {
		if !s.over {
			s.lost = err
			s.over = true
		}
	}, changedNothing)
}

// state is a consistent copy of what the handlers read.
type state struct {
	cur     *snapshot
	died    *snapshot
	episode int
	ended   int
	results *engine.Results
	over    bool
	lost    error
	refusal *callError
	changed <-chan struct{}
}

func (s *seat) state() state {
	s.mu.Lock()
	defer s.mu.Unlock()
	return state{cur: s.cur, died: s.died, episode: s.episode, ended: s.ended, results: s.results, over: s.over, lost: s.lost,
		refusal: s.refusal, changed: s.changed}
}

// overError is the refusal of a call after the end.
func (st state) overError() error {
	if st.lost != nil && st.results == nil {
		return refuse(CodeDisconnected, "the connection to the world ended before the episode did (%v); nothing more can be done in it", st.lost)
	}
	return refuse(CodeEpisodeOver, "the episode is over; call observe for the final results")
}

// progress reports a long wait to the client; nil when it asked for no
// reports.
type progress func(msg string)

// wait blocks until cond holds for the seat's state (it is checked at once
// and after every change), ctx ends, or the seat is over and stop says so.
// While it waits it reports progress every progressEvery.
func (s *seat) wait(ctx context.Context, p progress, what func(st state) string, cond func(st state) bool) (state, error) {
	var tick <-chan time.Time
	if p != nil {
		t := time.NewTicker(s.progressEvery)
		defer t.Stop()
		tick = t.C
	}
	for {
		st := s.state()
		if cond(st) {
			return st, nil
		}
		select {
		case <-st.changed:
		case <-ctx.Done():
			return st, ctx.Err()
		case <-tick:
			p(what(st))
		}
	}
}

// current waits for the first observation of an episode under way (after
// an episode that another follows, the next one's) or for the end of the
// last, and returns the state then.
func (s *seat) current(ctx context.Context, p progress) (state, error) {
	return s.wait(ctx, p, func(st state) string {
		if st.ended >= st.episode {
			return fmt.Sprintf("episode %d has ended: waiting for the next one to start", st.ended)
		}
		return fmt.Sprintf("waiting for episode %d to start (the other agents are connecting)", st.episode)
	}, func(st state) bool { return st.over || (st.cur != nil && st.ended < st.episode) })
}

// outcome is what an action led to: the observation at the agent's next
// decision point (or its last), the action's result, and the episode's
// results when it ended.
type outcome struct {
	result  *world.ActionResult
	obs     *snapshot
	results *engine.Results // set when the episode ended
	over    bool            // no episode follows
}

// maxLate is how many times an action that reached a lockstep server after
// its deadline is submitted again for the next observation.
const maxLate = 3

// perform submits d as the agent's decision for the current decision point
// and waits until its result is known: at the agent's next decision point,
// its death, or the end of the episode.
func (s *seat) perform(ctx context.Context, d world.Decision, p progress) (*outcome, error) {
	s.act.Lock()
	defer s.act.Unlock()
	for late := 0; ; late++ {
		st, err := s.current(ctx, p)
		if err != nil {
			return nil, err
		}
		if st.over {
			return nil, st.overError()
		}
		if !st.cur.alive {
			return nil, refuse(world.CodeDead, "%s is dead and takes no more decisions; observe shows its last observation until the episode ends", s.agent)
		}
		prev, sent, tick, ep := st.cur, st.cur.seq, st.cur.tick, st.episode
		s.update(func() { s.refusal = nil }, changedNothing)
		if err := s.be.decide(ctx, tick, d); err != nil {
			if errors.Is(err, errBackendGone) {
				return nil, s.state().overError()
			}
			return nil, err
		}
		st, err = s.wait(ctx, p, func(st state) string {
			if st.cur != nil && st.cur.seq > sent {
				return fmt.Sprintf("tick %d: waiting for the action to be applied", st.cur.tick)
			}
			return fmt.Sprintf("tick %d: the world waits for the other agents' decisions", tick)
		}, func(st state) bool {
			switch {
			case st.refusal != nil, st.over, st.ended >= ep, st.episode != ep:
				return true
			case st.cur == nil || st.cur.seq <= sent:
				return false
			}
			// The result comes with the observation after it was applied
			// (in real time, maybe not the next one), or with the death.
			return !st.cur.alive || (st.cur.result != nil && st.cur.result.Tick >= tick)
		})
		if err != nil {
			return nil, err
		}
		if r := st.refusal; r != nil {
			if r.Code == codeUnknownTick && late < maxLate {
				continue // it came too late for its tick: act at the next one
			}
			return nil, r
		}
		out := &outcome{obs: prev, over: st.over}
		if st.ended >= ep {
			out.results = st.results
		}
		switch {
		case st.died != nil && st.died.seq > sent:
			// The world went on without the agent: its death answers.
			out.obs, out.result = st.died, st.died.result
		case st.cur != nil && st.cur.seq > sent:
			out.obs, out.result = st.cur, st.cur.result
		}
		if out.results == nil && out.result == nil && st.over {
			return nil, st.overError()
		}
		return out, nil
	}
}

// codeUnknownTick is the server's refusal of a decision for a tick it no
// longer waits for (ipc.CodeUnknownTick).
const codeUnknownTick = "UNKNOWN_TICK"

// errBackendGone is returned by a backend that can take no more calls.
var errBackendGone = errors.New("the world is gone")

// ask calls a query tool now.
func (s *seat) ask(ctx context.Context, tool string, params map[string]any) (world.ActionResult, error) {
	st := s.state()
	if st.over {
		return world.ActionResult{}, st.overError()
	}
	if st.cur != nil && !st.cur.alive {
		return world.ActionResult{}, refuse(world.CodeDead, "%s is dead and cannot act", s.agent)
	}
	r, err := s.be.query(ctx, tool, params)
	if errors.Is(err, errBackendGone) {
		return r, s.state().overError()
	}
	return r, err
}
