package server_test

import (
	"testing"
	"time"

	"github.com/arena-sim/arena/server"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

// worldTick asks the world's tick with a query (answered from the world as
// it is, paused or not).
func (p *handAgent) worldTick() int {
	p.t.Helper()
	p.send(map[string]any{"type": "query", "id": "tick", "tool": "query_world", "params": map[string]any{"radius": 1}})
	for {
		m, raw := p.recv()
		if m["type"] != "result" {
			continue
		}
		var r struct {
			Data struct {
				QueryResult struct {
					Tick int `cbor:"tick"`
				} `cbor:"query_result"`
			} `cbor:"data"`
		}
		require.NoError(p.t, cbor.Unmarshal(raw, &r))
		return r.Data.QueryResult.Tick
	}
}

// Fixed (server/handle.go, control and handle): a pause outlived the
// spectator that asked for it: if it disconnected, the world stayed paused
// for ever. A pause belongs to the sessions that paused (or stepped) the
// world; once none of them is connected, the world runs again, and the
// spectators left are sent a frame that says so.
func TestAPauseDoesNotOutliveItsSpectators(t *testing.T) {
	log := newServerLog()
	addr, _, cancel := start(t, server.Options{OpenSpectators: true, Seed: 1, Agents: 1, Ticks: 50, DecisionTimeout: 5 * time.Second, Log: log.logger()})
	defer cancel()
	watcher := dial(t, addr) // never pauses
	watcher.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator"})
	// Two spectators pause before the start: the world stops after tick 0.
	first, second := dial(t, addr), dial(t, addr)
	for _, s := range []*client{first, second} {
		s.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator"})
		s.send(map[string]any{"type": "control", "command": "pause"})
		s.send(map[string]any{"type": "query", "tool": "query_world"}) // NOT_READY: the pause was handled
		for m, _ := s.recv(); m["type"] != "error"; m, _ = s.recv() {
		}
	}
	agent := newHandAgent(t, addr, "agent_001", "")
	agent.play(0)
	for f := watcher.nextFrame(); f.Tick < 1 || !f.Paused; f = watcher.nextFrame() {
	}
	// One leaves: still paused.
	first.nc.Close()
	log.wait(t, "spectator disconnected")
	require.Equal(t, 1, agent.worldTick())
	// The other leaves: the world runs again, and the spectators are told.
	second.nc.Close()
	log.wait(t, "resumed: no spectator that paused the world is connected")
	for f := watcher.nextFrame(); f.Paused; f = watcher.nextFrame() {
	}
	agent.play(1)
	agent.play(2)
	require.Equal(t, []int{0, 1, 2}, agent.seen)

	// A resume releases every pause: a spectator that paused, was resumed
	// by another that then paused, and left, does not take that pause away.
	pauser := dial(t, addr)
	pauser.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator"})
	pauseWorld(pauser)
	watcher.send(map[string]any{"type": "control", "command": "resume"})
	watcher.send(map[string]any{"type": "control", "command": "pause"})
	watcher.send(map[string]any{"type": "query", "tool": "query_world"}) // NOT_READY: both were handled
	for m, _ := watcher.recv(); m["type"] != "error"; m, _ = watcher.recv() {
	}
	pauser.nc.Close()
	log.wait(t, "spectator disconnected")
	agent.worldTick() // the world's goroutine is past the end of pauser's session
	for {
		select {
		case e := <-log:
			require.NotEqual(t, "resumed: no spectator that paused the world is connected", e, "the watcher's pause holds")
			continue
		default:
		}
		break
	}
}
