package bots

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/arena-sim/arena/world"
)

// Crafter makes the items its objective asks for (crafted.<item> or
// inventory.<item> metrics). Every decision it plans backwards from those
// items through available_recipes and its inventory: which crafts are still
// to do (inputs before outputs) and which raw materials are still missing.
// Then it crafts at a free station in range, collects a needed resource in
// reach, or walks to the nearest place that moves the plan on: a station for
// a craft it has the inputs for, or a resource it still needs. A station in
// use by another agent is passed over while there is something else to do;
// otherwise the crafter waits beside it. It scans the world with query_world
// when it does not know where a needed station or resource is, and explores
// when the scan finds nothing. Like the Forager it steps out of hazards.
type Crafter struct {
	explorer
	resourceMemory
	stations  []knownStation // stations seen or scanned, in the order first seen
	failure   failureMemo
	avoid     avoidList  // resources and stations skipped for now
	goal      world.Vec3 // where the current move_to leads
	goalFor   string     // "resource:<name>", "station:<name>", "wait:<name>", "explore" or "flee"
	moving    bool
	acted     string // the resource collected or station crafted at by the last decision
	nextQuery int    // first tick at which a query_world may be sent again
	turn      int    // turns the approach to stations after a move blocked near one
	parked    bool   // done, and sent out of the others' way
}

type knownStation struct {
	name string
	typ  string
	pos  world.Vec3
}

// maxStations bounds the crafter's memory of stations.
const maxStations = 64

// queryEvery is the number of ticks between two scans for something unknown.
const queryEvery = 50

// waitMargin is how far beyond crafting range a crafter waits for a station in
// use, leaving the space around the station to the agent crafting there.
const waitMargin = 1.5

// NewCrafter creates a crafter for one agent.
func NewCrafter(info Info) *Crafter {
	return &Crafter{explorer: newExplorer(info, botRand(info)), avoid: avoidList{}}
}

func (c *Crafter) move(to world.Vec3, why, reason string) world.Decision {
	c.goal, c.goalFor, c.moving = to, why, true
	return moveTo(to, reason)
}

func (c *Crafter) avoided(name string, tick int) bool { return c.avoid.avoided(name, tick) }

