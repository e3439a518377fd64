package world

import (
	"math"
	"slices"

	"github.com/solarlune/resolv"
)

// Collision is split in two. The broad phase (bodyGrid) knows which shapes lie
// in which cells, as resolv's Space would; the narrow phase is ours, because resolv v0.8.1
// reports no intersection when one shape lies wholly inside another or two
// circles share a centre, and because ours allocates nothing.

// body is a collider near a moving agent, in world coordinates: a circle
// (r > 0) or an axis-aligned box (half sizes hx, hz).
type body struct {
	tag    shapeTag
	x, z   float64
	r      float64
	hx, hz float64
}

// nearBodies collects, in a fixed order (agents by index, then obstacles by
// index), every obstacle and living agent whose shape touches a physics cell
// within reach of (x, z), except the agent self. Shapes register in every
// cell they touch, so reach only needs to cover the ground the agent itself
// can sweep. sc holds the lists' scratch.
func (w *World) nearBodies(x, z, reach float64, self int, dst []body, sc *walkScratch) []body {
	g := &w.grid
	f := w.footprint(x, z, reach)
	obs, agents := sc.nearObs[:0], sc.nearAgents[:0]
	for cz := f[1]; cz <= f[3]; cz++ {
		lo, hi := cz*g.cols+f[0], cz*g.cols+f[2]
		if lo > hi {
			continue
		}
		// A row's cells are contiguous in the obstacles' lists.
		obs = append(obs, g.obsIdx[g.obsStart[lo]:g.obsStart[hi+1]]...)
		for c := lo; c <= hi; c++ {
			for _, i := range g.agents[c] {
				if int(i) != self {
					agents = append(agents, i)
				}
			}
		}
	}
	// Sort (insertion sort: the lists are short) and drop shapes seen in two cells.
	agents, obs = sortShort(agents), sortShort(obs)
	sc.nearObs, sc.nearAgents = obs, agents
	for _, i := range agents {
		p := g.pos[i]
		dst = append(dst, body{tag: shapeTag{kindAgent, int(i)}, x: p[0], z: p[1], r: w.rules.AgentRadius})
	}
	for _, i := range obs {
		dst = append(dst, g.obsBody[i])
	}
	return dst
}

// footprint is the span of physics cells, clamped to the grid (x0, z0, x1,
// z1, inclusive; empty when x0 > x1 or z0 > z1), that nearBodies reads for
// a point and a reach: every body a walk from there can meet is registered in
// one of them.
func (w *World) footprint(x, z, reach float64) [4]int {
	g := &w.grid
	cx0 := int(math.Floor((x - reach - w.bounds.MinX) / physicsCell))
	cz0 := int(math.Floor((z - reach - w.bounds.MinZ) / physicsCell))
	cx1 := int(math.Floor((x + reach - w.bounds.MinX) / physicsCell))
	cz1 := int(math.Floor((z + reach - w.bounds.MinZ) / physicsCell))
	return [4]int{max(cx0, 0), max(cz0, 0), min(cx1, g.cols-1), min(cz1, g.rows-1)}
}

// sortShort sorts a short list of indices and drops repeats.
func sortShort(s []int32) []int32 {
	if len(s) < 2 {
		return s // most lists: nothing, or one shape
	}
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	k := 1
	for _, v := range s[1:] {
		if v != s[k-1] {
			s[k] = v
			k++
		}
	}
	return s[:k]
}

// bodyGrid is the broad phase of collision: the obstacles and the living
// agents in each cell, exactly as resolv's Space registers them (it used to
// be the broad phase): the obstacles, which never move, copied from a Space
// built with the world; the agents by resolv's rule for a circle, shapeCells.
// It holds indices, and the agents' positions and the obstacles' colliders
// by index, so that a lookup chases no interface, pointer or scattered shape,
// and moving an agent within its cells costs nothing.
type bodyGrid struct {
	cols, rows int
	minX, minZ float64 // the world's bounds' minimum: resolv's origin
	// The obstacles of cell c (row-major) are obsIdx[obsStart[c]:obsStart[c+1]].
	obsStart []int32
	obsIdx   []int32
	obsBody  []body       // by obstacle: its collider
	agents   [][]int32    // per cell (row-major)
	pos      [][2]float64 // by agent: where it was last placed (x, z)
	spans    [][4]int     // by agent: the cells it is in; placed: whether it is
	placed   []bool
}

// init sizes the grid as resolv's Space and copies its obstacles, for n
// agents (call it under resolvMu).
func (g *bodyGrid) init(sp *resolv.Space, n int, obstacles []*Obstacle, b Bounds) {
	g.minX, g.minZ = b.MinX, b.MinZ
	g.spans = make([][4]int, n)
	g.placed = make([]bool, n)
	g.pos = make([][2]float64, n)
	for sp.Cell(g.cols, 0) != nil {
		g.cols++
	}
	for sp.Cell(0, g.rows) != nil {
		g.rows++
	}
	g.obsStart = make([]int32, g.cols*g.rows+1)
	g.agents = make([][]int32, g.cols*g.rows)
	for cz := range g.rows {
		for cx := range g.cols {
			for _, s := range sp.Cell(cx, cz).Shapes {
				if t := s.Data().(shapeTag); t.kind == kindObstacle {
					g.obsIdx = append(g.obsIdx, int32(t.index))
				}
			}
			g.obsStart[cz*g.cols+cx+1] = int32(len(g.obsIdx))
		}
	}
	g.obsBody = make([]body, len(obstacles))
	for i, o := range obstacles {
		b := body{tag: shapeTag{kindObstacle, i}, x: o.Pos[0], z: o.Pos[2]}
		if o.Shape == "box" {
			b.hx, b.hz = o.SizeX/2, o.SizeZ/2
		} else {
			b.r = o.Radius
		}
		g.obsBody[i] = b
	}
}

