package nav

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// octileDijkstra is an independent reference for the planner's move model
// (search.go) over the whole grid: the cheapest cost from a to b, +Inf if b
// cannot be reached.
func octileDijkstra(g *Grid, hazard float64, a, b Cell) float64 {
	cost := func(c Cell) float64 {
		switch g.At(c) {
		case Free:
			return 1
		case Costly:
			return hazard
		}
		return math.Inf(1)
	}
	idx := func(c Cell) int32 { return int32(c.Y*g.Cols() + c.X) }
	dist := make([]float64, g.Cols()*g.Rows())
	for i := range dist {
		dist[i] = math.Inf(1)
	}
	dist[idx(a)] = 0
	h := &oHeap{{v: idx(a), f: 0}}
	for h.Len() > 0 {
		it := heap.Pop(h).(oItem)
		if it.f > dist[it.v] {
			continue
		}
		u := Cell{int(it.v) % g.Cols(), int(it.v) / g.Cols()}
		if u == b {
			return it.f
		}
		for _, dx := range []int{-1, 0, 1} {
			for _, dy := range []int{-1, 0, 1} {
				v := Cell{u.X + dx, u.Y + dy}
				c := cost(v)
				if (dx == 0 && dy == 0) || math.IsInf(c, 1) {
					continue
				}
				if dx != 0 && dy != 0 {
					c1, c2 := cost(Cell{u.X + dx, u.Y}), cost(Cell{u.X, u.Y + dy})
					if math.IsInf(c1, 1) || math.IsInf(c2, 1) {
						continue
					}
					c = math.Sqrt2 * max(c, min(c1, c2))
				}
				if nd := it.f + c; nd < dist[idx(v)] {
					dist[idx(v)] = nd
					heap.Push(h, oItem{v: idx(v), f: nd})
				}
			}
		}
	}
	return math.Inf(1)
}

// shortQueries returns n deterministic reachable pairs of walkable cells at
// most reach cells apart on each axis whose centres do not see each other
// over Free cells: the short queries that need a search.
func shortQueries(p *Planner, n, reach int, seed uint64) [][2]Cell {
	rng := rand.New(rand.NewPCG(seed, 13))
	g := p.Grid()
	out := make([][2]Cell, 0, n)
	for len(out) < n {
		a := Cell{rng.IntN(g.Cols()), rng.IntN(g.Rows())}
		b := Cell{a.X + rng.IntN(2*reach+1) - reach, a.Y + rng.IntN(2*reach+1) - reach}
		if a == b || g.At(a) == Blocked || g.At(b) == Blocked || !p.Reachable(a, b) ||
			g.LineOfSight(a.Center(), b.Center(), Free) {
			continue
		}
		out = append(out, [2]Cell{a, b})
	}
	return out
}

// TestLocalRouteIsTheCheapest holds every route the local search claims to
// be the cheapest of the grid to an independent Dijkstra over the whole
// grid, on the benchmark map and on every map family, and checks that the
// claim is made for most short queries (else the abstract graph plans them
// all, slowly).
func TestLocalRouteIsTheCheapest(t *testing.T) {
	maps := map[string]*Grid{"arena": genArena(128, 3)}
	for _, f := range mapFamilies {
		maps[f.name] = f.gen(64, 5)
	}
	for name, g := range maps {
		p := NewPlanner(g, Options{})
		proven := 0
		queries := shortQueries(p, 150, 16, 1)
		for _, q := range queries {
			route, cost, ok := p.localRoute(nil, q[0], q[1])
			if !ok {
				continue
			}
			proven++
			want := octileDijkstra(p.Grid(), float64(p.Options().HazardCost), q[0], q[1])
			require.InDelta(t, want, cost, 1e-6, "%s: %v→%v", name, q[0], q[1])
			require.Equal(t, q[0], route[0], name)
			require.Equal(t, q[1], route[len(route)-1], name)
			for i := 1; i < len(route); i++ {
				require.Equal(t, 1, manhattan(route[i-1], route[i]), "%s: %v→%v: route not 4-connected at %d", name, q[0], q[1], i)
				require.NotEqual(t, Blocked, p.Grid().At(route[i]), name)
			}
		}
		t.Logf("%-10s %d of %d short queries proven in the window", name, proven, len(queries))
		if name == "arena" || name == "rectangles" {
			// Open maps: most short routes stay near the straight line.
			require.Greater(t, proven, len(queries)/2, name)
		}
	}
}

