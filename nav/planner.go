package nav

import (
	"fmt"
	"math"
)

// Options configures a [Planner].
type Options struct {
	// ClusterSize is the side of the square clusters of the abstract graph,
	// in cells. Default 16 when 0; clamped to [4, 64]. Larger clusters mean
	// fewer abstract nodes but costlier start/goal insertion, and the
	// planner keeps ClusterSize² bytes of cached search tree per node.
	ClusterSize int
	// HazardCost is the step cost of a Costly cell (a Free cell costs 1).
	// Default 8 when 0.
	HazardCost uint8
	// Obstacles are exact obstacle regions (already grown by the clearance
	// an agent needs). The planner rasterises them into its copy of the
	// grid with [Grid.FillShape] and keeps their geometry, so that a
	// target is "inside an obstacle" only when it lies inside one of them
	// (or in a cell the grid itself marks Blocked), and a target in a
	// partly covered Blocked cell is reached by a last straight leg that
	// the exact geometry clears.
	Obstacles []Shape
}

const (
	defaultClusterSize = 16
	defaultHazardCost  = 8
	minClusterSize     = 4
	maxClusterSize     = 64
	// displaceRadius is how far (in cells, Chebyshev) FindPath looks for a
	// walkable cell when the start lies in a Blocked cell.
	displaceRadius = 2
)

func (o Options) withDefaults() Options {
	if o.ClusterSize == 0 {
		o.ClusterSize = defaultClusterSize
	}
	o.ClusterSize = min(max(o.ClusterSize, minClusterSize), maxClusterSize)
	if o.HazardCost == 0 {
		o.HazardCost = defaultHazardCost
	}
	return o
}

// Planner answers path queries over a snapshot of a [Grid]: NewPlanner copies
// the grid, so later changes to the grid are not seen; build a new Planner
// after changing it.
//
// A Planner is NOT safe for concurrent use: it owns the scratch memory of its
// searches (including a quasilyte/pathing AStar). Use one Planner per
// goroutine, or guard it with a mutex.
type Planner struct {
	grid     *Grid
	opt      Options
	tileCost [3]float64

	legs *legSearcher

	// solid is the grid as given, before Options.Obstacles were drawn in:
	// its Blocked cells are obstacles through and through.
	solid *Grid
	// shapes are Options.Obstacles; the shapes meeting cell i are
	// shapeIdx[shapeStart[i]:shapeStart[i+1]].
	shapes     []Shape
	shapeStart []int32
	shapeIdx   []int32
	shapeSeen  []uint32 // per shape: stamp of the last segment test
	shapeStamp uint32

	// comp holds the 4-connected component label of each cell, -1 if Blocked.
	comp []int32
	// near finds the nearest cell of a component (NearestReachable).
	near *compIndex

	abs *abstractGraph

	// Query scratch.
	startSearch, goalSearch *clusterSearch
	astar                   absSearch
	cellScratch             []Cell
	route, route2, route3   []Cell
	smooth                  smoother
	theta                   thetaSearch
	local                   localSearch
}

// NewPlanner builds a planner for a snapshot of g: the pathing grid,
// connected components, clusters, entrances and the abstract graph with the
// costs and cell paths of its intra-cluster edges.
func NewPlanner(g *Grid, opt Options) *Planner {
	opt = opt.withDefaults()
	p := &Planner{
		grid: g.Clone(),
		opt:  opt,
	}
	p.indexShapes(opt.Obstacles)
	p.tileCost = [3]float64{1, float64(opt.HazardCost), math.Inf(1)}
	p.legs = newLegSearcher(p.grid, opt.HazardCost)
	p.labelComponents()
	p.startSearch = newClusterSearch(opt.ClusterSize)
	p.goalSearch = newClusterSearch(opt.ClusterSize)
	p.abs = p.buildAbstract()
	p.smooth.indexCorners(p.grid)
	return p
}

// Grid returns the planner's snapshot of the grid. It must not be modified.
func (p *Planner) Grid() *Grid { return p.grid }

// Options returns the options in effect (defaults filled in).
func (p *Planner) Options() Options { return p.opt }

