package server_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/arena-sim/arena/internal/ipcbench"
	"github.com/arena-sim/arena/server"
	"github.com/stretchr/testify/require"
)

// TestObservationFramesAreTheSameOnAnyNumberOfWorkers: with enough agents
// for the workers to build observations at once while the tick goroutine
// encodes and sends those completed (and plans ahead the paths of the
// decisions), every frame each client reads is byte for byte the frame it
// reads when one goroutine does it all. The clients walk (so entities in
// view and their encodings change every tick) and read their observations
// whole. Run with -race, it also checks that what the workers build is not
// read by the sending goroutine before it is complete.
func TestObservationFramesAreTheSameOnAnyNumberOfWorkers(t *testing.T) {
	const agents, ticks = 48, 25
	sc, err := ipcbench.Scenario(agents, 0)
	require.NoError(t, err)
	run := func(workers int) map[string][][]byte {
		addr, done, cancel := startScenario(t, sc, server.Options{Seed: 5, Agents: agents, Mode: "lockstep",
			Ticks: ticks, Workers: workers, DecisionTimeout: time.Minute})
		defer cancel()
		frames := map[string][][]byte{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range agents {
			wg.Go(func() {
				c := dial(t, addr)
				m := c.helloAgent(fmt.Sprintf("agent_%03d", i+1), "")
				id := m["agent_id"].(string)
				var got [][]byte
				for {
					m, raw := c.recv()
					if m["type"] == "episode_end" {
						break
					}
					if m["type"] != "observation" {
						continue
					}
					got = append(got, raw)
					tick := m["tick"].(uint64)
					// Each agent walks to a point of its own, changed every 8 ticks.
					k := float64((i*7 + int(tick/8)*13) % 80)
					c.send(map[string]any{"type": "decision", "tick": tick, "tool": "move_to",
						"params": map[string]any{"target_x": k - 40, "target_z": 40 - k}})
				}
				mu.Lock()
				frames[id] = got
				mu.Unlock()
			})
		}
		wg.Wait()
		<-done
		return frames
	}
	one, two := run(1), run(2)
	require.Len(t, one, agents)
	for id, want := range one {
		got := two[id]
		require.Len(t, got, len(want), id)
		require.GreaterOrEqual(t, len(want), ticks, id)
		for k := range want {
			require.True(t, bytes.Equal(want[k], got[k]), "%s: frame %d differs with two workers:\n%x\none worker:\n%x", id, k, got[k], want[k])
		}
	}
}
