package nav

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCornerSightMatchesOracle holds the any-angle search's line of sight
// between cell corners to the oracle's independent exact test on random
// corner pairs of noise maps (squeezes, faces, grid lines, diagonals).
func TestCornerSightMatchesOracle(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		g := genNoise(20, seed)
		p := NewPlanner(g, Options{})
		rng := rand.New(rand.NewPCG(seed, 3))
		corner := func() (int, int) { return rng.IntN(g.Cols() + 1), rng.IntN(g.Rows() + 1) }
		seen := 0
		for range 20000 {
			x0, y0 := corner()
			x1, y1 := corner()
			if rng.IntN(4) == 0 { // many axis-aligned and diagonal segments
				switch rng.IntN(3) {
				case 0:
					x1 = x0
				case 1:
					y1 = y0
				default:
					d := y1 - y0
					x1 = min(max(x0+d, 0), g.Cols())
				}
			}
			if x0 == x1 && y0 == y1 {
				continue
			}
			want := clearDoubled(g, int64(2*x0), int64(2*y0), int64(2*x1), int64(2*y1))
			require.Equal(t, want, p.cornerSight(x0, y0, x1, y1), "seed %d: (%d,%d)→(%d,%d)", seed, x0, y0, x1, y1)
			require.Equal(t, want, p.cornerSight(x1, y1, x0, y0), "seed %d: (%d,%d)→(%d,%d)", seed, x1, y1, x0, y0)
			if want {
				seen++
			}
		}
		require.Greater(t, seen, 1000, "seed %d: too few visible pairs to test anything", seed)
	}
}

// TestThetaRouteFollowsFreeCells checks that the any-angle search's routes
// are 4-connected chains of Free cells from the start's cell to the goal's
// (hazards count as obstacles), and that it finds one for most queries.
func TestThetaRouteFollowsFreeCells(t *testing.T) {
	g := genNoise(64, 7)
	rng := rand.New(rand.NewPCG(7, 1))
	for range 150 {
		g.Set(Cell{rng.IntN(64), rng.IntN(64)}, Costly)
	}
	p := NewPlanner(g, Options{})
	found, tried := 0, 0
	for _, q := range centreQueries(p, 200, 7) {
		a, b := PointCell(q[0]), PointCell(q[1])
		if g.At(a) != Free || g.At(b) != Free {
			continue
		}
		via, err := p.FindCells(a, b)
		require.NoError(t, err)
		tried++
		route, ok := p.thetaRoute(nil, q[0], q[1], via, math.Inf(1))
		if !ok {
			continue
		}
		found++
		requireValidCells(t, g, a, b, route)
		for _, c := range route {
			require.Equal(t, Free, g.At(c), "route cell %v", c)
		}
	}
	require.GreaterOrEqual(t, found, tried*9/10, "routes found")
}

// TestRefineOnlyShortens checks on noise maps that the any-angle search
// never makes a path longer than the taut path of the planned route, and
// that it shortens many of them.
func TestRefineOnlyShortens(t *testing.T) {
	g := genNoise(128, 3)
	p := NewPlanner(g, Options{})
	shorter, n := 0, 0
	for _, q := range centreQueries(p, 80, 3) {
		path, err := p.FindPath(q[0], q[1])
		require.NoError(t, err)
		require.NoError(t, checkPath(g, q[0], q[1], path))
		route, err := p.FindCells(PointCell(q[0]), PointCell(q[1]))
		require.NoError(t, err)
		taut := p.smooth.smooth(p.grid, q[0], q[1], route, false)
		require.LessOrEqual(t, PathLength(path), PathLength(taut)+1e-9)
		n++
		if PathLength(path) < PathLength(taut)-1e-6 {
			shorter++
		}
	}
	require.Greater(t, shorter, n/10, "paths the any-angle search shortened")
}
