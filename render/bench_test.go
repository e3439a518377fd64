package render

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/scenarios"
)

// BenchmarkReplaySource is what opening a replay in the viewer costs: the
// re-simulation, a frame per tick and every agent's observations kept (a
// whole town_square episode, 500 ticks of 6 agents with every component).
func BenchmarkReplaySource(b *testing.B) {
	sc, err := scenarios.Load("town_square")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if _, err := eval.Episode(context.Background(), eval.Config{Scenario: sc, Seed: 1, Recorder: recorder{dir, sc}}, 1, nil); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "replay.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	rep, err := engine.ReadReplay(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	h := rep.Header
	b.ResetTimer()
	for range b.N {
		w, err := sc.NewWorld(scenarios.Options{Seed: h.Seed, Agents: len(h.Agents), Ticks: h.TimeLimit})
		if err != nil {
			b.Fatal(err)
		}
		src, err := NewReplaySource(context.Background(), rep, w)
		if err != nil {
			b.Fatal(err)
		}
		kept := 0
		for _, l := range src.obs {
			for _, o := range l {
				kept += len(o.b)
			}
		}
		b.ReportMetric(float64(len(src.Frames)-1), "ticks")
		b.ReportMetric(float64(kept)/(1<<20), "obs-MiB")
	}
}
