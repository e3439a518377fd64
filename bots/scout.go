package bots

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/arena-sim/arena/world"
)

// This file holds what the built-in bots share: an exploration grid, a memory
// of resources seen, stepping out of hazards, and reading failures.

// explorer remembers which parts of the ground a bot has seen and picks unseen
// ground to explore. The ground is cut into exploration cells about a
// perception radius wide; a bot remembers and explores only the
// exploreWindow × exploreWindow cells around it (the whole ground when it
// is no larger), so that what a bot keeps, and how far it walks to explore,
// do not grow with the world.
type explorer struct {
	info Info
	rng  *rand.Rand
	cell float64
	cols int
	rows int
	// seen is a ring of wx × wz slots: cell (cx, cz) is seen when the slot
	// (cz mod wz, cx mod wx) holds its index plus one. Any wx × wz cells
	// have slots of their own.
	seen   []int32
	wx, wz int
	marked int // exploration cell last marked around the bot
}

// exploreWindow is how many exploration cells a side of a bot's window has.
const exploreWindow = 16

func newExplorer(info Info, rng *rand.Rand) explorer {
	cell := math.Max(info.Rules.PerceptionRadius, 4)
	cols := max(1, int(math.Ceil(info.Bounds.Width()/cell)))
	rows := max(1, int(math.Ceil(info.Bounds.Depth()/cell)))
	wx, wz := min(cols, exploreWindow), min(rows, exploreWindow)
	return explorer{info: info, rng: rng, cell: cell, cols: cols, rows: rows, seen: make([]int32, wx*wz), wx: wx, wz: wz, marked: -1}
}

// botRand is a bot's random stream: derived from the seed and the agent id only.
func botRand(info Info) *rand.Rand {
	return rand.New(rand.NewPCG(world.DeriveSeed(info.Seed, "bot:"+info.AgentID), 7))
}

// clamp keeps a point far enough inside the world for the agent's body.
func (e *explorer) clamp(p world.Vec3) world.Vec3 {
	b := e.info.Bounds
	m := e.info.Rules.AgentRadius + 0.5
	p[0] = min(max(p[0], b.MinX+m), b.MaxX-m)
	p[2] = min(max(p[2], b.MinZ+m), b.MaxZ-m)
	return p
}

func (e *explorer) cellXZ(x, z float64) (int, int) {
	b := e.info.Bounds
	return min(max(int((x-b.MinX)/e.cell), 0), e.cols-1), min(max(int((z-b.MinZ)/e.cell), 0), e.rows-1)
}

// slot is where the ring keeps cell (cx, cz).
func (e *explorer) slot(cx, cz int) int { return (cz%e.wz)*e.wx + cx%e.wx }

func (e *explorer) isSeen(cx, cz int) bool {
	return e.seen[e.slot(cx, cz)] == int32(cz*e.cols+cx+1)
}

func (e *explorer) mark(cx, cz int) { e.seen[e.slot(cx, cz)] = int32(cz*e.cols + cx + 1) }

func (e *explorer) markCell(p world.Vec3) { e.mark(e.cellXZ(p[0], p[2])) }

// centre is the point explored for cell (cx, cz).
func (e *explorer) centre(cx, cz int) world.Vec3 {
	b := e.info.Bounds
	return e.clamp(world.Vec3{b.MinX + (float64(cx)+0.5)*e.cell, 0, b.MinZ + (float64(cz)+0.5)*e.cell})
}

// window returns the cells [x0, x0+wx) × [z0, z0+wz) of the window around p:
// centred on p's cell, inside the ground.
func (e *explorer) window(p world.Vec3) (x0, z0 int) {
	cx, cz := e.cellXZ(p[0], p[2])
	return min(max(cx-e.wx/2, 0), e.cols-e.wx), min(max(cz-e.wz/2, 0), e.rows-e.wz)
}

