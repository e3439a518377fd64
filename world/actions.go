package world

import (
	"container/heap"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/arena-sim/arena/internal/fuzzy"
)

// The action methods apply one tool call for an agent. They check the game
// rules, change the world, and answer with an ActionResult. Parameter syntax
// (types, NaN, missing fields) is the tools package's job; these methods still
// refuse values that make no sense in this world.

// precheck refuses actions from dead agents and, for body actions, busy ones.
func (w *World) precheck(a *Agent, tool string, needsBody bool) (ActionResult, bool) {
	if !a.Alive {
		return Fail(tool, CodeDead, "%s is dead and cannot act", a.ID), false
	}
	if needsBody && a.action.kind == actCraft {
		return Fail(tool, CodeBusy, "%s is busy crafting %s at '%s' (%d ticks left); wait or choose idle",
			a.ID, a.action.craftRecipe.Output, a.action.craftAt.Name, a.action.craftLeft), false
	}
	return ActionResult{}, true
}

// MoveTo starts walking toward target along a planned path at speedMul times the
// agent's base speed (capped at Rules.MaxSpeedMultiplier). It succeeds when the
// movement starts; arrival and blocked moves show in later observations.
func (w *World) MoveTo(a *Agent, target Vec3, speedMul float64) ActionResult {
	const tool = "move_to"
	if res, ok := w.precheck(a, tool, true); !ok {
		return res
	}
	if !target.Finite() || !w.bounds.Contains(target[0], target[2]) {
		return Fail(tool, CodeInvalidParams, "target [%g, %g, %g] is outside the world (x in [%g, %g], z in [%g, %g])",
			target[0], target[1], target[2], w.bounds.MinX, w.bounds.MaxX, w.bounds.MinZ, w.bounds.MaxZ)
	}
	if !(speedMul >= minSpeedMul) || math.IsInf(speedMul, 0) {
		return Fail(tool, CodeInvalidParams, "speed must be a multiplier of at least 0.1, got %g", speedMul)
	}
	speed, capped := w.moveSpeed(a, speedMul)
	target = w.moveTarget(target)
	if GroundDist(a.Pos, target) <= w.rules.ArrivalTolerance {
		w.cancelAction(a)
		a.status = ActionStatus{Tool: tool, Status: "arrived", Target: &target}
		return OK(tool, map[string]any{"status": "arrived", "distance": round2(GroundDist(a.Pos, target))})
	}
	if a.action.kind == actMove && GroundDist(a.action.target, target) < 1e-6 && a.action.speed == speed {
		// Same target, same speed: keep walking the path already planned.
		return OK(tool, map[string]any{"status": "moving", "unchanged": true, "target": roundVec(target)})
	}
	var path []Vec3
	var data map[string]any
	var err error
	if pl, ok := a.plan.take(w.tick, a.Pos, target); ok {
		path, err = pl.path, pl.err // planned ahead by a Worker
		if pl.speed == speed && pl.capped == capped {
			data = pl.data
		}
	} else {
		path, err = w.planPath(w.planner, a.Pos, target)
	}
	if err != nil {
		return w.noPathResult(tool, target, err)
	}
	if data == nil {
		data = w.moveData(a.Pos, target, path, speed, capped)
	}
	w.cancelAction(a)
	a.action = actionState{kind: actMove, target: target, path: path, speed: speed,
		checkPos: a.Pos, checkTick: w.tick, startedTick: w.tick}
	a.status = ActionStatus{Tool: tool, Status: "moving", Target: &target, Speed: round2(speed * w.tickRate)}
	return OK(tool, data)
}

// minSpeedMul is the slowest speed multiplier MoveTo accepts.
const minSpeedMul = 0.1

// moveSpeed is the speed in units per tick of an agent's move at speedMul
// times its base speed, and whether the cap cut speedMul.
func (w *World) moveSpeed(a *Agent, speedMul float64) (speed float64, capped bool) {
	capped = speedMul > w.rules.MaxSpeedMultiplier
	speedMul = math.Min(speedMul, w.rules.MaxSpeedMultiplier)
	return w.rules.BaseSpeed * a.SpeedMul * speedMul / w.tickRate, capped
}

