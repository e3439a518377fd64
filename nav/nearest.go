package nav

import "math"

// compIndex finds the cell of a connected component nearest to a point
// without scanning the grid: it keeps the walkable cells bucketed by square
// blocks of nearBlock × nearBlock cells and, inside each block, by component.
// It is built with the component labels and never changes afterwards, so
// concurrent queries are safe.
type compIndex struct {
	bcols, brows int
	// cells are the walkable cells as offsets inside their block (x + y·16),
	// grouped by block and, inside a block, by component: run i holds
	// cells[runs[i].start:runs[i].end].
	cells []uint8
	runs  []compRun
	// The runs of block b are runs[blockRuns[b]:blockRuns[b+1]]; the runs of
	// component c are compRuns[compStart[c]:compStart[c+1]] (indices into runs).
	blockRuns []int32
	compRuns  []int32
	compStart []int32
	// compBox is each component's bounding box in blocks.
	compBox []blockBox
}

type compRun struct {
	comp, block, start, end int32
}

type blockBox struct{ x0, y0, x1, y1 int }

const (
	// nearBlock is the side of the index's blocks, in cells.
	nearBlock = 16
	// nearRings is how many rings of cells around the target the query scans
	// cell by cell before it turns to the blocks: most answers are that close.
	nearRings = 6
	// nearListRuns: a component in at most this many blocks is searched by
	// its own list of blocks rather than by rings of blocks.
	nearListRuns = 32
)

// buildCompIndex indexes the cells of every component; comp holds the
// labels (-1 for Blocked cells) of a cols × rows grid, labels 0..n-1.
func buildCompIndex(comp []int32, cols, rows, n int) *compIndex {
	ix := &compIndex{bcols: (cols + nearBlock - 1) / nearBlock, brows: (rows + nearBlock - 1) / nearBlock}
	nb := ix.bcols * ix.brows
	ix.blockRuns = make([]int32, nb+1)
	ix.compBox = make([]blockBox, n)
	for i := range ix.compBox {
		ix.compBox[i] = blockBox{math.MaxInt, math.MaxInt, -1, -1}
	}
	// Visit the cells block by block; inside a block, collect each
	// component's cells in the order of the labels.
	var perComp [][]uint8
	var present []int32
	if n > 0 {
		perComp = make([][]uint8, n)
	}
	for by := 0; by < ix.brows; by++ {
		for bx := 0; bx < ix.bcols; bx++ {
			b := by*ix.bcols + bx
			present = present[:0]
			for y := by * nearBlock; y < min((by+1)*nearBlock, rows); y++ {
				for x := bx * nearBlock; x < min((bx+1)*nearBlock, cols); x++ {
					i := y*cols + x
					c := comp[i]
					if c < 0 {
						continue
					}
					if len(perComp[c]) == 0 {
						present = append(present, c)
					}
					perComp[c] = append(perComp[c], uint8((y-by*nearBlock)*nearBlock+x-bx*nearBlock))
				}
			}
			sortInt32(present)
			ix.blockRuns[b] = int32(len(ix.runs))
			for _, c := range present {
				start := int32(len(ix.cells))
				ix.cells = append(ix.cells, perComp[c]...)
				ix.runs = append(ix.runs, compRun{comp: c, block: int32(b), start: start, end: int32(len(ix.cells))})
				perComp[c] = perComp[c][:0]
				bb := &ix.compBox[c]
				bb.x0, bb.y0, bb.x1, bb.y1 = min(bb.x0, bx), min(bb.y0, by), max(bb.x1, bx), max(bb.y1, by)
			}
		}
	}
	ix.blockRuns[nb] = int32(len(ix.runs))
	ix.compStart = make([]int32, n+1)
	for _, r := range ix.runs {
		ix.compStart[r.comp+1]++
	}
	for c := 0; c < n; c++ {
		ix.compStart[c+1] += ix.compStart[c]
	}
	ix.compRuns = make([]int32, len(ix.runs))
	next := make([]int32, n)
	copy(next, ix.compStart[:n])
	for i, r := range ix.runs {
		ix.compRuns[next[r.comp]] = int32(i)
		next[r.comp]++
	}
	return ix
}