// indexShapes keeps the valid obstacle shapes, draws them into the grid as
// Blocked and indexes them by the cells they meet.
func (p *Planner) indexShapes(shapes []Shape) {
	g := p.grid
	p.solid = g.Clone()
	count := make([]int32, len(g.tiles)+1)
	for _, s := range shapes {
		if !s.valid() {
			continue
		}
		p.shapes = append(p.shapes, s)
		g.eachShapeCell(s, func(x, y int) { count[y*g.cols+x+1]++ })
	}
	p.opt.Obstacles = p.shapes
	p.shapeSeen = make([]uint32, len(p.shapes))
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	p.shapeStart = count
	p.shapeIdx = make([]int32, count[len(count)-1])
	fill := make([]int32, len(g.tiles))
	for k, s := range p.shapes {
		g.eachShapeCell(s, func(x, y int) {
			i := y*g.cols + x
			p.shapeIdx[count[i]+fill[i]] = int32(k)
			fill[i]++
			g.raise(x, y, Blocked)
		})
	}
}

// Blocked reports whether point pt is inside an obstacle, exactly: outside
// the grid, in a cell the grid itself marks Blocked, or inside one of
// Options.Obstacles. (A point in a Blocked cell that an obstacle only
// partly covers is not Blocked when it lies outside the obstacle.)
func (p *Planner) Blocked(pt Point) bool {
	if !finitePoint(pt) {
		return true
	}
	c := PointCell(pt)
	if p.solid.At(c) == Blocked {
		return true
	}
	i := c.Y*p.grid.cols + c.X
	for _, k := range p.shapeIdx[p.shapeStart[i]:p.shapeStart[i+1]] {
		if p.shapes[k].Contains(pt) {
			return true
		}
	}
	return false
}

// segmentClear reports whether the segment a→b stays out of every
// obstacle exactly: it crosses no cell of the original grid worse than
// maxTile and enters no obstacle shape.
func (p *Planner) segmentClear(a, b Point, maxTile Tile) bool {
	if !p.solid.LineOfSight(a, b, maxTile) {
		return false
	}
	g := p.grid
	p.shapeStamp++
	x0, x1 := clampRange(floorInt(min(a.X, b.X)), floorInt(max(a.X, b.X)), g.cols)
	y0, y1 := clampRange(floorInt(min(a.Y, b.Y)), floorInt(max(a.Y, b.Y)), g.rows)
	for y := y0; y <= y1; y++ {
		for x := x0; x <= x1; x++ {
			i := y*g.cols + x
			for _, k := range p.shapeIdx[p.shapeStart[i]:p.shapeStart[i+1]] {
				if p.shapeSeen[k] == p.shapeStamp {
					continue
				}
				p.shapeSeen[k] = p.shapeStamp
				if p.shapes[k].hitsSegment(a, b) {
					return false
				}
			}
		}
	}
	return true
}

// entryRadius is how far (in cells, Chebyshev) FindPath looks for a
// walkable cell from which a target in a partly covered Blocked cell can be
// reached in a straight line.
const entryRadius = 3

// entryCell returns the walkable cell of component label, within
// entryRadius of target, whose centre is nearest to target among those
// with an exactly clear segment to it. seen reports whether any walkable
// cell (of any component) had one.
func (p *Planner) entryCell(target Point, label int32) (best Cell, ok, seen bool) {
	tc := PointCell(target)
	bestD := math.Inf(1)
	for dy := -entryRadius; dy <= entryRadius; dy++ {
		for dx := -entryRadius; dx <= entryRadius; dx++ {
			c := Cell{tc.X + dx, tc.Y + dy}
			if p.grid.At(c) == Blocked {
				continue
			}
			d := target.Dist(c.Center())
			if d >= bestD && (ok || p.compOf(c) != label) {
				continue
			}
			if !p.segmentClear(c.Center(), target, p.grid.At(c)) {
				continue
			}
			seen = true
			if p.compOf(c) == label && d < bestD {
				best, bestD, ok = c, d, true
			}
		}
	}
	return best, ok, seen
}

