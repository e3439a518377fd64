package render

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
)

// Source feeds the viewer frames and takes its playback commands.
type Source interface {
	// Poll returns the frames that arrived since the last call, oldest
	// first. It never blocks; the game calls it once per update.
	Poll() []ipc.Frame
	// Control asks for pause, resume, step (value ticks, 0 meaning 1) or
	// speed (a multiplier of the tick rate), as the protocol's control.
	Control(command string, value float64) error
	// Inspect asks that later frames carry the agent's last observation
	// ("" for nobody).
	Inspect(agent string) error
	// Err is why the source ended, or nil while it runs (or ended cleanly).
	Err() error
}

// Seeker is implemented by sources that can jump to a tick (replays).
type Seeker interface {
	Seek(tick int)
	// Tick is the tick playback has reached; Ticks, the last one there is.
	Tick() int
	Ticks() int
}

// playback is local pause, step and speed: the state behind Control for
// sources that pace themselves (replays and in-process runs).
type playback struct {
	paused bool
	steps  int
	speed  float64
}

func (p *playback) control(command string, value float64) error {
	switch command {
	case "pause":
		p.paused = true
	case "resume":
		p.paused, p.steps = false, 0
	case "step":
		n := max(int(value), 1)
		p.paused, p.steps = true, p.steps+n
	case "speed":
		if !(value >= 0.01 && value <= 100) {
			return fmt.Errorf("speed %v is not from 0.01 to 100", value)
		}
		p.speed = value
	default:
		return fmt.Errorf("control command %q is not pause, resume, step or speed", command)
	}
	return nil
}

// DefaultTickRate is the tick rate assumed when a world gives none.
const DefaultTickRate = 10

// tickRate is rate, or DefaultTickRate when it is not positive.
func tickRate(rate float64) float64 {
	if rate > 0 {
		return rate
	}
	return DefaultTickRate
}

// UpdatesPerSecond is how often the viewer polls its source (Ebiten's
// default tick rate).
const UpdatesPerSecond = 60

// ObservationBudget bounds the memory a replay source spends keeping every
// agent's observations for the inspector; past it, later ticks' are not kept.
const ObservationBudget = 256 << 20

// ReplaySource plays frames rebuilt from a replay, with pause, step and speed
// handled locally at the scenario's tick rate. Every frame is built up
// front, so seeking is instant.
type ReplaySource struct {
	Frames []ipc.Frame // one per tick: the start, then one after every tick
	// TicksPerUpdate is how many ticks one update advances at speed 1: the
	// scenario's tick rate over UpdatesPerSecond.
	TicksPerUpdate float64
	// ObservationsUntil is the last tick whose observations were kept (all
	// of them unless the replay is bigger than ObservationBudget).
	ObservationsUntil int

	playback
	pos       int // the index of the next frame to hand out
	acc       float64
	sent      int // the last frame handed out, or -1
	period    int
	inspect   string
	truncated bool               // observations were not kept after ObservationsUntil
	kept      int                // bytes of observations kept
	dirty     bool               // the inspected agent changed since the last frame out
	obs       map[string][]obsAt // by agent, in tick order
}

type obsAt struct {
	tick int
	b    []byte
}

// NewReplaySource re-simulates a replay on w (built afresh from its header)
// and keeps the world as a frame at the start and after every tick, and
// every agent's observations for the inspector.
func NewReplaySource(ctx context.Context, rep *engine.Replay, w *world.World) (*ReplaySource, error) {
	r := newReplaySource(w, rep.Header.Episode, rep.Header.DecisionPeriod)
	_, err := engine.Play(ctx, rep, w, engine.PlayOptions{
		OnObserve: r.observe,
		OnTick:    func(rec engine.TickRecord) { r.ticked(w, &rec) },
	})
	if err != nil {
		return nil, fmt.Errorf("re-simulate the replay: %w", err)
	}
	return r, nil
}

// newReplaySource is a source holding w's first frame of episode ep; a run
// of w fills it through observe and ticked.
func newReplaySource(w *world.World, ep, decisionPeriod int) *ReplaySource {
	first := ipc.WorldFrame(w)
	first.Episode = ep
	ipc.Greet(&first, w, "replay", decisionPeriod)
	return &ReplaySource{Frames: []ipc.Frame{first}, TicksPerUpdate: tickRate(w.TickRate()) / UpdatesPerSecond,
		playback: playback{speed: 1}, sent: -1, period: max(decisionPeriod, 1), obs: map[string][]obsAt{}}
}

// observe keeps a decision point's observations, encoded, until they pass
// ObservationBudget.
func (r *ReplaySource) observe(tick int, obs []*world.Observation) {
	if r.truncated {
		return
	}
	for _, o := range obs {
		if o == nil {
			continue // dead
		}
		if in := ipc.Inspection(o.AgentID, o); in != nil {
			r.obs[o.AgentID] = append(r.obs[o.AgentID], obsAt{tick, in.Observation})
			r.kept += len(in.Observation)
		}
	}
	r.ObservationsUntil, r.truncated = tick, r.kept > ObservationBudget
}

