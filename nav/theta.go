package nav

import (
	"math"
	"slices"
)

// Any-angle route search (Lazy Theta*, Nash, Daniel, Koenig & Felner,
// "Lazy Theta*: Any-Angle Path Planning and Path Length Analysis in 3D",
// AAAI 2010) over the corners of the grid's cells.
//
// The taut pass makes a path the shortest in the homotopy class of its
// cell route, but the class is the octile route's, which on cluttered maps
// is not always the class of the any-angle optimum. Theta* compares routes
// by (nearly) their Euclidean length, so its class usually is the
// optimum's. Its nodes are cell corners, where shortest any-angle paths
// bend; its result is turned back into a 4-connected cell route of Free
// cells and smoothed like any other, so the path the planner returns is
// always checked by the same line-of-sight rules.
//
// Edges between corners: along a cell edge when at least one of the two
// cells beside it is Free, diagonally across a Free cell. Line of sight
// between corners ([Planner.cornerSight]) may touch non-Free cells (run
// along their faces, touch their corners) but not enter them, run between
// two of them sharing an edge, or squeeze between two of them meeting
// diagonally at a grid point the segment passes through.

// thetaSearch is the scratch state of the any-angle search. Per-corner
// arrays cover the whole grid ((cols+1)·(rows+1) corners) and are reset by
// generation stamps, so a search touches only the corners it visits.
type thetaSearch struct {
	g    []float64 // cost from the start point; valid when seen[i] == gen
	par  []int32   // parent corner (any-angle link); a root is its own
	seen []uint32  // generation stamp of g, par and pos
	pos  []int32   // heap positions; -1 once closed
	node []bool    // per corner: a path may pass or bend there (see thetaNodes)
	in   []uint32  // per corner: generation stamp of the corridor
	gen  uint32
	heap indexedHeap
	path []int32   // corners of the last path, start to goal
	ts   []float64 // rasterisation scratch
}

func (p *Planner) prepareTheta() {
	t := &p.theta
	if t.node == nil {
		t.node = p.thetaNodes()
		n := len(t.node)
		t.g = make([]float64, n)
		t.par = make([]int32, n)
		t.seen = make([]uint32, n)
		t.pos = make([]int32, n)
		t.in = make([]uint32, n)
		t.gen = 0
	}
	t.gen++
	if t.gen == 0 { // wrapped: clear stamps
		clear(t.seen)
		clear(t.in)
		t.gen = 1
	}
	t.heap.reset()
}

// thetaNodes marks the corners a path may pass through or bend at: those
// with at most two non-Free cells around them, unless they are the two
// diagonal ones (a path through that corner would squeeze between them,
// and there is no other way past it).
func (p *Planner) thetaNodes() []bool {
	g := p.grid
	w := g.cols + 1
	node := make([]bool, w*(g.rows+1))
	for y := 0; y <= g.rows; y++ {
		for x := 0; x <= g.cols; x++ {
			a, b := !p.free(x-1, y-1), !p.free(x, y-1)
			c, d := !p.free(x-1, y), !p.free(x, y)
			n := 0
			for _, v := range [4]bool{a, b, c, d} {
				if v {
					n++
				}
			}
			node[y*w+x] = n <= 2 && !(a && d && n == 2) && !(b && c && n == 2)
		}
	}
	return node
}

