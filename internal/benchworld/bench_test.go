package benchworld_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/internal/benchworld"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// BenchmarkScaling measures whole ticks (observations, built-in foragers'
// decisions, tool calls with path planning, the world step) of generated
// worlds of several sizes and crowds, on one goroutine. One op is one tick
// (see runTicks for what is left out);
// ns/agent-step is wall time, cpu-ns/agent-step the process's CPU time (GC
// included), which a busy host disturbs less: docs/performance.md's scaling
// table reports both.
func BenchmarkScaling(b *testing.B) {
	for _, c := range []struct {
		agents int
		size   float64
	}{
		{100, 256}, {1000, 256}, {10000, 256},
		{100, 512}, {1000, 512}, {10000, 512},
		{100, 1024}, {1000, 1024}, {10000, 1024}, {16000, 1024},
	} {
		// One world per case: the testing package calls the function with
		// b.N = 1 first, and the ticks go on from there.
		var w *world.World
		var ctrls map[string]engine.Controller
		b.Run(fmt.Sprintf("agents=%d/size=%g", c.agents, c.size), func(b *testing.B) {
			if w == nil {
				var err error
				w, ctrls, err = benchworld.New(benchworld.Options{Seed: 1, Agents: c.agents, Size: c.size})
				require.NoError(b, err)
				// Warm up past the first ticks, when every forager plans its first route.
				warm := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: 20}
				_, err = warm.Run(context.Background())
				require.NoError(b, err)
			}
			cpu := runTicks(b, w, ctrls)
			steps := float64(b.N) * float64(c.agents)
			b.ReportMetric(b.Elapsed().Seconds()*1e9/steps, "ns/agent-step")
			b.ReportMetric(steps/b.Elapsed().Seconds(), "agent-steps/s")
			if cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/steps, "cpu-ns/agent-step")
			}
		})
	}
}

// runTicks runs b.N measured ticks and returns the process's CPU time
// during them. It runs one tick more first and measures from its end, so
// that what a Runner does once per run (allocating the observations,
// collecting the results at the end) does not weigh on the few ticks that
// large worlds run. It is a function of its own so that callgrind can count
// its instructions alone (--toggle-collect='*benchworld_test.runTicks'),
// without building the world and the warm-up.
//
//go:noinline
func runTicks(b *testing.B, w *world.World, ctrls map[string]engine.Controller) time.Duration {
	first := w.Tick()
	var cpu time.Duration
	// OnTick reads the tick only: without OmitDecisions every tick would
	// also copy its decisions into a record (136 bytes an agent, 2 MB a
	// tick at 16,000 agents), which arena bench does not count either.
	r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: first + 1 + b.N, OmitDecisions: true,
		OnTick: func(rec *engine.TickRecord) {
			switch rec.Tick {
			case first:
				b.ResetTimer()
				cpu = cpuTime()
			case first + b.N:
				b.StopTimer()
				cpu = cpuTime() - cpu
			}
		}}
	_, err := r.Run(context.Background())
	require.NoError(b, err)
	return cpu
}

// BenchmarkWorkersSpeedup measures issue 19's first target, two workers
// against one at 1,000 agents on 256², on twin worlds that take turns of 25
// ticks (benchworld.Interleave), so that the host's swings slow both alike:
// b.N ticks each after 20 warm ones. speedup is the one-worker side's time
// over the two-worker side's; turn-speedup-p25 and -p75 the quartiles of the
// same ratio over each pair of turns. ns/op counts the worlds' building too:
// read the metrics.
func BenchmarkWorkersSpeedup(b *testing.B) {
	res, err := benchworld.Interleave(context.Background(), benchworld.Twins{
		Options: benchworld.Options{Seed: 1, Agents: 1000, Size: 256}, Warm: 20, Ticks: b.N, Workers: 2, Against: 1})
	require.NoError(b, err)
	b.ReportMetric(res.Speedup(), "speedup")
	b.ReportMetric(res.AgentStepsPerSec(), "agent-steps/s")
	b.ReportMetric(res.AgainstAgentStepsPerSec(), "against-agent-steps/s")
	p25, p75 := res.TurnQuartiles()
	b.ReportMetric(p25, "turn-speedup-p25")
	b.ReportMetric(p75, "turn-speedup-p75")
}

// BenchmarkDensity measures issue 19's constant-density target, the cost of
// an agent-step at 16,000 agents on 1024² over its cost at 1,000 on 256²
// (one worker each), on the two worlds taking turns of the same 32 ticks,
// so that the host's swings, which moved separate runs of BenchmarkScaling
// by a fifth, weigh on both alike, and each pair of turns covers the same
// ticks of both episodes (an agent-step costs more later on, as crowds
// form): b.N ticks each, after 20 warm ones.
// density-ratio is the large world's time per agent-step over the small
// one's; turn-ratio-p25 and -p75 the quartiles of the same ratio over each
// pair of turns. ns/op counts the worlds' building too: read the metrics.
func BenchmarkDensity(b *testing.B) {
	large := benchworld.Options{Seed: 1, Agents: 16000, Size: 1024}
	res, err := benchworld.Interleave(context.Background(), benchworld.Twins{
		Options: benchworld.Options{Seed: 1, Agents: 1000, Size: 256}, Warm: 20, Ticks: b.N, Turn: 32, Workers: 1,
		AgainstOptions: &large, Against: 1})
	require.NoError(b, err)
	b.ReportMetric(res.Speedup(), "density-ratio")
	b.ReportMetric(1e9/res.AgentStepsPerSec(), "small-ns/agent-step")
	b.ReportMetric(1e9/res.AgainstAgentStepsPerSec(), "large-ns/agent-step")
	p25, p75 := res.TurnQuartiles()
	b.ReportMetric(p25, "turn-ratio-p25")
	b.ReportMetric(p75, "turn-ratio-p75")
}
