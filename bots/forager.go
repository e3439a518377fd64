package bots

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/arena-sim/arena/world"
)

// Forager is the reference forager: it steps out of hazards, walks to the
// nearest visible resource and collects it, and explores unseen ground when it
// sees nothing to collect.
type Forager struct {
	info    Info
	rng     *rand.Rand
	cell    float64
	cols    int
	rows    int
	seen    []bool
	avoid   map[string]int  // resource name → tick until which it is skipped
	known   []knownResource // resources seen before, at most maxKnown
	marked  int             // exploration cell last marked around the forager
	goal    world.Vec3      // where the current move_to leads
	goalFor string          // resource name, "explore" or "flee"
	moving  bool
	failure world.ActionResult // the last failure already acted on
}

func (f *Forager) seenFailure(r *world.ActionResult) bool {
	if r.Tick == f.failure.Tick && r.Tool == f.failure.Tool && r.ErrorCode == f.failure.ErrorCode && r.ErrorMessage == f.failure.ErrorMessage {
		return true
	}
	f.failure = *r
	return false
}

// NewForager creates a forager for one agent.
func NewForager(info Info) *Forager {
	// Exploration cells: about a perception radius wide, at most 16 per side.
	cell := math.Max(math.Max(info.Rules.PerceptionRadius, 4), math.Max(info.Bounds.Width(), info.Bounds.Depth())/16)
	cols := max(1, int(math.Ceil(info.Bounds.Width()/cell)))
	rows := max(1, int(math.Ceil(info.Bounds.Depth()/cell)))
	return &Forager{
		info: info, rng: rand.New(rand.NewPCG(world.DeriveSeed(info.Seed, "bot:"+info.AgentID), 7)),
		cell: cell, cols: cols, rows: rows, seen: make([]bool, cols*rows), avoid: map[string]int{}, marked: -1,
	}
}

func (f *Forager) move(to world.Vec3, why, reason string) world.Decision {
	f.goal, f.goalFor, f.moving = to, why, true
	return world.Decision{Tool: "move_to", Params: map[string]any{"target": []any{to[0], to[1], to[2]}}, Reasoning: reason}
}

// Decide implements Bot.
func (f *Forager) Decide(_ context.Context, obs *world.Observation) world.Decision {
	if !obs.Alive {
		return world.Idle("dead")
	}
	f.markSeen(obs.Position)
	switch obs.CurrentAction.Status {
	case "crafting":
		return world.Idle("crafting")
	case "arrived", "failed", "idle", "completed", "":
		f.moving = false
	}
	if r := obs.LastActionResult; r != nil && !r.Success && !f.seenFailure(r) {
		if d := f.onFailure(r, obs); d != nil {
			return *d
		}
	}

	// 1. Get out of hazards (and off their edges).
	for _, h := range obs.NearbyHazards {
		if h.Distance < h.Radius+0.75 {
			if f.moving && f.goalFor == "flee" {
				return world.Idle("leaving a hazard")
			}
			dx, dz := obs.Position[0]-h.Position[0], obs.Position[2]-h.Position[2]
			d := hypot(dx, dz)
			if d < 1e-6 {
				ang := f.rng.Float64() * 2 * math.Pi
				dx, dz, d = math.Cos(ang), math.Sin(ang), 1
			}
			away := h.Radius + 3
			to := f.clamp(world.Vec3{h.Position[0] + dx/d*away, 0, h.Position[2] + dz/d*away})
			return f.move(to, "flee", fmt.Sprintf("too close to %s (%s), moving away", h.Name, h.HazardType))
		}
	}

	// 2. Collect what is in reach, or walk to the nearest resource, seen now or
	// remembered, that no other agent in sight is clearly closer to.
	f.remember(obs)
	if obs.InventoryUsed < obs.InventoryCap {
		for i := range obs.NearbyResources {
			r := &obs.NearbyResources[i]
			if r.Distance < f.info.Rules.CollectRange-0.05 && !f.avoided(r.Name, obs.Tick) {
				f.moving = false
				f.forget(r.Name)
				return world.Decision{Tool: "collect", Params: map[string]any{"target_name": r.Name},
					Reasoning: fmt.Sprintf("%s is %.1f away, within collection range", r.Name, r.Distance)}
			}
		}
		// Keep walking to the resource already chosen while it is still there;
		// switching targets every time another agent moves only wastes steps.
		if f.moving && f.goalFor != "explore" && f.goalFor != "flee" && !f.avoided(f.goalFor, obs.Tick) {
			if f.knows(f.goalFor) {
				return world.Idle("walking to the chosen resource")
			}
		}
		if name, pos, ok := f.pickResource(obs); ok {
			if f.moving && f.goalFor == name {
				return world.Idle("walking to the chosen resource")
			}
			d := hypot(pos[0]-obs.Position[0], pos[2]-obs.Position[2])
			return f.move(pos, name, fmt.Sprintf("nearest uncontested resource %s is %.1f away", name, d))
		}
	}

	// 3. Explore.
	if f.moving && f.goalFor == "explore" {
		return world.Idle("exploring")
	}
	to := f.exploreTarget(obs.Position)
	return f.move(to, "explore", "no resource in sight, exploring unseen ground")
}

