package render

import (
	"context"
	"sync"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/ipc"
)

// LocalSource shows an in-process run as it happens (`arena run --view`).
// The run's tick loop hands it a frame after every tick and then waits there
// as playback asks: paused, stepping, or at the scenario's tick rate times
// the speed. The tick loop is the only goroutine that touches the world;
// the viewer only takes the frames it built. Once the viewer is closed
// (Close), the run goes on at full speed.
type LocalSource struct {
	mu   sync.Mutex
	wake chan struct{} // closed and replaced to wake a waiting tick loop

	playback
	pending []ipc.Frame
	inspect string
	dirty   bool // the inspected agent changed: a paused tick loop sends its observation
	closed  bool
	ended   bool
	err     error
	next    time.Time // when the next tick is due
}

// NewLocalSource returns a source that plays at the tick rate, not paused.
func NewLocalSource() *LocalSource {
	return &LocalSource{playback: playback{speed: 1}, wake: make(chan struct{})}
}

// Watch hooks the source into a runner before its Run: episode ep's frames,
// one at the start and one after every tick, paced on the runner's
// goroutine. mode names the pace in the HUD ("local").
func (s *LocalSource) Watch(ctx context.Context, r *engine.Runner, ep int, mode string) {
	w := r.World
	first := ipc.WorldFrame(w)
	first.Episode = ep
	ipc.Greet(&first, w, mode, r.DecisionPeriod)
	s.push(first)
	r.KeepObservations = true // for the inspected agent's
	onTick := r.OnTick
	r.OnTick = func(rec *engine.TickRecord) {
		if onTick != nil {
			onTick(rec)
		}
		f := ipc.TickFrame(w, rec)
		f.Episode = ep
		s.mu.Lock()
		f.Paused = s.paused
		f.Inspect = inspection(r, s.inspect)
		s.dirty = false
		s.mu.Unlock()
		s.push(f)
		s.pace(ctx, r, ep)
	}
}

// inspection is the inspected agent's latest observation, for a frame.
func inspection(r *engine.Runner, agent string) *ipc.FrameInspect {
	if agent == "" {
		return nil
	}
	return ipc.Inspection(agent, r.Observation(agent))
}

// push queues a frame for the viewer. When the viewer falls behind, the
// frames it has not taken keep only their events, decisions and the
// episode's description and obstacles: it draws only the newest.
func (s *LocalSource) push(f ipc.Frame) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if n := len(s.pending); n > 0 && s.pending[n-1].World == nil {
		p := &s.pending[n-1]
		p.Agents, p.Entities, p.Panels, p.TeamScores, p.Inspect = nil, nil, nil, nil, nil
	}
	s.pending = append(s.pending, f)
}

// pace holds the tick loop until the next tick may run: while paused (but
// for steps), until the tick is due at the tick rate times the speed, and
// never once the viewer is closed or ctx is done. While it waits it answers
// the viewer's change of inspected agent with a frame of that observation.
func (s *LocalSource) pace(ctx context.Context, r *engine.Runner, ep int) {
	w := r.World
	rate := tickRate(w.TickRate())
	for {
		s.mu.Lock()
		if s.closed || ctx.Err() != nil {
			s.mu.Unlock()
			return
		}
		if s.dirty {
			s.dirty = false
			f := ipc.Frame{Type: "frame", Episode: ep, Tick: w.Tick(), Paused: s.paused, Inspect: inspection(r, s.inspect)}
			s.pending = append(s.pending, f)
		}
		wait := time.Duration(0)
		switch now := time.Now(); {
		case s.paused && s.steps > 0:
			s.steps--
			s.next = now
		case s.paused:
			wait = time.Hour // until woken
		default:
			period := time.Duration(float64(time.Second) / (rate * s.speed))
			if s.next.IsZero() || now.Sub(s.next) > 5*period {
				s.next = now // starting, or far behind: no catching up
			}
			if now.Before(s.next) {
				wait = s.next.Sub(now)
			} else {
				s.next = s.next.Add(period)
			}
		}
		wake := s.wake
		s.mu.Unlock()
		if wait == 0 {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-wake:
		case <-ctx.Done():
		}
		t.Stop()
	}
}

// wakeLocked wakes a waiting tick loop; s.mu is held.
func (s *LocalSource) wakeLocked() {
	close(s.wake)
	s.wake = make(chan struct{})
}

// Poll returns the frames built since the last call.
func (s *LocalSource) Poll() []ipc.Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.pending
	s.pending = nil
	return out
}

// Control applies pause, resume, step or speed to the run's pace.
func (s *LocalSource) Control(command string, value float64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.control(command, value)
	if command == "speed" || command == "resume" {
		s.next = time.Time{}
	}
	s.wakeLocked()
	return err
}

// Inspect chooses whose observation later frames carry.
func (s *LocalSource) Inspect(agent string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inspect, s.dirty = agent, true
	s.wakeLocked()
	return nil
}

// End marks the run over, with the error it ended with (nil when it went
// well): the viewer shows the last frame, and the error, until closed.
func (s *LocalSource) End(err error) {
	s.mu.Lock()
	s.ended, s.err = true, err
	s.mu.Unlock()
}

// Ended reports whether the run is over.
func (s *LocalSource) Ended() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// Close detaches the viewer: the run stops waiting for it.
func (s *LocalSource) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed, s.pending = true, nil
	s.wakeLocked()
}

// Err is the error the run ended with, if any.
func (s *LocalSource) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
