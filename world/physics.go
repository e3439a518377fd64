package world

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/arena-sim/arena/nav"
	"github.com/solarlune/resolv"
)

// resolvMu serialises every call into resolv. The library keeps package-level
// scratch slices and a shape-id counter, so two worlds built on different
// goroutines would race even with separate Spaces (see docs/architecture.md).
// Only building a world calls resolv (buildPhysics).
var resolvMu sync.Mutex

func withResolv(fn func()) {
	resolvMu.Lock()
	defer resolvMu.Unlock()
	fn()
}

const (
	navMargin     = 0.05 // extra clearance around obstacles when planning
	collisionSkin = 1e-4 // resolv counts touching as intersecting; push a hair further
	physicsCell   = 4    // broad-phase cell (bodyGrid, resolv's Space), world units
)

// shapeTag identifies a body of the broad phase (what a resolv shape stands for).
type shapeTag struct {
	kind  entityKind
	index int
}

func (w *World) navPoint(x, z float64) nav.Point {
	return nav.Point{X: (x - w.bounds.MinX) / w.cellSize, Y: (z - w.bounds.MinZ) / w.cellSize}
}

func (w *World) worldXZ(p nav.Point) (float64, float64) {
	return w.bounds.MinX + p.X*w.cellSize, w.bounds.MinZ + p.Y*w.cellSize
}

// buildNavigation gives the planner every obstacle grown by the agent
// radius plus navMargin, as exact shapes (a circle grows into a larger
// circle, a box into a rectangle with rounded corners) that it rasterises
// into the navigation grid, plus the world's edge; hazards go into the grid
// as Costly; obstacles as they are go into the sight grid.
func (w *World) buildNavigation() {
	cols := int(math.Ceil(w.bounds.Width() / w.cellSize))
	rows := int(math.Ceil(w.bounds.Depth() / w.cellSize))
	grid := nav.NewGrid(cols, rows)
	w.sightGrid = nav.NewGrid(cols, rows)
	cs := w.cellSize
	grow := (w.rules.AgentRadius + navMargin) / cs
	shapes := make([]nav.Shape, 0, len(w.obstacles)+4)
	for _, o := range w.obstacles {
		c := w.navPoint(o.Pos[0], o.Pos[2])
		switch o.Shape {
		case "box":
			hx, hz := o.SizeX/2/cs, o.SizeZ/2/cs
			shapes = append(shapes, nav.Shape{Center: c, HalfX: hx, HalfY: hz, Radius: grow})
			if !o.SeeThrough {
				w.sightGrid.FillRect(nav.Point{X: c.X - hx, Y: c.Y - hz}, nav.Point{X: c.X + hx, Y: c.Y + hz}, nav.Blocked)
			}
		default:
			shapes = append(shapes, nav.Shape{Center: c, Radius: o.Radius/cs + grow})
			if !o.SeeThrough {
				w.sightGrid.FillCircle(c, o.Radius/cs, nav.Blocked)
			}
		}
	}
	for _, h := range w.hazards {
		grid.FillCircle(w.navPoint(h.Pos[0], h.Pos[2]), (h.Radius+w.rules.AgentRadius*0.5)/cs, nav.Costly)
	}
	// Keep agent centres a radius away from the world's edge: the edge is
	// a band of obstacle outside the world, grown by the radius.
	edge := w.rules.AgentRadius / cs
	fc, fr := float64(cols), float64(rows)
	shapes = append(shapes,
		nav.Shape{Center: nav.Point{X: fc / 2, Y: -0.5}, HalfX: fc/2 + 1, HalfY: 0.5, Radius: edge},
		nav.Shape{Center: nav.Point{X: fc / 2, Y: fr + 0.5}, HalfX: fc/2 + 1, HalfY: 0.5, Radius: edge},
		nav.Shape{Center: nav.Point{X: -0.5, Y: fr / 2}, HalfX: 0.5, HalfY: fr/2 + 1, Radius: edge},
		nav.Shape{Center: nav.Point{X: fc + 0.5, Y: fr / 2}, HalfX: 0.5, HalfY: fr/2 + 1, Radius: edge})
	w.planner = nav.NewPlanner(grid, nav.Options{ClusterSize: w.rules.ClusterSize, HazardCost: w.rules.HazardCost, Obstacles: shapes})
	w.navGrid = w.planner.Grid()
	w.buildSightSums()
}

