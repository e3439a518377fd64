package nav

import (
	"fmt"
	"math"
)

// Tile is the content of one grid cell. Larger values are "worse": the order
// Free < Costly < Blocked is used by [Grid.FillCircle], [Grid.FillRect] and
// [Grid.LineOfSight].
type Tile uint8

// Tile values.
const (
	// Free cells are walkable with step cost 1.
	Free Tile = 0
	// Costly cells (hazards) are walkable but expensive: step cost Options.HazardCost.
	Costly Tile = 1
	// Blocked cells are impassable. Cells outside the grid read as Blocked.
	Blocked Tile = 2
)

// String returns "free", "costly" or "blocked".
func (t Tile) String() string {
	switch t {
	case Free:
		return "free"
	case Costly:
		return "costly"
	case Blocked:
		return "blocked"
	default:
		return fmt.Sprintf("Tile(%d)", uint8(t))
	}
}

// Cell addresses one grid cell: column X, row Y. Cell (x, y) covers the square
// [x, x+1) × [y, y+1) in cell units.
type Cell struct{ X, Y int }

// Point is a continuous position in cell units.
type Point struct{ X, Y float64 }

// Center returns the centre of the cell, (X+0.5, Y+0.5).
func (c Cell) Center() Point { return Point{float64(c.X) + 0.5, float64(c.Y) + 0.5} }

// String formats the cell as "(x, y)".
func (c Cell) String() string { return fmt.Sprintf("(%d, %d)", c.X, c.Y) }

// PointCell returns the cell containing p (componentwise floor).
func PointCell(p Point) Cell {
	return Cell{int(math.Floor(p.X)), int(math.Floor(p.Y))}
}

// String formats the point as "(x.x, y.y)".
func (p Point) String() string { return fmt.Sprintf("(%.1f, %.1f)", p.X, p.Y) }

// Dist returns the Euclidean distance between p and q.
func (p Point) Dist(q Point) float64 { return math.Hypot(q.X-p.X, q.Y-p.Y) }

func finitePoint(p Point) bool {
	return !math.IsNaN(p.X) && !math.IsNaN(p.Y) && !math.IsInf(p.X, 0) && !math.IsInf(p.Y, 0)
}

// Grid is a rectangular array of tiles stored row-major. Reads never allocate.
// A Grid is not safe for concurrent mutation; concurrent reads are fine.
type Grid struct {
	cols, rows int
	tiles      []Tile
}

// NewGrid returns a grid of cols × rows Free cells. It panics if either size
// is negative.
func NewGrid(cols, rows int) *Grid {
	if cols < 0 || rows < 0 {
		panic(fmt.Sprintf("nav.NewGrid: negative size %d×%d", cols, rows))
	}
	return &Grid{cols: cols, rows: rows, tiles: make([]Tile, cols*rows)}
}

// Clone returns an independent copy of g.
func (g *Grid) Clone() *Grid {
	c := &Grid{cols: g.cols, rows: g.rows, tiles: make([]Tile, len(g.tiles))}
	copy(c.tiles, g.tiles)
	return c
}

// Cols returns the number of columns (the X extent).
func (g *Grid) Cols() int { return g.cols }

// Rows returns the number of rows (the Y extent).
func (g *Grid) Rows() int { return g.rows }

// InBounds reports whether c lies inside the grid.
func (g *Grid) InBounds(c Cell) bool {
	return uint(c.X) < uint(g.cols) && uint(c.Y) < uint(g.rows)
}

// At returns the tile of c; cells outside the grid are Blocked.
func (g *Grid) At(c Cell) Tile { return g.at(c.X, c.Y) }

func (g *Grid) at(x, y int) Tile {
	if uint(x) >= uint(g.cols) || uint(y) >= uint(g.rows) {
		return Blocked
	}
	return g.tiles[y*g.cols+x]
}

// Set stores t in c. Cells outside the grid are ignored; values above Blocked
// are stored as Blocked.
func (g *Grid) Set(c Cell, t Tile) {
	if !g.InBounds(c) {
		return
	}
	if t > Blocked {
		t = Blocked
	}
	g.tiles[c.Y*g.cols+c.X] = t
}

