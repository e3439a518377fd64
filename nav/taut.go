package nav

import (
	"math"
	"slices"
)

// tautOffset is how far (in cells) a waypoint placed at an obstacle corner
// is moved away from the corner's obstacle cell, diagonally, so that it lies
// inside a walkable cell and its segments do not run exactly along a grid
// line next to the obstacle (which [Grid.LineOfSight] refuses).
const tautOffset = 1e-3

// maxTautPasses bounds the passes of [smoother.tauten]; paths are usually
// taut after two or three.
const maxTautPasses = 12

// tauten shortens s.wpts (segment tiles in s.tiles) until it is taut: in
// each pass, an interior waypoint b between a and c is dropped when a sees
// c; otherwise, when both of its segments are Free, it is replaced by the
// shortest path from a to c that bends round the same obstacles: the
// convex chain of the obstacle corners inside the triangle abc. That chain
// is exactly the shortest path in the triangle homotopic to a→b→c, so
// repeated passes converge to the shortest path homotopic to the route the
// planner chose, with bends on obstacle corners. The endpoints never move.
func (s *smoother) tauten(g *Grid) {
	// dirty[i]: waypoint i or a neighbour changed in the last pass, so the
	// bend at i needs another look.
	s.dirty = s.dirty[:0]
	for range s.wpts {
		s.dirty = append(s.dirty, true)
	}
	for pass := 0; pass < maxTautPasses && len(s.wpts) > 2; pass++ {
		w, tl, dirty := s.wpts, s.tiles, s.dirty
		next, nt, nd := append(s.next[:0], w[0]), s.nextT[:0], append(s.nextD[:0], false)
		pend := tl[0] // tile of the segment from next's last point to w[i]
		changed := false
		for i := 1; i < len(w)-1; i++ {
			a, b, c := next[len(next)-1], w[i], w[i+1]
			t1, t2 := pend, tl[i]
			if !dirty[i] && !nd[len(nd)-1] {
				next, nt, nd = append(next, b), append(nt, t1), append(nd, false)
				pend = t2
				continue
			}
			if g.LineOfSight(a, c, max(t1, t2)) {
				pend, changed = max(t1, t2), true // drop b
				nd[len(nd)-1] = true
				dirty[i+1] = true
				continue
			}
			if t1 == Free && t2 == Free {
				if chain, ok := s.bend(g, a, b, c); ok {
					nd[len(nd)-1] = true
					for _, q := range chain {
						next, nt, nd = append(next, q), append(nt, Free), append(nd, true)
					}
					pend, changed = Free, true
					dirty[i+1] = true
					continue
				}
			}
			next, nt, nd = append(next, b), append(nt, t1), append(nd, false)
			pend = t2
		}
		next, nt, nd = append(next, w[len(w)-1]), append(nt, pend), append(nd, false)
		s.next, s.nextT, s.nextD = s.wpts, s.tiles, s.dirty
		s.wpts, s.tiles, s.dirty = next, nt, nd
		if !changed {
			return
		}
	}
}

// indexCorners records the convex obstacle corners of g for bend: the grid
// points with exactly one non-Free cell among the four around them (cells
// outside the grid count as non-Free). cornerAt holds, per grid point
// (row-major, cols+1 per row), 0 or 4 + the obstacle cell's quadrant
// (bit 0: +x, bit 1: +y); cornerPre holds per row the prefix counts of
// corners (cols+2 per row), so that empty stretches are skipped.
func (s *smoother) indexCorners(g *Grid) {
	w := g.cols + 1
	s.cornerAt = make([]uint8, w*(g.rows+1))
	s.cornerPre = make([]int32, (g.cols+2)*(g.rows+1))
	for y := 0; y <= g.rows; y++ {
		row := y * (g.cols + 2)
		for x := 0; x <= g.cols; x++ {
			n, code := 0, uint8(0)
			for k, d := range [4][2]int{{-1, -1}, {0, -1}, {-1, 0}, {0, 0}} {
				if g.at(x+d[0], y+d[1]) != Free {
					n++
					code = 4 | uint8(k)
				}
			}
			c := int32(0)
			if n == 1 {
				s.cornerAt[y*w+x] = code
				c = 1
			}
			s.cornerPre[row+x+1] = s.cornerPre[row+x] + c
		}
	}
}

