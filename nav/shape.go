package nav

import "math"

// Shape is an obstacle region in cell units, as exact geometry: the points
// closer than Radius to the axis-aligned box Center ± (HalfX, HalfY). With
// zero half sizes it is an open disc; otherwise a rectangle with rounded
// corners, which is exactly a box grown by Radius (the Minkowski sum with
// a disc). With Radius 0 it is the open box itself.
type Shape struct {
	Center       Point
	HalfX, HalfY float64
	Radius       float64
}

func (s Shape) valid() bool {
	return finitePoint(s.Center) && s.HalfX >= 0 && s.HalfY >= 0 && s.Radius >= 0 &&
		!math.IsInf(s.HalfX, 0) && !math.IsInf(s.HalfY, 0) && !math.IsInf(s.Radius, 0)
}

// Contains reports whether p lies in the open region of s: an agent centred
// at p overlaps the obstacle.
func (s Shape) Contains(p Point) bool {
	ex := math.Abs(p.X-s.Center.X) - s.HalfX
	ey := math.Abs(p.Y-s.Center.Y) - s.HalfY
	if s.Radius == 0 {
		return ex < 0 && ey < 0
	}
	ex, ey = max(ex, 0), max(ey, 0)
	return ex*ex+ey*ey < s.Radius*s.Radius
}

// meetsCell reports whether the open region of s meets the open square of
// cell (x, y): some point strictly inside the cell is inside the shape.
func (s Shape) meetsCell(x, y int) bool {
	fx, fy := float64(x), float64(y)
	// Signed gaps between the box and the cell along each axis (negative
	// when their projections overlap).
	gx := max(fx-(s.Center.X+s.HalfX), (s.Center.X-s.HalfX)-(fx+1))
	gy := max(fy-(s.Center.Y+s.HalfY), (s.Center.Y-s.HalfY)-(fy+1))
	if gx < 0 && gy < 0 {
		return true
	}
	gx, gy = max(gx, 0), max(gy, 0)
	return gx*gx+gy*gy < s.Radius*s.Radius
}

// hitsSegment reports whether the segment a→b enters the open region of s.
// (Radius > 0; a zero-radius shape is tested as a box.)
func (s Shape) hitsSegment(a, b Point) bool {
	if s.Contains(a) || s.Contains(b) {
		return true
	}
	lo := Point{s.Center.X - s.HalfX, s.Center.Y - s.HalfY}
	hi := Point{s.Center.X + s.HalfX, s.Center.Y + s.HalfY}
	if segmentMeetsBox(a, b, lo, hi, s.Radius == 0) {
		return true
	}
	if s.Radius == 0 {
		return false
	}
	// The segment misses the box: its distance to the box is the smallest
	// of the box corners' distances to the segment (the endpoints are
	// already outside the shape).
	r2 := s.Radius * s.Radius
	for _, c := range [4]Point{lo, {hi.X, lo.Y}, {lo.X, hi.Y}, hi} {
		if segDist2(c, a, b) < r2 {
			return true
		}
	}
	// A box edge parallel to the segment can also be the closest feature;
	// its distance equals an endpoint's or a corner's, both covered.
	return false
}

// segmentMeetsBox reports whether segment a→b meets the box [lo, hi]
// (its open interior only when open is set), by clipping (Liang–Barsky).
func segmentMeetsBox(a, b, lo, hi Point, open bool) bool {
	t0, t1 := 0.0, 1.0
	d := Point{b.X - a.X, b.Y - a.Y}
	clip := func(p, q float64) bool { // p·t <= q
		if p == 0 {
			if open {
				return q > 0
			}
			return q >= 0
		}
		r := q / p
		if p < 0 {
			t0 = max(t0, r)
		} else {
			t1 = min(t1, r)
		}
		return true
	}
	if !clip(-d.X, a.X-lo.X) || !clip(d.X, hi.X-a.X) || !clip(-d.Y, a.Y-lo.Y) || !clip(d.Y, hi.Y-a.Y) {
		return false
	}
	if open {
		return t0 < t1
	}
	return t0 <= t1
}

// segDist2 returns the squared distance from p to the segment a→b.
func segDist2(p, a, b Point) float64 {
	dx, dy := b.X-a.X, b.Y-a.Y
	l2 := dx*dx + dy*dy
	t := 0.0
	if l2 > 0 {
		t = min(max(((p.X-a.X)*dx+(p.Y-a.Y)*dy)/l2, 0), 1)
	}
	ex, ey := a.X+t*dx-p.X, a.Y+t*dy-p.Y
	return ex*ex + ey*ey
}

// FillShape marks with t every cell whose open square meets the open region
// of s, decided by the shape's exact geometry: the cells where some point
// is too close to the obstacle, and no others (a shape that merely touches
// a cell's edge or corner leaves it alone). It never downgrades a cell.
func (g *Grid) FillShape(s Shape, t Tile) {
	if !s.valid() {
		return
	}
	g.eachShapeCell(s, func(x, y int) { g.raise(x, y, min(t, Blocked)) })
}

// eachShapeCell calls fn for every in-grid cell whose open square meets
// the open region of s (which must be valid).
func (g *Grid) eachShapeCell(s Shape, fn func(x, y int)) {
	ex, ey := s.HalfX+s.Radius, s.HalfY+s.Radius
	x0, x1 := clampRange(floorInt(s.Center.X-ex)-1, floorInt(s.Center.X+ex), g.cols)
	y0, y1 := clampRange(floorInt(s.Center.Y-ey)-1, floorInt(s.Center.Y+ey), g.rows)
	for y := y0; y <= y1; y++ {
		for x := x0; x <= x1; x++ {
			if s.meetsCell(x, y) {
				fn(x, y)
			}
		}
	}
}
