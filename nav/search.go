package nav

import "math"

// The planner's own searches (cluster-restricted Dijkstra, abstract A*) use
// an octile move model: the 8 neighbours, with a diagonal move allowed only
// when both orthogonal cells it passes between are walkable (no corner
// cutting). Entering a cell costs its tile cost (1 for Free, HazardCost for
// Costly) times the move length (1 or √2); a diagonal move costs as much as
// the cheaper of its two 4-connected equivalents' worse cell, so that a
// diagonal squeezing between two hazard cells costs like the hazard. The
// costs are 4-connected-route costs where the route is straight and
// Euclidean-like where it is diagonal, which keeps routes close to the
// any-angle optimum that smoothing approximates.

// dir8 lists the 8 moves; the first 4 are straight.
var dir8 = [8]struct{ dx, dy int }{
	{1, 0}, {0, 1}, {-1, 0}, {0, -1},
	{1, 1}, {-1, 1}, {-1, -1}, {1, -1},
}

const (
	noParent = 255
	sqrt2    = math.Sqrt2
)

// heapItem is a priority-queue entry.
type heapItem struct {
	key float64
	val int32
}

// minHeap is a binary min-heap of heapItems keyed by key. Ties are broken by
// insertion order only loosely; callers must not depend on tie order.
type minHeap struct{ items []heapItem }

func (h *minHeap) reset()   { h.items = h.items[:0] }
func (h *minHeap) len() int { return len(h.items) }
func (h *minHeap) push(key float64, val int32) {
	h.items = append(h.items, heapItem{key, val})
	it := h.items
	i := len(it) - 1
	for i > 0 {
		j := (i - 1) / 2
		if it[j].key <= it[i].key {
			break
		}
		it[i], it[j] = it[j], it[i]
		i = j
	}
}

func (h *minHeap) pop() heapItem {
	it := h.items
	top := it[0]
	n := len(it) - 1
	it[0] = it[n]
	it = it[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && it[r].key < it[l].key {
			m = r
		}
		if it[i].key <= it[m].key {
			break
		}
		it[i], it[m] = it[m], it[i]
		i = m
	}
	h.items = it
	return top
}

// clusterSearch holds the result of one cluster-restricted Dijkstra: for
// each local cell (index (y-y0)*w + (x-x0)), its distance and the direction
// index (into dir8) of the move that links it to the search tree. In a
// forward search par[v] is the move that entered v; in a reverse search
// par[u] is the move that leaves u towards the root.
type clusterSearch struct {
	dist         []float64
	par          []uint8
	heap         minHeap
	x0, y0, w, h int
	reverse      bool
	root         Cell
	cluster      int
}

func newClusterSearch(cs int) *clusterSearch {
	return &clusterSearch{dist: make([]float64, cs*cs), par: make([]uint8, cs*cs)}
}

func (s *clusterSearch) local(c Cell) int { return (c.Y-s.y0)*s.w + (c.X - s.x0) }

func (s *clusterSearch) inside(x, y int) bool {
	return uint(x-s.x0) < uint(s.w) && uint(y-s.y0) < uint(s.h)
}

func (s *clusterSearch) distTo(c Cell) float64 { return s.dist[s.local(c)] }

// moveCost returns the cost of moving from (x, y) by dir8[d], or +Inf if the
// move is not allowed. The destination must be in bounds.
func (p *Planner) moveCost(x, y, d int) float64 {
	m := dir8[d]
	tv := p.grid.at(x+m.dx, y+m.dy)
	if tv == Blocked {
		return math.Inf(1)
	}
	if d < 4 {
		return p.tileCost[tv]
	}
	t1 := p.grid.at(x+m.dx, y)
	t2 := p.grid.at(x, y+m.dy)
	if t1 == Blocked || t2 == Blocked {
		return math.Inf(1)
	}
	return sqrt2 * math.Max(p.tileCost[tv], math.Min(p.tileCost[t1], p.tileCost[t2]))
}