// Decide implements Bot.
func (c *Crafter) Decide(_ context.Context, obs *world.Observation) world.Decision {
	if !obs.Alive {
		return world.Idle("dead")
	}
	c.markSeen(obs.Position)
	c.learn(obs)
	switch obs.CurrentAction.Status {
	case "crafting":
		return world.Idle(fmt.Sprintf("crafting %s, %s left", obs.CurrentAction.Item, countNoun(obs.CurrentAction.Ticks, "tick")))
	case "arrived", "failed", "idle", "completed", "":
		c.moving = false
	}
	if r := obs.LastActionResult; r != nil && !r.Success && !c.failure.seen(r) {
		if d := c.onFailure(r, obs); d != nil {
			return *d
		}
	}
	c.acted = ""

	// 1. Get out of hazards (and off their edges).
	if inHazardRange(obs) {
		if c.moving && c.goalFor == "flee" {
			return world.Idle("leaving a hazard")
		}
		to, reason, _ := c.hazardEscape(obs)
		return c.move(to, "flee", reason)
	}

	if c.moving && c.goalFor == "sidestep" {
		return world.Idle("stepping aside")
	}

	p := makeCraftPlan(c.goals(obs), obs.AvailableRecipes, obs.Inventory)
	if len(p.steps) == 0 {
		return c.done(obs)
	}
	craftable := p.craftable(obs.AvailableRecipes, obs.Inventory)

	// 2. Craft at a free station in range.
	reach := c.info.Rules.CraftRange - 0.1
	for _, item := range craftable {
		st := obs.AvailableRecipes[item].StationType
		for i := range obs.NearbyStations {
			s := &obs.NearbyStations[i]
			if s.StationType == st && !stationInUse(s) && s.Distance <= reach && !c.avoided(s.Name, obs.Tick) {
				c.moving, c.acted = false, s.Name
				return world.Decision{Tool: "craft", Params: map[string]any{"item_name": item, "station_name": s.Name},
					Reasoning: fmt.Sprintf("crafting %s at %s (%.1f away): %s", item, s.Name, s.Distance, p.summary())}
			}
		}
	}

	// 3. Collect a needed resource in reach.
	if obs.InventoryUsed < obs.InventoryCap {
		for i := range obs.NearbyResources {
			r := &obs.NearbyResources[i]
			if p.raw[r.ResourceType] > 0 && r.Distance < c.info.Rules.CollectRange-0.05 && !c.avoided(r.Name, obs.Tick) {
				c.moving, c.acted = false, r.Name
				c.forget(r.Name)
				return world.Decision{Tool: "collect", Params: map[string]any{"target_name": r.Name},
					Reasoning: fmt.Sprintf("%s (%s) is %.1f away, within collection range: %s", r.Name, r.ResourceType, r.Distance, p.summary())}
			}
		}
	}

	// 4. Scan the world when a needed station or resource is unknown. A scan
	// does not stop a move in progress.
	if missing := c.unknown(p, craftable, obs); missing != "" && obs.Tick >= c.nextQuery && c.info.Rules.MaxQueryRadius > 0 {
		c.nextQuery = obs.Tick + queryEvery
		return world.Decision{Tool: "query_world", Params: map[string]any{"radius": c.info.Rules.MaxQueryRadius},
			Reasoning: fmt.Sprintf("no %s known; scanning for stations and resources", missing)}
	}

	// 5. Walk to the nearest useful place: a free station for a craft whose
	// inputs are carried, or a needed resource. Keep walking to a resource
	// already chosen while it is still there and needed: switching targets
	// every time another agent moves only wastes steps.
	if kind, name, _ := strings.Cut(c.goalFor, ":"); c.moving && kind == "resource" && !c.avoided(name, obs.Tick) {
		if i := slices.IndexFunc(c.known, func(k knownResource) bool { return k.name == name }); i >= 0 && p.raw[c.known[i].typ] > 0 {
			return world.Idle(fmt.Sprintf("walking to %s: %s", name, p.summary()))
		}
	}
	ts := c.targets(p, craftable, obs)
	var best, wait *craftTarget
	for i := range ts {
		t := &ts[i]
		if t.busy {
			if wait == nil || t.dist < wait.dist {
				wait = t
			}
			continue
		}
		if c.moving && c.goalFor == t.key {
			return world.Idle(fmt.Sprintf("walking to %s: %s", t.name, p.summary()))
		}
		if best == nil || t.dist < best.dist {
			best = t
		}
	}
	if best != nil {
		return c.move(best.pos, best.key, fmt.Sprintf("%s (%.1f away): %s", best.why, best.dist, p.summary()))
	}

	// 6. Only stations in use: wait beside the nearest one, close enough to
	// see when it is free.
	if wait != nil {
		if wait.dist <= c.info.Rules.CraftRange+waitMargin {
			if obs.CurrentAction.Status == "moving" {
				c.moving, c.goalFor = false, "wait:"+wait.name
				return moveTo(obs.Position, fmt.Sprintf("%s is in use by another agent; stopping beside it to wait", wait.name))
			}
			return world.Idle(fmt.Sprintf("waiting for %s, in use by another agent: %s", wait.name, p.summary()))
		}
		if c.moving && c.goalFor == "wait:"+wait.name {
			return world.Idle(fmt.Sprintf("walking to %s to wait for it", wait.name))
		}
		return c.move(wait.pos, "wait:"+wait.name, fmt.Sprintf("%s is in use by another agent and nothing else is left to do; going to wait beside it", wait.name))
	}

	// 7. Nothing needed is known: explore.
	if c.moving && c.goalFor == "explore" {
		return world.Idle("exploring")
	}
	to := c.exploreTarget(obs.Position)
	return c.move(to, "explore", fmt.Sprintf("looking for %s, exploring unseen ground", c.unknown(p, craftable, obs)))
}

// learn remembers the resources and stations in sight and in a query_world
// answer, and forgets remembered resources that should be in sight but are not.
func (c *Crafter) learn(obs *world.Observation) {
	// Only close by: a scan also finds resources hidden behind obstacles.
	c.remember(obs, math.Min(c.info.Rules.CollectRange+0.5, 0.7*obs.PerceptionRadius))
	for i := range obs.NearbyStations {
		c.addStation(&obs.NearbyStations[i])
	}
	if q := obs.QueryResult; q != nil {
		for i := range q.Entities {
			switch e := &q.Entities[i]; e.Type {
			case "resource":
				c.add(e)
			case "station":
				c.addStation(e)
			}
		}
	}
}

