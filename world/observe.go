package world

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/arena-sim/arena/internal/prefetch"
	"github.com/arena-sim/arena/nav"
)

// viewer collects what one agent can see within a radius, optionally only along
// unobstructed lines of sight.
type viewer struct {
	w      *World
	self   *Agent
	radius float64
	sight  bool
	cands  []cand
	// maxAgents bounds the agents listed (0: no bound).
	maxAgents int
	agentKeys []uint64
	// inView is the tiles taken in view whole (see agents).
	inView []uint64
	// refs, when set (a compact observation), gets the lists that
	// ViewList names as references instead of views.
	refs *[ViewLists]compactList
}

// ref lists, in a compact observation, the entity at index i of list l at
// distance d, as a reference; it reports false for an ordinary observation,
// whose caller appends the view itself.
func (v *viewer) ref(l ViewList, i int, d float64) bool {
	if v.refs == nil {
		return false
	}
	c := &v.refs[l]
	c.refs = append(c.refs, EntityRef{Index: int32(i), Distance: d})
	return true
}

// observeScratch is the scratch of one goroutine's observations: one per
// Worker, and the world's own.
type observeScratch struct {
	cands     []cand
	agentKeys []uint64
	inView    []uint64
}

// cand is an entity found within range, sorted before its view is built so
// that the (large) views are never moved by the sort.
type cand struct {
	d    float64
	name string
	idx  int
}

func (c cand) less(o cand) bool {
	if c.d != o.d {
		return c.d < o.d
	}
	return c.name < o.name
}

func (v *viewer) add(d float64, name string, idx int) {
	v.cands = append(v.cands, cand{round2(d), name, idx})
}

// sorted sorts the candidates nearest first (ties by name) and returns them,
// resetting the list for the next kind.
func (v *viewer) sorted() []cand {
	c := v.cands
	if len(c) <= 16 {
		// Insertion sort: these lists are short, and this beats a generic sort.
		for i := 1; i < len(c); i++ {
			for j := i; j > 0 && c[j].less(c[j-1]); j-- {
				c[j], c[j-1] = c[j-1], c[j]
			}
		}
	} else {
		slices.SortFunc(c, func(a, b cand) int {
			if a.d != b.d {
				return cmp.Compare(a.d, b.d)
			}
			return strings.Compare(a.name, b.name)
		})
	}
	v.cands = c[:0]
	return c
}

func (v *viewer) visible(p Vec3) (float64, bool) {
	d2 := groundDist2(v.self.Pos, p)
	if d2 > v.radius*v.radius {
		return 0, false
	}
	d := math.Sqrt(d2)
	if v.sight && !v.w.lineOfSight(v.self.Pos, p, d) {
		return 0, false
	}
	return round2(d), true
}

// lineOfSight checks the sight grid between two points d apart. Both ends are
// pulled in by most of a cell so that an agent brushing a tree, or a resource at
// the foot of a rock, is not hidden by the cell it shares with the obstacle.
func (w *World) lineOfSight(from, to Vec3, d float64) bool {
	a := w.navPoint(from[0], from[2])
	b := w.navPoint(to[0], to[2])
	dc := d / w.cellSize
	if dc < 1e-9 {
		return true
	}
	s := min(0.75, dc/2.5) // builtin min/max inline; math.Min/Max do not
	ux, uy := (b.X-a.X)/dc, (b.Y-a.Y)/dc
	a = nav.Point{X: a.X + ux*s, Y: a.Y + uy*s}
	b = nav.Point{X: b.X - ux*s, Y: b.Y - uy*s}
	if w.sightSums != nil && w.sightClear(a, b) {
		return true
	}
	return w.sightGrid.LineOfSight(a, b, nav.Free)
}