func (p *Planner) labelComponents() {
	g := p.grid
	p.comp = make([]int32, len(g.tiles))
	for i := range p.comp {
		p.comp[i] = -1
	}
	var queue []int32
	label := int32(0)
	for start, t := range g.tiles {
		if t == Blocked || p.comp[start] >= 0 {
			continue
		}
		p.comp[start] = label
		queue = append(queue[:0], int32(start))
		for len(queue) > 0 {
			i := int(queue[len(queue)-1])
			queue = queue[:len(queue)-1]
			x, y := i%g.cols, i/g.cols
			for d := 0; d < 4; d++ {
				nx, ny := x+dir8[d].dx, y+dir8[d].dy
				if g.at(nx, ny) == Blocked {
					continue
				}
				j := ny*g.cols + nx
				if p.comp[j] < 0 {
					p.comp[j] = label
					queue = append(queue, int32(j))
				}
			}
		}
		label++
	}
	p.near = buildCompIndex(p.comp, g.cols, g.rows, int(label))
}

func (p *Planner) compOf(c Cell) int32 {
	if !p.grid.InBounds(c) {
		return -1
	}
	return p.comp[c.Y*p.grid.cols+c.X]
}

// Reachable reports whether a route exists between cells a and b: both are
// inside the grid, not Blocked, and in the same 4-connected component.
func (p *Planner) Reachable(a, b Cell) bool {
	ca := p.compOf(a)
	return ca >= 0 && ca == p.compOf(b)
}

// NearestReachable returns the cell reachable from from whose centre is
// closest (Euclidean) to target, searching outward from target. ok is false
// if from is outside the grid or Blocked.
func (p *Planner) NearestReachable(from Cell, target Point) (Cell, bool) {
	label := p.compOf(from)
	if label < 0 || !finitePoint(target) {
		return Cell{}, false
	}
	return p.nearestInComponent(label, target)
}

// NoPathError reports that no path exists. Reason is one of the Reason*
// constants. Nearest is the reachable point closest to To (a cell centre in
// the start's component), or From when the start itself is unusable
// (ReasonStart*).
type NoPathError struct {
	From, To, Nearest Point
	Reason            string
}

// Error returns one sentence describing the failure.
func (e *NoPathError) Error() string {
	return fmt.Sprintf("no path from %v to %v: %s; nearest reachable point is %v", e.From, e.To, e.Reason, e.Nearest)
}

// Reasons reported in NoPathError.Reason.
const (
	ReasonStartInvalid  = "start is not a finite point"
	ReasonStartOutside  = "start is outside the grid"
	ReasonStartBlocked  = "start is inside an obstacle"
	ReasonStartEnclosed = "start is inside an obstacle with no walkable cell within 2 cells"
	ReasonTargetInvalid = "target is not a finite point"
	ReasonTargetOutside = "target is outside the grid"
	ReasonTargetBlocked = "target is inside an obstacle"
	ReasonTargetWedged  = "target is clear of obstacles but no walkable cell within 3 cells reaches it in a straight line"
	ReasonUnreachable   = "target is not connected to the start"
)

// resolveStart returns the cell a search from point from starts in: its own
// cell, or — if that is Blocked — the walkable cell within 2 cells
// (Chebyshev) whose centre is nearest to from, preferring on ties a cell in
// goalComp. displaced reports the second case.
func (p *Planner) resolveStart(from Point, goalComp int32) (c Cell, displaced bool, reason string) {
	if !finitePoint(from) {
		return Cell{}, false, ReasonStartInvalid
	}
	sc := PointCell(from)
	if !p.grid.InBounds(sc) {
		return Cell{}, false, ReasonStartOutside
	}
	if p.grid.At(sc) != Blocked {
		return sc, false, ""
	}
	best, bestD, bestGoal := Cell{}, math.Inf(1), false
	for dy := -displaceRadius; dy <= displaceRadius; dy++ {
		for dx := -displaceRadius; dx <= displaceRadius; dx++ {
			c := Cell{sc.X + dx, sc.Y + dy}
			if p.grid.At(c) == Blocked {
				continue
			}
			d := from.Dist(c.Center())
			inGoal := goalComp >= 0 && p.compOf(c) == goalComp
			if d < bestD || (d == bestD && inGoal && !bestGoal) {
				best, bestD, bestGoal = c, d, inGoal
			}
		}
	}
	if math.IsInf(bestD, 1) {
		return Cell{}, false, ReasonStartEnclosed
	}
	return best, true, ""
}

