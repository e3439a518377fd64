package benchworld_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/internal/benchworld"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// The foragers ask for their state ahead of Decide (engine.Prefetcher).
var _ engine.Prefetcher = (*bots.Forager)(nil)

// TestPrefetchChangesNoState runs twin worlds, one with the prefetches and
// one without, on one worker and on two, and compares their state after
// every tick, also across the numbers of workers: a prefetch that wrote
// anything would part them. Under -race (test.sh runs it so) it also fails
// when a worker's prefetches read agents that another worker writes
// meanwhile, which no hash shows.
func TestPrefetchChangesNoState(t *testing.T) {
	var byWorkers [][]uint64
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprint("workers=", workers), func(t *testing.T) {
			var hashes [2][]uint64
			for side, on := range []bool{true, false} {
				w, ctrls, err := benchworld.New(benchworld.Options{Seed: 3, Agents: 300, Size: 128})
				require.NoError(t, err)
				w.SetPrefetch(on)
				require.Equal(t, on, w.Prefetching())
				r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: 60, Workers: workers,
					OnTick: func(*engine.TickRecord) { hashes[side] = append(hashes[side], w.StateHash()) }}
				_, err = r.Run(context.Background())
				require.NoError(t, err)
			}
			require.Len(t, hashes[0], 60)
			require.Equal(t, hashes[0], hashes[1])
			byWorkers = append(byWorkers, hashes[0])
		})
	}
	require.Len(t, byWorkers, 2)
	require.Equal(t, byWorkers[0], byWorkers[1], "one worker and two end every tick alike")
}

// BenchmarkPrefetchGain measures what the prefetches gain (World.SetPrefetch)
// in one process (gainInTurns). 1,000 agents on 256² stay in the last-level
// cache from tick to tick, 16,000 on 1024² do not.
func BenchmarkPrefetchGain(b *testing.B) {
	for _, c := range []struct {
		agents, workers int
		size            float64
	}{{1000, 1, 256}, {16000, 1, 1024}, {16000, 2, 1024}} {
		var tw turnsWorld
		b.Run(fmt.Sprintf("agents=%d/size=%g/workers=%d", c.agents, c.size, c.workers), func(b *testing.B) {
			tw.gain(b, c.agents, c.workers, c.size, (*world.World).SetPrefetch)
		})
	}
}

// BenchmarkParallelWalksGain measures what the world step's walks on two
// parts gain (World.SetParallelWalks) on two workers, in one process
// (turnsWorld.gain).
func BenchmarkParallelWalksGain(b *testing.B) {
	for _, c := range []struct {
		agents int
		size   float64
	}{{1000, 256}, {10000, 256}, {10000, 1024}} {
		var tw turnsWorld
		b.Run(fmt.Sprintf("agents=%d/size=%g", c.agents, c.size), func(b *testing.B) {
			tw.gain(b, c.agents, 2, c.size, (*world.World).SetParallelWalks)
		})
	}
}

// turnsWorld is a benchmark's world, built once for all its runs.
type turnsWorld struct {
	w     *world.World
	ctrls map[string]engine.Controller
}

// gain measures what a switch of the world (set) gains, in one process, on
// one world whose ticks take turns with it on and off (on, off, off, on, …,
// so that neither side always comes first): gain is the ticks' time off
// over the time on, immune to the host's swings over seconds that make two
// separate runs differ by a tenth. One op is one tick, after 20 warm ones.
func (tw *turnsWorld) gain(b *testing.B, agents, workers int, size float64, set func(w *world.World, on bool)) {
	if tw.w == nil {
		var err error
		tw.w, tw.ctrls, err = benchworld.New(benchworld.Options{Seed: 1, Agents: agents, Size: size})
		require.NoError(b, err)
		warm := &engine.Runner{World: tw.w, Controllers: tw.ctrls, MaxTicks: 20, Workers: workers}
		_, err = warm.Run(context.Background())
		require.NoError(b, err)
	}
	w, ctrls := tw.w, tw.ctrls
	first := w.Tick()
	var sum [2]time.Duration // off, on
	last := time.Now()
	on := true
	set(w, on)
	r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: first + b.N, Workers: workers, OmitDecisions: true,
		OnTick: func(rec *engine.TickRecord) {
			now := time.Now()
			if on {
				sum[1] += now.Sub(last)
			} else {
				sum[0] += now.Sub(last)
			}
			k := rec.Tick - first + 1 // the next tick's place
			on = k%4 == 0 || k%4 == 3
			set(w, on)
			last = time.Now()
		}}
	b.ResetTimer()
	_, err := r.Run(context.Background())
	require.NoError(b, err)
	set(w, true)
	if sum[0] > 0 && sum[1] > 0 {
		b.ReportMetric(sum[0].Seconds()/sum[1].Seconds(), "gain")
	}
}