// buildSightSums makes a summed-area table of the sight grid's blocked cells,
// so that a line whose bounding box holds no obstacle needs no traversal.
// The sums are kept modulo 2¹⁶ (uint16 arithmetic wraps): a box of fewer
// than 2¹⁶ cells holds fewer blocked cells than that, so its count modulo
// 2¹⁶ is its count, and the table takes half the memory (2 MB for a 1024²
// map at cell size 1, which observations read all over).
func (w *World) buildSightSums() {
	cols, rows := w.sightGrid.Cols(), w.sightGrid.Rows()
	w.sightSums = make([]uint16, (cols+1)*(rows+1))
	for y := 0; y < rows; y++ {
		var run uint16
		for x := 0; x < cols; x++ {
			if w.sightGrid.At(nav.Cell{X: x, Y: y}) != nav.Free {
				run++
			}
			w.sightSums[(y+1)*(cols+1)+x+1] = w.sightSums[y*(cols+1)+x+1] + run
		}
	}
}

// sightClear reports whether the cells of the box spanned by a and b are all
// free (false also for a box partly off the grid).
func (w *World) sightClear(a, b nav.Point) bool {
	cols, rows := w.sightGrid.Cols(), w.sightGrid.Rows()
	x0, x1 := int(math.Floor(min(a.X, b.X))), int(math.Floor(max(a.X, b.X)))
	y0, y1 := int(math.Floor(min(a.Y, b.Y))), int(math.Floor(max(a.Y, b.Y)))
	if x0 < 0 || y0 < 0 || x1 >= cols || y1 >= rows {
		return false
	}
	if (x1-x0+1)*(y1-y0+1) < 1<<16 {
		return w.sightZero(x0, y0, x1, y1)
	}
	// A box of 2¹⁶ cells or more (never a perception radius's) is summed
	// in parts of fewer (see buildSightSums).
	const part = 255
	for py := y0; py <= y1; py += part {
		for px := x0; px <= x1; px += part {
			if !w.sightZero(px, py, min(px+part-1, x1), min(py+part-1, y1)) {
				return false
			}
		}
	}
	return true
}

// sightZero reports whether the box of cells [x0, x1] × [y0, y1], of fewer
// than 2¹⁶ cells, holds no blocked cell.
func (w *World) sightZero(x0, y0, x1, y1 int) bool {
	st := w.sightGrid.Cols() + 1
	n := w.sightSums[(y1+1)*st+x1+1] - w.sightSums[y0*st+x1+1] - w.sightSums[(y1+1)*st+x0] + w.sightSums[y0*st+x0]
	return n == 0
}

// LineOfSightByTraversal is LineOfSight without the summed-area shortcut; tests
// use it to check that the shortcut never changes an answer.
func (w *World) LineOfSightByTraversal(from, to Vec3) bool {
	saved := w.sightSums
	w.sightSums = nil
	defer func() { w.sightSums = saved }()
	return w.LineOfSight(from, to)
}

// LineOfSight reports whether an unobstructed line joins two ground points.
func (w *World) LineOfSight(from, to Vec3) bool {
	return w.lineOfSight(from, to, GroundDist(from, to))
}

func (v *viewer) resources(dst []EntityView) []EntityView {
	w := v.w
	w.resourceIdx.each(v.self.Pos[0], v.self.Pos[2], v.radius, func(i int) {
		r := w.resources[i]
		if r.Collected {
			return
		}
		if d, ok := v.visible(r.Pos); ok {
			v.add(d, r.Name, i)
		}
	})
	for _, c := range v.sorted() {
		if !v.ref(ResourcesInView, c.idx, c.d) {
			dst = append(dst, w.resources[c.idx].view(c.d))
		}
	}
	return dst
}

// view is an agent's view of r at distance d.
func (r *Resource) view(d float64) EntityView {
	return EntityView{Name: r.Name, Type: "resource", ResourceType: r.ResourceType,
		Position: r.shown, Distance: d, Amount: r.Amount}
}

func (v *viewer) stations(dst []EntityView) []EntityView {
	w := v.w
	w.stationIdx.each(v.self.Pos[0], v.self.Pos[2], v.radius, func(i int) {
		s := w.stations[i]
		if d, ok := v.visible(s.Pos); ok {
			v.add(d, s.Name, i)
		}
	})
	for _, c := range v.sorted() {
		s := w.stations[c.idx]
		inUse := s.InUseBy != "" && s.InUseBy != v.self.ID
		dst = append(dst, EntityView{Name: s.Name, Type: "station", StationType: s.StationType,
			Position: s.shown, Distance: c.d, InUse: &inUse})
	}
	return dst
}