// NavGrid exposes the navigation grid (for viewers and tests); do not modify it.
func (w *World) NavGrid() *nav.Grid { return w.navGrid }

// CellSize is the side of a navigation cell in world units.
func (w *World) CellSize() float64 { return w.cellSize }

// obstacleSpace is a resolv Space holding every obstacle (call it inside
// withResolv).
func (w *World) obstacleSpace() *resolv.Space {
	sw := int(math.Ceil(w.bounds.Width())) + 1
	sh := int(math.Ceil(w.bounds.Depth())) + 1
	space := resolv.NewSpace(sw, sh, physicsCell, physicsCell)
	for i, o := range w.obstacles {
		x, y := o.Pos[0]-w.bounds.MinX, o.Pos[2]-w.bounds.MinZ
		var s resolv.IShape
		if o.Shape == "box" {
			s = resolv.NewRectangle(x, y, o.SizeX, o.SizeZ)
		} else {
			s = resolv.NewCircle(x, y, o.Radius)
		}
		s.SetData(shapeTag{kindObstacle, i})
		space.Add(s)
	}
	return space
}

// buildPhysics builds collision's broad phase (bodyGrid) with every obstacle,
// as resolv registers them in its Space, and every agent, moving agents whose
// spawn point is taken to the nearest free spot.
func (w *World) buildPhysics(specs []AgentSpec) error {
	withResolv(func() {
		w.grid.init(w.obstacleSpace(), len(w.agents), w.obstacles, w.bounds)
	})
	for _, a := range w.agents {
		x, z, ok := w.freeSpot(a)
		if !ok {
			return fmt.Errorf("agent %q: no free spot near its spawn point (%g, %g)", a.ID, a.Pos[0], a.Pos[2])
		}
		w.setPos(a, x, z)
	}
	return nil
}

// setPos puts an agent at (x, z): its position, what observations show of
// it, and, while it lives, its place in collision's broad phase, which the
// agent index reads (refreshAgentIndex). Every move of an agent, from its
// spawn point on, goes through here.
func (w *World) setPos(a *Agent, x, z float64) {
	if a.Alive {
		w.grid.place(a.index, x, z, w.rules.AgentRadius)
	}
	a.Pos = w.ground(x, z)
	a.shown = roundVec(a.Pos)
}

// freeSpot finds for a new agent the nearest spot (spiralling out from its
// spawn point) where it touches no obstacle or agent placed before it, stands on
// a walkable cell and is outside every hazard.
func (w *World) freeSpot(a *Agent) (x, z float64, ok bool) {
	x0, z0 := a.Pos[0], a.Pos[2]
	step := w.rules.AgentRadius * 2.2
	var buf []body
	for ring := 0; ring < 64; ring++ {
		n := max(1, ring*8)
		for k := 0; k < n; k++ {
			ang := 2 * math.Pi * float64(k) / float64(n)
			x := x0 + float64(ring)*step*math.Cos(ang)
			z := z0 + float64(ring)*step*math.Sin(ang)
			if !w.bounds.Contains(x, z) || w.navGrid.At(nav.PointCell(w.navPoint(x, z))) == nav.Blocked || w.inHazard(x, z) {
				continue
			}
			buf = w.nearBodies(x, z, w.rules.AgentRadius+collisionSkin, a.index, buf[:0], &w.walk)
			if w.overlapsAny(x, z, a.index, buf) {
				continue
			}
			return x, z, true
		}
	}
	return 0, 0, false
}

