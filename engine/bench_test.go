package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/internal/benchworld"
	"github.com/stretchr/testify/require"
)

// BenchmarkWorldStep1000 measures whole ticks of a 256×256 world with obstacles,
// hazards and 1,000 built-in foragers: observations, decisions, tool calls,
// path planning, movement with collisions and hazards. One op is one tick; the
// agent-steps/s metric is the figure docs/performance.md reports. The runner
// has GOMAXPROCS workers (-cpu 1: one).
func BenchmarkWorldStep1000(b *testing.B) { benchWorldStep(b, 0) }

// BenchmarkWorldStepWorkers is BenchmarkWorldStep1000 with 1, 2 and 4
// workers, for the ratio of parallel to one-worker ticks (run it with -cpu 2
// or more).
func BenchmarkWorldStepWorkers(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) { benchWorldStep(b, n) })
	}
}

func benchWorldStep(b *testing.B, workers int) {
	w, ctrls, err := benchworld.New(benchworld.Options{Seed: 1, Agents: 1000, Size: 256})
	require.NoError(b, err)
	// Warm up past the first tick, when every forager plans its first route.
	r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: 20, Workers: workers}
	_, err = r.Run(context.Background())
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	r.MaxTicks = w.Tick() + b.N
	_, err = r.Run(context.Background())
	require.NoError(b, err)
	b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "agent-steps/s")
}
