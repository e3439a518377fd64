package nav

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// mapFamilies are the generated map families path quality is measured on.
// Each generator is deterministic in (size, seed).
var mapFamilies = []struct {
	name string
	gen  func(size int, seed uint64) *Grid
}{
	{"rectangles", genRectangles},
	{"maze1", func(n int, s uint64) *Grid { return genMaze(n, 1, s) }},
	{"maze2", func(n int, s uint64) *Grid { return genMaze(n, 2, s) }},
	{"maze3", func(n int, s uint64) *Grid { return genMaze(n, 3, s) }},
	{"maze4", func(n int, s uint64) *Grid { return genMaze(n, 4, s) }},
	{"rooms", genRooms},
	{"noise", genNoise},
	{"caves", genCaves},
}

func familyRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// genRectangles scatters axis-aligned rectangles (1–24 cells a side) until
// about 25% of the cells are Blocked.
func genRectangles(size int, seed uint64) *Grid {
	rng := familyRNG(seed)
	g := NewGrid(size, size)
	for g.Count(Blocked) < size*size/4 {
		x, y := rng.IntN(size), rng.IntN(size)
		w, h := 1+rng.IntN(24), 1+rng.IntN(24)
		for yy := y; yy < min(y+h, size); yy++ {
			for xx := x; xx < min(x+w, size); xx++ {
				g.Set(Cell{xx, yy}, Blocked)
			}
		}
	}
	return g
}

// genMaze carves a perfect maze (randomised depth-first search) whose
// corridors are corridor cells wide and whose walls are one cell thick.
func genMaze(size, corridor int, seed uint64) *Grid {
	rng := familyRNG(seed)
	g := NewGrid(size, size)
	for i := range g.tiles {
		g.tiles[i] = Blocked
	}
	pitch := corridor + 1
	n := (size - 1) / pitch
	carve := func(x0, y0, w, h int) {
		for y := y0; y < y0+h; y++ {
			for x := x0; x < x0+w; x++ {
				g.Set(Cell{x, y}, Free)
			}
		}
	}
	seen := make([]bool, n*n)
	stack := []int{0}
	seen[0] = true
	carve(1, 1, corridor, corridor)
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		cx, cy := c%n, c/n
		var next []int
		for _, d := range [4][2]int{{1, 0}, {-1, 0}, {0, 1}, {0, -1}} {
			nx, ny := cx+d[0], cy+d[1]
			if nx >= 0 && ny >= 0 && nx < n && ny < n && !seen[ny*n+nx] {
				next = append(next, ny*n+nx)
			}
		}
		if len(next) == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		m := next[rng.IntN(len(next))]
		mx, my := m%n, m/n
		seen[m] = true
		carve(1+mx*pitch, 1+my*pitch, corridor, corridor)
		// The wall between the two cells.
		x0, y0 := 1+min(cx, mx)*pitch, 1+min(cy, my)*pitch
		if mx != cx {
			carve(x0+corridor, y0, 1, corridor)
		} else {
			carve(x0, y0+corridor, corridor, 1)
		}
		stack = append(stack, m)
	}
	return g
}

// genRooms cuts the map into 16-cell rooms with one-cell walls and opens
// 1–2 doors (2–4 cells wide) in most walls.
func genRooms(size int, seed uint64) *Grid {
	rng := familyRNG(seed)
	g := NewGrid(size, size)
	const room = 16
	for k := room; k < size; k += room {
		for u := 0; u < size; u++ {
			g.Set(Cell{k, u}, Blocked)
			g.Set(Cell{u, k}, Blocked)
		}
	}
	for k := room; k < size; k += room {
		for r0 := 0; r0 < size; r0 += room {
			for _, vertical := range []bool{false, true} {
				if rng.IntN(5) == 0 {
					continue // a closed wall
				}
				for d := 0; d < 1+rng.IntN(2); d++ {
					w := 2 + rng.IntN(3)
					at := r0 + 1 + rng.IntN(room-1-w)
					for u := at; u < at+w; u++ {
						if vertical {
							g.Set(Cell{k, u}, Free)
						} else {
							g.Set(Cell{u, k}, Free)
						}
					}
				}
			}
		}
	}
	return g
}

// genNoise blocks each cell independently with probability 0.2.
func genNoise(size int, seed uint64) *Grid {
	rng := familyRNG(seed)
	g := NewGrid(size, size)
	for i := range g.tiles {
		if rng.Float64() < 0.2 {
			g.tiles[i] = Blocked
		}
	}
	return g
}