// thetaRoute searches an any-angle path from from (in Free cell sc) to to
// (in Free cell gc) over cell corners with Lazy Theta*, giving up once no
// path shorter than bound can come out of it, and appends to dst the
// 4-connected route of Free cells it follows, sc first and gc last. ok is
// false when the search gave up or its path could not be followed by Free
// cells.
func (p *Planner) thetaRoute(dst []Cell, from, to Point, via []Cell, bound float64) (route []Cell, ok bool) {
	g := p.grid
	t := &p.theta
	w := g.cols + 1
	p.prepareTheta()
	gen := t.gen
	p.markCorridor(via)
	sc, gc := via[0], via[len(via)-1]
	at := func(i int32) Point { return Point{float64(int(i) % w), float64(int(i) / w)} }
	// Roots: the corners of the start cell; goals: those of the goal cell.
	for k := 0; k < 4; k++ {
		i := int32((sc.Y+k/2)*w + sc.X + k%2)
		if !t.node[i] {
			continue
		}
		q := at(i)
		d := from.Dist(q)
		t.seen[i], t.g[i], t.par[i] = gen, d, i
		t.heap.push(d+dist(q, to), i, t.pos)
	}
	isGoal := func(x, y int) bool { return (x == gc.X || x == gc.X+1) && (y == gc.Y || y == gc.Y+1) }
	goal := int32(-1)
	for t.heap.len() > 0 {
		it := t.heap.pop(t.pos)
		u := it.val
		t.pos[u] = -1
		ux, uy := int(u)%w, int(u)/w
		if pp := t.par[u]; pp != u && !p.cornerSight(int(pp)%w, int(pp)/w, ux, uy) {
			// The lazily assumed link fails: take the best closed
			// neighbour as parent (the one that queued u is one).
			best, bestG := int32(-1), math.Inf(1)
			for d := range dir8 {
				if !p.cornerMove(ux, uy, d) {
					continue
				}
				v := u + int32(dir8[d].dy*w+dir8[d].dx)
				if t.seen[v] != gen || t.pos[v] >= 0 {
					continue
				}
				if gv := t.g[v] + dist8(d); gv < bestG {
					best, bestG = v, gv
				}
			}
			if best < 0 {
				continue // cannot happen: a closed neighbour queued u
			}
			t.par[u], t.g[u] = best, bestG
		}
		if t.g[u]+dist(at(u), to) >= bound {
			continue // no shorter path through u
		}
		if isGoal(ux, uy) {
			goal = u
			break
		}
		pp := t.par[u]
		ppt, gp := at(pp), t.g[pp]
		for d := range dir8 {
			if !p.cornerMove(ux, uy, d) {
				continue
			}
			v := u + int32(dir8[d].dy*w+dir8[d].dx)
			if t.seen[v] == gen && t.pos[v] < 0 {
				continue // closed
			}
			vp := at(v)
			ng := gp + dist(ppt, vp)
			if t.seen[v] == gen && ng >= t.g[v] {
				continue
			}
			h := dist(vp, to)
			if ng+h >= bound {
				continue
			}
			if t.seen[v] != gen {
				t.seen[v], t.g[v], t.par[v] = gen, ng, pp
				t.heap.push(ng+h, v, t.pos)
			} else {
				t.g[v], t.par[v] = ng, pp
				t.heap.decrease(v, ng+h, t.pos)
			}
		}
	}
	if goal < 0 {
		return dst, false
	}
	path := t.path[:0]
	for i := goal; ; i = t.par[i] {
		path = append(path, i)
		if t.par[i] == i {
			break
		}
	}
	slices.Reverse(path)
	t.path = path
	dst = append(dst, sc)
	for k := 1; k < len(path); k++ {
		if dst, ok = p.appendSegmentCells(dst, at(path[k-1]), at(path[k])); !ok {
			return dst, false
		}
	}
	return p.linkCell(dst, gc)
}

// corridorRadius is how far (in cells, Chebyshev) the any-angle search
// may stray from the route it starts from.
const corridorRadius = 8

// markCorridor stamps the corners of the cells within corridorRadius of
// the cells of route (a 4-connected chain) as the search's corridor.
func (p *Planner) markCorridor(route []Cell) {
	g := p.grid
	t := &p.theta
	w := g.cols + 1
	const r = corridorRadius
	mark := func(x0, x1, y0, y1 int) {
		x0, x1 = max(x0, 0), min(x1, g.cols)
		y0, y1 = max(y0, 0), min(y1, g.rows)
		for y := y0; y <= y1; y++ {
			row := t.in[y*w : y*w+w]
			for x := x0; x <= x1; x++ {
				row[x] = t.gen
			}
		}
	}
	c := route[0]
	mark(c.X-r, c.X+r+1, c.Y-r, c.Y+r+1)
	for _, n := range route[1:] {
		// The square moves by one cell: stamp its new edge.
		switch {
		case n.X > c.X:
			mark(n.X+r+1, n.X+r+1, n.Y-r, n.Y+r+1)
		case n.X < c.X:
			mark(n.X-r, n.X-r, n.Y-r, n.Y+r+1)
		case n.Y > c.Y:
			mark(n.X-r, n.X+r+1, n.Y+r+1, n.Y+r+1)
		case n.Y < c.Y:
			mark(n.X-r, n.X+r+1, n.Y-r, n.Y-r)
		}
		c = n
	}
}

// dist is the Euclidean distance between a and b.
func dist(a, b Point) float64 {
	dx, dy := a.X-b.X, a.Y-b.Y
	return math.Sqrt(dx*dx + dy*dy)
}

// dist8 is the length of corner move d.
func dist8(d int) float64 {
	if d >= 4 {
		return sqrt2
	}
	return 1
}

// free reports whether cell (x, y) is Free (cells outside the grid are not).
func (p *Planner) free(x, y int) bool { return p.grid.at(x, y) == Free }

// cornerMove reports whether corner (x, y) may move by dir8[d] to a node
// corner: along a cell edge with a Free cell on at least one side, or
// diagonally across a Free cell.
func (p *Planner) cornerMove(x, y, d int) bool {
	m := dir8[d]
	// The cell the move crosses (diagonal) or one of the two beside it.
	cx, cy := x+min(m.dx, 0), y+min(m.dy, 0)
	var ok bool
	switch {
	case d >= 4:
		ok = p.free(cx, cy)
	case m.dy == 0:
		ok = p.free(cx, y) || p.free(cx, y-1)
	default:
		ok = p.free(x, cy) || p.free(x-1, cy)
	}
	// A Free cell beside the move keeps its end inside the grid.
	i := (y+m.dy)*(p.grid.cols+1) + x + m.dx
	return ok && p.theta.node[i] && p.theta.in[i] == p.theta.gen
}