// moveData is the data of a move_to result that starts a walk from from to
// target along path at speed.
func (w *World) moveData(from, target Vec3, path []Vec3, speed float64, capped bool) map[string]any {
	length := GroundDist(from, path[0])
	for i := 1; i < len(path); i++ {
		length += GroundDist(path[i-1], path[i])
	}
	data := map[string]any{
		"status":      "moving",
		"target":      roundVec(target),
		"path_length": round2(length),
		"waypoints":   len(path),
		"eta_ticks":   int(math.Ceil(length / speed)),
	}
	if capped {
		data["speed_capped_at"] = w.rules.MaxSpeedMultiplier
	}
	return data
}

// moveTarget is where a move_to target leads. Agents keep their body inside
// the world: a target on the very edge means "as far as you can go", the first
// walkable cell from the edge.
func (w *World) moveTarget(target Vec3) Vec3 {
	m := (math.Ceil(w.rules.AgentRadius/w.cellSize-1e-9) + 0.5) * w.cellSize
	return w.ground(clamp(target[0], w.bounds.MinX+m, w.bounds.MaxX-m), clamp(target[2], w.bounds.MinZ+m, w.bounds.MaxZ-m))
}

// Collect picks up a resource within collection range.
func (w *World) Collect(a *Agent, name string) ActionResult {
	const tool = "collect"
	if res, ok := w.precheck(a, tool, true); !ok {
		return res
	}
	idx, res, ok := w.lookup(a, tool, name, kindResource)
	if !ok {
		return res
	}
	r := w.resources[idx]
	if d := GroundDist(a.Pos, r.Pos); d > w.rules.CollectRange {
		return Fail(tool, CodeOutOfRange, "Target '%s' is %.1f units away, collection range is %.1f", name, d, w.rules.CollectRange)
	}
	if used := a.InventoryCount(); used+r.Amount > a.Capacity {
		return Fail(tool, CodeInventoryFull, "Inventory is full (%d/%d items); cannot collect '%s'", used, a.Capacity, name)
	}
	r.Collected = true
	if r.RespawnTicks > 0 {
		r.respawnAt = w.tick + r.RespawnTicks
		heap.Push(&w.respawns, respawn{r.respawnAt, int32(idx)})
	}
	w.resourceIdx.remove(idx, r.Pos)
	a.Inventory[r.ResourceType] += r.Amount
	a.Stats.ResourcesCollected += r.Amount
	a.Stats.Collected[r.ResourceType] += r.Amount
	w.Publish(Event{Type: "resource_collected", Agent: a.ID, Data: map[string]any{
		"resource": r.Name, "resource_type": r.ResourceType, "amount": r.Amount}})
	return OK(tool, map[string]any{"item": r.ResourceType, "amount": r.Amount, "inventory_count": a.Inventory[r.ResourceType]})
}