// cells returns the span of cells a circle of radius r centred at (x, y), in
// resolv's coordinates, is registered in: those it touches, within the grid.
func (g *bodyGrid) cells(x, y, r float64) [4]int {
	s := shapeCells(x, y, r)
	return [4]int{max(s[0], 0), max(s[1], 0), min(s[2], g.cols-1), min(s[3], g.rows-1)}
}

// place puts agent i, a circle of radius r, at (x, z) in world coordinates:
// it notes the position, and moves the agent between cells if that changes
// the cells it is in.
func (g *bodyGrid) place(i int, x, z, r float64) {
	g.pos[i] = [2]float64{x, z}
	span := g.cells(x-g.minX, z-g.minZ, r)
	if g.placed[i] && g.spans[i] == span {
		return
	}
	g.unplace(i)
	g.placed[i], g.spans[i] = true, span
	g.add(i, span)
}

// unplace takes agent i out of the grid (a dead agent).
func (g *bodyGrid) unplace(i int) {
	if g.placed[i] {
		g.remove(i, g.spans[i])
		g.placed[i] = false
	}
}

// add registers agent i in the cells of span.
func (g *bodyGrid) add(i int, span [4]int) {
	for cz := span[1]; cz <= span[3]; cz++ {
		for cx := span[0]; cx <= span[2]; cx++ {
			g.agents[cz*g.cols+cx] = append(g.agents[cz*g.cols+cx], int32(i))
		}
	}
}

// remove unregisters agent i from the cells of span.
func (g *bodyGrid) remove(i int, span [4]int) {
	for cz := span[1]; cz <= span[3]; cz++ {
		for cx := span[0]; cx <= span[2]; cx++ {
			c := cz*g.cols + cx
			if k := slices.Index(g.agents[c], int32(i)); k >= 0 {
				g.agents[c] = slices.Delete(g.agents[c], k, k+1)
			}
		}
	}
}

// push moves a circle of radius r centred at (x, z) out of the body, if they
// overlap. seed picks the direction when the centres coincide exactly.
func (b *body) push(x, z, r float64, seed int) (float64, float64, bool) {
	if b.r > 0 {
		dx, dz := x-b.x, z-b.z
		reach := r + b.r
		d2 := dx*dx + dz*dz
		if d2 >= reach*reach {
			return x, z, false
		}
		d := math.Sqrt(d2)
		if d < 1e-9 {
			ang := float64(seed) * 2.399963229728653 // the golden angle: distinct directions per agent
			dx, dz, d = math.Cos(ang), math.Sin(ang), 1
		}
		s := (reach + collisionSkin) / d
		return b.x + dx*s, b.z + dz*s, true
	}
	minX, maxX, minZ, maxZ := b.x-b.hx, b.x+b.hx, b.z-b.hz, b.z+b.hz
	qx, qz := clamp(x, minX, maxX), clamp(z, minZ, maxZ)
	dx, dz := x-qx, z-qz
	if dx == 0 && dz == 0 {
		// The centre is inside the box: leave by the nearest face.
		left, right, down, up := x-minX, maxX-x, z-minZ, maxZ-z
		switch m := min(left, right, down, up); m {
		case left:
			return minX - r - collisionSkin, z, true
		case right:
			return maxX + r + collisionSkin, z, true
		case down:
			return x, minZ - r - collisionSkin, true
		default:
			return x, maxZ + r + collisionSkin, true
		}
	}
	d2 := dx*dx + dz*dz
	if d2 >= r*r {
		return x, z, false
	}
	d := math.Sqrt(d2)
	s := (r + collisionSkin) / d
	return qx + dx*s, qz + dz*s, true
}

// resolve pushes an agent standing at (x, z) out of every body it overlaps, in
// order, a few rounds at most, and keeps it inside the world. If it is still
// wedged after that, it stays at (fromX, fromZ). It returns where the agent
// ends up and the name of the last thing that pushed it.
func (w *World) resolve(a *Agent, x, z, fromX, fromZ float64, bodies []body) (float64, float64, string) {
	r := w.rules.AgentRadius
	blocker := ""
	for round := 0; round < 4; round++ {
		pushed := false
		for i := range bodies {
			if nx, nz, hit := bodies[i].push(x, z, r, a.index); hit {
				x, z, pushed = nx, nz, true
				blocker = w.shapeName(bodies[i].tag)
			}
		}
		x = clamp(x, w.bounds.MinX+r, w.bounds.MaxX-r)
		z = clamp(z, w.bounds.MinZ+r, w.bounds.MaxZ-r)
		if !pushed {
			return x, z, blocker
		}
	}
	if w.overlapsAny(x, z, a.index, bodies) {
		return fromX, fromZ, blocker
	}
	return x, z, blocker
}

func (w *World) overlapsAny(x, z float64, seed int, bodies []body) bool {
	for i := range bodies {
		if _, _, hit := bodies[i].push(x, z, w.rules.AgentRadius-collisionSkin, seed); hit {
			return true
		}
	}
	return false
}