// genCaves runs a cellular automaton (45% initial fill, four rounds of the
// 4-5 rule) for cave-like maps.
func genCaves(size int, seed uint64) *Grid {
	rng := familyRNG(seed)
	g := NewGrid(size, size)
	for i := range g.tiles {
		if rng.Float64() < 0.45 {
			g.tiles[i] = Blocked
		}
	}
	for round := 0; round < 4; round++ {
		next := g.Clone()
		for y := 0; y < size; y++ {
			for x := 0; x < size; x++ {
				n := 0
				for dy := -1; dy <= 1; dy++ {
					for dx := -1; dx <= 1; dx++ {
						if (dx != 0 || dy != 0) && g.at(x+dx, y+dy) == Blocked {
							n++
						}
					}
				}
				switch {
				case n >= 5:
					next.Set(Cell{x, y}, Blocked)
				case n < 4:
					next.Set(Cell{x, y}, Free)
				}
			}
		}
		g = next
	}
	return g
}

// centreQueries returns n deterministic reachable pairs of distinct walkable
// cell centres.
func centreQueries(p *Planner, n int, seed uint64) [][2]Point {
	rng := rand.New(rand.NewPCG(seed, 11))
	g := p.Grid()
	cell := func() Cell {
		for {
			c := Cell{rng.IntN(g.Cols()), rng.IntN(g.Rows())}
			if g.At(c) != Blocked {
				return c
			}
		}
	}
	out := make([][2]Point, 0, n)
	for len(out) < n {
		a, b := cell(), cell()
		if a != b && p.Reachable(a, b) {
			out = append(out, [2]Point{a.Center(), b.Center()})
		}
	}
	return out
}

// qualityStats compares planner paths with the oracle's optimum.
type qualityStats struct {
	n, invalid  int
	sum, worst  float64
	worstQuery  [2]Point
	belowOracle int // paths shorter than the optimum: an oracle or validity bug
	ratios      []float64
	failures    []string
}

func (s *qualityStats) add(g *Grid, o *anyAngleOracle, from, to Point, path []Point, err error) {
	s.n++
	if err == nil {
		err = checkPath(g, from, to, path)
	}
	if err != nil {
		s.invalid++
		s.failures = append(s.failures, fmt.Sprintf("%v→%v: %v", from, to, err))
		return
	}
	opt := o.shortest(from, to)
	r := PathLength(path) / opt
	if opt == 0 {
		r = 1
	}
	if r < 1-1e-9 {
		s.belowOracle++
		s.failures = append(s.failures, fmt.Sprintf("%v→%v: length %.6f below the optimum %.6f", from, to, PathLength(path), opt))
	}
	s.sum += r
	s.ratios = append(s.ratios, r)
	if r > s.worst {
		s.worst, s.worstQuery = r, [2]Point{from, to}
	}
}

func (s *qualityStats) mean() float64 { return s.sum / float64(max(1, len(s.ratios))) }

func (s *qualityStats) merge(o *qualityStats) {
	s.n += o.n
	s.invalid += o.invalid
	s.sum += o.sum
	s.belowOracle += o.belowOracle
	s.ratios = append(s.ratios, o.ratios...)
	s.failures = append(s.failures, o.failures...)
	if o.worst > s.worst {
		s.worst, s.worstQuery = o.worst, o.worstQuery
	}
}

func (s *qualityStats) longerThan(x float64) int {
	n := 0
	for _, r := range s.ratios {
		if r > x {
			n++
		}
	}
	return n
}

// familyQuality plans queries per map between cell centres on every family
// for the given sizes and seeds and compares them with the oracle.
func familyQuality(tb testing.TB, sizes []int, seeds []uint64, queries int) map[string]*qualityStats {
	tb.Helper()
	out := map[string]*qualityStats{}
	for _, f := range mapFamilies {
		st := &qualityStats{}
		for _, size := range sizes {
			for _, seed := range seeds {
				g := f.gen(size, seed)
				p := NewPlanner(g, Options{})
				o := newAnyAngleOracle(g)
				for _, q := range centreQueries(p, queries, seed) {
					path, err := p.FindPath(q[0], q[1])
					st.add(p.Grid(), o, q[0], q[1], path, err)
				}
			}
		}
		out[f.name] = st
	}
	return out
}

