package render

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
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
	// Err is why the source ended, or nil while it runs (or ended cleanly).
	Err() error
}

// ReplaySource plays frames rebuilt from a replay, with pause, step and speed
// handled locally. Every frame is built up front, so seeking is instant.
type ReplaySource struct {
	Frames []ipc.Frame // one per tick: the start, then one after every tick
	// TicksPerUpdate is how many ticks one update advances at speed 1.
	TicksPerUpdate float64

	pos    int // the index of the next frame to hand out
	paused bool
	speed  float64
	acc    float64
	steps  int
	sent   int // the last frame handed out, or -1
	static []ipc.FrameEntity
}

// NewReplaySource re-simulates a replay on w (built afresh from its header)
// and keeps the world as a frame at the start and after every tick.
func NewReplaySource(ctx context.Context, rep *engine.Replay, w *world.World) (*ReplaySource, error) {
	static := ipc.StaticEntities(w)
	first := ipc.WorldFrame(w)
	first.Episode = rep.Header.Episode
	frames := []ipc.Frame{first}
	_, err := engine.Play(ctx, rep, w, false, func(rec engine.TickRecord) {
		f := ipc.WorldFrame(w)
		f.Episode, f.Events = rep.Header.Episode, rec.Events
		frames = append(frames, f)
	})
	if err != nil {
		return nil, fmt.Errorf("re-simulate the replay: %w", err)
	}
	return &ReplaySource{Frames: frames, TicksPerUpdate: 10.0 / 60, speed: 1, sent: -1, static: static}, nil
}

// Poll hands out the frame playback has reached (one per update at most:
// the viewer only needs the newest, but every tick's events are kept).
func (r *ReplaySource) Poll() []ipc.Frame {
	if len(r.Frames) == 0 {
		return nil
	}
	switch {
	case r.steps > 0:
		r.pos = min(r.pos+r.steps, len(r.Frames)-1)
		r.steps = 0
	case !r.paused:
		r.acc += r.TicksPerUpdate * r.speed
		n := int(r.acc)
		r.acc -= float64(n)
		if r.sent >= 0 {
			r.pos = min(r.pos+n, len(r.Frames)-1)
		}
	}
	if r.pos == r.sent {
		return nil
	}
	from := r.sent + 1
	if r.pos < r.sent { // a seek backwards: just the one frame
		from = r.pos
	}
	out := make([]ipc.Frame, 0, r.pos-from+1)
	for i := from; i <= r.pos; i++ {
		f := r.Frames[i]
		f.Paused = r.paused
		if i != r.pos {
			f.Agents, f.Entities = nil, nil // only the events of skipped ticks matter
		}
		out = append(out, f)
	}
	// The first frame out (and any after a seek) carries the obstacles.
	if r.sent < 0 || from == r.pos && r.pos < r.sent {
		last := &out[len(out)-1]
		last.Entities = append(append([]ipc.FrameEntity(nil), r.static...), last.Entities...)
	}
	r.sent = r.pos
	return out
}

// Tick is the tick of the frame playback has reached.
func (r *ReplaySource) Tick() int { return r.Frames[r.pos].Tick }

// Seek moves playback to the frame of the tick (clamped to the replay).
func (r *ReplaySource) Seek(tick int) {
	i := 0
	for i < len(r.Frames)-1 && r.Frames[i].Tick < tick {
		i++
	}
	r.pos = i
}

// Control applies a command to local playback.
func (r *ReplaySource) Control(command string, value float64) error {
	switch command {
	case "pause":
		r.paused = true
	case "resume":
		r.paused = false
	case "step":
		n := max(int(value), 1)
		r.paused, r.steps = true, r.steps+n
	case "speed":
		if !(value >= 0.01 && value <= 100) {
			return fmt.Errorf("speed %v is not from 0.01 to 100", value)
		}
		r.speed = value
	default:
		return fmt.Errorf("control command %q is not pause, resume, step or speed", command)
	}
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
	Welcome ipc.Welcome
}

// maxServerFrame bounds what the viewer accepts from a server: spectator
// frames of big worlds run to several MiB.
const maxServerFrame = 64 << 20

// Connect opens a spectator session on addr (unix:PATH or tcp:HOST:PORT):
// hello as a spectator, then the welcome (or the refusal).
func Connect(ctx context.Context, addr, token string) (*LiveSource, error) {
	nc, err := ipc.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	s := &LiveSource{nc: nc}
	if err := s.write(ipc.Hello{Type: "hello", Protocol: ipc.ProtocolVersion, Role: "spectator", Token: token, Name: "arena view"}); err != nil {
		nc.Close()
		return nil, fmt.Errorf("send hello to %s: %w", addr, err)
	}
	nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		typ, b, err := s.read(nil)
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("wait for the welcome from %s: %w", addr, err)
		}
		if typ == "error" {
			var e ipc.ErrorMsg
			cbor.Unmarshal(b, &e)
			if e.Fatal {
				nc.Close()
				return nil, fmt.Errorf("%s refused the spectator: %s: %s", addr, e.Code, e.Message)
			}
			continue
		}
		if typ == "welcome" {
			if err := cbor.Unmarshal(b, &s.Welcome); err != nil {
				nc.Close()
				return nil, fmt.Errorf("decode the welcome: %w", err)
			}
			break
		}
	}
	nc.SetReadDeadline(time.Time{})
	go s.readLoop()
	return s, nil
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

func (s *LiveSource) read(buf []byte) (string, []byte, error) {
	b, err := ipc.ReadFrame(s.nc, maxServerFrame, buf)
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

func (s *LiveSource) readLoop() {
	var buf []byte
	for {
		typ, b, err := s.read(buf)
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
	s.mu.Unlock()
}

// Poll returns the frames received since the last call.
func (s *LiveSource) Poll() []ipc.Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.pending
	s.pending = nil
	return out
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
	return s.nc.Close()
}