// Craft makes an item at a station within crafting range from inventory
// materials. Materials are used when crafting starts; a recipe of more than one
// tick keeps the agent BUSY and the station in use until it finishes.
func (w *World) Craft(a *Agent, item, stationName string) ActionResult {
	const tool = "craft"
	if res, ok := w.precheck(a, tool, true); !ok {
		return res
	}
	r := w.recipes[item]
	if r == nil {
		return Fail(tool, CodeNotFound, "Unknown recipe '%s'; known recipes: %s", fuzzy.Clip(item), listOrNone(w.recipeIDs))
	}
	idx, res, ok := w.lookup(a, tool, stationName, kindStation)
	if !ok {
		return res
	}
	st := w.stations[idx]
	if st.StationType != r.StationType {
		return Fail(tool, CodeNotAllowed, "%s is crafted at %s, but '%s' is %s", item, article(r.StationType), st.Name, article(st.StationType))
	}
	if d := GroundDist(a.Pos, st.Pos); d > w.rules.CraftRange {
		return Fail(tool, CodeOutOfRange, "Station '%s' is %.1f units away, crafting range is %.1f", st.Name, d, w.rules.CraftRange)
	}
	if st.InUseBy != "" && st.InUseBy != a.ID {
		return Fail(tool, CodeBusy, "Station '%s' is in use by %s; try again later or use another %s", st.Name, st.InUseBy, st.StationType)
	}
	inputs := make([]string, 0, len(r.Inputs))
	for k := range r.Inputs {
		inputs = append(inputs, k)
	}
	sort.Strings(inputs)
	var missing []string
	consumed := 0
	for _, k := range inputs {
		need, have := r.Inputs[k], a.Inventory[k]
		consumed += need
		if have < need {
			missing = append(missing, fmt.Sprintf("%s: need %d, have %d", k, need, have))
		}
	}
	if len(missing) > 0 {
		return Fail(tool, CodeMissingMaterials, "Missing materials for %s: %s", item, strings.Join(missing, "; "))
	}
	if after := a.InventoryCount() - consumed + r.OutputCount; after > a.Capacity {
		return Fail(tool, CodeInventoryFull, "Crafting %s would leave %d items, capacity is %d", item, after, a.Capacity)
	}
	for _, k := range inputs {
		a.Inventory[k] -= r.Inputs[k]
		if a.Inventory[k] == 0 {
			delete(a.Inventory, k)
		}
	}
	w.cancelAction(a)
	if r.Ticks <= 1 {
		w.finishCraft(a, r, st)
		return OK(tool, map[string]any{"item": item, "count": r.OutputCount, "ticks": 0, "status": "completed"})
	}
	st.InUseBy = a.ID
	a.action = actionState{kind: actCraft, craftRecipe: r, craftAt: st, craftLeft: r.Ticks, startedTick: w.tick}
	a.status = ActionStatus{Tool: tool, Status: "crafting", Item: item, Ticks: r.Ticks}
	w.Publish(Event{Type: "craft_started", Agent: a.ID, Data: map[string]any{"item": item, "station": st.Name, "ticks": r.Ticks}})
	return OK(tool, map[string]any{"item": item, "count": r.OutputCount, "ticks": r.Ticks, "status": "crafting"})
}

// QueryWorld lists every entity within radius, nearest first, optionally of one
// type (resource, hazard, agent, station, obstacle, capture_point). Unlike the
// observation it is a scan: it is not limited by line of sight.
func (w *World) QueryWorld(a *Agent, radius float64, filter string) (*QueryResult, ActionResult) {
	const tool = "query_world"
	if res, ok := w.precheck(a, tool, false); !ok {
		return nil, res
	}
	if !(radius > 0) || math.IsInf(radius, 0) {
		return nil, Fail(tool, CodeInvalidParams, "radius must be a positive number, got %g", radius)
	}
	if radius > w.rules.MaxQueryRadius {
		return nil, Fail(tool, CodeInvalidParams, "radius %g is larger than the maximum query radius %g", radius, w.rules.MaxQueryRadius)
	}
	var kind entityKind
	if filter != "" {
		for k := kindAgent; k <= kindPoint; k++ {
			if k.String() == filter {
				kind = k
			}
		}
		if kind == 0 {
			return nil, Fail(tool, CodeInvalidParams, "filter_type '%s' is not one of resource, hazard, agent, station, obstacle, capture_point", filter)
		}
	}
	q := &QueryResult{Tick: w.tick, Radius: radius, Filter: filter}
	var v viewer
	v.w, v.self, v.radius, v.sight = w, a, radius, false
	if kind == 0 || kind == kindResource {
		q.Entities = v.resources(q.Entities)
	}
	if kind == 0 || kind == kindStation {
		q.Entities = v.stations(q.Entities)
	}
	if kind == 0 || kind == kindHazard {
		q.Entities = v.hazards(q.Entities)
	}
	if kind == 0 || kind == kindAgent {
		q.Entities, _ = v.agents(q.Entities) // a query lists every agent in range
	}
	if kind == 0 || kind == kindObstacle {
		q.Entities = v.obstacles(q.Entities)
	}
	if kind == 0 || kind == kindPoint {
		q.Entities = v.capturePoints(q.Entities)
	}
	sortViews(q.Entities)
	if q.Entities == nil {
		q.Entities = []EntityView{}
	}
	return q, OK(tool, map[string]any{"count": len(q.Entities), "radius": radius})
}