func (v *viewer) hazards(dst []EntityView) []EntityView {
	w := v.w
	// A hazard is seen when any of its area is within the radius.
	r := v.radius + w.maxHazardRadius
	w.hazardIdx.each(v.self.Pos[0], v.self.Pos[2], r, func(i int) {
		h := w.hazards[i]
		d := GroundDist(v.self.Pos, h.Pos)
		if d-h.Radius > v.radius {
			return
		}
		if v.sight && d > h.Radius && !w.lineOfSight(v.self.Pos, h.Pos, d) {
			return
		}
		v.add(d, h.Name, i)
	})
	for _, c := range v.sorted() {
		if !v.ref(HazardsInView, c.idx, c.d) {
			dst = append(dst, w.hazards[c.idx].view(c.d))
		}
	}
	return dst
}

// view is an agent's view of h at distance d.
func (h *Hazard) view(d float64) EntityView {
	return EntityView{Name: h.Name, Type: "hazard", HazardType: h.HazardType,
		Position: h.shown, Distance: d, Radius: h.Radius,
		EntryDamage: h.EntryDamage, DamagePerSecond: h.DamagePerSecond}
}

func (v *viewer) obstacles(dst []EntityView) []EntityView {
	w := v.w
	// Obstacles are large and solid: they are seen when their outline is within
	// the radius, without a line-of-sight test (an obstacle hides what is behind
	// it, not itself).
	if v.sight {
		// Obstacles never move, so each agent keeps the ones within the radius
		// plus a margin of where it last looked, and refreshes that list only
		// after moving further than the margin.
		c := &v.self.nearObstacles
		if !c.valid || groundDist2(v.self.Pos, c.anchor) > obstacleMargin*obstacleMargin {
			c.idx = w.obstaclesNear(v.self.Pos, v.radius+obstacleMargin, c.idx[:0])
			c.anchor, c.valid = v.self.Pos, true
		}
		px, pz := v.self.Pos[0], v.self.Pos[2]
		from := len(v.cands)
		for _, i := range c.idx {
			g := &w.obstacleGeo[i]
			dx, dz := px-g.x, pz-g.z
			if d := math.Sqrt(dx*dx + dz*dz); d-g.extent <= v.radius { // GroundDist
				if !w.noPrefetch {
					prefetch.Of(w.obstacles[i])
				}
				v.add(d, "", int(i))
			}
		}
		// The names (which break ties of distance), once every obstacle in
		// view has been asked for: on a large world they are scattered over
		// the heap.
		for k := from; k < len(v.cands); k++ {
			v.cands[k].name = w.obstacles[v.cands[k].idx].Name
		}
	} else {
		for _, i := range w.obstaclesNear(v.self.Pos, v.radius, nil) {
			o := w.obstacles[i]
			v.add(GroundDist(v.self.Pos, o.Pos), o.Name, int(i))
		}
	}
	for _, c := range v.sorted() {
		if !v.ref(ObstaclesInView, c.idx, c.d) {
			dst = append(dst, w.obstacles[c.idx].view(c.d))
		}
	}
	return dst
}

// view is an agent's view of o at distance d.
func (o *Obstacle) view(d float64) EntityView {
	return EntityView{Name: o.Name, Type: "obstacle", ObstacleType: o.ObstacleType,
		Position: o.shown, Distance: d, Radius: o.shownExtent}
}

// obstacleGeo is where an obstacle stands on the ground and its extent
// (Obstacle.extent).
type obstacleGeo struct{ x, z, extent float64 }

// obstacleMargin is how far an agent may move before its list of nearby
// obstacles is rebuilt.
const obstacleMargin = 2.0

// nearCache is an agent's list of obstacles near where it last looked.
type nearCache struct {
	anchor Vec3
	valid  bool
	idx    []int32
}