// runCluster runs Dijkstra from root restricted to cluster cl. A forward
// search computes costs root→cell; a reverse search computes costs
// cell→root.
func (p *Planner) runCluster(s *clusterSearch, cl int, root Cell, reverse bool) {
	s.x0, s.y0, s.w, s.h = p.clusterRect(cl)
	s.reverse, s.root, s.cluster = reverse, root, cl
	n := s.w * s.h
	inf := math.Inf(1)
	for i := 0; i < n; i++ {
		s.dist[i] = inf
		s.par[i] = noParent
	}
	s.heap.reset()
	r := s.local(root)
	s.dist[r] = 0
	s.heap.push(0, int32(r))
	for s.heap.len() > 0 {
		it := s.heap.pop()
		u := int(it.val)
		if it.key > s.dist[u] {
			continue
		}
		ux, uy := s.x0+u%s.w, s.y0+u/s.w
		for d := range dir8 {
			m := dir8[d]
			var vx, vy int
			var c float64
			if reverse {
				// Predecessor v moves by d into u.
				vx, vy = ux-m.dx, uy-m.dy
				if !s.inside(vx, vy) {
					continue
				}
				if p.grid.at(vx, vy) == Blocked {
					continue
				}
				c = p.moveCost(vx, vy, d)
			} else {
				vx, vy = ux+m.dx, uy+m.dy
				if !s.inside(vx, vy) {
					continue
				}
				c = p.moveCost(ux, uy, d)
			}
			if math.IsInf(c, 1) {
				continue
			}
			v := (vy-s.y0)*s.w + (vx - s.x0)
			if nd := it.key + c; nd < s.dist[v] {
				s.dist[v] = nd
				s.par[v] = uint8(d)
				s.heap.push(nd, int32(v))
			}
		}
	}
}

// appendTreePath appends the 8-connected path between the search root and
// c, as recorded in par (laid out like s), converted to 4-connected cells.
// For a forward tree the path runs root→c, for a reverse tree c→root. The
// first cell of the path is not appended (the caller's route already ends
// there); the last is. scratch is reused to reverse forward paths.
func (p *Planner) appendTreePath(dst []Cell, par []uint8, x0, y0, w int, reverse bool, root, c Cell, scratch *[]Cell) []Cell {
	idx := func(q Cell) int { return (q.Y-y0)*w + (q.X - x0) }
	if reverse {
		cur := c
		for cur != root {
			d := par[idx(cur)]
			if d == noParent {
				panic("nav: broken reverse search tree")
			}
			m := dir8[d]
			next := Cell{cur.X + m.dx, cur.Y + m.dy}
			dst = p.appendMove(dst, cur, next)
			cur = next
		}
		return dst
	}
	tmp := (*scratch)[:0]
	cur := c
	for cur != root {
		tmp = append(tmp, cur)
		d := par[idx(cur)]
		if d == noParent {
			panic("nav: broken forward search tree")
		}
		m := dir8[d]
		cur = Cell{cur.X - m.dx, cur.Y - m.dy}
	}
	prev := root
	for i := len(tmp) - 1; i >= 0; i-- {
		dst = p.appendMove(dst, prev, tmp[i])
		prev = tmp[i]
	}
	*scratch = tmp
	return dst
}

// appendMove appends the 4-connected cells of the move from→to (to is
// 4- or 8-adjacent to from). A diagonal move goes through the cheaper of the
// two orthogonal cells.
func (p *Planner) appendMove(dst []Cell, from, to Cell) []Cell {
	if from.X != to.X && from.Y != to.Y {
		o1 := Cell{to.X, from.Y}
		o2 := Cell{from.X, to.Y}
		if p.grid.At(o2) < p.grid.At(o1) {
			dst = append(dst, o2)
		} else {
			dst = append(dst, o1)
		}
	}
	return append(dst, to)
}

// octile is the octile distance between two cells, a lower bound on the cost
// of any route between them.
func octile(a, b Cell) float64 {
	dx, dy := a.X-b.X, a.Y-b.Y
	if dx < 0 {
		dx = -dx
	}
	if dy < 0 {
		dy = -dy
	}
	if dx < dy {
		dx, dy = dy, dx
	}
	return float64(dx-dy) + sqrt2*float64(dy)
}