// resolveTarget returns the cell a search from start cell sc must reach for
// target to: to's own cell when it is walkable, or — when to lies outside
// every obstacle in a Blocked cell that obstacles only partly cover — the
// entry cell from which a straight leg reaches it (snapped is then true).
// reason says why to cannot be reached, or is "".
func (p *Planner) resolveTarget(to Point, sc Cell) (gc Cell, snapped bool, reason string) {
	if !finitePoint(to) {
		return Cell{}, false, ReasonTargetInvalid
	}
	gc = PointCell(to)
	switch {
	case !p.grid.InBounds(gc):
		return gc, false, ReasonTargetOutside
	case p.grid.At(gc) != Blocked:
		if !p.Reachable(sc, gc) {
			return gc, false, ReasonUnreachable
		}
		return gc, false, ""
	case p.Blocked(to):
		return gc, false, ReasonTargetBlocked
	}
	entry, ok, seen := p.entryCell(to, p.compOf(sc))
	switch {
	case ok:
		return entry, true, ""
	case seen:
		return gc, false, ReasonUnreachable
	}
	return gc, false, ReasonTargetWedged
}

func (p *Planner) noPath(from, to Point, sc Cell, reason string) *NoPathError {
	e := &NoPathError{From: from, To: to, Nearest: from, Reason: reason}
	if label := p.compOf(sc); label >= 0 && finitePoint(to) {
		if c, ok := p.nearestInComponent(label, to); ok {
			e.Nearest = c.Center()
		}
	}
	return e
}

// FindPath returns a smoothed any-angle path from from to to as waypoints in
// cell units: the first waypoint is from and the last is exactly to, and
// every segment between consecutive waypoints has line of sight over
// non-Blocked cells (the first one excepted when from lies in a Blocked
// cell, and the last ones when to does). Smoothing never cuts through
// Costly cells that the cell route avoided.
//
// If from lies in a Blocked cell, the search starts from the nearest
// walkable cell within 2 cells and the path visits that cell's centre right
// after from. If to lies in a Blocked cell but outside every obstacle
// ([Planner.Blocked] is false: Options.Obstacles cover only part of the
// cell), the path runs to the nearest walkable cell within 3 cells that
// sees to exactly, and on to to; the last segments are then checked
// against the obstacles' exact geometry instead of the grid. If to cannot
// be reached (outside the grid, inside an obstacle, or in another
// connected component), the error is a *NoPathError whose Nearest is the
// reachable cell centre closest to to.
//
// The returned slice is freshly allocated and owned by the caller.
func (p *Planner) FindPath(from, to Point) ([]Point, error) {
	goalComp := int32(-1)
	if finitePoint(to) {
		goalComp = p.compOf(PointCell(to))
	}
	sc, displaced, reason := p.resolveStart(from, goalComp)
	if reason != "" {
		return nil, &NoPathError{From: from, To: to, Nearest: from, Reason: reason}
	}
	gc, snapped, reason := p.resolveTarget(to, sc)
	if reason != "" {
		return nil, p.noPath(from, to, sc, reason)
	}
	// A clear straight line over Free cells cannot be beaten.
	if !displaced && !snapped && p.grid.LineOfSight(from, to, Free) {
		return []Point{from, to}, nil
	}
	goal := to
	if snapped {
		goal = gc.Center()
	}
	_, path, err := p.plan(from, goal, sc, gc, displaced)
	if err != nil {
		return nil, fmt.Errorf("nav: find path from %v to %v: %w", from, to, err)
	}
	if snapped {
		path = p.finishAt(path, to)
	}
	return path, nil
}