func (c *Crafter) addStation(v *world.EntityView) {
	if len(c.stations) >= maxStations || slices.ContainsFunc(c.stations, func(s knownStation) bool { return s.name == v.Name }) {
		return
	}
	c.stations = append(c.stations, knownStation{v.Name, v.StationType, v.Position})
}

// onFailure reacts to a failed action. A target that cannot be reached but has
// a reachable point close enough is approached from that point; otherwise it
// is skipped for a while.
func (c *Crafter) onFailure(r *world.ActionResult, obs *world.Observation) *world.Decision {
	goal, goalFor, acted := c.goal, c.goalFor, c.acted
	c.moving, c.goalFor, c.acted = false, "", ""
	switch r.Tool {
	case "query_world":
		c.nextQuery = obs.Tick + 20*queryEvery
		return nil
	case "collect":
		if r.ErrorCode == world.CodeNotFound && acted != "" {
			c.forget(acted) // someone else took it
		}
		return nil
	case "craft":
		if (r.ErrorCode == world.CodeNotFound || r.ErrorCode == world.CodeNotAllowed) && acted != "" {
			c.avoid.skip(acted, obs.Tick)
		}
		return nil // BUSY: the station shows in_use from now on
	}
	kind, name, _ := strings.Cut(goalFor, ":")
	if goalFor == "" || kind == "flee" {
		return nil
	}
	if near, ok := vecOf(r.Data["nearest_reachable"]); ok && r.ErrorCode == world.CodeNoPath && hypot(near[0]-obs.Position[0], near[2]-obs.Position[2]) > 0.5 {
		gap := hypot(near[0]-goal[0], near[2]-goal[2])
		limit := c.info.Rules.CollectRange - 0.1
		if kind != "resource" {
			limit = c.info.Rules.CraftRange - 0.1 // near enough to a station's approach point
		}
		if kind == "explore" || kind == "clear" || gap < limit {
			d := c.move(near, goalFor, fmt.Sprintf("%s cannot be reached; going to the nearest reachable point", goalFor))
			return &d
		}
	}
	_, reachable := r.Data["nearest_reachable"]
	switch kind {
	case "explore":
		c.markCell(goal)
	case "resource":
		c.avoid.skip(name, obs.Tick)
	case "station", "wait":
		// Only a station that cannot be reached is skipped; a move that got
		// stuck near one was blocked by the agents around it.
		if reachable {
			c.avoid.skip(name, obs.Tick)
		}
	}
	if !reachable && r.ErrorCode == world.CodeNoPath && kind != "sidestep" {
		// The move got stuck: something, most often another agent, stood in
		// the way. Step aside, and come to stations from another side.
		c.turn++
		d := c.sidestep(obs, goal)
		return &d
	}
	return nil
}

// sidestep walks a little to one side of the line toward goal (the side
// alternates), to get around an agent standing in the way.
func (c *Crafter) sidestep(obs *world.Observation, goal world.Vec3) world.Decision {
	dx, dz := goal[0]-obs.Position[0], goal[2]-obs.Position[2]
	d := hypot(dx, dz)
	if d < 1e-6 {
		dx, dz, d = 1, 0, 1
	}
	dx, dz = dx/d, dz/d
	side := 1.5
	if c.turn%2 == 1 {
		side = -side
	}
	to := c.clamp(world.Vec3{obs.Position[0] - dz*side + dx*0.5, 0, obs.Position[2] + dx*side + dz*0.5})
	return c.move(to, "sidestep", "the way was blocked; stepping aside before trying again")
}