// obstaclesNear appends the obstacles whose outline is within r of p.
func (w *World) obstaclesNear(p Vec3, r float64, dst []int32) []int32 {
	g := w.obstacleIdx
	x0, z0, x1, z1 := g.span(p[0], p[2], r+w.maxObstacleExtent)
	for cz := z0; cz <= z1; cz++ {
		for cx := x0; cx <= x1; cx++ {
			for _, i := range g.cells[cz*g.cols+cx] {
				o := &w.obstacleGeo[i]
				dx, dz := p[0]-o.x, p[2]-o.z
				if math.Sqrt(dx*dx+dz*dz)-o.extent <= r { // GroundDist
					dst = append(dst, i)
				}
			}
		}
	}
	return dst
}

// agents appends the nearest agents in view, at most v.maxAgents (all when
// 0), nearest first by the distance shown (ties by id), and returns how many
// more are in view. Each agent in view is one integer key (the distance in
// hundredths, then the rank of its id), and only the listed ones are sorted
// and get a view, so that a crowd costs a line-of-sight test per neighbour
// and little else.
//
// In a crowd even that grows with the square of the crowd, so the tiles of
// crowded buckets (agentGrid.split) are taken in view whole when they can
// be: when the farthest corner of the box of their agents is within the
// radius and the sight grid is clear over the box spanning the observer and
// theirs, every agent in it passes both tests (see tileInView), and the tile
// counts its agents at once. Such a tile's agents get keys only when they may
// be among the listed: tiles are opened nearest first until maxAgents keys
// lie nearer than the next tile's box. The answer is the one of testing every
// agent (TestCrowdTilesAnswerAsEveryAgentTested).
func (v *viewer) agents(dst []EntityView) ([]EntityView, int) {
	// A compact observation reads none of the agents listed.
	keys, more := v.agentsInView(v.refs == nil)
	w := v.w
	for _, k := range keys {
		rank, d := int(uint32(k)), float64(k>>32)/100
		if !v.ref(AgentsInView, rank, d) {
			dst = append(dst, w.agents[w.agentByRank[rank]].view(d))
		}
	}
	v.agentKeys = keys[:0]
	return dst, more
}

// view is another agent's view of a, at distance d.
func (a *Agent) view(d float64) EntityView {
	return EntityView{Name: a.ID, Type: "agent", Team: a.Team, Position: a.shown,
		Distance: d, Health: round2(a.Health), Action: a.status.Status}
}

// agentsInView returns the keys (distance and rank) of the agents listed,
// nearest first, and how many more are in view. The keys are v.agentKeys's
// storage: done with them, the caller gives it back. With prefetch, it asks
// for the lines of the listed agents that their views read.
func (v *viewer) agentsInView(prefetching bool) ([]uint64, int) {
	w := v.w
	w.refreshAgentIndex()
	g := w.agentIdx
	px, pz := v.self.Pos[0], v.self.Pos[2]
	r2 := v.radius * v.radius
	x0, z0, x1, z1 := g.span(px, pz, v.radius)
	keys := v.agentKeys[:0]
	self := int32(v.self.index)
	// Whole tiles only for the bounded list of observations: a query lists
	// every agent anyway, and without the sight sums nothing is cheap.
	tiles := v.maxAgents > 0 && len(g.tiles) > 0 && (!v.sight || w.sightSums != nil)
	inView, inViewN := v.inView[:0], 0
	selfTile := int32(-1)
	if tiles {
		selfTile = g.tileKey(px, pz)
	}
	for cz := z0; cz <= z1; cz++ {
		for cx := x0; cx <= x1; cx++ {
			c := cz*g.cols + cx
			if tiles && g.tileSpans[c].hi > 0 { // split: it has a tile
				sp := g.tileSpans[c]
				for ti := sp.lo; ti < sp.hi; ti++ {
					t := &g.tiles[ti]
					near2 := t.near2(px, pz)
					if near2 > r2 {
						continue // no agent of it within the radius
					}
					if v.tileInView(t, r2) {
						inView = append(inView, distKey(math.Sqrt(near2))<<32|uint64(ti))
						inViewN += int(t.hi - t.lo)
						if t.key == selfTile {
							inViewN-- // the observer is among them
						}
						continue
					}
					keys = v.agentKeysIn(keys, g.tiled[t.lo:t.hi], self, r2)
				}
				continue
			}
			keys = v.agentKeysIn(keys, g.at(c), self, r2)
		}
	}
	if len(inView) > 0 {
		// Open the tiles nearest first while fewer than maxAgents keys are
		// nearer than the tile: then no agent of the unopened ones can be
		// listed.
		slices.Sort(inView)
		for _, k := range inView {
			if nearerThan(keys, k>>32, v.maxAgents) {
				break
			}
			t := &g.tiles[uint32(k)]
			for _, e := range g.tiled[t.lo:t.hi] {
				if e.idx == self {
					continue
				}
				dx, dz := e.x-px, e.z-pz
				keys = append(keys, distKey(math.Sqrt(dx*dx+dz*dz))<<32|uint64(e.rank))
				inViewN--
			}
		}
	}
	n := len(keys)
	if v.maxAgents > 0 && n > v.maxAgents {
		n = v.maxAgents
		selectSmallest(keys, n)
	}
	if prefetching && !w.noPrefetch && v.maxAgents > 0 {
		// The agents listed are scattered over the heap: ask for the
		// lines their views read all at once, before the sort, rather
		// than wait on each in turn below.
		for _, k := range keys[:n] {
			prefetch.Bytes(unsafe.Pointer(w.agents[w.agentByRank[uint32(k)]]), agentViewBytes)
		}
	}
	slices.Sort(keys[:n])
	v.agentKeys, v.inView = keys, inView[:0]
	return keys[:n], len(keys) - n + inViewN
}

