package nav

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// bfsDistance returns the 4-connected step distance a→b over non-Blocked
// cells, or -1.
func bfsDistance(g *Grid, a, b Cell) int {
	dist := make([]int, g.Cols()*g.Rows())
	for i := range dist {
		dist[i] = -1
	}
	idx := func(c Cell) int { return c.Y*g.Cols() + c.X }
	dist[idx(a)] = 0
	queue := []Cell{a}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == b {
			return dist[idx(c)]
		}
		for d := 0; d < 4; d++ {
			n := Cell{c.X + dir8[d].dx, c.Y + dir8[d].dy}
			if g.At(n) != Blocked && dist[idx(n)] < 0 {
				dist[idx(n)] = dist[idx(c)] + 1
				queue = append(queue, n)
			}
		}
	}
	return -1
}

// requireValidPath checks FindPath's contract for a start that is not in
// a Blocked cell.
func requireValidPath(t *testing.T, g *Grid, from, to Point, path []Point) {
	t.Helper()
	require.NoError(t, checkPath(g, from, to, path))
}

// requireValidCells checks FindCells' contract.
func requireValidCells(t *testing.T, g *Grid, from, to Cell, route []Cell) {
	t.Helper()
	requireRoute(t, g, route, from, to, len(route)-1)
}

func TestFindPathOpenField(t *testing.T) {
	p := NewPlanner(NewGrid(64, 48), Options{})
	tests := []struct{ from, to Point }{
		{Point{2.3, 3.7}, Point{60.2, 40.9}},
		{Point{0.5, 0.5}, Point{63.5, 47.5}},
		{Point{10, 10}, Point{10, 40}},
		{Point{5.5, 5.5}, Point{5.7, 5.9}},
	}
	for _, tc := range tests {
		path, err := p.FindPath(tc.from, tc.to)
		require.NoError(t, err)
		require.Equal(t, []Point{tc.from, tc.to}, path)
	}
}

func TestFindPathWallWithGap(t *testing.T) {
	g, _ := gridFromRows(
		"..........#.........",
		"..........#.........",
		"..........#.........",
		"..........#.........",
		"..........#.........",
		"..........#.........",
		"....................", // gap in row 6
		"..........#.........",
		"..........#.........",
		"..........#.........",
	)
	for _, cs := range []int{4, 16} {
		p := NewPlanner(g, Options{ClusterSize: cs})
		from, to := Point{2.5, 1.5}, Point{17.5, 1.5}
		path, err := p.FindPath(from, to)
		require.NoError(t, err)
		requireValidPath(t, g, from, to, path)
		// The shortest any-angle path bends round the gap's top corners
		// (10, 6) and (11, 6).
		best := from.Dist(Point{10, 6}) + 1 + Point{11, 6}.Dist(to)
		require.LessOrEqual(t, PathLength(path), best+4*tautOffset, "path %v", path)
		require.Len(t, path, 4, "from, the gap's two corners, to: %v", path)
		require.InDelta(t, 0, path[1].Dist(Point{10, 6}), 2*tautOffset, "waypoint at the gap's left corner: %v", path)
		require.InDelta(t, 0, path[2].Dist(Point{11, 6}), 2*tautOffset, "waypoint at the gap's right corner: %v", path)
	}
}

func TestFindPathMaze(t *testing.T) {
	g := genMaze(81, 1, 5) // 81×81, 1-wide corridors, many dead ends
	rng := rand.New(rand.NewPCG(5, 6))
	var free []Cell
	for y := 0; y < g.Rows(); y++ {
		for x := 0; x < g.Cols(); x++ {
			if g.At(Cell{x, y}) == Free {
				free = append(free, Cell{x, y})
			}
		}
	}
	for _, cs := range []int{8, 16} {
		p := NewPlanner(g, Options{ClusterSize: cs})
		ls := newLegSearcher(g, defaultHazardCost)
		naiveFailures := 0
		for i := 0; i < 150; i++ {
			a, b := free[rng.IntN(len(free))], free[rng.IntN(len(free))]
			want := bfsDistance(g, a, b)
			require.GreaterOrEqual(t, want, 0)

			route, err := p.FindCells(a, b)
			require.NoError(t, err)
			requireValidCells(t, g, a, b, route)
			require.Equal(t, want, len(route)-1, "maze route %v→%v is a shortest one", a, b)

			from, to := a.Center(), b.Center()
			path, err := p.FindPath(from, to)
			require.NoError(t, err)
			requireValidPath(t, g, from, to, path)
			// Smoothing can only cut corridor turns diagonally through a
			// corner that touches a single wall cell.
			require.LessOrEqual(t, PathLength(path), float64(want)+1e-9)

			if r, ok := ls.chainLeg(nil, a, b, 100000); !ok || len(r)-1 != want {
				naiveFailures++
			}
		}
		require.Greater(t, naiveFailures, 10, "naive chaining of partial legs fails or detours in this maze")
	}
}