// finishAt appends the last leg from the entry cell's centre (the path's
// last point) to target, then lets earlier waypoints reach target directly
// while the exact geometry allows (over Free cells only, so no hazard is
// entered that the path avoided).
func (p *Planner) finishAt(path []Point, target Point) []Point {
	path = append(path, target)
	for n := len(path); n >= 3 && p.segmentClear(path[n-3], target, Free); n = len(path) {
		path[n-2] = target
		path = path[:n-1]
	}
	return path
}

// FindCells returns the unsmoothed 4-connected cell route from from to to,
// both inclusive: the cell route FindPath(from.Center(), to.Center())
// smooths (unless FindPath's any-angle search finds a shorter path in
// another homotopy class, which then follows a route of its own). It fails with a *NoPathError if either cell is outside the grid
// or Blocked, or if they are not connected. The slice is freshly allocated.
func (p *Planner) FindCells(from, to Cell) ([]Cell, error) {
	fp, tp := from.Center(), to.Center()
	switch {
	case !p.grid.InBounds(from):
		return nil, &NoPathError{From: fp, To: tp, Nearest: fp, Reason: ReasonStartOutside}
	case p.grid.At(from) == Blocked:
		return nil, &NoPathError{From: fp, To: tp, Nearest: fp, Reason: ReasonStartBlocked}
	}
	if _, snapped, reason := p.resolveTarget(tp, from); reason != "" || snapped {
		if snapped {
			reason = ReasonTargetBlocked // FindCells routes to walkable cells only
		}
		return nil, p.noPath(fp, tp, from, reason)
	}
	route, _, err := p.plan(fp, tp, from, to, false)
	if err != nil {
		return nil, fmt.Errorf("nav: find cells from %v to %v: %w", from, to, err)
	}
	return append([]Cell(nil), route...), nil
}

// directSlack is how much longer than the straight-line distance a smoothed
// direct pathing leg may be and still be accepted without consulting the
// abstract graph. quasilyte/pathing only moves in 4 directions and breaks
// ties between equally cheap routes arbitrarily (often into L shapes), which
// string pulling cannot always repair; the straight-line distance is a lower
// bound on any path, so a leg within the slack is near-optimal.
const directSlack = 0.01

// plan computes the cell route sc→gc (both walkable and connected) and its
// smoothed path from→to. The route lives in planner scratch memory and is
// valid until the next query; the path is freshly allocated.
//
// Queries of at most maxLocalSteps first plan the cheapest route in a
// window around the two cells ([Planner.localRoute]); when it is provably
// the cheapest of the grid and its smoothed path crosses no Costly cell and
// is within directSlack of the straight-line distance, that path is taken.
// Otherwise short queries (Manhattan distance <= 56) try a direct
// quasilyte/pathing leg, taken on the same terms.
// Otherwise (and for every longer query) the HPA* route is planned too
// unless the window's route was proven, and the cheapest of the smoothed
// paths (length plus hazard penalty) is kept. A kept path over Free cells
// that starts in its own cell may then be replaced by a shorter one in
// another homotopy class ([Planner.refine]); the route returned is the one
// planned, not refine's.
func (p *Planner) plan(from, to Point, sc, gc Cell, displaced bool) ([]Cell, []Point, error) {
	if sc == gc {
		p.route = append(p.route[:0], sc)
		return p.route, p.smooth.smooth(p.grid, from, to, p.route, displaced), nil
	}
	// nearStraight reports whether the path just smoothed crosses no Costly
	// cell and is within directSlack of the straight line.
	origin := from
	if displaced {
		origin = sc.Center()
	}
	nearStraight := func(path []Point) bool {
		length := PathLength(path)
		if displaced {
			length -= from.Dist(origin)
		}
		return p.smooth.costlyCells() == 0 && length <= (1+directSlack)*origin.Dist(to)
	}
	// The best path so far, its route and cost, and whether it is Free.
	var (
		route []Cell
		path  []Point
		cost  float64
		free  bool
	)
	consider := func(r []Cell, q []Point) {
		if c := p.pathCost(q); path == nil || c < cost {
			route, path, cost, free = r, q, c, p.smooth.costlyCells() == 0
		}
	}
	steps := manhattan(sc, gc)
	local := false // route is the cheapest cell route of the grid
	if steps <= maxLocalSteps {
		var r []Cell
		if r, _, local = p.localRoute(p.route2[:0], sc, gc); local {
			p.route2 = r
			q := p.smooth.smooth(p.grid, from, to, r, displaced)
			if nearStraight(q) {
				return r, q, nil
			}
			consider(r, q)
		}
	}
	// Chaining is capped at 57 steps. With uniform costs a partial first
	// call proves that no route of 56 steps or fewer exists, so an accepted
	// chained route is still a shortest one, never a dead-end detour; the
	// cap also admits the library's exact-57-step results. After a proven
	// local route the leg is not tried: its path was the shorter in 0.6% of
	// short queries round obstacles, by 1–1.5%.
	if !local && steps <= maxLegSteps {
		if r, ok := p.legs.chainLeg(p.route[:0], sc, gc, maxLegSteps+1); ok {
			p.route = r
			q := p.smooth.smooth(p.grid, from, to, r, displaced)
			if nearStraight(q) {
				return r, q, nil
			}
			consider(r, q)
		}
	}
	if !local {
		r, err := p.hpaRoute(p.route2[:0], sc, gc)
		if err != nil {
			return nil, nil, err
		}
		p.route2 = r
		q := p.smooth.smooth(p.grid, from, to, r, displaced)
		if c := p.pathCost(q); path == nil || c <= cost { // the planned route wins ties
			route, path, cost, free = r, q, c, p.smooth.costlyCells() == 0
		}
	}
	if free && !displaced {
		path = p.refine(from, to, route, path)
	}
	return route, path, nil
}

