package bots

import (
	"context"
	"fmt"

	"github.com/arena-sim/arena/world"
)

// Forager is the reference forager: it steps out of hazards, walks to the
// nearest visible resource and collects it, and explores unseen ground when it
// sees nothing to collect.
type Forager struct {
	explorer
	resourceMemory             // resources seen before, at most maxKnown
	failure        failureMemo // the last failure already acted on
	avoid          avoidList   // resources skipped for now
	goal           world.Vec3  // where the current move_to leads
	goalFor        string      // resource name, "explore" or "flee"
	moving         bool
}

// NewForager creates a forager for one agent.
func NewForager(info Info) *Forager {
	return &Forager{explorer: newExplorer(info, botRand(info)), avoid: avoidList{}}
}

func (f *Forager) move(to world.Vec3, why, reason string) world.Decision {
	f.goal, f.goalFor, f.moving = to, why, true
	return moveTo(to, reason)
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
	if r := obs.LastActionResult; r != nil && !r.Success && !f.failure.seen(r) {
		if d := f.onFailure(r, obs); d != nil {
			return *d
		}
	}

	// 1. Get out of hazards (and off their edges).
	if inHazardRange(obs) {
		if f.moving && f.goalFor == "flee" {
			return world.Idle("leaving a hazard")
		}
		to, reason, _ := f.hazardEscape(obs)
		return f.move(to, "flee", reason)
	}

	// 2. Collect what is in reach, or walk to the nearest resource, seen now or
	// remembered, that no other agent in sight is clearly closer to.
	f.remember(obs, 0.7*obs.PerceptionRadius)
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
		f.avoid.skip(goalFor, obs.Tick)
	}
	return nil
}

func (f *Forager) avoided(name string, tick int) bool { return f.avoid.avoided(name, tick) }

// pickResource chooses the nearest remembered resource (visible ones are
// remembered too) that no visible agent is clearly closer to; ties go by name.
func (f *Forager) pickResource(obs *world.Observation) (string, world.Vec3, bool) {
	return f.nearest(obs, func(k *knownResource) bool { return f.avoided(k.name, obs.Tick) })
}