func TestFindPathHazards(t *testing.T) {
	t.Run("detour around a costly strip when cheaper", func(t *testing.T) {
		g := NewGrid(40, 30)
		g.FillRect(Point{20.5, 0.5}, Point{21.5, 19.5}, Costly) // cells 20..21 × 0..19
		p := NewPlanner(g, Options{})
		from, to := Point{5.5, 15.5}, Point{35.5, 15.5}
		path, err := p.FindPath(from, to)
		require.NoError(t, err)
		requireValidPath(t, g, from, to, path)
		for i := 1; i < len(path); i++ {
			require.True(t, g.LineOfSight(path[i-1], path[i], Free), "segment %v→%v touches the hazard", path[i-1], path[i])
		}
		route, err := p.FindCells(PointCell(from), PointCell(to))
		require.NoError(t, err)
		for _, c := range route {
			require.Equal(t, Free, g.At(c), "route cell %v", c)
		}
	})
	t.Run("through the strip when the detour is dearer", func(t *testing.T) {
		g := NewGrid(40, 60)
		g.FillRect(Point{20.5, 0.5}, Point{21.5, 49.5}, Costly) // gap only far below
		p := NewPlanner(g, Options{})
		from, to := Point{5.5, 5.5}, Point{35.5, 5.5}
		path, err := p.FindPath(from, to)
		require.NoError(t, err)
		requireValidPath(t, g, from, to, path)
		require.Equal(t, []Point{from, to}, path, "straight across, smoothed within the hazard")
	})
	t.Run("through the strip when it is the only way", func(t *testing.T) {
		g := NewGrid(40, 30)
		g.FillRect(Point{20.5, 0}, Point{21.5, 30}, Costly) // full height
		g.FillRect(Point{10.5, 8.5}, Point{29.5, 9.5}, Blocked)
		p := NewPlanner(g, Options{HazardCost: 20})
		from, to := Point{5.5, 15.5}, Point{35.5, 3.5}
		path, err := p.FindPath(from, to)
		require.NoError(t, err)
		requireValidPath(t, g, from, to, path)
		route, err := p.FindCells(PointCell(from), PointCell(to))
		require.NoError(t, err)
		costly := 0
		for _, c := range route {
			if g.At(c) == Costly {
				costly++
			}
		}
		require.Equal(t, 2, costly, "crosses the 2-cell strip straight, never along it")
	})
	t.Run("smoothing never enters hazards the route avoided", func(t *testing.T) {
		g := genArena(96, 9)
		g.FillRect(Point{30, 30}, Point{60, 34}, Costly)
		p := NewPlanner(g, Options{})
		rng := rand.New(rand.NewPCG(9, 9))
		checked := 0
		for i := 0; i < 300; i++ {
			a := Cell{rng.IntN(96), rng.IntN(96)}
			b := Cell{rng.IntN(96), rng.IntN(96)}
			if !p.Reachable(a, b) {
				continue
			}
			route, err := p.FindCells(a, b)
			require.NoError(t, err)
			path, err := p.FindPath(a.Center(), b.Center())
			require.NoError(t, err)
			requireValidPath(t, g, a.Center(), b.Center(), path)
			maxTile := Free
			for _, c := range route {
				maxTile = max(maxTile, g.At(c))
			}
			if maxTile == Free {
				checked++
				for j := 1; j < len(path); j++ {
					require.True(t, g.LineOfSight(path[j-1], path[j], Free), "%v→%v: segment %v→%v enters a hazard", a, b, path[j-1], path[j])
				}
			}
		}
		require.Greater(t, checked, 100)
	})
}