// countNoun writes a count with its noun, "1 tick" or "3 ticks".
func countNoun(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// goal is an item to make and how many more crafts of it are needed.
type craftGoal struct {
	item   string
	crafts int
}

// goals reads what to make from the objective: the required crafted.<item> and
// inventory.<item> metrics whose item has a recipe (the others when none is
// required), less what is already done. With no such metric, every item that
// no recipe uses is made once.
func (c *Crafter) goals(obs *world.Observation) []craftGoal {
	var out []craftGoal
	if o := obs.Objective; o != nil {
		names := slices.Sorted(maps.Keys(o.SuccessMetrics))
		for _, required := range []bool{true, false} {
			named := false // the objective names an item to make in this pass
			for _, name := range names {
				m := o.SuccessMetrics[name]
				if m.Required != required || m.LowerIsBetter {
					continue
				}
				kind, item, _ := strings.Cut(name, ".")
				r, ok := obs.AvailableRecipes[item]
				if !ok {
					continue
				}
				var have float64
				switch kind {
				case "crafted":
					have = obs.CurrentProgress[name]
				case "inventory":
					have = float64(obs.Inventory[item])
				default:
					continue
				}
				named = true
				if left := int(math.Ceil(m.Target - have)); left > 0 {
					out = append(out, craftGoal{item, (left + max(r.OutputCount, 1) - 1) / max(r.OutputCount, 1)})
				}
			}
			if named {
				return out // when met, nothing is left to make
			}
		}
	}
	// No item in the objective: make every final item once.
	used := map[string]bool{}
	for _, r := range obs.AvailableRecipes {
		for in := range r.Inputs {
			used[in] = true
		}
	}
	for _, item := range slices.Sorted(maps.Keys(obs.AvailableRecipes)) {
		if !used[item] && obs.Inventory[item] == 0 {
			out = append(out, craftGoal{item, 1})
		}
	}
	return out
}

// craftPlan is what is left to do: the crafts, inputs before outputs, and the raw
// materials (items no recipe makes) still to gather.
type craftPlan struct {
	steps []string       // one entry per craft
	raw   map[string]int // item → count still missing
}

// maxRecipeDepth bounds recipe chains (and breaks cycles).
const maxRecipeDepth = 8

// makeCraftPlan expands the goals backwards through the recipes, using what the
// inventory holds first.
func makeCraftPlan(goals []craftGoal, recipes map[string]world.RecipeView, inv map[string]int) craftPlan {
	p := craftPlan{raw: map[string]int{}}
	avail := maps.Clone(inv)
	if avail == nil {
		avail = map[string]int{}
	}
	var need func(item string, n, depth int)
	craft := func(item string, crafts, depth int) {
		r := recipes[item]
		for _, in := range slices.Sorted(maps.Keys(r.Inputs)) {
			need(in, crafts*r.Inputs[in], depth+1)
		}
		for range crafts {
			p.steps = append(p.steps, item)
		}
	}
	need = func(item string, n, depth int) {
		use := min(avail[item], n)
		avail[item] -= use
		n -= use
		if n <= 0 {
			return
		}
		r, ok := recipes[item]
		if !ok || depth >= maxRecipeDepth {
			p.raw[item] += n
			return
		}
		out := max(r.OutputCount, 1)
		crafts := (n + out - 1) / out
		craft(item, crafts, depth)
		avail[item] += crafts*out - n // leftovers serve later needs
	}
	for _, g := range goals {
		craft(g.item, g.crafts, 0)
	}
	return p
}

// craftable lists the planned crafts whose inputs are all carried now, once
// each, in plan order.
func (p *craftPlan) craftable(recipes map[string]world.RecipeView, inv map[string]int) []string {
	var out []string
	for _, item := range p.steps {
		if slices.Contains(out, item) {
			continue
		}
		ok := true
		for in, n := range recipes[item].Inputs {
			if inv[in] < n {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, item)
		}
	}
	return out
}

// summary says what the plan still needs, for reasoning.
func (p *craftPlan) summary() string {
	var parts []string
	if len(p.raw) > 0 {
		var raw []string
		for _, k := range slices.Sorted(maps.Keys(p.raw)) {
			raw = append(raw, fmt.Sprintf("%d %s", p.raw[k], k))
		}
		parts = append(parts, "to gather: "+strings.Join(raw, ", "))
	}
	parts = append(parts, "to craft: "+strings.Join(p.steps, ", "))
	return strings.Join(parts, "; ")
}

// craftTarget is a place worth walking to.
type craftTarget struct {
	key  string // goalFor while walking there
	name string
	pos  world.Vec3
	dist float64
	busy bool // a station seen in use by another agent
	why  string
}

// targets lists, for each craftable item, the nearest known station of its
// type (a free one if any is known), and for each missing raw material the
// nearest known resource of that type.
func (c *Crafter) targets(p craftPlan, craftable []string, obs *world.Observation) []craftTarget {
	var ts []craftTarget
	for _, item := range craftable {
		st := obs.AvailableRecipes[item].StationType
		var best *craftTarget
		for _, s := range c.stations {
			if s.typ != st || c.avoided(s.name, obs.Tick) {
				continue
			}
			t := craftTarget{key: "station:" + s.name, name: s.name, pos: c.approach(s.pos, obs.Position),
				dist: hypot(s.pos[0]-obs.Position[0], s.pos[2]-obs.Position[2]), why: fmt.Sprintf("going to %s to craft %s", s.name, item)}
			for i := range obs.NearbyStations {
				if obs.NearbyStations[i].Name == s.name {
					t.busy = stationInUse(&obs.NearbyStations[i])
				}
			}
			if best == nil || t.busy != best.busy && !t.busy || t.busy == best.busy && t.dist < best.dist {
				best = &t
			}
		}
		if best != nil {
			ts = append(ts, *best)
		}
	}
	if obs.InventoryUsed < obs.InventoryCap {
		for _, typ := range slices.Sorted(maps.Keys(p.raw)) {
			name, pos, ok := c.nearest(obs, func(k *knownResource) bool { return k.typ != typ || c.avoided(k.name, obs.Tick) })
			if ok {
				ts = append(ts, craftTarget{key: "resource:" + name, name: name, pos: pos,
					dist: hypot(pos[0]-obs.Position[0], pos[2]-obs.Position[2]), why: fmt.Sprintf("going to collect %s (%s)", name, typ)})
			}
		}
	}
	return ts
}

// approach is the point one unit from a station on the side of the agent, so
// that agents coming to a station stand around it rather than on it. After a
// move near a station was blocked, the point turns around the station.
func (c *Crafter) approach(station, from world.Vec3) world.Vec3 {
	dx, dz := from[0]-station[0], from[2]-station[2]
	d := hypot(dx, dz)
	if d < 1 {
		return station
	}
	ux, uz := dx/d, dz/d
	sin, cos := math.Sincos(float64(c.turn%6) * math.Pi / 3)
	return c.clamp(world.Vec3{station[0] + ux*cos - uz*sin, station[1], station[2] + ux*sin + uz*cos})
}

// done keeps a crafter that has made everything out of the other agents'
// way: once, it walks to the ground farthest from every station and resource
// it knows of, then idles there.
func (c *Crafter) done(obs *world.Observation) world.Decision {
	if c.moving && c.goalFor == "clear" {
		return world.Idle("the objective's items are made; leaving the stations and resources to the others")
	}
	if !c.parked {
		c.parked = true
		if to := c.parkingSpot(obs.Position); hypot(to[0]-obs.Position[0], to[2]-obs.Position[2]) > 1 {
			return c.move(to, "clear", "the objective's items are made; moving out of the others' way")
		}
	}
	return world.Idle("the objective's items are made")
}

// parkingSpot is the centre of the exploration cell of the window around from
// farthest from every known station and resource (ties: nearest to from,
// then first in cell order).
func (c *Crafter) parkingSpot(from world.Vec3) world.Vec3 {
	best, bestScore, bestD := from, -1.0, math.Inf(1)
	x0, z0 := c.window(from)
	for i := range c.wx * c.wz {
		p := c.centre(x0+i%c.wx, z0+i/c.wx)
		score := math.Inf(1)
		for _, s := range c.stations {
			score = math.Min(score, hypot(p[0]-s.pos[0], p[2]-s.pos[2]))
		}
		for _, k := range c.known {
			score = math.Min(score, hypot(p[0]-k.pos[0], p[2]-k.pos[2]))
		}
		d := hypot(p[0]-from[0], p[2]-from[2])
		if score > bestScore || score == bestScore && d < bestD {
			best, bestScore, bestD = p, score, d
		}
	}
	return best
}

// unknown names something the plan needs that the crafter knows no place for:
// a station type for a craftable item, or a raw material; "" when there is
// none.
func (c *Crafter) unknown(p craftPlan, craftable []string, obs *world.Observation) string {
	for _, item := range craftable {
		st := obs.AvailableRecipes[item].StationType
		if !slices.ContainsFunc(c.stations, func(s knownStation) bool { return s.typ == st && !c.avoided(s.name, obs.Tick) }) {
			return st
		}
	}
	for _, typ := range slices.Sorted(maps.Keys(p.raw)) {
		if !slices.ContainsFunc(c.known, func(k knownResource) bool { return k.typ == typ && !c.avoided(k.name, obs.Tick) }) {
			return typ
		}
	}
	return ""
}

// inUse reports whether another agent is crafting at a station in sight.
func stationInUse(s *world.EntityView) bool { return s.InUse != nil && *s.InUse }
