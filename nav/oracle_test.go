package nav

import (
	"container/heap"
	"math"
	"runtime"
	"sync"
)

// anyAngleOracle computes exact any-angle shortest paths among the Blocked
// cells of a grid, independently of the planner: a visibility graph over
// the convex corners of the Blocked cells (grid points with exactly one
// Blocked cell among the four around them; cells outside the grid count as
// Blocked), with Dijkstra over it.
//
// Its line of sight is its own exact integer test ([clearDoubled]): a
// segment may touch Blocked cells (run along their faces, pass their
// corners) but may not enter their interiors, run between two Blocked cells
// sharing an edge, or pass through a grid point between two Blocked cells
// on opposite sides of it. Every path the planner may return (see
// [Grid.LineOfSight]) is valid under these rules, so no valid planner path
// can be shorter than the oracle's optimum.
//
// Shortest paths among polygonal obstacles bend only at convex obstacle
// vertices and use only edges tangent to the obstacles at both ends, so
// only such edges are kept (the reduced visibility graph).
type anyAngleOracle struct {
	g     *Grid
	vx    []int64 // doubled coordinates of the vertices
	vy    []int64
	quad  [][2]int64 // (sx, sy): the Blocked cell lies towards (sx, sy)
	adj   [][]oEdge
	edges int
}

type oEdge struct {
	to int32
	w  float64
}

// newAnyAngleOracle builds the reduced visibility graph of g, using every
// CPU.
func newAnyAngleOracle(g *Grid) *anyAngleOracle {
	o := &anyAngleOracle{g: g}
	blocked := func(x, y int) bool { return g.at(x, y) == Blocked }
	for y := 0; y <= g.rows; y++ {
		for x := 0; x <= g.cols; x++ {
			n, sx, sy := 0, int64(0), int64(0)
			for _, d := range [4][2]int{{-1, -1}, {0, -1}, {-1, 0}, {0, 0}} {
				if blocked(x+d[0], y+d[1]) {
					n++
					sx, sy = int64(2*d[0]+1), int64(2*d[1]+1)
				}
			}
			if n == 1 {
				o.vx = append(o.vx, int64(2*x))
				o.vy = append(o.vy, int64(2*y))
				o.quad = append(o.quad, [2]int64{sx, sy})
			}
		}
	}
	n := len(o.vx)
	o.adj = make([][]oEdge, n)
	workers := runtime.GOMAXPROCS(0)
	found := make([][][2]int32, workers)
	var wg sync.WaitGroup
	for wk := 0; wk < workers; wk++ {
		wg.Add(1)
		go func(wk int) {
			defer wg.Done()
			for i := wk; i < n; i += workers {
				for j := i + 1; j < n; j++ {
					dx, dy := o.vx[j]-o.vx[i], o.vy[j]-o.vy[i]
					if !o.tangent(i, dx, dy) || !o.tangent(j, dx, dy) {
						continue
					}
					if clearDoubled(g, o.vx[i], o.vy[i], o.vx[j], o.vy[j]) {
						found[wk] = append(found[wk], [2]int32{int32(i), int32(j)})
					}
				}
			}
		}(wk)
	}
	wg.Wait()
	for _, f := range found {
		for _, e := range f {
			w := o.dist(int(e[0]), o.vx[e[1]], o.vy[e[1]])
			o.adj[e[0]] = append(o.adj[e[0]], oEdge{e[1], w})
			o.adj[e[1]] = append(o.adj[e[1]], oEdge{e[0], w})
			o.edges++
		}
	}
	return o
}

// tangent reports whether the line through vertex i with direction (dx, dy)
// stays out of the vertex's Blocked cell on both sides of the vertex.
func (o *anyAngleOracle) tangent(i int, dx, dy int64) bool {
	q := o.quad[i]
	a, b := q[0]*dx, q[1]*dy
	return !(a > 0 && b > 0) && !(a < 0 && b < 0)
}

func (o *anyAngleOracle) dist(i int, x, y int64) float64 {
	return math.Hypot(float64(x-o.vx[i]), float64(y-o.vy[i])) / 2
}

// doubled converts a point whose coordinates are multiples of 0.5 (cell
// centres and grid points) to doubled integer coordinates.
func doubled(p Point) (int64, int64, bool) {
	x, y := 2*p.X, 2*p.Y
	if x != math.Round(x) || y != math.Round(y) {
		return 0, 0, false
	}
	return int64(x), int64(y), true
}