// raise sets cell (x, y), which must be in bounds, to t unless it already
// holds a worse tile.
func (g *Grid) raise(x, y int, t Tile) {
	i := y*g.cols + x
	if g.tiles[i] < t {
		g.tiles[i] = t
	}
}

// Count returns how many cells hold t.
func (g *Grid) Count(t Tile) int {
	n := 0
	for _, v := range g.tiles {
		if v == t {
			n++
		}
	}
	return n
}

// clampRange clips [lo, hi] to [0, n-1].
func clampRange(lo, hi, n int) (int, int) {
	return max(lo, 0), min(hi, n-1)
}

// floorInt converts a finite float to the floor integer, saturating far
// outside any grid so the conversion never overflows.
func floorInt(v float64) int {
	const lim = 1 << 40
	v = math.Floor(v)
	if v < -lim {
		return -lim
	}
	if v > lim {
		return lim
	}
	return int(v)
}

// FillCircle marks with t every cell whose closed square overlaps the closed
// disc of the given centre and radius (a disc that merely touches a cell marks
// it). It never downgrades a cell: Blocked beats Costly beats Free. A negative
// or non-finite radius marks nothing.
func (g *Grid) FillCircle(center Point, radius float64, t Tile) {
	if !finitePoint(center) || math.IsNaN(radius) || math.IsInf(radius, 0) || radius < 0 {
		return
	}
	if t > Blocked {
		t = Blocked
	}
	// A cell [x, x+1] touches the disc's bounding interval [c-r, c+r] iff
	// x+1 >= c-r and x <= c+r.
	x0, x1 := clampRange(floorInt(math.Ceil(center.X-radius))-1, floorInt(center.X+radius), g.cols)
	y0, y1 := clampRange(floorInt(math.Ceil(center.Y-radius))-1, floorInt(center.Y+radius), g.rows)
	r2 := radius * radius
	for y := y0; y <= y1; y++ {
		dy := axisGap(center.Y, float64(y))
		for x := x0; x <= x1; x++ {
			dx := axisGap(center.X, float64(x))
			if dx*dx+dy*dy <= r2 {
				g.raise(x, y, t)
			}
		}
	}
}

// axisGap returns the distance from v to the closed interval [lo, lo+1].
func axisGap(v, lo float64) float64 {
	switch {
	case v < lo:
		return lo - v
	case v > lo+1:
		return v - lo - 1
	default:
		return 0
	}
}

// FillRect marks with t every cell whose closed square overlaps the closed
// axis-aligned rectangle spanned by min and max (the corners may be given in
// any order). Touching counts: FillRect(Point{2, 2}, Point{4, 4}, t) marks
// cells 1..4 on both axes, because cells 1 and 4 share an edge with the
// rectangle. It never downgrades a cell: Blocked beats Costly beats Free.
func (g *Grid) FillRect(min, max Point, t Tile) {
	if !finitePoint(min) || !finitePoint(max) {
		return
	}
	if t > Blocked {
		t = Blocked
	}
	lx, hx := math.Min(min.X, max.X), math.Max(min.X, max.X)
	ly, hy := math.Min(min.Y, max.Y), math.Max(min.Y, max.Y)
	x0, x1 := clampRange(floorInt(math.Ceil(lx))-1, floorInt(hx), g.cols)
	y0, y1 := clampRange(floorInt(math.Ceil(ly))-1, floorInt(hy), g.rows)
	for y := y0; y <= y1; y++ {
		for x := x0; x <= x1; x++ {
			g.raise(x, y, t)
		}
	}
}