// cornerSight reports whether corners (x0, y0) and (x1, y1) see each other
// (see the rules above), with integer arithmetic only.
func (p *Planner) cornerSight(x0, y0, x1, y1 int) bool {
	dx, dy := x1-x0, y1-y0
	switch {
	case dx == 0 && dy == 0:
		return true
	case dy == 0:
		return p.lineSight(x0, x1, y0, false)
	case dx == 0:
		return p.lineSight(y0, y1, x0, true)
	}
	sx, sy := 1, 1
	if dx < 0 {
		sx, dx = -1, -dx
	}
	if dy < 0 {
		sy, dy = -1, -dy
	}
	// The cell the segment enters first and the one it ends in.
	cx, cy := x0+min(sx, 0), y0+min(sy, 0)
	ex, ey := x1-max(sx, 0), y1-max(sy, 0)
	for {
		if !p.free(cx, cy) {
			return false
		}
		if cx == ex && cy == ey {
			return true
		}
		// Distances (scaled by dx·dy) to the next vertical and
		// horizontal grid lines ahead.
		bx, by := cx+max(sx, 0), cy+max(sy, 0)
		lx, ly := iabs(bx-x0)*dy, iabs(by-y0)*dx
		switch {
		case lx < ly:
			cx += sx
		case ly < lx:
			cy += sy
		default: // through a grid point: no squeezing between two cells
			if !p.free(cx+sx, cy) && !p.free(cx, cy+sy) {
				return false
			}
			cx, cy = cx+sx, cy+sy
		}
	}
}

// lineSight checks a segment along grid line fixed (a row of corners when
// vertical is false, a column when true) from u0 to u1: every unit of it
// needs a Free cell on one side, and at every grid point inside it the
// non-Free cells around the point must lie on one side of the line.
func (p *Planner) lineSight(u0, u1, fixed int, vertical bool) bool {
	free := func(u, f int) bool {
		if vertical {
			return p.free(f, u)
		}
		return p.free(u, f)
	}
	lo, hi := min(u0, u1), max(u0, u1)
	for u := lo; u < hi; u++ {
		if !free(u, fixed) && !free(u, fixed-1) {
			return false
		}
		if u > lo {
			// Grid point u: a non-Free cell on each side of the line.
			below := !free(u-1, fixed-1) || !free(u, fixed-1)
			above := !free(u-1, fixed) || !free(u, fixed)
			if below && above {
				return false
			}
		}
	}
	return true
}

// appendSegmentCells appends the Free cells a segment between two corners
// crosses, in order, linked 4-connectedly to dst's last cell (which has
// a, or the cell before it, as a corner). A part of the segment running
// along a grid line takes the Free cell beside it. ok is false when no
// chain of Free cells follows the segment.
func (p *Planner) appendSegmentCells(dst []Cell, a, b Point) ([]Cell, bool) {
	t := &p.theta
	ts := append(t.ts[:0], 0, 1)
	dx, dy := b.X-a.X, b.Y-a.Y
	for x := min(a.X, b.X) + 1; x < max(a.X, b.X); x++ {
		ts = append(ts, (x-a.X)/dx)
	}
	for y := min(a.Y, b.Y) + 1; y < max(a.Y, b.Y); y++ {
		ts = append(ts, (y-a.Y)/dy)
	}
	slices.Sort(ts)
	t.ts = ts
	ok := true
	for k := 1; k < len(ts) && ok; k++ {
		if ts[k]-ts[k-1] < 1e-12 {
			continue
		}
		tm := (ts[k] + ts[k-1]) / 2
		c := Cell{floorInt(a.X + tm*dx), floorInt(a.Y + tm*dy)}
		switch {
		case dx == 0 && !p.free(c.X, c.Y):
			c.X-- // along a column line: the cell on the other side
		case dy == 0 && !p.free(c.X, c.Y):
			c.Y--
		}
		dst, ok = p.linkCell(dst, c)
	}
	return dst, ok
}

// linkCell appends c to route so that it stays a 4-connected chain of Free
// cells: nothing when c is already last, c when it is Free and 4-adjacent
// to the last cell, or a Free cell between them and c when they touch
// diagonally. ok is false otherwise.
func (p *Planner) linkCell(route []Cell, c Cell) ([]Cell, bool) {
	last := route[len(route)-1]
	if !p.free(c.X, c.Y) {
		return route, false
	}
	dx, dy := c.X-last.X, c.Y-last.Y
	switch {
	case dx == 0 && dy == 0:
		return route, true
	case iabs(dx)+iabs(dy) == 1:
		return append(route, c), true
	case iabs(dx) == 1 && iabs(dy) == 1:
		switch {
		case p.free(c.X, last.Y):
			route = append(route, Cell{c.X, last.Y})
		case p.free(last.X, c.Y):
			route = append(route, Cell{last.X, c.Y})
		default:
			return route, false
		}
		return append(route, c), true
	}
	return route, false
}

func iabs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