func sortInt32(s []int32) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// nearestSearch is one query: the best cell so far by distance to target,
// ties going to the cell the ring scan around target's cell tc meets first.
type nearestSearch struct {
	label  int32
	target Point
	tc     Cell
	best   Cell
	bestD  float64
	found  bool
	// bound2 is a little over bestD²: a cell farther than that in squared
	// distance cannot tie, and needs no exact distance.
	bound2 float64
}

// ringKey orders the cells of equal distance as the ring scan of
// nearestInComponentByScan meets them: by Chebyshev ring around tc, then the
// ring's top row, bottom row, left column and right column, each in
// increasing coordinate.
func (s *nearestSearch) ringKey(c Cell) (r, seg, pos int) {
	dx, dy := c.X-s.tc.X, c.Y-s.tc.Y
	r = max(dx, -dx, dy, -dy)
	switch {
	case dy == -r:
		return r, 0, c.X
	case dy == r:
		return r, 1, c.X
	case dx == -r:
		return r, 2, c.Y
	}
	return r, 3, c.Y
}

func (s *nearestSearch) offer(x, y int) {
	c := Cell{x, y}
	if s.found {
		dx, dy := float64(x)+0.5-s.target.X, float64(y)+0.5-s.target.Y
		if dx*dx+dy*dy > s.bound2 {
			return
		}
	}
	d := s.target.Dist(c.Center())
	if !s.found || d < s.bestD {
		s.best, s.bestD, s.found = c, d, true
		s.bound2 = d * d * (1 + 1e-9)
		return
	}
	if d == s.bestD {
		r1, s1, p1 := s.ringKey(c)
		r2, s2, p2 := s.ringKey(s.best)
		if r1 < r2 || (r1 == r2 && (s1 < s2 || (s1 == s2 && p1 < p2))) {
			s.best = c
		}
	}
}

// nearestInComponent returns the cell of component label whose centre is
// nearest to target, ties broken as nearestInComponentByScan breaks them (the
// first met by rings of cells around target's cell), which it equals. It scans
// the nearest rings of cells itself, and farther out the index's blocks that
// hold cells of the component and may hold a nearer one, so that its cost
// does not grow with the grid.
func (p *Planner) nearestInComponent(label int32, target Point) (Cell, bool) {
	g := p.grid
	s := nearestSearch{label: label, target: target, tc: Cell{floorInt(target.X), floorInt(target.Y)}}
	tc := s.tc
	r0 := max(0, -tc.X, tc.X-(g.cols-1), -tc.Y, tc.Y-(g.rows-1))
	rMax := max(tc.X, g.cols-1-tc.X, tc.Y, g.rows-1-tc.Y)
	// 1. Rings of cells near the target (only when the target is near the grid).
	r := r0
	if r0 == 0 {
		for ; r <= min(rMax, nearRings); r++ {
			if s.found && float64(r)-0.5 > s.bestD {
				return s.best, true
			}
			p.scanRing(&s, r)
		}
		if r > rMax || (s.found && float64(r)-0.5 > s.bestD) {
			return s.best, s.found
		}
	}
	// 2. Blocks. Cells already scanned may be offered again: the order
	// (distance, ring key) is total, so the answer does not change.
	ix := p.near
	if int(label) >= len(ix.compBox) {
		return s.best, s.found
	}
	if n := ix.compStart[label+1] - ix.compStart[label]; n <= nearListRuns {
		for _, ri := range ix.compRuns[ix.compStart[label]:ix.compStart[label+1]] {
			p.scanRun(&s, &ix.runs[ri])
		}
		return s.best, s.found
	}
	tb := Cell{floorDivInt(tc.X, nearBlock), floorDivInt(tc.Y, nearBlock)}
	bb := ix.compBox[label]
	// Block ring R around tb holds no cell of the component before the
	// component's box, nor after its far side.
	rb0 := max(0, bb.x0-tb.X, tb.X-bb.x1, bb.y0-tb.Y, tb.Y-bb.y1)
	rb1 := max(bb.x1-tb.X, tb.X-bb.x0, bb.y1-tb.Y, tb.Y-bb.y0)
	for R := rb0; R <= rb1; R++ {
		// Every cell of ring R is at least ·nearBlock+1 cells from tc
		// along some axis, so its centre is at least that minus 0.5 away.
		if s.found && float64((R-1)*nearBlock)+0.5 > s.bestD {
			break
		}
		visit := func(bx, by int) {
			if bx < bb.x0 || bx > bb.x1 || by < bb.y0 || by > bb.y1 {
				return
			}
			b := by*ix.bcols + bx
			for i := ix.blockRuns[b]; i < ix.blockRuns[b+1]; i++ {
				if ix.runs[i].comp == label {
					p.scanRun(&s, &ix.runs[i])
					return
				}
			}
		}
		if R == 0 {
			visit(tb.X, tb.Y)
			continue
		}
		for _, by := range [2]int{tb.Y - R, tb.Y + R} {
			for bx := max(tb.X-R, bb.x0); bx <= min(tb.X+R, bb.x1); bx++ {
				visit(bx, by)
			}
		}
		for _, bx := range [2]int{tb.X - R, tb.X + R} {
			for by := max(tb.Y-R+1, bb.y0); by <= min(tb.Y+R-1, bb.y1); by++ {
				visit(bx, by)
			}
		}
	}
	return s.best, s.found
}