// The any-angle search of [Planner.refine] runs only on paths more than
// refineSlack longer than the straight line (a shorter one is within that
// of the optimum already) but at most refineMaxRatio times as long (longer
// ones are detours round walls, as in mazes, where it never found a
// shorter class on the Moving AI maze) that bend at least refineBends
// times per cell of length on average. A path bends at the obstacles it
// passes closely, and each of them is a choice of side that the octile
// route may have made differently from the any-angle optimum; on open
// maps with large obstacles (bends every 20–30 cells) the taut path of the octile route is
// nearly always in the optimum's homotopy class, and the search, which
// costs several times as much as the rest of the query, is not worth
// running.
const (
	refineSlack    = 0.01
	refineMaxRatio = 1.2
	refineBends    = 0.08
)

// refine returns the shorter of path (the taut path of route, crossing
// only Free cells) and the taut path of the route an any-angle search
// finds in a corridor around route ([Planner.thetaRoute]), which may pass
// obstacles on other sides than route. The search gives up once it cannot
// find a path shorter than path.
func (p *Planner) refine(from, to Point, route []Cell, path []Point) []Point {
	length := PathLength(path)
	d := from.Dist(to)
	if length <= (1+refineSlack)*d || length > refineMaxRatio*d || float64(len(path)-2) < refineBends*length {
		return path
	}
	r, ok := p.thetaRoute(p.route3[:0], from, to, route, length)
	p.route3 = r
	if !ok {
		return path
	}
	if alt := p.smooth.smooth(p.grid, from, to, r, false); PathLength(alt) < length {
		return alt
	}
	return path
}

// pathCost estimates the cost of the last smoothed path: its length plus
// the extra cost of the Costly cells of its route.
func (p *Planner) pathCost(path []Point) float64 {
	return PathLength(path) + float64(p.smooth.costlyCells())*(p.tileCost[Costly]-1)
}

func manhattan(a, b Cell) int {
	dx, dy := a.X-b.X, a.Y-b.Y
	if dx < 0 {
		dx = -dx
	}
	if dy < 0 {
		dy = -dy
	}
	return dx + dy
}

// PathLength returns the total Euclidean length of a polyline.
func PathLength(path []Point) float64 {
	total := 0.0
	for i := 1; i < len(path); i++ {
		total += path[i-1].Dist(path[i])
	}
	return total
}