// onFailure reacts to a failed action. A target that cannot be reached but has a
// reachable point close enough (a resource at the foot of a tree, an
// exploration point inside a rock) is approached from that point; otherwise a
// resource is skipped for a while.
func (f *Forager) onFailure(r *world.ActionResult, obs *world.Observation) *world.Decision {
	goal, goalFor := f.goal, f.goalFor
	f.moving, f.goalFor = false, ""
	if goalFor == "" || goalFor == "flee" {
		return nil
	}
	if near, ok := vecOf(r.Data["nearest_reachable"]); ok && r.ErrorCode == world.CodeNoPath && hypot(near[0]-obs.Position[0], near[2]-obs.Position[2]) > 0.5 {
		gap := hypot(near[0]-goal[0], near[2]-goal[2])
		if goalFor == "explore" || gap < f.info.Rules.CollectRange-0.1 {
			d := f.move(near, goalFor, fmt.Sprintf("%s cannot be reached; going to the nearest reachable point", goalFor))
			return &d
		}
	}
	if goalFor == "explore" {
		f.markCell(goal)
	} else {
		f.avoid[goalFor] = obs.Tick + 100
	}
	return nil
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

func (f *Forager) avoided(name string, tick int) bool {
	until, ok := f.avoid[name]
	return ok && tick < until
}

// maxKnown bounds the forager's memory of resources out of sight.
const maxKnown = 48

type knownResource struct {
	name string
	pos  world.Vec3
}

func (f *Forager) knows(name string) bool {
	for _, k := range f.known {
		if k.name == name {
			return true
		}
	}
	return false
}

func (f *Forager) forget(name string) {
	f.known = slices.DeleteFunc(f.known, func(k knownResource) bool { return k.name == name })
}

// remember adds visible resources to memory and forgets remembered ones that
// should be in sight but are not (someone collected them).
func (f *Forager) remember(obs *world.Observation) {
	near := 0.7 * obs.PerceptionRadius
	f.known = slices.DeleteFunc(f.known, func(k knownResource) bool {
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
	for _, r := range obs.NearbyResources {
		if len(f.known) < maxKnown && !f.knows(r.Name) {
			f.known = append(f.known, knownResource{r.Name, r.Position})
		}
	}
}

// pickResource chooses the nearest remembered resource (visible ones are
// remembered too) that no visible agent is clearly closer to; ties go by name.
func (f *Forager) pickResource(obs *world.Observation) (string, world.Vec3, bool) {
	best, bestD, bestContested := "", math.Inf(1), true
	var bestPos world.Vec3
	for _, k := range f.known {
		name, p := k.name, k.pos
		if f.avoided(name, obs.Tick) {
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

func (f *Forager) clamp(p world.Vec3) world.Vec3 {
	b := f.info.Bounds
	m := f.info.Rules.AgentRadius + 0.5
	p[0] = min(max(p[0], b.MinX+m), b.MaxX-m)
	p[2] = min(max(p[2], b.MinZ+m), b.MaxZ-m)
	return p
}

func (f *Forager) cellXZ(x, z float64) (int, int) {
	b := f.info.Bounds
	return min(max(int((x-b.MinX)/f.cell), 0), f.cols-1), min(max(int((z-b.MinZ)/f.cell), 0), f.rows-1)
}

func (f *Forager) cellIndex(x, z float64) int {
	cx, cz := f.cellXZ(x, z)
	return cz*f.cols + cx
}

func (f *Forager) markCell(p world.Vec3) { f.seen[f.cellIndex(p[0], p[2])] = true }

// markSeen marks every exploration cell whose centre is within most of the
// perception radius.
func (f *Forager) markSeen(p world.Vec3) {
	c := f.cellIndex(p[0], p[2])
	if c == f.marked {
		return // still in the cell whose surroundings were marked last time
	}
	f.marked = c
	b := f.info.Bounds
	r := 0.8 * f.info.Rules.PerceptionRadius
	f.seen[f.cellIndex(p[0], p[2])] = true
	x0, z0 := f.cellXZ(p[0]-r, p[2]-r)
	x1, z1 := f.cellXZ(p[0]+r, p[2]+r)
	for cz := z0; cz <= z1; cz++ {
		for cx := x0; cx <= x1; cx++ {
			dx := b.MinX + (float64(cx)+0.5)*f.cell - p[0]
			dz := b.MinZ + (float64(cz)+0.5)*f.cell - p[2]
			if dx*dx+dz*dz < r*r {
				f.seen[cz*f.cols+cx] = true
			}
		}
	}
}

// exploreTarget picks, at random among the three nearest, the centre of a
// ground cell the forager has not visited; when all are visited it starts over.
func (f *Forager) exploreTarget(from world.Vec3) world.Vec3 {
	b := f.info.Bounds
	type cand struct {
		p world.Vec3
		d float64
	}
	var best [3]cand
	n := 0
	for pass := 0; pass < 2 && n == 0; pass++ {
		for i, s := range f.seen {
			if s {
				continue
			}
			cx, cz := i%f.cols, i/f.cols
			p := f.clamp(world.Vec3{b.MinX + (float64(cx)+0.5)*f.cell, 0, b.MinZ + (float64(cz)+0.5)*f.cell})
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
		if n == 0 {
			clear(f.seen)
			f.marked = -1
			f.markSeen(from)
		}
	}
	if n == 0 {
		return f.clamp(world.Vec3{b.MinX + f.rng.Float64()*b.Width(), 0, b.MinZ + f.rng.Float64()*b.Depth()})
	}
	return best[f.rng.IntN(n)].p
}

// hypot is math.Hypot without its overflow care, which costs more than the
// whole distance on these small numbers.
func hypot(x, y float64) float64 { return math.Sqrt(x*x + y*y) }