func (w *World) inHazard(x, z float64) bool {
	for _, h := range w.hazards {
		if dx, dz := x-h.Pos[0], z-h.Pos[2]; dx*dx+dz*dz < (h.Radius+w.rules.AgentRadius)*(h.Radius+w.rules.AgentRadius) {
			return true
		}
	}
	return false
}

// planPath finds a smoothed route in world coordinates from an agent's position.
func (w *World) planPath(planner *nav.Planner, from, to Vec3) ([]Vec3, error) {
	pts, err := planner.FindPath(w.navPoint(from[0], from[2]), w.navPoint(to[0], to[2]))
	if err != nil {
		return nil, err
	}
	path := make([]Vec3, 0, len(pts))
	for i, p := range pts {
		if i == 0 {
			continue // the agent's own position
		}
		x, z := w.worldXZ(p)
		path = append(path, w.ground(x, z))
	}
	if len(path) > 0 {
		path[len(path)-1] = w.ground(to[0], to[2])
	}
	return path, nil
}

// noPathResult turns a planner failure into a NO_PATH result that names the
// nearest reachable point.
func (w *World) noPathResult(tool string, to Vec3, err error) ActionResult {
	var np *nav.NoPathError
	if errors.As(err, &np) {
		x, z := w.worldXZ(np.Nearest)
		near := roundVec(w.ground(x, z))
		res := Fail(tool, CodeNoPath, "No path to [%.1f, %.1f, %.1f]: %s. Nearest reachable point is [%.1f, %.1f, %.1f]",
			to[0], to[1], to[2], np.Reason, near[0], near[1], near[2])
		res.Data = map[string]any{"nearest_reachable": near}
		return res
	}
	return Fail(tool, CodeNoPath, "No path to [%.1f, %.1f, %.1f]: %v", to[0], to[1], to[2], err)
}

// stepMovement moves every walking agent along its path, resolving collisions
// so that agents slide along obstacles and never overlap each other.
func (w *World) stepMovement() {
	moved := false
	for i, a := range w.agents {
		w.prefetchWalk(i)
		if !a.Alive || a.action.kind != actMove {
			a.Vel = Vec3{}
			continue
		}
		w.moveAgent(a, &w.walk)
		moved = true
	}
	if moved {
		w.agentIdxDirty = true
	}
}

// moveAgent walks an agent along its path for one tick. The walk is cut into
// steps no longer than the agent's radius, each followed by collision, so that
// nothing thinner than an agent is ever jumped over; a waypoint is passed only
// once the agent has actually reached it, so a push never makes it cut a corner.
// sc is the walk's scratch: the world's own on the tick goroutine, a
// Worker's in a parallel step (walks.go).
func (w *World) moveAgent(a *Agent, sc *walkScratch) {
	prev := a.Pos
	r := w.rules.AgentRadius
	budget := a.action.speed
	sc.bodies = w.nearBodies(prev[0], prev[2], w.walkReach(a), a.index, sc.bodies[:0], sc)
	bodies := sc.bodies
	x, z := prev[0], prev[2]
	path := a.action.path
	blocker := ""
	for budget > 1e-9 && len(path) > 0 {
		wp := path[0]
		dx, dz := wp[0]-x, wp[2]-z
		d := math.Sqrt(dx*dx + dz*dz)
		if d < waypointReached {
			if len(path) == 1 {
				break
			}
			path = path[1:]
			continue
		}
		step := min(budget, d, r)
		nx, nz, b := w.resolve(a, x+dx/d*step, z+dz/d*step, x, z, bodies)
		if b != "" {
			blocker = b
		}
		budget -= step
		if moved := math.Abs(nx-x) + math.Abs(nz-z); moved < 1e-9 {
			break // wedged: nothing more to gain this tick
		}
		x, z = nx, nz
	}
	if lim := a.action.speed + collisionSkin + walkSlack(r); math.Abs(x-prev[0]) > lim || math.Abs(z-prev[2]) > lim {
		// Collisions would carry it further than any walk goes in a tick
		// (pushes out of deep overlaps, one after another): it stays, as a
		// wedged one does. This bounds the cells a walk can change, which
		// a parallel step relies on (walks.go).
		x, z, path = prev[0], prev[2], a.action.path
	}
	a.action.path = path
	w.setPos(a, x, z)
	dist := GroundDist(prev, a.Pos)
	a.Stats.Distance += dist
	a.Vel = Vec3{(a.Pos[0] - prev[0]) * w.tickRate, (a.Pos[1] - prev[1]) * w.tickRate, (a.Pos[2] - prev[2]) * w.tickRate}
	if dist > 1e-9 {
		a.Facing = math.Atan2(a.Pos[2]-prev[2], a.Pos[0]-prev[0])
	}
	if GroundDist(a.Pos, a.action.target) <= w.rules.ArrivalTolerance {
		target := a.action.target
		a.action = actionState{}
		a.Vel = Vec3{}
		a.status = ActionStatus{Tool: "move_to", Status: "arrived", Target: &target}
		sc.publish(w, a, Event{Type: "arrived", Agent: a.ID, Data: map[string]any{"position": roundVec(a.Pos)}})
		return
	}
	w.checkProgress(a, blocker, sc)
}