// ticked keeps the frame after a tick.
func (r *ReplaySource) ticked(w *world.World, rec *engine.TickRecord) {
	f := ipc.TickFrame(w, rec)
	f.Episode = r.Frames[0].Episode
	r.Frames = append(r.Frames, f)
}

// Poll hands out the frames playback has reached: the newest whole, the
// ones it passed over with only their events and decisions (so the log and
// every agent's last decision stay right).
func (r *ReplaySource) Poll() []ipc.Frame {
	if len(r.Frames) == 0 {
		return nil
	}
	switch {
	case r.steps > 0:
		r.pos = min(r.pos+r.steps, len(r.Frames)-1)
		r.steps = 0
	case !r.paused && r.sent >= 0:
		r.acc += r.TicksPerUpdate * r.speed
		n := int(r.acc)
		r.acc -= float64(n)
		r.pos = min(r.pos+n, len(r.Frames)-1)
	}
	if r.pos == r.sent {
		if !r.dirty {
			return nil
		}
		// Only the inspected agent changed.
		r.dirty = false
		return []ipc.Frame{{Type: "frame", Episode: r.Frames[r.pos].Episode, Tick: r.Frames[r.pos].Tick, Paused: r.paused, Inspect: r.inspection(r.pos)}}
	}
	from := r.sent + 1
	if r.pos < r.sent {
		// A seek backwards: the model starts its log again, from a few
		// decision points back (so that every agent's last decision shows)
		// or as far back as a bubble lasts, whichever is further.
		from = max(0, r.pos-max(4*r.period, BubbleTicks(r.TicksPerUpdate*UpdatesPerSecond)))
	}
	out := make([]ipc.Frame, 0, r.pos-from+1)
	for i := from; i <= r.pos; i++ {
		f := r.Frames[i]
		f.Paused = r.paused
		if i != r.pos && i != 0 {
			f.Agents, f.Entities, f.Panels, f.TeamScores = nil, nil, nil, nil // only the events and decisions of passed ticks
		}
		out = append(out, f)
	}
	out[len(out)-1].Inspect = r.inspection(r.pos)
	r.sent, r.dirty = r.pos, false
	return out
}

// inspection is the inspected agent's last observation as of frame i: the
// one its decision in the tick before the frame answered.
func (r *ReplaySource) inspection(i int) *ipc.FrameInspect {
	if r.inspect == "" || i == 0 {
		return nil
	}
	tick := r.Frames[i].Tick - 1
	if r.truncated && tick > r.ObservationsUntil {
		return nil // not kept: better none than an old one
	}
	list := r.obs[r.inspect]
	j, _ := slices.BinarySearchFunc(list, tick+1, func(o obsAt, t int) int { return o.tick - t })
	if j == 0 {
		return nil
	}
	return &ipc.FrameInspect{Agent: r.inspect, Tick: list[j-1].tick, Observation: list[j-1].b}
}

// Tick is the tick of the frame playback has reached.
func (r *ReplaySource) Tick() int { return r.Frames[r.pos].Tick }

// Ticks is the last tick of the replay.
func (r *ReplaySource) Ticks() int { return r.Frames[len(r.Frames)-1].Tick }

// Seek moves playback to the frame of the tick (clamped to the replay).
func (r *ReplaySource) Seek(tick int) {
	i, _ := slices.BinarySearchFunc(r.Frames, tick, func(f ipc.Frame, t int) int { return f.Tick - t })
	r.pos = min(i, len(r.Frames)-1)
}

// Control applies a command to local playback.
func (r *ReplaySource) Control(command string, value float64) error { return r.control(command, value) }

// Inspect chooses whose observations frames carry.
func (r *ReplaySource) Inspect(agent string) error {
	r.inspect, r.dirty = agent, true
	return nil
}

// Paused reports whether local playback is paused.
func (r *ReplaySource) Paused() bool { return r.paused }

// Speed is local playback's speed multiplier.
func (r *ReplaySource) Speed() float64 { return r.speed }

// Err is always nil: a replay that loaded plays to its end.
func (r *ReplaySource) Err() error { return nil }

// LiveSource is a spectator session on a running server: a goroutine reads
// frames; Control sends control messages.
type LiveSource struct {
	nc      net.Conn
	wmu     sync.Mutex
	mu      sync.Mutex
	pending []ipc.Frame
	err     error
	gone    bool // the session is over: the server closed it, failed or went away
	Welcome ipc.Welcome

	addr, token string // to reconnect
}

// maxServerFrame bounds what the viewer accepts from a server: spectator
// frames of big worlds run to several MiB.
const maxServerFrame = 64 << 20