// bend returns the shortest path from a to c homotopic to a→b→c (both
// segments Free, a not seeing c) as its interior waypoints: the convex
// chain, on b's side of a→c, of the convex obstacle corners (grid points
// with exactly one non-Free cell around them) inside the triangle abc, each
// moved tautOffset away from its obstacle cell. ok is false unless the
// chain is shorter than a→b→c and every segment of it has line of sight
// over Free cells.
func (s *smoother) bend(g *Grid, a, b, c Point) (chain []Point, ok bool) {
	side := cross(a, c, b)
	if side == 0 {
		return nil, false
	}
	in := func(q Point) bool {
		// Inside the closed triangle and strictly on b's side of a→c.
		return cross(a, c, q)*side > 0 && cross(c, b, q)*side >= 0 && cross(b, a, q)*side >= 0
	}
	s.corner = append(s.corner[:0], tautCorner{p: a}, tautCorner{p: c})
	y0 := int(math.Ceil(min(a.Y, b.Y, c.Y)))
	y1 := int(math.Floor(max(a.Y, b.Y, c.Y)))
	for y := max(y0, 0); y <= min(y1, g.rows); y++ {
		fy := float64(y)
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, e := range [3][2]Point{{a, b}, {b, c}, {c, a}} {
			p, q := e[0], e[1]
			if (p.Y-fy)*(q.Y-fy) > 0 {
				continue
			}
			var x float64
			switch {
			case p.Y == q.Y:
				lo, hi = min(lo, p.X, q.X), max(hi, p.X, q.X)
				continue
			default:
				x = p.X + (fy-p.Y)*(q.X-p.X)/(q.Y-p.Y)
			}
			lo, hi = min(lo, x), max(hi, x)
		}
		x0, x1 := max(int(math.Ceil(lo)), 0), min(int(math.Floor(hi)), g.cols)
		if x0 > x1 {
			continue
		}
		row := y * (g.cols + 2)
		if s.cornerPre[row+x1+1] == s.cornerPre[row+x0] {
			continue // no convex corner on this stretch of the row
		}
		for x := x0; x <= x1; x++ {
			code := s.cornerAt[y*(g.cols+1)+x]
			if code == 0 {
				continue
			}
			q := Point{float64(x), float64(y)}
			if !in(q) || q.Dist(a) < 2*tautOffset || q.Dist(c) < 2*tautOffset {
				continue
			}
			// The waypoint steps away from the obstacle cell, which lies
			// towards (sx, sy).
			sx, sy := float64(int(code&1)*2-1), float64(int(code>>1&1)*2-1)
			s.corner = append(s.corner, tautCorner{q, Point{-sx * tautOffset, -sy * tautOffset}})
		}
	}
	if len(s.corner) == 2 {
		return nil, false
	}
	chain = s.hullChain(side)
	if len(chain) == 0 {
		return nil, false
	}
	old := a.Dist(b) + b.Dist(c)
	length := a.Dist(chain[0]) + chain[len(chain)-1].Dist(c)
	for i := 1; i < len(chain); i++ {
		length += chain[i-1].Dist(chain[i])
	}
	if length >= old-1e-9 {
		return nil, false
	}
	prev := a
	for _, q := range chain {
		if !g.LineOfSight(prev, q, Free) {
			return nil, false
		}
		prev = q
	}
	if !g.LineOfSight(prev, c, Free) {
		return nil, false
	}
	return chain, true
}

// tautCorner is a candidate bend: an obstacle corner and the offset that
// moves a waypoint there off the obstacle.
type tautCorner struct{ p, off Point }

// hullChain returns the convex hull of s.corner (a and c first, then
// obstacle corners, all on one side of a→c) from a to c on the side of a→c
// given by the sign of side, a and c excluded, as offset waypoints.
// Corners lying on the hull's edges are kept as waypoints too: a segment
// between two offset waypoints could otherwise cut them. The result
// aliases s.hull.
func (s *smoother) hullChain(side float64) []Point {
	pts := s.corner
	a, c := pts[0].p, pts[1].p
	slices.SortFunc(pts, func(p, q tautCorner) int {
		switch {
		case p.p.X < q.p.X || (p.p.X == q.p.X && p.p.Y < q.p.Y):
			return -1
		case p.p == q.p:
			return 0
		}
		return 1
	})
	// Andrew's monotone chain (lower hull, then upper hull) gives the hull
	// counter-clockwise. All corners lie on one side of a→c, so the hull
	// is the edge between a and c plus the wanted chain; only the chain
	// side is built: the upper hull for side > 0 if a is left of c, etc.
	// Simpler and robust: build the whole hull keeping collinear points,
	// then walk from a to c away from the a–c edge.
	h := s.hull[:0]
	push := func(p tautCorner, floor int) {
		for len(h) >= floor+2 && cross(h[len(h)-2].p, h[len(h)-1].p, p.p) < 0 {
			h = h[:len(h)-1]
		}
		h = append(h, p)
	}
	for _, p := range pts {
		push(p, 0)
	}
	lower := len(h) - 1
	for i := len(pts) - 2; i >= 0; i-- {
		push(pts[i], lower)
	}
	h = h[:len(h)-1] // the first point again
	s.hull = h
	ia, ic := -1, -1
	for i, q := range h {
		switch q.p {
		case a:
			ia = i
		case c:
			ic = i
		}
	}
	out := s.chain[:0]
	n := len(h)
	if ia < 0 || ic < 0 {
		return out
	}
	// Counter-clockwise, the hull lies left of each edge; the chain runs on
	// b's side of a→c, so going forwards from a it is the chain when b is
	// right of a→c (side < 0), and going backwards otherwise.
	step := 1
	if side > 0 {
		step = n - 1
	}
	for i := (ia + step) % n; i != ic; i = (i + step) % n {
		q := h[i]
		out = append(out, Point{q.p.X + q.off.X, q.p.Y + q.off.Y})
	}
	s.chain = out
	return out
}

// cross returns the cross product (b-a) × (q-a): positive when q lies to
// the left of a→b.
func cross(a, b, q Point) float64 {
	return (b.X-a.X)*(q.Y-a.Y) - (b.Y-a.Y)*(q.X-a.X)
}