// markSeen marks every exploration cell whose centre is within most of the
// perception radius.
func (e *explorer) markSeen(p world.Vec3) {
	pcx, pcz := e.cellXZ(p[0], p[2])
	c := pcz*e.cols + pcx
	if c == e.marked {
		return // still in the cell whose surroundings were marked last time
	}
	e.marked = c
	b := e.info.Bounds
	r := 0.8 * e.info.Rules.PerceptionRadius
	e.mark(pcx, pcz)
	x0, z0 := e.cellXZ(p[0]-r, p[2]-r)
	x1, z1 := e.cellXZ(p[0]+r, p[2]+r)
	for cz := z0; cz <= z1; cz++ {
		for cx := x0; cx <= x1; cx++ {
			dx := b.MinX + (float64(cx)+0.5)*e.cell - p[0]
			dz := b.MinZ + (float64(cz)+0.5)*e.cell - p[2]
			if dx*dx+dz*dz < r*r {
				e.mark(cx, cz)
			}
		}
	}
}

// exploreTarget picks, at random among the three nearest, the centre of a
// cell of the window that the bot has not visited; when all are visited it
// starts over.
func (e *explorer) exploreTarget(from world.Vec3) world.Vec3 {
	b := e.info.Bounds
	type cand struct {
		p world.Vec3
		d float64
	}
	var best [3]cand
	n := 0
	x0, z0 := e.window(from)
	for pass := 0; pass < 2 && n == 0; pass++ {
		for cz := z0; cz < z0+e.wz; cz++ {
			for cx := x0; cx < x0+e.wx; cx++ {
				if e.isSeen(cx, cz) {
					continue
				}
				p := e.centre(cx, cz)
				dx, dz := p[0]-from[0], p[2]-from[2]
				d := dx*dx + dz*dz // squared: only the order matters
				c := cand{p, d}
				// insert into the sorted top three
				for k := 0; k < 3; k++ {
					if k >= n || d < best[k].d {
						copy(best[k+1:], best[k:2])
						best[k] = c
						n = min(n+1, 3)
						break
					}
				}
			}
		}
		if n == 0 {
			clear(e.seen)
			e.marked = -1
			e.markSeen(from)
		}
	}
	if n == 0 {
		return e.clamp(world.Vec3{b.MinX + e.rng.Float64()*b.Width(), 0, b.MinZ + e.rng.Float64()*b.Depth()})
	}
	return best[e.rng.IntN(n)].p
}

// hazardEscape returns where to go when the agent is in a hazard or on its
// edge: a point beyond the hazard, straight away from its centre. ok is false
// when no hazard is that close.
func (e *explorer) hazardEscape(obs *world.Observation) (to world.Vec3, reason string, ok bool) {
	for _, h := range obs.NearbyHazards {
		if h.Distance < h.Radius+0.75 {
			dx, dz := obs.Position[0]-h.Position[0], obs.Position[2]-h.Position[2]
			d := hypot(dx, dz)
			if d < 1e-6 {
				ang := e.rng.Float64() * 2 * math.Pi
				dx, dz, d = math.Cos(ang), math.Sin(ang), 1
			}
			away := h.Radius + 3
			to = e.clamp(world.Vec3{h.Position[0] + dx/d*away, 0, h.Position[2] + dz/d*away})
			return to, fmt.Sprintf("too close to %s (%s), moving away", h.Name, h.HazardType), true
		}
	}
	return world.Vec3{}, "", false
}

// inHazardRange reports whether the agent is in a hazard or on its edge, as
// hazardEscape judges it, without choosing where to go.
func inHazardRange(obs *world.Observation) bool {
	for _, h := range obs.NearbyHazards {
		if h.Distance < h.Radius+0.75 {
			return true
		}
	}
	return false
}

// maxKnown bounds a bot's memory of resources out of sight.
const maxKnown = 48

type knownResource struct {
	name string
	typ  string
	pos  world.Vec3
}

// avoidList holds the names of things a bot skips for a while (avoidTicks)
// after failing to reach or use them, by the tick until which it skips each.
// It drops the names whose time is up as it adds others, so it holds no more
// than the failures of the last avoidTicks ticks, however long the run.
type avoidList map[string]int

// avoidTicks is how long a bot skips what it failed to reach or use.
const avoidTicks = 100

// skip skips name from tick for avoidTicks ticks.
func (l avoidList) skip(name string, tick int) {
	for n, until := range l {
		if until <= tick {
			delete(l, n)
		}
	}
	l[name] = tick + avoidTicks
}

