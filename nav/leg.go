package nav

import (
	"github.com/quasilyte/pathing"
)

// maxLegSteps is the longest path one quasilyte/pathing BuildPath call can
// return intact (GridPath holds 14 bytes of 2-bit directions).
const maxLegSteps = 56

// legSearcher wraps one quasilyte/pathing A* instance over a pathing grid
// that mirrors a nav Grid. It is not goroutine-safe.
type legSearcher struct {
	pg    *pathing.Grid
	astar *pathing.AStar
	layer pathing.GridLayer
	tiles *Grid
}

// newLegSearcher mirrors g into a pathing grid (1 cell = 1 unit; tile tags
// equal nav tiles) with the layer Free→1, Costly→hazard, Blocked→blocked.
func newLegSearcher(g *Grid, hazard uint8) *legSearcher {
	pg := pathing.NewGrid(pathing.GridConfig{
		WorldWidth:  uint(g.cols),
		WorldHeight: uint(g.rows),
		CellWidth:   1,
		CellHeight:  1,
	})
	for y := 0; y < g.rows; y++ {
		for x := 0; x < g.cols; x++ {
			if t := g.tiles[y*g.cols+x]; t != Free {
				pg.SetCellTile(pathing.GridCoord{X: x, Y: y}, uint8(t))
			}
		}
	}
	return &legSearcher{
		pg:    pg,
		astar: pathing.NewAStar(pathing.AStarConfig{NumCols: uint(g.cols), NumRows: uint(g.rows)}),
		layer: pathing.MakeGridLayer([4]uint8{1, hazard, 0, 0}),
		tiles: g,
	}
}

// legResult is one decoded BuildPath call.
type legResult struct {
	partial bool
	finish  Cell
}

func toCoord(c Cell) pathing.GridCoord { return pathing.GridCoord{X: c.X, Y: c.Y} }

func stepCell(c Cell, d pathing.Direction) Cell {
	m := toCoord(c).Move(d)
	return Cell{m.X, m.Y}
}

func backCell(c Cell, d pathing.Direction) Cell {
	return stepCell(c, d.Reversed())
}

func adjacent4(a, b Cell) bool {
	dx, dy := a.X-b.X, a.Y-b.Y
	return dx*dx+dy*dy == 1
}

// leg runs one BuildPath from→to and appends the cells after from (up to and
// including the result's Finish) to dst. It works around the library's
// off-by-one at 57 steps: when the path is longer than the 56 directions a
// GridPath can store, the leading steps read DirNone; the stored tail is then
// walked backwards from Finish, and a single missing first step is inferred
// from from and the second cell. ok is false if the result cannot be decoded
// into a contiguous walkable route (the caller must fall back).
func (s *legSearcher) leg(dst []Cell, from, to Cell) (out []Cell, res legResult, ok bool) {
	if straight, ok := s.straightBehindWindow(dst, from, to); ok {
		return straight, legResult{finish: to}, true
	}
	r := s.astar.BuildPath(s.pg, toCoord(from), toCoord(to), s.layer)
	res = legResult{partial: r.Partial, finish: Cell{r.Finish.X, r.Finish.Y}}
	steps := r.Steps
	n := steps.Len()
	base := len(dst)
	if n <= maxLegSteps {
		cur := from
		for steps.HasNext() {
			d := steps.Next()
			if d == pathing.DirNone {
				return dst[:base], res, false
			}
			cur = stepCell(cur, d)
			dst = append(dst, cur)
		}
		if cur != res.finish {
			return dst[:base], res, false
		}
	} else {
		// Only the last 56 directions are stored. Read them all, then
		// rebuild the cells backwards from Finish.
		var dirs [2 * maxLegSteps]pathing.Direction
		if n > len(dirs) {
			return dst[:base], res, false
		}
		for i := 0; steps.HasNext(); i++ {
			dirs[i] = steps.Next()
		}
		missing := n - maxLegSteps
		for i := 0; i < missing; i++ {
			if dirs[i] != pathing.DirNone {
				return dst[:base], res, false // not the known defect
			}
		}
		var cells [2 * maxLegSteps]Cell
		cur := res.finish
		for i := n - 1; i >= missing; i-- {
			cells[i] = cur // cell reached after step i
			cur = backCell(cur, dirs[i])
		}
		// cur is the cell before step `missing`, i.e. the cell reached after
		// the missing steps. One missing step is inferred by adjacency.
		if missing != 1 || !adjacent4(from, cur) {
			return dst[:base], res, false
		}
		dst = append(dst, cur)
		dst = append(dst, cells[missing:n]...)
	}
	// Validate: contiguous, walkable.
	prev := from
	for _, c := range dst[base:] {
		if !adjacent4(prev, c) || s.tiles.At(c) == Blocked {
			return dst[:base], res, false
		}
		prev = c
	}
	return dst, res, true
}

// straightBehindWindow handles the one goal position the library cannot:
// exactly 57 steps straight up or left of from, beyond the top or left edge
// of the search window (which starts 56 cells before from unless clamped to
// the grid edge). The library keys its scratch maps by window-local
// coordinates, so such a goal maps to row -1 (BuildPath then never
// returns: constructPath cannot find the goal's entry) or aliases another
// cell's entry. A goal there is reachable within the library's step limit
// only along the straight line, so if that line is walkable this appends it
// directly; otherwise (ok=false) the library call is safe, since the goal
// cannot be reached within its step limit.
func (s *legSearcher) straightBehindWindow(dst []Cell, from, to Cell) ([]Cell, bool) {
	const d = maxLegSteps + 1
	var step Cell
	switch {
	case to.X == from.X && from.Y-to.Y == d && from.Y > maxLegSteps:
		step = Cell{0, -1}
	case to.Y == from.Y && from.X-to.X == d && from.X > maxLegSteps:
		step = Cell{-1, 0}
	default:
		return dst, false
	}
	for i, c := 1, from; i <= d; i++ {
		c = Cell{c.X + step.X, c.Y + step.Y}
		if s.tiles.At(c) == Blocked {
			return dst, false
		}
	}
	for i, c := 1, from; i <= d; i++ {
		c = Cell{c.X + step.X, c.Y + step.Y}
		dst = append(dst, c)
	}
	return dst, true
}

// chainLeg builds a 4-connected route from→to by chaining quasilyte/pathing
// A* calls: each partial result continues from its Finish. The returned
// slice starts with from and ends with to. It fails (ok=false) when a call
// makes no progress, the route would exceed maxSteps steps, or a result
// cannot be decoded. Chaining is greedy: in mazes it can walk into dead ends
// and come back, so callers that need good routes must check the length or
// use it only where partial results cannot mislead (e.g. corridors).
func (s *legSearcher) chainLeg(dst []Cell, from, to Cell, maxSteps int) ([]Cell, bool) {
	base := len(dst)
	dst = append(dst, from)
	cur := from
	for cur != to {
		var (
			res legResult
			ok  bool
		)
		before := len(dst)
		dst, res, ok = s.leg(dst, cur, to)
		if !ok || len(dst) == before || len(dst)-base-1 > maxSteps {
			return dst[:base], false
		}
		cur = dst[len(dst)-1]
		if !res.partial && cur != to {
			return dst[:base], false
		}
	}
	return dst, true
}
