package nav

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// genArena fills a size×size grid deterministically from seed: random
// rectangles and circles up to about 15% Blocked coverage, a few long walls
// with gaps, and some Costly patches.
func genArena(size int, seed uint64) *Grid {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g := NewGrid(size, size)
	fs := float64(size)
	// Long walls with gaps.
	for w := 0; w < 4; w++ {
		horizontal := w%2 == 0
		at := 0.15*fs + rng.Float64()*0.7*fs
		from, to := 0.05*fs+rng.Float64()*0.2*fs, 0.75*fs+rng.Float64()*0.2*fs
		for u := from; u < to; {
			seg := 8 + rng.Float64()*40
			end := min(u+seg, to)
			if horizontal {
				g.FillRect(Point{u, at}, Point{end, at + 0.8}, Blocked)
			} else {
				g.FillRect(Point{at, u}, Point{at + 0.8, end}, Blocked)
			}
			u = end + 2 + rng.Float64()*4 // gap
		}
	}
	// Costly patches.
	for i := 0; i < 12; i++ {
		c := Point{rng.Float64() * fs, rng.Float64() * fs}
		if i%2 == 0 {
			g.FillCircle(c, 2+rng.Float64()*6, Costly)
		} else {
			g.FillRect(c, Point{c.X + 3 + rng.Float64()*12, c.Y + 2 + rng.Float64()*5}, Costly)
		}
	}
	// Obstacles up to ~15% coverage.
	target := int(0.15 * fs * fs)
	for g.Count(Blocked) < target {
		c := Point{rng.Float64() * fs, rng.Float64() * fs}
		if rng.IntN(2) == 0 {
			g.FillCircle(c, 0.5+rng.Float64()*4, Blocked)
		} else {
			g.FillRect(c, Point{c.X + 1 + rng.Float64()*10, c.Y + 1 + rng.Float64()*10}, Blocked)
		}
	}
	return g
}

// randomQueries returns n deterministic start/goal pairs of random points in
// walkable cells of the largest component, with start and goal reachable.
func randomQueries(p *Planner, n int, seed uint64) [][2]Point {
	rng := rand.New(rand.NewPCG(seed, 7))
	g := p.Grid()
	randPoint := func() (Point, Cell) {
		for {
			c := Cell{rng.IntN(g.Cols()), rng.IntN(g.Rows())}
			if g.At(c) != Blocked {
				return Point{float64(c.X) + rng.Float64(), float64(c.Y) + rng.Float64()}, c
			}
		}
	}
	out := make([][2]Point, 0, n)
	for len(out) < n {
		a, ca := randPoint()
		b, cb := randPoint()
		if p.Reachable(ca, cb) {
			out = append(out, [2]Point{a, b})
		}
	}
	return out
}

// BenchmarkFindPath256 measures FindPath on a 256×256 obstacle map between
// random reachable points and reports the median and 99th-percentile query
// time.
func BenchmarkFindPath256(b *testing.B) {
	g := genArena(256, 1)
	t0 := time.Now()
	p := NewPlanner(g, Options{})
	b.Logf("256x256: %.1f%% blocked, %.1f%% costly, planner build %v, %d abstract nodes, %d edges",
		100*float64(g.Count(Blocked))/float64(256*256), 100*float64(g.Count(Costly))/float64(256*256),
		time.Since(t0).Round(time.Microsecond), len(p.abs.nodeCell), len(p.abs.edges))
	queries := randomQueries(p, 2048, 2)
	durs := make([]time.Duration, 0, b.N)
	var waypoints int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := queries[i%len(queries)]
		t := time.Now()
		path, err := p.FindPath(q[0], q[1])
		durs = append(durs, time.Since(t))
		if err != nil {
			b.Fatal(err)
		}
		waypoints += len(path)
	}
	b.StopTimer()
	slices.Sort(durs)
	pct := func(q float64) float64 {
		return float64(durs[int(q*float64(len(durs)-1))].Nanoseconds()) / 1000
	}
	b.ReportMetric(pct(0.5), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(waypoints)/float64(b.N), "waypoints/op")
}