// agentKeysIn appends the keys of the agents of es in view of v (but its own).
//
// Those within the radius are checked for line of sight together first:
// when the box spanning the observer and all of them holds no obstacle,
// every one's line is clear (see tileInView), and none is checked alone.
func (v *viewer) agentKeysIn(keys []uint64, es []agentEntry, self int32, r2 float64) []uint64 {
	px, pz := v.self.Pos[0], v.self.Pos[2]
	start := len(keys)
	x0, x1, z0, z1 := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, e := range es {
		dx, dz := e.x-px, e.z-pz
		d2 := dx*dx + dz*dz
		if d2 > r2 || e.idx == self {
			continue
		}
		keys = append(keys, distKey(math.Sqrt(d2))<<32|uint64(e.rank))
		x0, x1, z0, z1 = min(x0, e.x), max(x1, e.x), min(z0, e.z), max(z1, e.z)
	}
	switch n := len(keys) - start; {
	case !v.sight || n == 0:
		return keys
	case n == 1: // the box is the agent itself: its own line
		if !v.w.lineOfSight(v.self.Pos, Vec3{x0, 0, z0}, math.Sqrt((x0-px)*(x0-px)+(z0-pz)*(z0-pz))) {
			keys = keys[:start]
		}
		return keys
	case v.w.sightSums != nil && v.boxInSight(x0, x1, z0, z1):
		return keys
	}
	keys = keys[:start]
	for _, e := range es {
		dx, dz := e.x-px, e.z-pz
		d2 := dx*dx + dz*dz
		if d2 > r2 || e.idx == self {
			continue
		}
		d := math.Sqrt(d2)
		if v.w.lineOfSight(v.self.Pos, Vec3{e.x, 0, e.z}, d) {
			keys = append(keys, distKey(d)<<32|uint64(e.rank))
		}
	}
	return keys
}

// tileInView reports whether every agent of t is in view of v. It follows
// from the rounding of floating-point operations being monotonic: for a
// point of the box, e.x − px lies between x0 − px and x1 − px, so the
// squared distance agentKeysIn computes is at most the farthest corner's;
// and its line of sight tests a segment whose ends lie in the box spanning
// the observer and the tile's box (pulled in along the segment), so that
// sightClear of that span answers for all of them.
func (v *viewer) tileInView(t *agentTile, r2 float64) bool {
	px, pz := v.self.Pos[0], v.self.Pos[2]
	fx := max(math.Abs(t.x0-px), math.Abs(t.x1-px))
	fz := max(math.Abs(t.z0-pz), math.Abs(t.z1-pz))
	if fx*fx+fz*fz > r2 {
		return false
	}
	return !v.sight || v.boxInSight(t.x0, t.x1, t.z0, t.z1)
}

