package render

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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

// BenchmarkLongReplayHeap plays ten minutes of scenario time (6,000 ticks at
// 10 ticks a second) of town_square with 16 agents (every component: chat, posts, a market, an economy), through
// the Game at 64 times the speed, with the first agent selected and the
// side pane switched between the history and the conversation every 500
// ticks (the panes' rows made again at every frame, as Draw makes them),
// and samples the live heap after a collection every 500 ticks. It reports
// the heap once playback has started (start-MB), at its end (end-MB), the
// most seen (max-MB) and end minus start (growth-MB). The replay's own
// frames and observations are loaded before the first sample. Drawing is
// left out (BenchmarkDraw, under Xvfb, measures it).
//
//	go test -run '^$' -bench LongReplayHeap -benchtime 1x ./render/
func BenchmarkLongReplayHeap(b *testing.B) {
	const ticks, every = 6000, 500
	sc, err := scenarios.Load("town_square")
	if err != nil {
		b.Fatal(err)
	}
	w, err := sc.NewWorld(scenarios.Options{Seed: 1, Agents: 16, Ticks: ticks})
	if err != nil {
		b.Fatal(err)
	}
	ctrls, err := eval.Controllers(sc, w)
	if err != nil {
		b.Fatal(err)
	}
	src := newReplaySource(w, 1, sc.Limits.DecisionPeriod)
	r := &engine.Runner{World: w, Controllers: ctrls, DecisionPeriod: sc.Limits.DecisionPeriod, MaxTicks: ticks,
		OnObserve: src.observe, OnTick: func(rec *engine.TickRecord) { src.ticked(w, rec) }}
	if _, err := r.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	if src.Ticks() < ticks {
		b.Fatalf("the episode ended at tick %d", src.Ticks())
	}
	heap := func() float64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc) / (1 << 20)
	}
	b.ResetTimer()
	for range b.N {
		src.Seek(0)
		g := NewGame(src)
		g.Layout(1280, 800)
		g.setSpeed(64)
		g.Pump()
		g.Select(src.Frames[0].Agents[0].ID)
		var start, peak, end float64
		lines := 0
		var samples []string
		for next := 0; g.Model.Tick < ticks; {
			g.Pump()
			g.layoutOverlays()
			if g.Model.Tick >= next {
				g.Pane = []string{PaneHistory, PaneConversation}[next/every%2]
				end = heap()
				samples = append(samples, fmt.Sprintf("t%d %.1f", g.Model.Tick, end))
				if next == 0 {
					start = end
				}
				peak = max(peak, end)
				next += every
			}
			lines = len(g.Model.Talk)
		}
		end = heap()
		b.Logf("live heap (MB) by tick: %s; end %.1f", strings.Join(samples, ", "), end)
		b.ReportMetric(start, "start-MB")
		b.ReportMetric(end, "end-MB")
		b.ReportMetric(max(peak, end), "max-MB")
		b.ReportMetric(end-start, "growth-MB")
		b.ReportMetric(float64(lines), "talk-lines")
		b.ReportMetric(float64(len(g.Model.History[g.Model.Selected])), "history")
	}
}