// TestPathQualityFamilies holds the planner to mean ≤ 1.01 and worst ≤ 1.05
// times the exact any-angle optimum on every generated map family (128² and
// 256² maps; 128² only under the race detector), with every path valid and
// none below the optimum.
func TestPathQualityFamilies(t *testing.T) {
	if testing.Short() {
		t.Skip("oracle over 16 maps: not in -short")
	}
	stats := familyQuality(t, qualitySizes, []uint64{1}, 60)
	all := &qualityStats{}
	for _, f := range mapFamilies {
		st := stats[f.name]
		t.Logf("%-10s paths %4d mean %.4f worst %.4f (%v→%v)", f.name, st.n, st.mean(), st.worst, st.worstQuery[0], st.worstQuery[1])
		all.merge(st)
	}
	t.Logf("all        paths %4d mean %.4f worst %.4f", all.n, all.mean(), all.worst)
	for _, f := range mapFamilies {
		st := stats[f.name]
		require.Zero(t, st.invalid, "%s: %v", f.name, st.failures)
		require.Zero(t, st.belowOracle, "%s: %v", f.name, st.failures)
		require.LessOrEqual(t, st.mean(), 1.01, f.name)
		require.LessOrEqual(t, st.worst, 1.05, f.name)
	}
	require.LessOrEqual(t, all.mean(), 1.01)
}

// TestOracleKnownOptima checks the oracle on maps whose optimum is known by
// hand, and its line of sight on the cases the planner's semantics define.
func TestOracleKnownOptima(t *testing.T) {
	g := NewGrid(10, 10)
	for y := 2; y < 8; y++ {
		g.Set(Cell{5, y}, Blocked) // a wall x∈[5,6], y∈[2,8]
	}
	o := newAnyAngleOracle(g)
	require.Len(t, o.vx, 4)
	// Straight line with nothing in the way.
	require.InDelta(t, 4.0, o.shortest(Point{0.5, 0.5}, Point{4.5, 0.5}), 1e-12)
	// Around the wall's top: (2.5,5.5) → (5,8) → (6,8) → (8.5,5.5).
	want := math.Hypot(2.5, 2.5) + 1 + math.Hypot(2.5, 2.5)
	require.InDelta(t, want, o.shortest(Point{2.5, 5.5}, Point{8.5, 5.5}), 1e-12)
	// Along the wall's face is allowed.
	require.InDelta(t, 8.0, o.shortest(Point{6, 1}, Point{6, 9}), 1e-12)

	// Line-of-sight rules.
	d := NewGrid(4, 4)
	d.Set(Cell{1, 1}, Blocked)
	d.Set(Cell{2, 2}, Blocked)
	require.False(t, clearDoubled(d, 2, 6, 6, 2), "squeezing between diagonal blocked cells")
	require.True(t, clearDoubled(d, 0, 0, 2, 6), "touching a corner only")
	require.True(t, clearDoubled(d, 2, 0, 2, 8), "along a face")
	d.Set(Cell{0, 1}, Blocked)
	require.False(t, clearDoubled(d, 2, 0, 2, 8), "between two blocked cells sharing an edge")
	require.False(t, clearDoubled(d, 1, 1, 5, 5), "through a blocked interior")
	require.True(t, clearDoubled(d, 1, 1, 1, 1))

	// No valid planner path is shorter than the oracle's optimum.
	for seed := uint64(1); seed <= 3; seed++ {
		g := genNoise(24, seed)
		p := NewPlanner(g, Options{})
		o := newAnyAngleOracle(g)
		for _, q := range centreQueries(p, 30, seed) {
			path, err := p.FindPath(q[0], q[1])
			require.NoError(t, err)
			require.GreaterOrEqual(t, PathLength(path), o.shortest(q[0], q[1])-1e-9)
		}
	}
}

// BenchmarkPathQuality reports, per map size (sub-benchmarks 128, 256 and
// 512) and generated map family (one map each, 100 queries between cell
// centres), the mean and worst ratio of path length to the exact any-angle
// optimum and the number of paths more than 1% and 5% longer. Timing is not
// its point: the oracle dominates it (the 512² maps take minutes).
func BenchmarkPathQuality(b *testing.B) {
	for _, size := range []int{128, 256, 512} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				stats := familyQuality(b, []int{size}, []uint64{1}, 100)
				all := &qualityStats{}
				for _, f := range mapFamilies {
					st := stats[f.name]
					all.merge(st)
					b.Logf("%d² %-10s paths %4d  mean %.4f  worst %.4f  >1%%: %d  >5%%: %d  invalid %d  below optimum %d", size, f.name, st.n, st.mean(), st.worst, st.longerThan(1.01), st.longerThan(1.05), st.invalid, st.belowOracle)
					b.ReportMetric(st.mean(), f.name+"-mean")
					b.ReportMetric(st.worst, f.name+"-worst")
				}
				b.Logf("%d² all        paths %4d  mean %.4f  worst %.4f  >1%%: %d  >5%%: %d  invalid %d  below optimum %d", size, all.n, all.mean(), all.worst, all.longerThan(1.01), all.longerThan(1.05), all.invalid, all.belowOracle)
			}
		})
	}
}