// walkReach is how far from its position a walk of the agent this tick can
// meet a body: its speed, its radius and the skin.
func (w *World) walkReach(a *Agent) float64 {
	return a.action.speed + w.rules.AgentRadius + collisionSkin
}

// shapeCells is the span of physics cells a circle of radius r centred at
// (x, y) in resolv's coordinates touches, computed as resolv does.
func shapeCells(x, y, r float64) [4]int {
	return [4]int{int(math.Floor((x - r) / physicsCell)), int(math.Floor((y - r) / physicsCell)),
		int(math.Floor((x + r) / physicsCell)), int(math.Floor((y + r) / physicsCell))}
}

// waypointReached is how close an agent must come to an intermediate waypoint
// before it heads for the next one.
const waypointReached = 0.05

func (w *World) shapeName(t shapeTag) string {
	switch t.kind {
	case kindAgent:
		return w.agents[t.index].ID
	case kindObstacle:
		return w.obstacles[t.index].Name
	}
	return ""
}

// checkProgress fails a move that has made no progress for Rules.StuckSeconds,
// after one attempt to re-plan from where the agent stands.
func (w *World) checkProgress(a *Agent, blocker string, sc *walkScratch) {
	window := max(1, int(math.Round(w.rules.StuckSeconds*w.tickRate)))
	if w.tick-a.action.checkTick < window {
		return
	}
	progress := GroundDist(a.Pos, a.action.checkPos)
	expected := a.action.speed * float64(window)
	if progress >= math.Max(0.1*expected, 0.05) {
		a.action.checkPos, a.action.checkTick, a.action.replanned = a.Pos, w.tick, false
		return
	}
	if !a.action.replanned {
		if path, err := w.planPath(sc.plannerOf(w), a.Pos, a.action.target); err == nil {
			a.action.path = path
			a.action.replanned = true
			a.action.checkPos, a.action.checkTick = a.Pos, w.tick
			return
		}
	}
	target := a.action.target
	why := "something"
	if blocker != "" {
		why = "'" + blocker + "'"
	}
	res := Fail("move_to", CodeNoPath,
		"Movement toward [%.1f, %.1f, %.1f] made no progress for %.1f s: blocked by %s at [%.1f, %.1f, %.1f]; the move was stopped",
		target[0], target[1], target[2], float64(window)/w.tickRate, why, a.Pos[0], a.Pos[1], a.Pos[2])
	res.Tick = w.tick
	// The failure replaces last_action_result only when that reports the move
	// itself (or an idle that let it go on); the result of any other decision
	// stays, and current_action carries the failure either way.
	if !a.hasResult || a.lastResult.Tool == "move_to" || a.lastResult.Tool == "idle" {
		a.lastResult, a.hasResult = res, true
	}
	a.action = actionState{}
	a.Vel = Vec3{}
	a.status = ActionStatus{Tool: "move_to", Status: "failed", Target: &target, ErrorCode: res.ErrorCode, Detail: res.ErrorMessage}
	sc.publish(w, a, Event{Type: "move_failed", Agent: a.ID, Data: map[string]any{"blocked_by": blocker}})
}

