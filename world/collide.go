package world

import (
	"math"
	"slices"
)

// Collision is split in two. resolv's Space is the broad phase: it knows which
// shapes lie in which cells. The narrow phase is ours, because resolv v0.8.1
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

// nearBodies collects, in a fixed order, every obstacle and living agent whose
// shape touches a physics cell within reach of (x, z), except the agent self.
// Shapes register in every cell they touch, so reach only needs to cover the
// ground the agent itself can sweep. It reads resolv's cells, or ix, a
// snapshot of them, when not nil.
func (w *World) nearBodies(x, z, reach float64, self int, scratch *[]shapeTag, dst []body, ix *cellIndex) []body {
	cx0 := int(math.Floor((x - reach - w.bounds.MinX) / physicsCell))
	cz0 := int(math.Floor((z - reach - w.bounds.MinZ) / physicsCell))
	cx1 := int(math.Floor((x + reach - w.bounds.MinX) / physicsCell))
	cz1 := int(math.Floor((z + reach - w.bounds.MinZ) / physicsCell))
	tags := (*scratch)[:0]
	for cz := cz0; cz <= cz1; cz++ {
		for cx := cx0; cx <= cx1; cx++ {
			if ix != nil {
				tags = ix.appendCell(tags, cx, cz, self)
				continue
			}
			cell := w.space.Cell(cx, cz)
			if cell == nil {
				continue
			}
			for _, s := range cell.Shapes {
				if t := s.Data().(shapeTag); t.kind != kindAgent || t.index != self {
					tags = append(tags, t)
				}
			}
		}
	}
	// Sort (insertion sort: the lists are short) and drop shapes seen in two cells.
	for i := 1; i < len(tags); i++ {
		for j := i; j > 0 && tags[j].less(tags[j-1]); j-- {
			tags[j], tags[j-1] = tags[j-1], tags[j]
		}
	}
	tags = slices.Compact(tags)
	*scratch = tags
	for _, t := range tags {
		b := body{tag: t}
		switch t.kind {
		case kindAgent:
			o := w.agents[t.index]
			b.x, b.z, b.r = o.Pos[0], o.Pos[2], w.rules.AgentRadius
		case kindObstacle:
			o := w.obstacles[t.index]
			b.x, b.z = o.Pos[0], o.Pos[2]
			if o.Shape == "box" {
				b.hx, b.hz = o.SizeX/2, o.SizeZ/2
			} else {
				b.r = o.Radius
			}
		}
		dst = append(dst, b)
	}
	return dst
}

// cellIndex is a snapshot of which shapes resolv has registered in which
// physics cell, packed for Workers to read (resolv's cells hold scattered
// shapes behind interfaces): the obstacles, which never move, once; the
// living agents at every build.
type cellIndex struct {
	cols, rows int
	obsStart   []int32 // per cell, where its obstacles begin in obs (one more entry at the end)
	obs        []shapeTag
	agStart    []int32 // the same for agents
	ag         []shapeTag
	agCount    []int32 // scratch
}

// build takes the snapshot, under resolvMu.
func (ix *cellIndex) build(w *World) {
	if ix.obsStart == nil {
		for w.space.Cell(ix.cols, 0) != nil {
			ix.cols++
		}
		for w.space.Cell(0, ix.rows) != nil {
			ix.rows++
		}
		ix.obsStart = make([]int32, 0, ix.cols*ix.rows+1)
		for cz := range ix.rows {
			for cx := range ix.cols {
				ix.obsStart = append(ix.obsStart, int32(len(ix.obs)))
				for _, s := range w.space.Cell(cx, cz).Shapes {
					if t := s.Data().(shapeTag); t.kind == kindObstacle {
						ix.obs = append(ix.obs, t)
					}
				}
			}
		}
		ix.obsStart = append(ix.obsStart, int32(len(ix.obs)))
		ix.agStart = make([]int32, ix.cols*ix.rows+1)
		ix.agCount = make([]int32, ix.cols*ix.rows)
	}
	// An agent's shape is registered in the cells its bounds touch (resolv's
	// rule, shapeCells), those of the grid.
	clear(ix.agCount)
	n := 0
	for _, a := range w.agents {
		if a.Alive {
			ix.eachCell(a, func(c int) { ix.agCount[c]++; n++ })
		}
	}
	sum := int32(0)
	for c, k := range ix.agCount {
		ix.agStart[c] = sum
		sum += k
	}
	ix.agStart[len(ix.agCount)] = sum
	ix.ag = slices.Grow(ix.ag[:0], n)[:n]
	for _, a := range w.agents {
		if a.Alive {
			ix.eachCell(a, func(c int) {
				ix.agCount[c]--
				ix.ag[ix.agStart[c]+ix.agCount[c]] = shapeTag{kindAgent, a.index}
			})
		}
	}
}

// eachCell calls fn with every grid cell an agent's shape touches.
func (ix *cellIndex) eachCell(a *Agent, fn func(c int)) {
	p := a.shape.Position()
	span := shapeCells(p.X, p.Y, a.shape.Radius())
	for cz := max(span[1], 0); cz <= min(span[3], ix.rows-1); cz++ {
		for cx := max(span[0], 0); cx <= min(span[2], ix.cols-1); cx++ {
			fn(cz*ix.cols + cx)
		}
	}
}

// appendCell appends the tags of cell (cx, cz), but for agent self's.
func (ix *cellIndex) appendCell(tags []shapeTag, cx, cz, self int) []shapeTag {
	if cx < 0 || cz < 0 || cx >= ix.cols || cz >= ix.rows {
		return tags
	}
	c := cz*ix.cols + cx
	tags = append(tags, ix.obs[ix.obsStart[c]:ix.obsStart[c+1]]...)
	for _, t := range ix.ag[ix.agStart[c]:ix.agStart[c+1]] {
		if t.index != self {
			tags = append(tags, t)
		}
	}
	return tags
}

func (t shapeTag) less(o shapeTag) bool {
	if t.kind != o.kind {
		return t.kind < o.kind
	}
	return t.index < o.index
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
// ends up and the name of the last thing that pushed it, and notes in wk
// what the walk depended on (see walk).
func (w *World) resolve(a *Agent, x, z, fromX, fromZ float64, bodies []body, wk *walk) (float64, float64, string) {
	r := w.rules.AgentRadius
	blocker := ""
	for round := 0; round < 4; round++ {
		pushed := false
		wk.tested(x, z)
		for i := range bodies {
			if nx, nz, hit := bodies[i].push(x, z, r, a.index); hit {
				x, z, pushed = nx, nz, true
				blocker = w.shapeName(bodies[i].tag)
				wk.pushedBy(bodies[i].tag)
				wk.tested(x, z)
			}
		}
		x = clamp(x, w.bounds.MinX+r, w.bounds.MaxX-r)
		z = clamp(z, w.bounds.MinZ+r, w.bounds.MaxZ-r)
		if !pushed {
			return x, z, blocker
		}
	}
	wk.tangled = true // still pushed after four rounds: too involved to take ahead
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