// scanRing offers the cells of ring r around s.tc that belong to s.label.
func (p *Planner) scanRing(s *nearestSearch, r int) {
	g := p.grid
	tc := s.tc
	check := func(x, y int) {
		if p.comp[y*g.cols+x] == s.label {
			s.offer(x, y)
		}
	}
	g.ring(tc, r, check)
}

// ring visits the cells of the grid at Chebyshev distance r from tc (tc
// itself for r = 0), those in bounds only.
func (g *Grid) ring(tc Cell, r int, visit func(x, y int)) {
	if r == 0 {
		if g.InBounds(tc) {
			visit(tc.X, tc.Y)
		}
		return
	}
	x0, x1 := clampRange(tc.X-r, tc.X+r, g.cols)
	for _, y := range [2]int{tc.Y - r, tc.Y + r} {
		if y >= 0 && y < g.rows {
			for x := x0; x <= x1; x++ {
				visit(x, y)
			}
		}
	}
	y0, y1 := clampRange(tc.Y-r+1, tc.Y+r-1, g.rows)
	for _, x := range [2]int{tc.X - r, tc.X + r} {
		if x >= 0 && x < g.cols {
			for y := y0; y <= y1; y++ {
				visit(x, y)
			}
		}
	}
}

// scanRun offers the cells of one (block, component) run, unless the whole
// block is farther than the best cell so far.
func (p *Planner) scanRun(s *nearestSearch, run *compRun) {
	ix := p.near
	bx, by := int(run.block)%ix.bcols, int(run.block)/ix.bcols
	if s.found {
		// The nearest centre the block could hold.
		lo := func(v float64, b int) float64 {
			c0, c1 := float64(b*nearBlock)+0.5, float64((b+1)*nearBlock)-0.5
			return max(c0-v, v-c1, 0)
		}
		dx, dy := lo(s.target.X, bx), lo(s.target.Y, by)
		// The margin keeps rounding from skipping a block whose cell ties.
		if math.Sqrt(dx*dx+dy*dy)-1e-9 > s.bestD {
			return
		}
	}
	x0, y0 := bx*nearBlock, by*nearBlock
	for _, o := range ix.cells[run.start:run.end] {
		s.offer(x0+int(o%nearBlock), y0+int(o/nearBlock))
	}
}

// floorDivInt is a/b rounded down, for b > 0.
func floorDivInt(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