// QueryInventory lists what the agent carries with item types and capacity.
func (w *World) QueryInventory(a *Agent) (*InventoryDetails, ActionResult) {
	const tool = "query_inventory"
	if res, ok := w.precheck(a, tool, false); !ok {
		return nil, res
	}
	d := &InventoryDetails{Capacity: a.Capacity, Used: a.InventoryCount(), Items: []InventoryItem{}}
	for _, k := range slices.Sorted(maps.Keys(a.Inventory)) {
		d.Items = append(d.Items, InventoryItem{Name: k, Count: a.Inventory[k], Type: w.ItemType(k)})
	}
	return d, OK(tool, map[string]any{"used": d.Used, "capacity": d.Capacity})
}

// SendMessage queues a message for delivery on the next tick to "all" agents in
// communication range, to the sender's "team", or to one agent by id.
func (w *World) SendMessage(a *Agent, target, content string) ActionResult {
	return w.SendMessageTo(a, target, content, nil)
}

// SendMessageTo is SendMessage narrowed to an audience (a ToolGuard's): when
// audience is not nil, only the agents it lists may receive the message. A
// target that is not in a non-nil audience is refused, NOT_ALLOWED.
func (w *World) SendMessageTo(a *Agent, target, content string, audience []string) ActionResult {
	const tool = "send_message"
	if res, ok := w.precheck(a, tool, false); !ok {
		return res
	}
	content = strings.TrimSpace(content)
	if content == "" {
		return Fail(tool, CodeInvalidParams, "message must not be empty")
	}
	if n := len([]rune(content)); n > w.rules.MaxMessageLen {
		return Fail(tool, CodeInvalidParams, "message is %d characters long; the limit is %d", n, w.rules.MaxMessageLen)
	}
	if target == "" {
		target = "all"
	}
	switch target {
	case "all":
	case "team":
		if a.Team == "" {
			return Fail(tool, CodeNotAllowed, "%s has no team; send to \"all\" or an agent id", a.ID)
		}
	default:
		// Every living agent's id is public (observations list them), so an
		// unknown or dead id is NOT_FOUND; whether a known one is in range is not
		// revealed: out of range, the message is simply not delivered.
		to := w.agentByID[target]
		if to == nil || !to.Alive {
			return Fail(tool, CodeNotFound, "No living agent named '%s'%s", fuzzy.Clip(target), w.suggestAgent(a, target))
		}
		if to == a {
			return Fail(tool, CodeInvalidParams, "an agent cannot send a message to itself")
		}
	}
	if audience != nil && target != "all" && target != "team" && !slices.Contains(audience, target) {
		return Fail(tool, CodeNotAllowed, "%s cannot reach %s now", a.ID, target)
	}
	w.outbox = append(w.outbox, pendingMessage{from: a.ID, to: target, content: content, tick: w.tick, audience: audience})
	a.Stats.MessagesSent++
	return OK(tool, map[string]any{"target_agent": target, "delivery_tick": w.tick + 1})
}

// IdleAction takes no new action this tick. Whatever the agent was doing goes
// on: a move in progress continues and crafting continues; an agent that was
// doing nothing stays where it is. (To stop walking, move_to your own position.)
func (w *World) IdleAction(a *Agent) ActionResult {
	const tool = "idle"
	if res, ok := w.precheck(a, tool, false); !ok {
		return res
	}
	return OK(tool, nil)
}

// BeginDecision clears what the agent's previous observation showed once
// (messages, query answers) before its next decision is applied.
func (w *World) BeginDecision(a *Agent) {
	a.inbox = a.inbox[:0]
	a.queryResult = nil
	a.inventoryDetails = nil
}

// RecordResult stores the outcome of an agent's decision for its next observation.
func (w *World) RecordResult(a *Agent, res ActionResult) {
	a.lastResult, a.hasResult = res, true
}

// SetQueryResult puts a query_world answer in the agent's next observation.
func (w *World) SetQueryResult(a *Agent, q *QueryResult) { a.queryResult = q }

// SetInventoryDetails puts a query_inventory answer in the agent's next observation.
func (w *World) SetInventoryDetails(a *Agent, d *InventoryDetails) { a.inventoryDetails = d }

// suggest returns "; did you mean 'X'?" for the closest name of a kind that
// the agent can see, or "": suggestions never reveal what is out of sight.
// The candidates come from the spatial indexes, so a failed lookup costs what
// is near the agent, not what is in the world.
func (w *World) suggest(a *Agent, name string, kind entityKind) string {
	if best := fuzzy.Closest(name, w.visibleNames(a, kind, nil)); best != "" {
		return fmt.Sprintf("; did you mean '%s'?", best)
	}
	return ""
}