// shortest returns the length of the shortest any-angle path from a to b
// (both multiples of 0.5, e.g. cell centres), or +Inf if there is none.
func (o *anyAngleOracle) shortest(a, b Point) float64 {
	ax, ay, ok1 := doubled(a)
	bx, by, ok2 := doubled(b)
	if !ok1 || !ok2 {
		panic("oracle: points must be multiples of 0.5")
	}
	if clearDoubled(o.g, ax, ay, bx, by) {
		return a.Dist(b)
	}
	n := len(o.vx)
	toGoal := make([]float64, n)
	for i := range toGoal {
		toGoal[i] = math.Inf(1)
		if o.tangent(i, bx-o.vx[i], by-o.vy[i]) && clearDoubled(o.g, o.vx[i], o.vy[i], bx, by) {
			toGoal[i] = o.dist(i, bx, by)
		}
	}
	dist := make([]float64, n)
	for i := range dist {
		dist[i] = math.Inf(1)
	}
	var h oHeap
	for i := 0; i < n; i++ {
		if o.tangent(i, ax-o.vx[i], ay-o.vy[i]) && clearDoubled(o.g, ax, ay, o.vx[i], o.vy[i]) {
			dist[i] = o.dist(i, ax, ay)
			heap.Push(&h, oItem{dist[i] + o.dist(i, bx, by), int32(i)})
		}
	}
	best := math.Inf(1)
	for h.Len() > 0 {
		it := heap.Pop(&h).(oItem)
		if it.f >= best {
			break
		}
		u := int(it.v)
		d := dist[u]
		if it.f > d+o.dist(u, bx, by)+1e-12 {
			continue // stale
		}
		if d+toGoal[u] < best {
			best = d + toGoal[u]
		}
		for _, e := range o.adj[u] {
			if nd := d + e.w; nd < dist[e.to] {
				dist[e.to] = nd
				heap.Push(&h, oItem{nd + o.dist(int(e.to), bx, by), e.to})
			}
		}
	}
	return best
}

type oItem struct {
	f float64
	v int32
}

type oHeap []oItem

func (h oHeap) Len() int           { return len(h) }
func (h oHeap) Less(i, j int) bool { return h[i].f < h[j].f || (h[i].f == h[j].f && h[i].v < h[j].v) }
func (h oHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *oHeap) Push(x any)        { *h = append(*h, x.(oItem)) }
func (h *oHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// clearDoubled is the oracle's exact line of sight between (px, py) and
// (qx, qy), in doubled coordinates (cell (x, y) spans [2x, 2x+2] ×
// [2y, 2y+2]). All arithmetic is on integers. The segment is cut at every
// grid line it crosses; the midpoint of each piece lies inside one cell
// (which must not be Blocked) or on a grid line (the two cells on either
// side must not both be Blocked); at every grid point it passes through,
// the Blocked cells around the point must all lie on one side of it.
func clearDoubled(g *Grid, px, py, qx, qy int64) bool {
	blocked := func(x, y int64) bool { return g.at(int(x), int(y)) == Blocked }
	dx, dy := qx-px, qy-py
	if dx == 0 && dy == 0 {
		return !blocked(floorDiv(px, 2), floorDiv(py, 2))
	}
	ax, ay := absInt(dx), absInt(dy)
	var den, mx, my int64 // T = t·den; one unit of x (y) distance is my (mx) units of T
	switch {
	case ax == 0:
		den, mx, my = ay, 0, 1
	case ay == 0:
		den, mx, my = ax, 1, 0
	default:
		den, mx, my = ax*ay, ay, ax
	}
	sgx, sgy := sign(dx), sign(dy)
	// Next vertical line x = 2k ahead of px (strictly), and its T.
	nextT := func(p, s, m int64) (int64, int64) {
		if s == 0 {
			return math.MaxInt64, 0
		}
		var k int64
		if s > 0 {
			k = floorDiv(p, 2) + 1
		} else {
			k = ceilDiv(p, 2) - 1
		}
		return (2*k - p) * s * m, 2 * m
	}
	tx, stepX := nextT(px, sgx, mx)
	ty, stepY := nextT(py, sgy, my)
	pieceOK := func(t1, t2 int64) bool {
		nx := 2*den*px + dx*(t1+t2) // x = nx / (2 den)
		ny := 2*den*py + dy*(t1+t2)
		q := 4 * den
		cx, cy := floorDiv(nx, q), floorDiv(ny, q)
		onX, onY := nx%q == 0, ny%q == 0
		switch {
		case onX:
			return !(blocked(cx-1, cy) && blocked(cx, cy))
		case onY:
			return !(blocked(cx, cy-1) && blocked(cx, cy))
		default:
			return !blocked(cx, cy)
		}
	}
	vertexOK := func(t int64) bool {
		nx, ny := den*px+dx*t, den*py+dy*t // x = nx / den
		if nx%(2*den) != 0 || ny%(2*den) != 0 {
			return true
		}
		vx, vy := nx/(2*den), ny/(2*den)
		left, right := false, false
		for _, c := range [4][2]int64{{vx - 1, vy - 1}, {vx, vy - 1}, {vx - 1, vy}, {vx, vy}} {
			if !blocked(c[0], c[1]) {
				continue
			}
			cx, cy := 2*c[0]+1, 2*c[1]+1
			switch s := dx*(cy-py) - dy*(cx-px); {
			case s > 0:
				left = true
			case s < 0:
				right = true
			}
		}
		return !(left && right)
	}
	prev := int64(0)
	for {
		t := min(tx, ty, den)
		if !pieceOK(prev, t) {
			return false
		}
		if t == den {
			return true
		}
		if !vertexOK(t) {
			return false
		}
		if tx == t {
			tx += stepX
		}
		if ty == t {
			ty += stepY
		}
		prev = t
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

func absInt(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int64) int64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