// avoided reports whether name is skipped at tick.
func (l avoidList) avoided(name string, tick int) bool {
	until, ok := l[name]
	return ok && tick < until
}

// resourceMemory remembers resources seen (or scanned) before, in the order
// they were first seen.
type resourceMemory struct {
	known []knownResource
}

func (m *resourceMemory) knows(name string) bool {
	for _, k := range m.known {
		if k.name == name {
			return true
		}
	}
	return false
}

func (m *resourceMemory) forget(name string) {
	m.known = slices.DeleteFunc(m.known, func(k knownResource) bool { return k.name == name })
}

// add remembers a resource, if memory has room and it is not known yet.
func (m *resourceMemory) add(v *world.EntityView) {
	if len(m.known) < maxKnown && !m.knows(v.Name) {
		m.known = append(m.known, knownResource{v.Name, v.ResourceType, v.Position})
	}
}

// remember adds visible resources to memory and forgets remembered ones closer
// than near that are not in sight (someone collected them).
func (m *resourceMemory) remember(obs *world.Observation, near float64) {
	m.known = slices.DeleteFunc(m.known, func(k knownResource) bool {
		if hypot(k.pos[0]-obs.Position[0], k.pos[2]-obs.Position[2]) >= near {
			return false
		}
		for _, r := range obs.NearbyResources {
			if r.Name == k.name {
				return false
			}
		}
		return true
	})
	for i := range obs.NearbyResources {
		m.add(&obs.NearbyResources[i])
	}
}

// nearest chooses the nearest remembered resource that skip does not rule out
// and that no visible agent is clearly closer to (a contested one only when
// there is nothing else); ties go by name.
func (m *resourceMemory) nearest(obs *world.Observation, skip func(k *knownResource) bool) (string, world.Vec3, bool) {
	best, bestD, bestContested := "", math.Inf(1), true
	var bestPos world.Vec3
	for i := range m.known {
		k := &m.known[i]
		name, p := k.name, k.pos
		if skip(k) {
			continue
		}
		d := hypot(p[0]-obs.Position[0], p[2]-obs.Position[2])
		contested := false
		for _, a := range obs.NearbyAgents {
			if hypot(p[0]-a.Position[0], p[2]-a.Position[2])+1 < d {
				contested = true
				break
			}
		}
		better := false
		switch {
		case contested != bestContested:
			better = !contested
		case d != bestD:
			better = d < bestD
		default:
			better = name < best
		}
		if best == "" || better {
			best, bestD, bestContested, bestPos = name, d, contested, p
		}
	}
	return best, bestPos, best != ""
}

// failureMemo remembers the last failed result a bot acted on, so that a
// failure shown in several observations is handled once.
type failureMemo struct {
	last world.ActionResult
}

// seen reports whether r is the failure already acted on, and otherwise
// remembers it.
func (m *failureMemo) seen(r *world.ActionResult) bool {
	if r.Tick == m.last.Tick && r.Tool == m.last.Tool && r.ErrorCode == m.last.ErrorCode && r.ErrorMessage == m.last.ErrorMessage {
		return true
	}
	m.last = *r
	return false
}

// moveTo is a move_to decision to a point.
func moveTo(to world.Vec3, reason string) world.Decision {
	return world.Decision{Tool: "move_to", Params: map[string]any{"target": []any{to[0], to[1], to[2]}}, Reasoning: reason}
}

// vecOf reads a position from result data: a Vec3 in process, a list over the wire.
func vecOf(v any) (world.Vec3, bool) {
	switch p := v.(type) {
	case world.Vec3:
		return p, true
	case []any:
		if len(p) != 3 {
			return world.Vec3{}, false
		}
		var out world.Vec3
		for i, c := range p {
			f, ok := c.(float64)
			if !ok {
				return world.Vec3{}, false
			}
			out[i] = f
		}
		return out, true
	}
	return world.Vec3{}, false
}

// hypot is math.Hypot without its overflow care, which costs more than the
// whole distance on these small numbers.
func hypot(x, y float64) float64 { return math.Sqrt(x*x + y*y) }