// boxInSight reports whether the box spanning the observer and [x0, x1] ×
// [z0, z1] holds no obstacle, so that the line of sight to any point of it
// is clear (see tileInView). The world has sight sums.
func (v *viewer) boxInSight(x0, x1, z0, z1 float64) bool {
	px, pz := v.self.Pos[0], v.self.Pos[2]
	w := v.w
	return w.sightClear(w.navPoint(min(x0, px), min(z0, pz)), w.navPoint(max(x1, px), max(z1, pz)))
}

// near2 is the squared distance from (px, pz) to the nearest point of t's
// box, which no agent of t's is below as agentKeysIn computes it (as for
// tileInView's farthest corner).
func (t *agentTile) near2(px, pz float64) float64 {
	var nx, nz float64
	if t.x0 > px {
		nx = t.x0 - px
	} else if px > t.x1 {
		nx = px - t.x1
	}
	if t.z0 > pz {
		nz = t.z0 - pz
	} else if pz > t.z1 {
		nz = pz - t.z1
	}
	return nx*nx + nz*nz
}

// nearerThan reports whether at least n of keys have a distance below d
// (in hundredths).
func nearerThan(keys []uint64, d uint64, n int) bool {
	below := d << 32
	for _, k := range keys {
		if k < below {
			if n--; n == 0 {
				return true
			}
		}
	}
	return false
}

// distKey is a distance as observations show it, in hundredths: round2(d)
// is distKey(d)/100 for the distances within a perception radius.
func distKey(d float64) uint64 {
	if !(d*100 < 1<<31) {
		return 1<<31 - 1 // beyond any radius that reads as a distance
	}
	return uint64(d*100 + 0.5)
}

// selectSmallest reorders keys so that its n smallest come first, in no
// particular order (keys are distinct). Quickselect with a median-of-three
// pivot: linear on the lists an observation sees.
func selectSmallest(keys []uint64, n int) {
	lo, hi := 0, len(keys)-1
	for hi > lo {
		mid := lo + (hi-lo)/2
		// Order keys[lo], keys[mid], keys[hi] and use the middle as pivot.
		if keys[mid] < keys[lo] {
			keys[mid], keys[lo] = keys[lo], keys[mid]
		}
		if keys[hi] < keys[lo] {
			keys[hi], keys[lo] = keys[lo], keys[hi]
		}
		if keys[hi] < keys[mid] {
			keys[hi], keys[mid] = keys[mid], keys[hi]
		}
		pivot := keys[mid]
		i, j := lo, hi
		for i <= j {
			for keys[i] < pivot {
				i++
			}
			for keys[j] > pivot {
				j--
			}
			if i <= j {
				keys[i], keys[j] = keys[j], keys[i]
				i++
				j--
			}
		}
		// Now keys[lo..j] <= pivot <= keys[i..hi].
		switch {
		case n-1 <= j:
			hi = j
		case n-1 >= i:
			lo = i
		default:
			return
		}
	}
}

func (v *viewer) capturePoints(dst []EntityView) []EntityView {
	for i, p := range v.w.points {
		if d, ok := v.visible(p.Pos); ok {
			v.add(d, p.Name, i)
		}
	}
	for _, c := range v.sorted() {
		p := v.w.points[c.idx]
		prog := round2(p.Progress)
		dst = append(dst, EntityView{Name: p.Name, Type: "capture_point", Position: p.shown,
			Distance: c.d, Radius: p.Radius, Owner: p.Owner, Progress: &prog, Capturing: p.Capturing, Contested: p.Contested})
	}
	return dst
}

// refreshAgentIndex rebuilds the living agents' spatial index after movement.
// It reads the living agents and their positions from collision's broad
// phase (an agent is placed there exactly while it is alive), where they
// are packed, not from the Agent structs: on the tick goroutine, at every
// tick, that was a cache miss or more per agent.
func (w *World) refreshAgentIndex() {
	if !w.agentIdxDirty {
		return
	}
	w.agentIdx.reset()
	g := &w.grid
	for i, p := range g.pos {
		if g.placed[i] {
			w.agentIdx.insert(int32(i), w.agentRank[i], p[0], p[1])
		}
	}
	w.agentIdx.pack()
	w.agentIdx.split()
	w.agentIdxDirty = false
}