// Connect opens a spectator session on addr (unix:PATH or tcp:HOST:PORT):
// hello as a spectator, then the welcome (or the refusal).
func Connect(ctx context.Context, addr, token string) (*LiveSource, error) {
	s := &LiveSource{addr: addr, token: token}
	if err := s.open(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// open starts a session: it dials, says hello, waits for the welcome and
// starts the reader.
func (s *LiveSource) open(ctx context.Context) error {
	addr := s.addr
	nc, err := ipc.Dial(ctx, addr)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	s.nc = nc
	s.wmu.Unlock()
	if err := s.write(ipc.Hello{Type: "hello", Protocol: ipc.ProtocolVersion, Role: "spectator", Token: s.token, Name: "arena view"}); err != nil {
		nc.Close()
		return fmt.Errorf("send hello to %s: %w", addr, err)
	}
	nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	var welcome ipc.Welcome
	for {
		typ, b, err := read(nc, nil)
		if err != nil {
			nc.Close()
			return fmt.Errorf("wait for the welcome from %s: %w", addr, err)
		}
		if typ == "error" {
			var e ipc.ErrorMsg
			cbor.Unmarshal(b, &e)
			if e.Fatal {
				nc.Close()
				return fmt.Errorf("%s refused the spectator: %s: %s", addr, e.Code, e.Message)
			}
			continue
		}
		if typ == "welcome" {
			if err := cbor.Unmarshal(b, &welcome); err != nil {
				nc.Close()
				return fmt.Errorf("decode the welcome: %w", err)
			}
			break
		}
	}
	nc.SetReadDeadline(time.Time{})
	s.mu.Lock()
	s.Welcome, s.err, s.gone = welcome, nil, false
	s.mu.Unlock()
	go s.readLoop(nc)
	return nil
}

func (s *LiveSource) write(v any) error {
	b, err := cbor.Marshal(v)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return ipc.WriteFrame(s.nc, b)
}

func read(nc net.Conn, buf []byte) (string, []byte, error) {
	b, err := ipc.ReadFrame(nc, maxServerFrame, buf)
	if err != nil {
		return "", nil, err
	}
	var head struct {
		Type string `cbor:"type"`
	}
	// Only the type is wanted here: other fields may not fit the struct.
	if err := cbor.Unmarshal(b, &head); err != nil {
		return "", b, fmt.Errorf("decode a message: %w", err)
	}
	return head.Type, b, nil
}

func (s *LiveSource) readLoop(nc net.Conn) {
	var buf []byte
	for {
		typ, b, err := read(nc, buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				err = nil
			}
			s.fail(err)
			return
		}
		buf = b
		switch typ {
		case "frame":
			var f ipc.Frame
			if err := cbor.Unmarshal(b, &f); err != nil {
				s.fail(fmt.Errorf("decode a frame: %w", err))
				return
			}
			s.mu.Lock()
			s.pending = append(s.pending, f)
			s.mu.Unlock()
		case "episode_end":
			var e ipc.EpisodeEnd
			if cbor.Unmarshal(b, &e) == nil && e.Final {
				s.fail(nil)
				return
			}
		case "ping": // the server checks that the viewer is alive
			var p ipc.Ping
			cbor.Unmarshal(b, &p)
			go s.write(ipc.Pong{Type: "pong", ID: p.ID})
		case "error":
			var e ipc.ErrorMsg
			cbor.Unmarshal(b, &e)
			if e.Fatal {
				s.fail(fmt.Errorf("server: %s: %s", e.Code, e.Message))
				return
			}
		}
	}
}

func (s *LiveSource) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.gone = true
	s.mu.Unlock()
}

// Gone reports whether the session is over (the server closed it, failed,
// or went away), and why, when it was not a clean end.
func (s *LiveSource) Gone() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone, s.err
}

// Reconnect opens a new spectator session on the same server once the last
// one is over; frames flow again from the server's current state.
func (s *LiveSource) Reconnect(ctx context.Context) error {
	if gone, _ := s.Gone(); !gone {
		return errors.New("reconnect: the session is still open")
	}
	s.wmu.Lock()
	s.nc.Close()
	s.wmu.Unlock()
	if err := s.open(ctx); err != nil {
		return fmt.Errorf("reconnect: %w", err)
	}
	return nil
}

// Poll returns the frames received since the last call.
func (s *LiveSource) Poll() []ipc.Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.pending
	s.pending = nil
	return out
}

// Inspect asks the server for the agent's observation in later frames.
func (s *LiveSource) Inspect(agent string) error {
	return s.write(ipc.Control{Type: "control", Command: "inspect", Agent: agent})
}

// Control sends a control command to the server.
func (s *LiveSource) Control(command string, value float64) error {
	if math.IsNaN(value) {
		value = 0
	}
	return s.write(ipc.Control{Type: "control", Command: command, Value: value})
}

// Err is why the session ended, if it did with an error.
func (s *LiveSource) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close ends the session.
func (s *LiveSource) Close() error {
	s.write(struct {
		Type string `cbor:"type"`
	}{"bye"})
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.nc.Close()
}