// LineOfSight reports whether the segment a→b crosses only cells whose tile
// is <= maxTile. It is an exact supercover test:
//
//   - every cell the segment passes through counts, including the cells
//     containing a and b (by [PointCell]);
//   - a segment passing exactly through a grid corner is blocked when the two
//     cells it squeezes between (the diagonal pair it does not enter) are both
//     over maxTile; a single such cell, touched only at its corner, does not
//     block;
//   - a segment running exactly along a grid line touches the cells on both
//     sides of the line, so either one being over maxTile blocks it;
//   - endpoints outside the grid (or non-finite) return false.
//
// It does not allocate.
func (g *Grid) LineOfSight(a, b Point, maxTile Tile) bool {
	if !finitePoint(a) || !finitePoint(b) {
		return false
	}
	ca, cb := PointCell(a), PointCell(b)
	if !g.InBounds(ca) || !g.InBounds(cb) {
		return false
	}
	if g.at(ca.X, ca.Y) > maxTile || g.at(cb.X, cb.Y) > maxTile {
		return false
	}
	dx, dy := b.X-a.X, b.Y-a.Y
	switch {
	case dx == 0 && dy == 0:
		return true
	case dy == 0:
		return g.losAxis(a.X, b.X, ca.Y, a.Y == math.Floor(a.Y), maxTile, false)
	case dx == 0:
		return g.losAxis(a.Y, b.Y, ca.X, a.X == math.Floor(a.X), maxTile, true)
	}

	stepX, stepY := 1, 1
	if dx < 0 {
		stepX = -1
	}
	if dy < 0 {
		stepY = -1
	}
	adx, ady := math.Abs(dx), math.Abs(dy)
	cx, cy := ca.X, ca.Y
	for cx != cb.X || cy != cb.Y {
		switch {
		case cx == cb.X:
			cy += stepY
		case cy == cb.Y:
			cx += stepX
		default:
			// Next vertical and horizontal boundaries ahead of the segment.
			bx := float64(cx)
			if stepX > 0 {
				bx++
			}
			by := float64(cy)
			if stepY > 0 {
				by++
			}
			// Compare the parameters tx = |bx-a.X|/adx and ty = |by-a.Y|/ady
			// by cross-multiplying, which is exact for cell-centre inputs.
			// Near-ties (relative 1e-9) count as passing through the corner,
			// so that rounding cannot make two overlapping segments disagree.
			lx := math.Abs(bx-a.X) * ady
			ly := math.Abs(by-a.Y) * adx
			tol := cornerTolerance * (lx + ly)
			switch {
			case lx < ly-tol:
				cx += stepX
			case lx > ly+tol:
				cy += stepY
			default:
				// Exactly through a corner: refuse to squeeze between two
				// diagonal cells that are both over maxTile.
				if g.at(cx+stepX, cy) > maxTile && g.at(cx, cy+stepY) > maxTile {
					return false
				}
				cx += stepX
				cy += stepY
			}
		}
		if g.at(cx, cy) > maxTile {
			return false
		}
	}
	return true
}

// cornerTolerance is the relative tolerance under which LineOfSight treats
// a segment as passing exactly through a grid corner.
const cornerTolerance = 1e-9

// losAxis checks an axis-aligned segment from coordinate u0 to u1 along the
// line at fixed index fixed (a row when vertical is false, a column when it
// is true). onLine reports that the fixed coordinate lies exactly on a grid
// line, in which case the cells on the other side of the line, along the
// positive-length part of the segment, count as well.
func (g *Grid) losAxis(u0, u1 float64, fixed int, onLine bool, maxTile Tile, vertical bool) bool {
	lo, hi := min(u0, u1), max(u0, u1)
	at := func(u, f int) Tile {
		if vertical {
			return g.at(f, u)
		}
		return g.at(u, f)
	}
	for u := floorInt(lo); u <= floorInt(hi); u++ {
		if at(u, fixed) > maxTile {
			return false
		}
	}
	if onLine {
		// Cells of the neighbouring line that share a positive-length edge
		// part with the segment: [u, u+1] ∩ [lo, hi] of positive length.
		for u := floorInt(lo); u <= floorInt(math.Ceil(hi))-1; u++ {
			if at(u, fixed-1) > maxTile {
				return false
			}
		}
	}
	return true
}