// TestLocalRouteLeavesTheWindowWhenCheaper builds a query whose cheapest
// route goes round a hazard belt beyond the window: the local search must
// not claim its own route (through the belt) as the cheapest.
func TestLocalRouteLeavesTheWindowWhenCheaper(t *testing.T) {
	g := NewGrid(64, 64)
	// A belt of Costly cells, 3 thick, across rows 10..44 (the window of
	// the query spans rows 12..42), open below and above.
	for y := 10; y <= 44; y++ {
		for x := 30; x < 33; x++ {
			g.Set(Cell{x, y}, Costly)
		}
	}
	p := NewPlanner(g, Options{HazardCost: 40})
	sc, gc := Cell{26, 27}, Cell{36, 27}
	_, cost, ok := p.localRoute(nil, sc, gc)
	want := octileDijkstra(p.Grid(), 40, sc, gc)
	require.Less(t, want, 3*40.0, "the detour must be the cheaper route")
	require.False(t, ok, "local route of cost %v claimed over the grid's %v", cost, want)
	path, err := p.FindPath(sc.Center(), gc.Center())
	require.NoError(t, err)
	require.NoError(t, checkPath(p.Grid(), sc.Center(), gc.Center(), path))
	for _, q := range path {
		require.NotEqual(t, Costly, p.Grid().At(PointCell(q)), "path %v crosses the belt", path)
	}
}

// TestShortPathsAgainstOracle holds short paths round obstacles (the
// queries the local search answers) to the exact any-angle optimum, as
// TestPathQualityFamilies does for random ones (on the families, which have
// no Costly cells: the oracle's optimum ignores hazards).
func TestShortPathsAgainstOracle(t *testing.T) {
	all := &qualityStats{}
	for _, f := range mapFamilies {
		name, g := f.name, f.gen(64, 5)
		p := NewPlanner(g, Options{})
		o := newAnyAngleOracle(p.Grid())
		st := &qualityStats{}
		for _, q := range shortQueries(p, 100, 16, 2) {
			from, to := q[0].Center(), q[1].Center()
			path, err := p.FindPath(from, to)
			st.add(p.Grid(), o, from, to, path, err)
		}
		t.Logf("%-10s paths %4d mean %.4f worst %.4f", name, st.n, st.mean(), st.worst)
		all.merge(st)
	}
	t.Logf("all        paths %4d mean %.4f worst %.4f, %d more than 1%% longer", all.n, all.mean(), all.worst, all.longerThan(1.01))
	require.Empty(t, all.failures)
	require.LessOrEqual(t, all.mean(), 1.01)
	require.LessOrEqual(t, all.worst, 1.05)
}

// BenchmarkFindPathShort measures FindPath on the short queries round
// obstacles of BenchmarkFindPath256's map (at most 16 cells apart on each
// axis, no clear straight line): the kind agents ask most once the
// straight line fails.
func BenchmarkFindPathShort(b *testing.B) {
	p := NewPlanner(genArena(256, 1), Options{})
	queries := shortQueries(p, 2048, 16, 2)
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := queries[i%len(queries)]
		t := time.Now()
		if _, err := p.FindPath(q[0].Center(), q[1].Center()); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(t))
	}
	b.StopTimer()
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds())/1000, "p50-µs")
	b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds())/1000, "p99-µs")
}