func sortViews(v []EntityView) {
	sort.Slice(v, func(i, j int) bool {
		if v[i].Distance != v[j].Distance {
			return v[i].Distance < v[j].Distance
		}
		return v[i].Name < v[j].Name
	})
}

// Observe builds a fresh observation for an agent.
func (w *World) Observe(a *Agent) *Observation {
	obs := &Observation{}
	w.ObserveInto(a, obs)
	return obs
}

// ObserveInto fills obs for an agent, reusing obs's slices and maps. Everything
// it shows is what that agent may know: entities within its perception radius
// and line of sight, its own inventory, messages and results. Call it on the
// tick goroutine; Worker.ObserveInto builds observations on others.
func (w *World) ObserveInto(a *Agent, obs *Observation) {
	w.observeInto(a, obs, &w.observeScratch, true, false)
}

// observeInto builds the observation with sc as the viewer's scratch. With
// components false it leaves out what reads the components (their sections,
// objective progress and score): FinishObserve adds those. With compact, the
// lists that ViewList names are references (Worker.ObserveCompact).
func (w *World) observeInto(a *Agent, obs *Observation, sc *observeScratch, components, compact bool) {
	obs.Tick = w.tick
	obs.AgentID = a.ID
	obs.Team = a.Team
	obs.Position = roundVec(a.Pos)
	obs.Velocity = roundVec(a.Vel)
	obs.Facing = round2(a.Facing)
	obs.Health = round2(a.Health)
	obs.MaxHealth = a.MaxHealth
	obs.Alive = a.Alive
	obs.PerceptionRadius = w.rules.PerceptionRadius
	if obs.Inventory == nil {
		obs.Inventory = make(map[string]int, len(a.Inventory))
	} else {
		clear(obs.Inventory)
	}
	used := 0 // a.InventoryCount(), without walking the map again
	for k, n := range a.Inventory {
		obs.Inventory[k] = n
		used += n
	}
	obs.InventoryUsed = used
	obs.InventoryCap = a.Capacity

	// Lists are never null on the wire: an empty list is [].
	obs.NearbyResources = emptyViews(obs.NearbyResources)
	obs.NearbyStations = emptyViews(obs.NearbyStations)
	obs.NearbyHazards = emptyViews(obs.NearbyHazards)
	obs.NearbyAgents = emptyViews(obs.NearbyAgents)
	obs.NearbyAgentsMore = 0
	for l := range obs.compact {
		c := &obs.compact[l]
		c.refs, c.views = c.refs[:0], nil
		if compact {
			c.views = w.compactViews[l]
		}
	}
	obs.NearbyObstacles = emptyViews(obs.NearbyObstacles)
	obs.CapturePoints = obs.CapturePoints[:0]
	obs.Teammates = obs.Teammates[:0]
	if a.Alive {
		v := viewer{w: w, self: a, radius: w.rules.PerceptionRadius, sight: true, cands: sc.cands[:0],
			maxAgents: w.rules.MaxNearbyAgents, agentKeys: sc.agentKeys[:0], inView: sc.inView[:0]}
		if compact {
			v.refs = &obs.compact
		}
		obs.NearbyResources = v.resources(obs.NearbyResources)
		obs.NearbyStations = v.stations(obs.NearbyStations)
		obs.NearbyHazards = v.hazards(obs.NearbyHazards)
		obs.NearbyAgents, obs.NearbyAgentsMore = v.agents(obs.NearbyAgents)
		obs.NearbyObstacles = v.obstacles(obs.NearbyObstacles)
		// Capture points are objectives: every agent always knows where they are.
		all := viewer{w: w, self: a, radius: math.Inf(1)}
		obs.CapturePoints = all.capturePoints(obs.CapturePoints)
		obs.Teammates = v.teammates(obs.Teammates)
		sc.cands, sc.agentKeys, sc.inView = v.cands, v.agentKeys, v.inView
	}
	if w.capture != nil && a.Alive {
		if obs.TeamScores == nil {
			obs.TeamScores = make(map[string]int, len(w.capture.teams))
		}
		w.teamScoresInto(obs.TeamScores)
	} else {
		obs.TeamScores = nil
	}
	obs.AvailableRecipes = w.recipeViews()
	obs.AgentIDs = w.roster()
	if obs.Messages == nil {
		obs.Messages = make([]Message, 0, len(a.inbox))
	}
	obs.Messages = append(obs.Messages[:0], a.inbox...)
	obs.CurrentAction = a.currentAction(obs.CurrentAction.Path[:0])
	obs.LastActionResult = nil
	if a.hasResult {
		// The observation keeps its own copy: later decisions never change it.
		obs.lastResult = a.lastResult
		obs.LastActionResult = &obs.lastResult
	}
	obs.QueryResult = a.queryResult
	obs.InventoryDetails = a.inventoryDetails
	obs.Objective = &w.objectiveView
	obs.Events = w.digestInto(a, obs.Events)
	if len(obs.Events) == 0 {
		obs.Events = nil
	}
	obs.Variables, obs.VariablesText = w.variablesView()
	if components {
		w.FinishObserve(a, obs)
	}
}