// visibleNames appends the names of the entities of a kind that canSee
// reports the agent sees, in no particular order. Only the entities an
// index places near the agent are tested: each kind's index holds every
// entity that can be seen (resources while not collected, living agents).
func (w *World) visibleNames(a *Agent, kind entityKind, dst []string) []string {
	r := w.rules.PerceptionRadius
	x, z := a.Pos[0], a.Pos[2]
	try := func(n string, index int) {
		if w.canSee(a, entityRef{kind, index}) {
			dst = append(dst, n)
		}
	}
	switch kind {
	case kindAgent:
		w.refreshAgentIndex()
		g := w.agentIdx
		x0, z0, x1, z1 := g.span(x, z, r)
		for cz := z0; cz <= z1; cz++ {
			for cx := x0; cx <= x1; cx++ {
				for _, e := range g.at(cz*g.cols + cx) {
					try(w.agents[e.idx].ID, int(e.idx))
				}
			}
		}
	case kindResource:
		w.resourceIdx.each(x, z, r, func(i int) { try(w.resources[i].Name, i) })
	case kindStation:
		w.stationIdx.each(x, z, r, func(i int) { try(w.stations[i].Name, i) })
	case kindHazard:
		w.hazardIdx.each(x, z, r+w.maxHazardRadius, func(i int) { try(w.hazards[i].Name, i) })
	case kindObstacle:
		for _, i := range w.obstaclesNear(a.Pos, r, nil) {
			dst = append(dst, w.obstacles[i].Name) // obstaclesNear applies canSee's test
		}
	case kindPoint:
		for i, p := range w.points {
			try(p.Name, i)
		}
	}
	return dst
}

// suggestAgent suggests among the other living agents' ids, which are public.
func (w *World) suggestAgent(a *Agent, name string) string {
	others := make([]string, 0, len(w.roster()))
	for _, id := range w.roster() {
		if id != a.ID {
			others = append(others, id)
		}
	}
	if best := fuzzy.Closest(name, others); best != "" {
		return fmt.Sprintf("; did you mean '%s'?", best)
	}
	return ""
}

// canSee reports whether the agent perceives an entity now, by the same rules as
// its observation: agents, resources and stations within the perception radius
// and in line of sight; hazards and obstacles by their outline. Agents act only
// on what they can see, so that an error never reveals what they cannot.
func (w *World) canSee(a *Agent, ref entityRef) bool {
	r := w.rules.PerceptionRadius
	var p Vec3
	switch ref.kind {
	case kindAgent:
		o := w.agents[ref.index]
		if !o.Alive {
			return false
		}
		p = o.Pos
	case kindResource:
		res := w.resources[ref.index]
		if res.Collected {
			return false
		}
		p = res.Pos
	case kindStation:
		p = w.stations[ref.index].Pos
	case kindHazard:
		h := w.hazards[ref.index]
		d := GroundDist(a.Pos, h.Pos)
		return d-h.Radius <= r && (d <= h.Radius || w.lineOfSight(a.Pos, h.Pos, d))
	case kindObstacle:
		o := w.obstacles[ref.index]
		return GroundDist(a.Pos, o.Pos)-o.extent() <= r
	case kindPoint:
		return true // capture points are objectives everybody knows
	}
	d := GroundDist(a.Pos, p)
	return d <= r && w.lineOfSight(a.Pos, p, d)
}

// lookup finds the entity a tool names, among those the agent can see, and
// checks its kind, or explains why not.
func (w *World) lookup(a *Agent, tool, name string, kind entityKind) (int, ActionResult, bool) {
	ref, ok := w.names[name]
	if !ok || !w.canSee(a, ref) {
		return 0, Fail(tool, CodeNotFound, "No %s named '%s' in sight%s", kind, fuzzy.Clip(name), w.suggest(a, name, kind)), false
	}
	if ref.kind != kind {
		return 0, Fail(tool, CodeNotFound, "'%s' is %s, not %s", name, article(ref.kind.String()), article(kind.String())), false
	}
	return ref.index, ActionResult{}, true
}

// article puts "a" or "an" before a word.
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiouAEIOU", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
