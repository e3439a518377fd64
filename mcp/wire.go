package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fxamacker/cbor/v2"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/world"
)

// wire is the backend of a seat in an arena server's episode: a client of
// its CBOR protocol (docs/protocol.md) on a connection the server accepted
// like any other, so that MCP sessions and CBOR clients share the episode.
type wire struct {
	nc    net.Conn
	codec *ipc.Codec
	seat  *seat
	log   *slog.Logger
	ids   atomic.Uint64
	// roster is the reader's: it fills observations' agent_ids.
	roster ipc.Roster

	wmu sync.Mutex // one frame at a time

	mu      sync.Mutex
	pending map[uint64]chan ipc.Result

	done      chan struct{} // the reader stopped
	closeOnce sync.Once
}

// wireMaxFrame bounds the server's frames (a welcome with many tools, an
// observation with many entities).
const wireMaxFrame = 64 << 20

// keepAlive is how often a wire pings, so that the server's idle time-out
// does not drop an MCP client that thinks for a long time.
const keepAlive = 10 * time.Second

var wireDec = func() cbor.DecMode {
	dm, err := cbor.DecOptions{DefaultMapType: reflect.TypeOf(map[string]any(nil)), MaxNestedLevels: 64,
		MaxArrayElements: 1 << 20, MaxMapPairs: 1 << 20}.DecMode()
	if err != nil {
		panic(err)
	}
	return dm
}()

// dialWire says hello as an agent on nc (with token, when the server has
// tokens), waits for the welcome, and returns the seat it was given. A
// refusal is a *callError with the server's code (NO_SLOT, SLOT_TAKEN,
// UNAUTHORIZED, ...).
func dialWire(ctx context.Context, nc net.Conn, token string, progressEvery time.Duration, log *slog.Logger) (*seat, error) {
	codec, err := ipc.NewCodec(ipc.Limits{})
	if err != nil {
		nc.Close()
		return nil, err
	}
	w := &wire{nc: nc, codec: codec, log: log, pending: map[uint64]chan ipc.Result{}, done: make(chan struct{})}
	if err := w.write(ipc.Hello{Type: "hello", Protocol: ipc.ProtocolVersion, Role: "agent", Token: token, Name: "mcp", SDK: "arena-mcp/" + Version}); err != nil {
		nc.Close()
		return nil, fmt.Errorf("say hello: %w", err)
	}
	nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	stop := context.AfterFunc(ctx, func() { nc.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	for {
		frame, err := ipc.ReadFrame(nc, wireMaxFrame, nil)
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("wait for the welcome: %w", err)
		}
		var head struct {
			Type string `cbor:"type"`
		}
		if err := wireDec.Unmarshal(frame, &head); err != nil {
			continue
		}
		switch head.Type {
		case "error":
			var m ipc.ErrorMsg
			wireDec.Unmarshal(frame, &m)
			nc.Close()
			return nil, &callError{Code: m.Code, Message: m.Message}
		case "welcome":
			var m ipc.Welcome
			if err := wireDec.Unmarshal(frame, &m); err != nil {
				nc.Close()
				return nil, fmt.Errorf("decode the welcome: %w", err)
			}
			nc.SetReadDeadline(time.Time{})
			w.roster.Reset(m.AgentIDs)
			w.seat = newSeat(m.AgentID, m.Mode, m.Tools, w, progressEvery)
			w.seat.episode = max(m.Episode, 1)
			go w.read()
			go w.ping()
			return w.seat, nil
		}
	}
}

func (w *wire) write(msg any) error {
	b, err := w.codec.Marshal(msg)
	if err != nil {
		return err
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	w.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return ipc.WriteFrame(w.nc, b)
}

// read hands the seat what the server sends, until the connection ends.
func (w *wire) read() {
	var err error
	defer func() {
		w.seat.disconnect(err)
		close(w.done)
		w.nc.Close()
	}()
	for {
		var frame []byte
		if frame, err = ipc.ReadFrame(w.nc, wireMaxFrame, nil); err != nil {
			return
		}
		var head struct {
			Type string `cbor:"type"`
		}
		if wireDec.Unmarshal(frame, &head) != nil {
			continue
		}
		switch head.Type {
		case "observation":
			var m ipc.ObservationMsg
			if err := wireDec.Unmarshal(frame, &m); err != nil || m.Observation == nil {
				w.log.Error("mcp: cannot decode an observation", "err", err)
				continue
			}
			w.roster.Observe(m.Observation, m.AgentsLeft)
			w.seat.publish(snap(m.Observation))
		case "result":
			var m ipc.Result
			var id uint64
			if wireDec.Unmarshal(frame, &m) != nil || wireDec.Unmarshal(m.ID, &id) != nil {
				continue
			}
			w.mu.Lock()
			ch := w.pending[id]
			delete(w.pending, id)
			w.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case "error":
			var m ipc.ErrorMsg
			wireDec.Unmarshal(frame, &m)
			if m.Fatal {
				err = &callError{Code: m.Code, Message: m.Message}
				return
			}
			w.seat.refused(m.Code, m.Message)
		case "episode_start":
			var m ipc.EpisodeStart
			if wireDec.Unmarshal(frame, &m) == nil {
				w.roster.Reset(m.AgentIDs)
				w.seat.startEpisode(m.Episode)
			}
		case "episode_end":
			var m ipc.EpisodeEnd
			if wireDec.Unmarshal(frame, &m) == nil {
				w.seat.endEpisode(m.Episode, m.Results, nil, m.Final)
			}
		}
	}
}

func (w *wire) ping() {
	t := time.NewTicker(keepAlive)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			w.write(ipc.Ping{Type: "ping"})
		case <-w.done:
			return
		}
	}
}

func (w *wire) decide(_ context.Context, tick int, d world.Decision) error {
	select {
	case <-w.done:
		return errBackendGone
	default:
	}
	return w.write(ipc.Decision{Type: "decision", Tick: float64(tick), Tool: d.Tool, Params: d.Params})
}

func (w *wire) query(ctx context.Context, tool string, params map[string]any) (world.ActionResult, error) {
	id := w.ids.Add(1)
	raw, err := cbor.Marshal(id)
	if err != nil {
		return world.ActionResult{}, err
	}
	ch := make(chan ipc.Result, 1)
	w.mu.Lock()
	w.pending[id] = ch
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.pending, id)
		w.mu.Unlock()
	}()
	if err := w.write(ipc.Query{Type: "query", ID: raw, Tool: tool, Params: params}); err != nil {
		return world.ActionResult{}, errBackendGone
	}
	select {
	case r := <-ch:
		return world.ActionResult{Tool: tool, Success: r.Success, Data: r.Data, ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage}, nil
	case <-ctx.Done():
		return world.ActionResult{}, ctx.Err()
	case <-w.done:
		return world.ActionResult{}, errBackendGone
	}
}

// close says bye, which frees the slot at once, and hangs up.
func (w *wire) close() {
	w.closeOnce.Do(func() {
		w.write(ipc.Bye{Type: "bye"})
		w.nc.Close()
	})
}
