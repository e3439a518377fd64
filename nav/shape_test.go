package nav

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShapeGeometry checks FillShape's cells, Contains and segment tests of
// discs and rounded boxes against dense sampling of the exact region.
func TestShapeGeometry(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 60; n++ {
		s := Shape{Center: Point{4 + 4*rng.Float64(), 4 + 4*rng.Float64()}, Radius: 0.2 + 2*rng.Float64()}
		if n%2 == 1 {
			s.HalfX, s.HalfY = 2*rng.Float64(), 2*rng.Float64()
		}
		g := NewGrid(12, 12)
		g.FillShape(s, Blocked)
		for y := 0; y < 12; y++ {
			for x := 0; x < 12; x++ {
				// Sample the open cell on a fine grid; a hit means the cell
				// must be Blocked. The converse is checked with the cell's
				// closest point to the box, nudged inside the cell.
				hit := false
				for i := 1; i < 40 && !hit; i++ {
					for j := 1; j < 40 && !hit; j++ {
						hit = s.Contains(Point{float64(x) + float64(i)/40, float64(y) + float64(j)/40})
					}
				}
				qx := min(max(s.Center.X, float64(x)+1e-9), float64(x+1)-1e-9)
				qy := min(max(s.Center.Y, float64(y)+1e-9), float64(y+1)-1e-9)
				near := s.Contains(Point{qx, qy})
				blocked := g.At(Cell{x, y}) == Blocked
				if hit {
					require.True(t, blocked, "shape %+v cell %d,%d", s, x, y)
				}
				require.Equal(t, near, blocked, "shape %+v cell %d,%d", s, x, y)
			}
		}
		for k := 0; k < 50; k++ {
			a := Point{12 * rng.Float64(), 12 * rng.Float64()}
			b := Point{12 * rng.Float64(), 12 * rng.Float64()}
			hit := false
			for i := 0; i <= 4000 && !hit; i++ {
				u := float64(i) / 4000
				hit = s.Contains(Point{a.X + u*(b.X-a.X), a.Y + u*(b.Y-a.Y)})
			}
			if hit {
				require.True(t, s.hitsSegment(a, b), "shape %+v segment %v→%v", s, a, b)
			}
			if !hit {
				// Only grazing hits can escape the sampling: a shape
				// shrunk by 0.01 must then be missed.
				require.False(t, Shape{s.Center, s.HalfX, s.HalfY, s.Radius - 1e-2}.hitsSegment(a, b), "shape %+v segment %v→%v", s, a, b)
			}
		}
	}
}
