package eval_test

import (
	"context"
	"testing"

	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/scenarios"
)

// BenchmarkEpisode plays whole episodes of every built-in scenario with its
// built-in agents on one goroutine and reports episodes per second (and the
// ticks an episode lasted, which differ by scenario and seed).
func BenchmarkEpisode(b *testing.B) {
	for _, name := range scenarios.Builtin() {
		b.Run(name, func(b *testing.B) {
			sc, err := scenarios.Load(name)
			if err != nil {
				b.Fatal(err)
			}
			cfg := eval.Config{Scenario: sc, Seed: 1}
			ticks := 0
			b.ResetTimer()
			for i := range b.N {
				res, err := eval.Episode(context.Background(), cfg, i+1, nil)
				if err != nil {
					b.Fatal(err)
				}
				ticks += res.Ticks
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "episodes/s")
			b.ReportMetric(float64(ticks)/float64(b.N), "ticks/episode")
		})
	}
}
