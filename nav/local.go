package nav

import "math"

// localMargin is how far, in cells, the window of a local search reaches
// beyond the bounding box of the query's two cells. A route that leaves the
// window is longer than the octile distance by at least about 0.8 × this
// (two sides of a detour round the margin), so with 8 cells a local route
// is proven the cheapest of the whole grid unless obstacles make it that
// much longer than the straight line.
const localMargin = 8

// maxLocalSteps is the longest query (Manhattan distance in cells) that
// tries a local search first. Agents' queries round obstacles are nearly all
// shorter (99.9% of those the built-in foragers made within 32); on longer
// ones the window is large and a search that fails its proof (round a wall
// that reaches beyond the window) costs more than the abstract graph saves.
const maxLocalSteps = 32

// localSearch is the scratch of the windowed octile A* of
// [Planner.localRoute]. Cells are indexed as in a clusterSearch, over the
// window; stamp marks the cells this query reached, so that nothing is
// cleared between queries.
type localSearch struct {
	dist  []float64
	par   []uint8
	stamp []uint32
	pos   []int32 // heap positions; -1 once settled
	gen   uint32
	heap  indexedHeap
}

// localRoute computes the cheapest route sc→gc (two different walkable cells)
// in the octile move model of the planner's own searches (see search.go),
// inside a window of localMargin cells around them, and appends it to dst as
// 4-connected cells, sc first. ok is true only when that route is also the
// cheapest of the whole grid: when every route that leaves the window costs
// at least as much, which the octile distances through the walkable cells
// just outside it bound from below. Otherwise (the goal is not reached in
// the window, or a cheaper route might leave it) ok is false and the caller
// plans with the abstract graph.
//
// It answers the short queries that a straight line or a direct leg did not
// settle (an obstacle in the way) in a few microseconds, where the abstract
// graph's two cluster searches and its abstract A* took tens: their routes
// are also exact in the same cost model, up to ties, which smoothing then
// pulls taut.
func (p *Planner) localRoute(dst []Cell, sc, gc Cell) (route []Cell, cost float64, ok bool) {
	g := p.grid
	x0 := max(0, min(sc.X, gc.X)-localMargin)
	y0 := max(0, min(sc.Y, gc.Y)-localMargin)
	x1 := min(g.cols-1, max(sc.X, gc.X)+localMargin)
	y1 := min(g.rows-1, max(sc.Y, gc.Y)+localMargin)
	w, h := x1-x0+1, y1-y0+1
	outside := p.leaveBound(sc, gc, x0, y0, x1, y1)

	s := &p.local
	if n := w * h; len(s.dist) < n {
		s.dist, s.par = make([]float64, n), make([]uint8, n)
		s.stamp, s.pos = make([]uint32, n), make([]int32, n)
		s.gen = 0
	}
	s.gen++
	if s.gen == 0 {
		clear(s.stamp)
		s.gen = 1
	}
	gen, dist, par, stamp, pos := s.gen, s.dist, s.par, s.stamp, s.pos
	cols, tiles, tileCost := g.cols, g.tiles, &p.tileCost
	inf := math.Inf(1)
	// The window's neighbours of a cell in dir8's order, as offsets of a
	// window index and of a grid index, and for a diagonal the two straight
	// moves it passes between.
	var offW, offG [8]int
	for d, m := range dir8 {
		offW[d], offG[d] = m.dy*w+m.dx, m.dy*cols+m.dx
	}
	orth := [8][2]int{4: {0, 1}, 5: {2, 1}, 6: {2, 3}, 7: {0, 3}}

	gx, gy := gc.X-x0, gc.Y-y0
	goal := gy*w + gx
	r := (sc.Y-y0)*w + (sc.X - x0)
	stamp[r], dist[r], pos[r] = gen, 0, 0
	s.heap.reset()
	s.heap.push(octile(sc, gc), int32(r), pos)
	for s.heap.len() > 0 {
		it := s.heap.pop(pos)
		u := int(it.val)
		pos[u] = -1
		if u == goal {
			if dist[u] > outside {
				return dst, dist[u], false
			}
			dst = append(dst, sc)
			return p.appendTreePath(dst, par, x0, y0, w, false, sc, gc, &p.cellScratch), dist[u], true
		}
		if it.key > outside {
			// Every route still to be found costs more than one that may
			// leave the window.
			return dst, inf, false
		}
		gu := dist[u]
		ux, uy := u%w, u/w
		gi := (y0+uy)*cols + x0 + ux
		// The straight neighbours' costs, +Inf outside the window; a
		// diagonal neighbour is in the window when both its straight
		// neighbours are.
		var c [8]float64
		c[0], c[1], c[2], c[3] = inf, inf, inf, inf
		if ux+1 < w {
			c[0] = tileCost[tiles[gi+1]]
		}
		if uy+1 < h {
			c[1] = tileCost[tiles[gi+cols]]
		}
		if ux > 0 {
			c[2] = tileCost[tiles[gi-1]]
		}
		if uy > 0 {
			c[3] = tileCost[tiles[gi-cols]]
		}
		for d := 4; d < 8; d++ {
			c1, c2 := c[orth[d][0]], c[orth[d][1]]
			if c1 == inf || c2 == inf {
				c[d] = inf
			} else if cv := tileCost[tiles[gi+offG[d]]]; cv == inf {
				c[d] = inf
			} else {
				c[d] = diagCost(cv, c1, c2)
			}
		}
		for d := range 8 {
			if c[d] == inf {
				continue
			}
			v := u + offW[d]
			ng := gu + c[d]
			if stamp[v] == gen && (ng >= dist[v] || pos[v] < 0) {
				continue
			}
			ddx, ddy := v%w-gx, v/w-gy
			if ddx < 0 {
				ddx = -ddx
			}
			if ddy < 0 {
				ddy = -ddy
			}
			key := ng + float64(max(ddx, ddy)-min(ddx, ddy)) + sqrt2*float64(min(ddx, ddy)) - tieBreak*ng
			if stamp[v] == gen {
				dist[v], par[v] = ng, uint8(d)
				s.heap.decrease(int32(v), key, pos)
				continue
			}
			stamp[v], dist[v], par[v], pos[v] = gen, ng, uint8(d), 0
			s.heap.push(key, int32(v), pos)
		}
	}
	return dst, inf, false
}

// leaveBound returns a lower bound on the cost of any route sc→gc that
// leaves the window [x0, x1] × [y0, y1]: the least octile distance through
// a walkable cell of the grid just outside it, or +Inf if there is none.
func (p *Planner) leaveBound(sc, gc Cell, x0, y0, x1, y1 int) float64 {
	g := p.grid
	best := math.Inf(1)
	through := func(c Cell) {
		if g.At(c) != Blocked { // At is Blocked outside the grid
			best = min(best, octile(sc, c)+octile(c, gc))
		}
	}
	for x := x0 - 1; x <= x1+1; x++ {
		through(Cell{x, y0 - 1})
		through(Cell{x, y1 + 1})
	}
	for y := y0; y <= y1; y++ {
		through(Cell{x0 - 1, y})
		through(Cell{x1 + 1, y})
	}
	return best
}