func TestFindPathUnreachable(t *testing.T) {
	g, marks := gridFromRows(
		"S.............",
		"..............",
		"...#######....",
		"...#.....#....",
		"...#..T..#....",
		"...#.....#....",
		"...#######....",
		"..............",
	)
	p := NewPlanner(g, Options{})
	from := marks['S'][0].Center()
	target := marks['T'][0].Center() // (6.5, 4.5), inside the closed room

	tests := []struct {
		name    string
		to      Point
		reason  string
		nearest Point
	}{
		// The nearest reachable cell to (6.5, 4.5) is (6, 1) just above the
		// room (distance 3; (6, 7) below is also 3 — ring order picks the
		// first found).
		{"inside a closed room", target, ReasonUnreachable, Point{6.5, 1.5}},
		{"inside an obstacle", Point{3.2, 4.9}, ReasonTargetBlocked, Point{2.5, 4.5}},
		{"outside the grid", Point{30, 3.2}, ReasonTargetOutside, Point{13.5, 3.5}},
		{"outside the grid, negative", Point{-5, -5}, ReasonTargetOutside, Point{0.5, 0.5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, err := p.FindPath(from, tc.to)
			require.Nil(t, path)
			var npe *NoPathError
			require.True(t, errors.As(err, &npe), "error %v", err)
			require.Equal(t, tc.reason, npe.Reason)
			require.Equal(t, from, npe.From)
			require.Equal(t, tc.to, npe.To)
			require.Equal(t, tc.nearest, npe.Nearest)
			// Brute force: no reachable cell centre is closer.
			best := math.Inf(1)
			for y := 0; y < g.Rows(); y++ {
				for x := 0; x < g.Cols(); x++ {
					if c := (Cell{x, y}); p.Reachable(marks['S'][0], c) {
						best = math.Min(best, tc.to.Dist(c.Center()))
					}
				}
			}
			require.InDelta(t, best, tc.to.Dist(npe.Nearest), 1e-12)
		})
	}

	_, err := p.FindCells(marks['S'][0], marks['T'][0])
	var npe *NoPathError
	require.True(t, errors.As(err, &npe))
	require.Equal(t, ReasonUnreachable, npe.Reason)
	require.False(t, p.Reachable(marks['S'][0], marks['T'][0]))
	require.True(t, p.Reachable(marks['T'][0], Cell{4, 3}), "inside the room is its own component")
	c, ok := p.NearestReachable(marks['T'][0], Point{0, 0})
	require.True(t, ok)
	require.Equal(t, Cell{4, 3}, c)
	_, ok = p.NearestReachable(Cell{3, 2}, Point{0, 0})
	require.False(t, ok, "from a blocked cell")
}

func TestNoPathErrorMessage(t *testing.T) {
	err := &NoPathError{From: Point{3.5, 4.5}, To: Point{40, 2}, Nearest: Point{39.5, 4.5}, Reason: ReasonTargetBlocked}
	require.Equal(t, "no path from (3.5, 4.5) to (40.0, 2.0): target is inside an obstacle; nearest reachable point is (39.5, 4.5)", err.Error())
}

func TestFindPathStartInBlockedCell(t *testing.T) {
	g, marks := gridFromRows(
		"..........",
		"..........",
		"..####....",
		"..####....",
		"..####....",
		"..........",
		".........G",
	)
	p := NewPlanner(g, Options{})
	to := marks['G'][0].Center()

	t.Run("pushed slightly into an obstacle", func(t *testing.T) {
		from := Point{2.1, 3.4} // cell (2, 3), Blocked; (1, 3) is 1 cell left
		path, err := p.FindPath(from, to)
		require.NoError(t, err)
		require.Equal(t, from, path[0])
		require.Equal(t, Point{1.5, 3.5}, path[1], "search starts from the nearest walkable cell's centre")
		require.Equal(t, to, path[len(path)-1])
		for i := 2; i < len(path); i++ {
			require.True(t, g.LineOfSight(path[i-1], path[i], Costly))
		}
	})
	t.Run("nearest cell is the goal cell", func(t *testing.T) {
		from := Point{5.9, 4.9} // cell (5, 4); (6, 4) is walkable
		path, err := p.FindPath(from, Point{6.2, 4.2})
		require.NoError(t, err)
		require.Equal(t, []Point{from, {6.5, 4.5}, {6.2, 4.2}}, path)
	})
	t.Run("deep inside a large obstacle", func(t *testing.T) {
		big := NewGrid(20, 20)
		big.FillRect(Point{3, 3}, Point{17, 17}, Blocked)
		bp := NewPlanner(big, Options{})
		_, err := bp.FindPath(Point{10.5, 10.5}, Point{0.5, 0.5})
		var npe *NoPathError
		require.True(t, errors.As(err, &npe))
		require.Equal(t, ReasonStartEnclosed, npe.Reason)
	})
	t.Run("start outside the grid", func(t *testing.T) {
		_, err := p.FindPath(Point{-1, 2}, to)
		var npe *NoPathError
		require.True(t, errors.As(err, &npe))
		require.Equal(t, ReasonStartOutside, npe.Reason)
	})
	t.Run("FindCells from a blocked cell", func(t *testing.T) {
		_, err := p.FindCells(Cell{3, 3}, marks['G'][0])
		var npe *NoPathError
		require.True(t, errors.As(err, &npe))
		require.Equal(t, ReasonStartBlocked, npe.Reason)
	})
}