// stepHazards deals entry damage to agents that stepped into a hazard this tick
// and damage over time to those inside.
func (w *World) stepHazards() {
	if len(w.hazards) == 0 {
		return
	}
	var inside [8]int
	for _, a := range w.agents {
		if !a.Alive || len(a.inHazards) == 0 && !w.hazardNear[w.hazardIdx.bucket(a.Pos[0], a.Pos[2])] {
			continue // in none before, and none is near enough to be in now
		}
		now := inside[:0]
		w.hazardIdx.each(a.Pos[0], a.Pos[2], w.maxHazardRadius, func(i int) {
			h := w.hazards[i]
			if groundDist2(a.Pos, h.Pos) < h.Radius*h.Radius {
				now = append(now, i)
			}
		})
		if len(now) > 1 {
			sort.Ints(now)
		}
		for _, i := range now {
			h := w.hazards[i]
			entered := !containsInt(a.inHazards, i)
			dmg := h.DamagePerSecond * w.dt
			if entered {
				dmg += h.EntryDamage
				w.Publish(Event{Type: "hazard_entered", Agent: a.ID, Data: map[string]any{
					"hazard": h.Name, "hazard_type": h.HazardType, "damage": round2(h.EntryDamage)}})
			}
			w.Damage(a, dmg, h.Name)
			if !a.Alive {
				break
			}
		}
		if a.Alive {
			a.inHazards = append(a.inHazards[:0], now...)
		}
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func (w *World) stepCrafting() {
	for _, a := range w.agents {
		if a.action.kind != actCraft || !a.Alive {
			continue
		}
		a.action.craftLeft--
		if a.action.craftLeft > 0 {
			a.status.Ticks = a.action.craftLeft
			continue
		}
		r, st := a.action.craftRecipe, a.action.craftAt
		st.InUseBy = ""
		a.action = actionState{}
		w.finishCraft(a, r, st)
	}
}

func (w *World) finishCraft(a *Agent, r *Recipe, st *Station) {
	a.Inventory[r.Output] += r.OutputCount
	a.Stats.ItemsCrafted += r.OutputCount
	a.Stats.Crafted[r.Output] += r.OutputCount
	a.status = ActionStatus{Tool: "craft", Status: "completed", Item: r.Output}
	w.Publish(Event{Type: "item_crafted", Agent: a.ID, Data: map[string]any{"item": r.Output, "count": r.OutputCount, "station": st.Name}})
}

// stepRespawns brings back the resources due, in the order of the
// resources. The collected ones wait in a heap by due tick, so that a tick
// costs what respawns, not every resource of the world.
func (w *World) stepRespawns() {
	due := w.respawnDue[:0]
	for len(w.respawns) > 0 && w.tick+1 >= w.respawns[0].at {
		due = append(due, heap.Pop(&w.respawns).(respawn).idx)
	}
	slices.Sort(due)
	for _, i := range due {
		r := w.resources[i]
		r.Collected = false
		w.resourceIdx.insert(int(i), r.Pos)
		w.Publish(Event{Type: "resource_respawned", Data: map[string]any{"resource": r.Name}})
	}
	w.respawnDue = due[:0]
}

// respawn is a collected resource waiting to come back at tick at.
type respawn struct {
	at  int
	idx int32
}

// respawnHeap orders the waiting resources by due tick.
type respawnHeap []respawn

func (h respawnHeap) Len() int { return len(h) }
func (h respawnHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || (h[i].at == h[j].at && h[i].idx < h[j].idx)
}
func (h respawnHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *respawnHeap) Push(x any)   { *h = append(*h, x.(respawn)) }
func (h *respawnHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// deliverMessages hands last tick's messages to the agents in range, dropping
// each with the configured probability from the "messages" random stream.
func (w *World) deliverMessages() { w.deliverTo(w.recipients) }

// deliverTo delivers the outbox to the agents among each message's
// candidates (in the order of w.agents) that it reaches.
func (w *World) deliverTo(candidates func(from *Agent, m pendingMessage, dst []*Agent) []*Agent) {
	if len(w.outbox) == 0 {
		return
	}
	rng := w.Rand("messages")
	commR2 := w.rules.CommRange * w.rules.CommRange
	for _, m := range w.outbox {
		from := w.agentByID[m.from]
		w.recipientBuf = candidates(from, m, w.recipientBuf[:0])
		for _, to := range w.recipientBuf {
			if to == from || !to.Alive || (m.audience != nil && !slices.Contains(m.audience, to.ID)) {
				continue
			}
			switch m.to {
			case "all":
			case "team":
				if to.Team != from.Team {
					continue
				}
			default:
				if to.ID != m.to {
					continue
				}
			}
			if groundDist2(from.Pos, to.Pos) > commR2 {
				continue
			}
			if w.rules.MessageDropProb > 0 && rng.Float64() < w.rules.MessageDropProb {
				continue
			}
			if len(to.inbox) >= maxInbox {
				to.inbox = append(to.inbox[:0], to.inbox[1:]...)
			}
			to.inbox = append(to.inbox, Message{From: m.from, Content: m.content, Tick: m.tick, To: m.to})
		}
	}
	w.outbox = w.outbox[:0]
}

const maxInbox = 100

// recipients appends the agents a message may reach, in the order of
// w.agents (the order of the drops' random draws): the one it names, or
// the living agents within the communication range of its sender, found
// through the agent index rather than by testing every agent.
func (w *World) recipients(from *Agent, m pendingMessage, dst []*Agent) []*Agent {
	if m.to != "all" && m.to != "team" {
		if to := w.agentByID[m.to]; to != nil {
			dst = append(dst, to)
		}
		return dst
	}
	w.refreshAgentIndex()
	g := w.agentIdx
	r := w.rules.CommRange
	x0, z0, x1, z1 := g.span(from.Pos[0], from.Pos[2], r)
	if (x1-x0+1)*(z1-z0+1) > len(w.agents) {
		return append(dst, w.agents...) // a range as large as the map
	}
	idx := w.recipientIdx[:0]
	for cz := z0; cz <= z1; cz++ {
		for cx := x0; cx <= x1; cx++ {
			for _, e := range g.at(cz*g.cols + cx) {
				if dx, dz := e.x-from.Pos[0], e.z-from.Pos[2]; dx*dx+dz*dz <= r*r {
					idx = append(idx, e.idx)
				}
			}
		}
	}
	slices.Sort(idx)
	for _, i := range idx {
		dst = append(dst, w.agents[i])
	}
	w.recipientIdx = idx
	return dst
}

// ForceStraightMove starts a move along a straight line to target, without
// planning around anything: collision alone decides where the agent ends up.
// Tests and scripted situations use it to drive an agent into an obstacle.
func (w *World) ForceStraightMove(a *Agent, target Vec3) {
	target = w.ground(target[0], target[2])
	a.action = actionState{kind: actMove, target: target, path: []Vec3{target},
		speed: w.rules.BaseSpeed * a.SpeedMul / w.tickRate, checkPos: a.Pos, checkTick: w.tick}
	a.status = ActionStatus{Tool: "move_to", Status: "moving", Target: &target}
}
