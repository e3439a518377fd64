package render

import (
	"context"
	"testing"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/stretchr/testify/require"
)

// poller polls a source for frames, keeping those that came in the same
// batch as the one it was waiting for.
type poller struct {
	src  Source
	kept []ipc.Frame
}

// until returns the first frame (from those kept, then polled) that
// satisfies ok, dropping the frames before it; it fails the test after 10 s.
func (p *poller) until(t *testing.T, what string, ok func(ipc.Frame) bool) ipc.Frame {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		for i, f := range p.kept {
			if ok(f) {
				p.kept = p.kept[i+1:]
				return f
			}
		}
		p.kept = p.src.Poll()
	}
	t.Fatalf("no frame %s within 10s (source error: %v)", what, p.src.Err())
	return ipc.Frame{}
}

func TestLocalSource(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	w, err := sc.NewWorld(scenarios.Options{Seed: 2, Agents: 3})
	require.NoError(t, err)
	ctrls, err := eval.Controllers(sc, w)
	require.NoError(t, err)
	ticked := 0
	r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: 200, OnTick: func(*engine.TickRecord) { ticked++ }}
	src := NewLocalSource()
	p := &poller{src: src}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, src.Control("pause", 0))
	src.Watch(ctx, r, 1, "local")
	done := make(chan *engine.Results, 1)
	go func() {
		res, err := r.Run(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()

	// The first frame describes the world and carries the obstacles; paused,
	// the run waits after its first tick.
	first := p.until(t, "describing the world", func(f ipc.Frame) bool { return f.World != nil })
	require.Equal(t, "local", first.World.Mode)
	require.Equal(t, w.TickRate(), first.World.TickRate)
	require.Equal(t, len(w.Obstacles()), countType(first.Entities, "obstacle"))
	f1 := p.until(t, "after tick 0", func(f ipc.Frame) bool { return f.Tick == 1 })
	require.True(t, f1.Paused)
	require.Len(t, f1.Decisions, 3, "every agent's decision of tick 0")

	// Inspecting while paused: the waiting tick loop sends the observation.
	id := w.Agents()[0].ID
	require.NoError(t, src.Inspect(id))
	in := p.until(t, "with the observation", func(f ipc.Frame) bool { return f.Inspect != nil })
	require.Equal(t, 1, in.Tick)
	require.Equal(t, 0, in.Inspect.Tick)
	var m Model
	m.Selected = id
	m.Apply(in)
	obs, err := m.Observation()
	require.NoError(t, err)
	require.Equal(t, id, obs.AgentID)

	// One step is one tick, with the inspected observation of that tick.
	require.NoError(t, src.Control("step", 1))
	f2 := p.until(t, "after the step", func(f ipc.Frame) bool { return f.Tick == 2 })
	require.Equal(t, 1, f2.Inspect.Tick)
	require.Equal(t, 2, ticked, "the run went on by exactly the step")

	// Resumed at 100 times the tick rate the run plays on; closed, the
	// viewer no longer holds it and it ends.
	require.NoError(t, src.Control("speed", 100))
	require.NoError(t, src.Control("resume", 0))
	p.until(t, "playing", func(f ipc.Frame) bool { return f.Tick > 5 && !f.Paused })
	src.Close()
	select {
	case res := <-done:
		require.Equal(t, 200, res.Ticks)
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not end once the viewer closed")
	}
	require.Empty(t, src.Poll(), "a closed source keeps no frames")
}
