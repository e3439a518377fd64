package engine_test

import (
	"context"
	"testing"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/internal/benchworld"
	"github.com/stretchr/testify/require"
)

// BenchmarkWorldStep1000 measures whole ticks of a 256×256 world with obstacles,
// hazards and 1,000 built-in foragers: observations, decisions, tool calls,
// path planning, movement with collisions and hazards. One op is one tick; the
// agent-steps/s metric is the figure docs/performance.md reports.
func BenchmarkWorldStep1000(b *testing.B) {
	w, ctrls, err := benchworld.New(benchworld.Options{Seed: 1, Agents: 1000, Size: 256})
	require.NoError(b, err)
	// Warm up past the first tick, when every forager plans its first route.
	warm := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: 20}
	_, err = warm.Run(context.Background())
	require.NoError(b, err)
	r := &engine.Runner{World: w, Controllers: ctrls}
	b.ResetTimer()
	r.MaxTicks = w.Tick() + b.N
	_, err = r.Run(context.Background())
	require.NoError(b, err)
	b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "agent-steps/s")
}
