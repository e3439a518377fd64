package nav

import "math"

// The planner's own searches (cluster-restricted Dijkstra, abstract A*) use
// an octile move model: the 8 neighbours, with a diagonal move allowed only
// when both orthogonal cells it passes between are walkable (no corner
// cutting). A straight move costs the tile cost of the entered cell (1 for
// Free, HazardCost for Costly). A diagonal move costs √2 × max(cost of the
// entered cell, min(costs of the two orthogonal cells)): it is later
// emitted as two 4-connected steps through the cheaper orthogonal cell, so
// squeezing diagonally between two hazard cells costs like a hazard.
// Pricing diagonals by their Euclidean length keeps cell routes close to
// the any-angle optimum that smoothing approximates.

// dir8 lists the 8 moves (a read-only table); the first 4 are straight.
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

// indexedHeap is a binary min-heap with decrease-key. pos[v] holds the
// index in items of each queued value v; the caller owns pos and marks
// values that are not queued itself.
type indexedHeap struct {
	items []heapItem
}

func (h *indexedHeap) reset()   { h.items = h.items[:0] }
func (h *indexedHeap) len() int { return len(h.items) }

// push inserts val with key.
func (h *indexedHeap) push(key float64, val int32, pos []int32) {
	h.items = append(h.items, heapItem{key, val})
	h.up(len(h.items)-1, pos)
}

// decrease lowers the key of the queued val.
func (h *indexedHeap) decrease(val int32, key float64, pos []int32) {
	i := pos[val]
	h.items[i].key = key
	h.up(int(i), pos)
}

func (h *indexedHeap) up(i int, pos []int32) {
	it := h.items
	x := it[i]
	for i > 0 {
		j := (i - 1) / 2
		if it[j].key <= x.key {
			break
		}
		it[i] = it[j]
		pos[it[i].val] = int32(i)
		i = j
	}
	it[i] = x
	pos[x.val] = int32(i)
}

// pop removes and returns the minimum. Its pos entry is left stale.
func (h *indexedHeap) pop(pos []int32) heapItem {
	it := h.items
	top := it[0]
	n := len(it) - 1
	x := it[n]
	it = it[:n]
	h.items = it
	if n == 0 {
		return top
	}
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
		if x.key <= it[m].key {
			break
		}
		it[i] = it[m]
		pos[it[i].val] = int32(i)
		i = m
	}
	it[i] = x
	pos[x.val] = int32(i)
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
	cost         []float64 // tile cost of each local cell, +Inf if Blocked
	mark         []uint32  // mark[i] == gen: cell i is a target not yet settled
	pos          []int32   // heap positions; -1 once settled
	gen          uint32
	heap         indexedHeap
	x0, y0, w, h int
}

func newClusterSearch(cs int) *clusterSearch {
	n := cs * cs
	return &clusterSearch{
		dist: make([]float64, n),
		par:  make([]uint8, n),
		cost: make([]float64, n),
		mark: make([]uint32, n),
		pos:  make([]int32, n),
	}
}

func (s *clusterSearch) local(c Cell) int { return (c.Y-s.y0)*s.w + (c.X - s.x0) }

func (s *clusterSearch) distTo(c Cell) float64 { return s.dist[s.local(c)] }

// diagCost is the cost of a diagonal move entering a cell of cost cv
// between orthogonal cells of costs c1 and c2 (all finite).
func diagCost(cv, c1, c2 float64) float64 {
	m := c1
	if c2 < m {
		m = c2
	}
	if cv > m {
		m = cv
	}
	return sqrt2 * m
}

// runCluster runs Dijkstra from root restricted to cluster cl. A forward
// search computes costs root→cell; a reverse search computes costs
// cell→root. If targets is not empty, the search stops once all of them
// (cells of the cluster) are settled; unsettled cells then hold upper bounds
// or +Inf and must not be used.
func (p *Planner) runCluster(s *clusterSearch, cl int, root Cell, reverse bool, targets []Cell) {
	x0, y0, w, h := p.clusterRect(cl)
	s.x0, s.y0, s.w, s.h = x0, y0, w, h
	n := w * h
	inf := math.Inf(1)
	cols := p.grid.cols
	for y := 0; y < h; y++ {
		row := p.grid.tiles[(y0+y)*cols+x0 : (y0+y)*cols+x0+w]
		dst := s.cost[y*w : y*w+w]
		for x, t := range row {
			dst[x] = p.tileCost[t]
		}
	}
	dist, par, cost, pos := s.dist[:n], s.par[:n], s.cost[:n], s.pos[:n]
	for i := range dist {
		dist[i] = inf
		par[i] = noParent
		pos[i] = 0
	}
	s.gen++
	if s.gen == 0 {
		clear(s.mark)
		s.gen = 1
	}
	remaining := 0
	for _, t := range targets {
		if i := s.local(t); s.mark[i] != s.gen {
			s.mark[i] = s.gen
			remaining++
		}
	}
	s.heap.reset()
	r := s.local(root)
	dist[r] = 0
	s.heap.push(0, int32(r), pos)
	for s.heap.len() > 0 {
		it := s.heap.pop(pos)
		u := int(it.val)
		pos[u] = -1
		if remaining > 0 && s.mark[u] == s.gen {
			s.mark[u] = 0
			if remaining--; remaining == 0 {
				break
			}
		}
		ux, uy := u%w, u/w
		for d := range dir8 {
			m := dir8[d]
			var vx, vy, src, dst int
			if reverse {
				// Predecessor v moves by d into u.
				vx, vy = ux-m.dx, uy-m.dy
			} else {
				vx, vy = ux+m.dx, uy+m.dy
			}
			if uint(vx) >= uint(w) || uint(vy) >= uint(h) {
				continue
			}
			v := vy*w + vx
			if cost[v] == inf {
				continue
			}
			if reverse {
				src, dst = v, u
			} else {
				src, dst = u, v
			}
			c := cost[dst]
			if d >= 4 {
				c1, c2 := cost[src+m.dx], cost[src+m.dy*w]
				if c1 == inf || c2 == inf {
					continue
				}
				c = diagCost(c, c1, c2)
			}
			if nd := it.key + c; nd < dist[v] {
				if pos[v] < 0 {
					continue // settled (only possible through rounding)
				}
				queued := dist[v] != inf
				dist[v] = nd
				par[v] = uint8(d)
				if queued {
					s.heap.decrease(int32(v), nd, pos)
				} else {
					s.heap.push(nd, int32(v), pos)
				}
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