func TestFindCellsTrivial(t *testing.T) {
	p := NewPlanner(NewGrid(5, 5), Options{})
	route, err := p.FindCells(Cell{2, 2}, Cell{2, 2})
	require.NoError(t, err)
	require.Equal(t, []Cell{{2, 2}}, route)
	path, err := p.FindPath(Point{2.2, 2.2}, Point{2.8, 2.9})
	require.NoError(t, err)
	require.Equal(t, []Point{{2.2, 2.2}, {2.8, 2.9}}, path)

	empty := NewPlanner(NewGrid(0, 0), Options{})
	_, err = empty.FindPath(Point{0, 0}, Point{0, 0})
	require.Error(t, err)
}

func TestPathLength(t *testing.T) {
	require.Zero(t, PathLength(nil))
	require.Zero(t, PathLength([]Point{{1, 1}}))
	require.InDelta(t, 5+2, PathLength([]Point{{0, 0}, {3, 4}, {3, 6}}), 1e-12)
}

// TestFindPathRandomGrids checks the FindPath and FindCells contracts on
// generated obstacle maps with hazards, over several cluster sizes and odd
// grid sizes (partial clusters at the edges).
func TestFindPathRandomGrids(t *testing.T) {
	for _, tc := range []struct{ size, cluster int }{{64, 16}, {77, 8}, {53, 4}, {100, 32}, {70, 0}} {
		t.Run(fmt.Sprintf("size=%d/cluster=%d", tc.size, tc.cluster), func(t *testing.T) {
			g := genArena(tc.size, uint64(tc.size))
			p := NewPlanner(g, Options{ClusterSize: tc.cluster})
			queries := randomQueries(p, 200, uint64(tc.cluster))
			for _, q := range queries {
				path, err := p.FindPath(q[0], q[1])
				require.NoError(t, err)
				requireValidPath(t, g, q[0], q[1], path)
				require.GreaterOrEqual(t, PathLength(path), q[0].Dist(q[1])-1e-9)

				a, b := PointCell(q[0]), PointCell(q[1])
				route, err := p.FindCells(a, b)
				require.NoError(t, err)
				requireValidCells(t, g, a, b, route)
			}
		})
	}
}

// TestFindPathDeterministic checks that repeated queries (reusing scratch
// memory) give identical results, also to a fresh planner's; the noise map
// runs the any-angle search on most queries.
func TestFindPathDeterministic(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    *Grid
	}{{"arena", genArena(128, 4)}, {"noise", genNoise(128, 4)}} {
		name, g := tc.name, tc.g
		p := NewPlanner(g, Options{})
		queries := randomQueries(p, 50, 4)
		first := make([][]Point, len(queries))
		for i, q := range queries {
			path, err := p.FindPath(q[0], q[1])
			require.NoError(t, err)
			first[i] = path
		}
		fresh := NewPlanner(g, Options{})
		for i := len(queries) - 1; i >= 0; i-- {
			path, err := p.FindPath(queries[i][0], queries[i][1])
			require.NoError(t, err)
			require.Equal(t, first[i], path, name)
			path, err = fresh.FindPath(queries[i][0], queries[i][1])
			require.NoError(t, err)
			require.Equal(t, first[i], path, name)
		}
	}
}

func TestPlannerSnapshotsGrid(t *testing.T) {
	g := NewGrid(20, 20)
	p := NewPlanner(g, Options{})
	g.FillRect(Point{9, 0}, Point{11, 20}, Blocked)
	path, err := p.FindPath(Point{1.5, 1.5}, Point{18.5, 1.5})
	require.NoError(t, err)
	require.Len(t, path, 2, "later grid edits are not seen")
	require.Equal(t, Options{ClusterSize: 16, HazardCost: 8}, p.Options())
}

func TestTransitionOffsets(t *testing.T) {
	tests := []struct {
		run  int
		want []int
	}{
		{1, []int{0}},
		{2, []int{0}},
		{3, []int{1}},
		{4, []int{0, 3}},
		{9, []int{0, 8}},
		{10, []int{0, 4, 9}},
		{16, []int{0, 7, 15}},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, transitionOffsets(tc.run, nil), "run of %d cells", tc.run)
	}
}