// FinishObserve adds to an observation that a Worker built what reads the
// world's components: their sections, objective progress and score. Call it
// on the tick goroutine, after the Worker's ObserveInto.
func (w *World) FinishObserve(a *Agent, obs *Observation) {
	if obs.CurrentProgress == nil {
		obs.CurrentProgress = make(map[string]float64, len(w.objective.SuccessMetrics))
	} else {
		clear(obs.CurrentProgress)
	}
	w.progressInto(a, obs.CurrentProgress)
	obs.Score, _ = w.objective.evaluate(w.metricNames, obs.CurrentProgress)
	if len(w.components) > 0 {
		if obs.Components == nil {
			obs.Components = make(map[string]Section, len(w.components))
		} else {
			clear(obs.Components)
		}
		for _, c := range w.components {
			if s := c.Observe(w, a.ID); s != nil {
				obs.Components[c.Name()] = s
			}
		}
	} else {
		obs.Components = nil
	}
}

// Roster returns the ids of the living agents in scenario order: every
// observation's AgentIDs. The slice is shared and replaced, never modified,
// when the roster changes: read it, do not modify it.
func (w *World) Roster() []string { return w.roster() }

// roster returns the ids of the living agents, rebuilt only when one dies.
func (w *World) roster() []string {
	if w.rosterDirty || w.rosterIDs == nil {
		w.rosterIDs = make([]string, 0, len(w.agents))
		for _, a := range w.agents {
			if a.Alive {
				w.rosterIDs = append(w.rosterIDs, a.ID)
			}
		}
		w.rosterDirty = false
	}
	return w.rosterIDs
}

// emptyViews empties a list of an observation's for reuse. A list never
// used is empty but not nil (it is encoded as [], not null), and takes no
// memory: an observation's five lists of four each were 5 KB an agent, a
// sixth of the live heap at 16,000 agents.
func emptyViews(v []EntityView) []EntityView {
	if v == nil {
		return []EntityView{}
	}
	return v[:0]
}

// Action is what the agent is doing now, as its observation's current_action.
func (a *Agent) Action() ActionStatus { return a.currentAction(nil) }

func (a *Agent) currentAction(buf []Vec3) ActionStatus {
	st := a.status
	if a.action.kind == actMove {
		st.Path = buf
		for _, p := range a.action.path {
			st.Path = append(st.Path, roundVec(p))
		}
	}
	return st
}

// recipeViews is built once: recipes do not change during an episode.
func (w *World) recipeViews() map[string]RecipeView {
	if w.recipeCache != nil || len(w.recipes) == 0 {
		if w.recipeCache == nil {
			w.recipeCache = map[string]RecipeView{}
		}
		return w.recipeCache
	}
	w.recipeCache = make(map[string]RecipeView, len(w.recipes))
	for name, r := range w.recipes {
		inputs := make(map[string]int, len(r.Inputs))
		for k, n := range r.Inputs {
			inputs[k] = n
		}
		w.recipeCache[name] = RecipeView{Inputs: inputs, StationType: r.StationType, Ticks: r.Ticks, OutputCount: r.OutputCount}
	}
	return w.recipeCache
}
