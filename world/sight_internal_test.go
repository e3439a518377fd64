package world

import (
	"math/rand/v2"
	"testing"

	"github.com/arena-sim/arena/nav"
	"github.com/stretchr/testify/require"
)

// TestSightSumsCountModulo checks the summed-area table, kept modulo 2¹⁶,
// against counting the cells: on a grid whose sums pass 2¹⁶ many times
// over, every box, of fewer than 2¹⁶ cells or more, is clear exactly when
// no cell of it is blocked.
func TestSightSumsCountModulo(t *testing.T) {
	const cols, rows = 700, 500
	w := &World{sightGrid: nav.NewGrid(cols, rows)}
	rng := rand.New(rand.NewPCG(7, 11))
	blocked := 0
	for y := range rows {
		for x := range cols {
			// Mostly blocked, with clear stretches, so that clear boxes exist
			// far from the origin, where the sums have wrapped.
			if (x/40+y/30)%3 != 0 || rng.IntN(50) == 0 {
				w.sightGrid.Set(nav.Cell{X: x, Y: y}, nav.Blocked)
				blocked++
			}
		}
	}
	require.Greater(t, blocked, 3<<16, "the sums wrap")
	w.buildSightSums()
	count := func(x0, y0, x1, y1 int) int {
		n := 0
		for y := y0; y <= y1; y++ {
			for x := x0; x <= x1; x++ {
				if w.sightGrid.At(nav.Cell{X: x, Y: y}) != nav.Free {
					n++
				}
			}
		}
		return n
	}
	clear, large := 0, 0
	for range 4000 {
		x0, y0 := rng.IntN(cols), rng.IntN(rows)
		side := 1 + rng.IntN(30)
		if rng.IntN(10) == 0 {
			side = 200 + rng.IntN(300) // some of 2¹⁶ cells or more
		}
		x1, y1 := min(cols-1, x0+rng.IntN(side)), min(rows-1, y0+rng.IntN(side))
		got := w.sightClear(nav.Point{X: float64(x0) + 0.3, Y: float64(y0) + 0.6}, nav.Point{X: float64(x1) + 0.9, Y: float64(y1) + 0.1})
		n := count(x0, y0, x1, y1)
		if (x1-x0+1)*(y1-y0+1) >= 1<<16 {
			large++
		}
		require.Equal(t, n == 0, got, "box (%d, %d)–(%d, %d) holds %d blocked cells", x0, y0, x1, y1, n)
		if got {
			clear++
		}
	}
	require.Greater(t, clear, 100)
	require.Greater(t, large, 10)
}

// TestSightSumsLargeBoxes: a box whose blocked cells are a multiple of 2¹⁶
// counts 0 modulo 2¹⁶, and must not be called clear; a large clear box is.
func TestSightSumsLargeBoxes(t *testing.T) {
	w := &World{sightGrid: nav.NewGrid(600, 400)}
	for i := range 1 << 16 {
		w.sightGrid.Set(nav.Cell{X: i % 300, Y: i / 300}, nav.Blocked)
	}
	w.buildSightSums()
	require.False(t, w.sightClear(nav.Point{X: 0.5, Y: 0.5}, nav.Point{X: 299.5, Y: 299.5}))
	require.True(t, w.sightClear(nav.Point{X: 0.5, Y: 299.5}, nav.Point{X: 99.5, Y: 299.5}), "the last row is clear")
	require.True(t, w.sightClear(nav.Point{X: 300.5, Y: 0.5}, nav.Point{X: 599.5, Y: 399.5}), "a clear box of 120,000 cells")
	require.True(t, w.sightClear(nav.Point{X: 0.5, Y: 300.5}, nav.Point{X: 599.5, Y: 399.5}), "another")
	w.sightGrid.Set(nav.Cell{X: 599, Y: 399}, nav.Blocked)
	w.buildSightSums()
	require.False(t, w.sightClear(nav.Point{X: 300.5, Y: 0.5}, nav.Point{X: 599.5, Y: 399.5}), "its last cell blocked")
}
