package bots

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/arena-sim/arena/world"
)

// CaptureTeam is the built-in team capture agent ("capture_team"). Every
// member of a team runs the same deterministic plan on what the whole team
// knows alike: the capture points (owner, progress, capturing team,
// contested), which are public, and the team's own members and their
// positions (the observation's teammates). So the members split the points
// between them without talking, and each takes its own part:
//
//  1. Members inside a point that the team is capturing, or that is contested,
//     or that the team owns while an enemy is taking it, stay there.
//  2. Points to defend (owned, with an enemy capturing it or a tie inside),
//     then points to capture (not owned), get the nearest free member each,
//     in that order; points to capture are ranked by their distance from the
//     team's starting centroid, so the team splits the near points first.
//  3. Free members left over guard the owned points, one each, then reinforce
//     the points of step 2 in turn, so that a majority breaks a tie.
//
// A point that is lost becomes a point to capture again, and an enemy stepping
// onto an owned point shows as its capturing team, which makes it a point to
// defend. A member keeps walking to the point it chose while that point still
// needs it, unless the plan now asks it to defend; a member that has spent
// giveUpTicks in a tie at a point its team does not own leaves it alone for
// banTicks. Members spread out around a point's centre so that they do not
// block one another, and tell their team (send_message "team") where they are
// going. Nothing depends on map order or chance.
type CaptureTeam struct {
	info      Info
	home      world.Vec3 // the team's centroid at the first observation
	homeSet   bool
	goalPoint string         // the point the current move leads to
	announced string         // the last point announced to the team
	tied      int            // ticks spent inside goalPoint while it was contested
	banned    map[string]int // point → tick until which this member leaves it alone
}

const (
	giveUpTicks = 100 // a tie at a point to capture lasting this long is given up...
	banTicks    = 150 // ...for this long
)

// NewCaptureTeam creates a team capture agent.
func NewCaptureTeam(info Info) *CaptureTeam {
	return &CaptureTeam{info: info, banned: map[string]int{}}
}

// capMember is one living agent of the team, as all members see it.
type capMember struct {
	id    string
	pos   world.Vec3
	order int // index in agent_ids (scenario order)
}

// capTask is a capture point with what the team has to do there.
type capTask struct {
	p        *world.EntityView
	priority int
	homeDist float64
}

// Task priorities, most urgent first.
const (
	prioDefend  = iota // an owned point that an enemy is taking, or with a tie inside
	prioCapture        // a point the team does not own
	prioGuard          // an owned point nobody threatens
)

// Decide implements Bot.
func (c *CaptureTeam) Decide(_ context.Context, obs *world.Observation) world.Decision {
	if !obs.Alive {
		return world.Idle("dead")
	}
	if len(obs.CapturePoints) == 0 {
		return world.Idle("no capture points in this world")
	}
	members := capMembers(obs)
	if !c.homeSet {
		for _, m := range members {
			c.home[0] += m.pos[0] / float64(len(members))
			c.home[2] += m.pos[2] / float64(len(members))
		}
		c.homeSet = true
	}
	tasks := c.tasks(obs)
	find := func(name string) int {
		return slices.IndexFunc(tasks, func(t capTask) bool { return t.p.Name == name })
	}
	// A long tie at a point to capture is given up for a while.
	if g := find(c.goalPoint); g >= 0 {
		p := tasks[g].p
		if p.Contested && capDist(obs.Position, p.Position) <= p.Radius {
			c.tied++
		} else {
			c.tied = 0
		}
		if c.tied >= giveUpTicks && tasks[g].priority == prioCapture {
			c.banned[p.Name] = obs.Tick + banTicks
			c.goalPoint, c.tied = "", 0
		}
	}
	banned := func(j int) bool { return obs.Tick < c.banned[tasks[j].p.Name] }
	assign := capPlan(obs.Team, members, tasks, banned)
	mine := assign[0] // members[0] is this agent
	// Keep the point already chosen while it still needs this member, unless
	// the plan asks it to defend.
	if g := find(c.goalPoint); g >= 0 && g != mine && !banned(g) &&
		tasks[g].priority != prioGuard && tasks[g].priority <= tasks[mine].priority {
		mine = g
		assign[0] = g
	}
	p := tasks[mine].p
	slot := 0
	for i, m := range members {
		if i > 0 && assign[i] == mine && m.order < members[0].order {
			slot++
		}
	}
	why := [...]string{"defending", "capturing", "guarding"}[tasks[mine].priority]
	d := capDist(obs.Position, p.Position)
	moving := obs.CurrentAction.Status == "moving"
	switch {
	case c.goalPoint != p.Name:
		c.tied = 0
		return c.move(p.Name, capSpot(p, slot), fmt.Sprintf("%s %s (%.1f away)", why, p.Name, d))
	case moving:
		// keep walking
	case d > p.Radius-0.7:
		return c.move(p.Name, capSpot(p, slot), fmt.Sprintf("%s %s: not inside yet (%.1f from its centre)", why, p.Name, d))
	}
	if obs.Team != "" && c.announced != p.Name {
		c.announced = p.Name
		return world.Decision{Tool: "send_message", Params: map[string]any{"target_agent": "team",
			"message": fmt.Sprintf("%s: %s %s", obs.AgentID, why, p.Name)}, Reasoning: "telling the team where I am going"}
	}
	if moving {
		return world.Idle(fmt.Sprintf("walking to %s", p.Name))
	}
	return world.Idle(fmt.Sprintf("%s %s", why, p.Name))
}

func (c *CaptureTeam) move(point string, to world.Vec3, reason string) world.Decision {
	c.goalPoint = point
	return world.Decision{Tool: "move_to", Params: map[string]any{"target": []any{to[0], to[1], to[2]}}, Reasoning: reason}
}

// capMembers returns this agent first, then its living teammates in scenario order.
func capMembers(obs *world.Observation) []capMember {
	order := func(id string) int {
		if i := slices.Index(obs.AgentIDs, id); i >= 0 {
			return i
		}
		return len(obs.AgentIDs)
	}
	ms := []capMember{{id: obs.AgentID, pos: obs.Position, order: order(obs.AgentID)}}
	for _, t := range obs.Teammates {
		ms = append(ms, capMember{id: t.Name, pos: t.Position, order: order(t.Name)})
	}
	slices.SortFunc(ms[1:], func(a, b capMember) int { return cmp.Or(cmp.Compare(a.order, b.order), cmp.Compare(a.id, b.id)) })
	return ms
}

// tasks lists every capture point with its priority for the team, most
// urgent first, then nearest the team's home, then by name.
func (c *CaptureTeam) tasks(obs *world.Observation) []capTask {
	ts := make([]capTask, 0, len(obs.CapturePoints))
	for i := range obs.CapturePoints {
		p := &obs.CapturePoints[i]
		t := capTask{p: p, priority: prioCapture, homeDist: capDist(c.home, p.Position)}
		if obs.Team != "" && p.Owner == obs.Team {
			t.priority = prioGuard
			if p.Contested || (p.Capturing != "" && p.Capturing != obs.Team) {
				t.priority = prioDefend
			}
		}
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b capTask) int {
		return cmp.Or(cmp.Compare(a.priority, b.priority), cmp.Compare(a.homeDist, b.homeDist), cmp.Compare(a.p.Name, b.p.Name))
	})
	return ts
}

// capPlan gives every member a task index. Every member of the team computes
// the same plan from the same facts, except for the points it has given up
// (banned(j) applies to members[0], this agent, only).
func capPlan(team string, members []capMember, tasks []capTask, banned func(j int) bool) []int {
	assign := make([]int, len(members))
	covered := make([]bool, len(tasks))
	free := len(members)
	for i := range assign {
		assign[i] = -1
	}
	allowed := func(i, j int) bool { return i > 0 || !banned(j) }
	// 1. Members inside a point being captured by the team, contested, or
	// under attack stay there.
	for i, m := range members {
		for j, t := range tasks {
			p := t.p
			hold := p.Contested || (team != "" && p.Capturing == team) || t.priority == prioDefend
			if hold && allowed(i, j) && capDist(m.pos, p.Position) <= p.Radius {
				assign[i], covered[j] = j, true
				free--
				break
			}
		}
	}
	nearest := func(j int, ban bool) bool {
		best, bestD := -1, math.Inf(1)
		for i, m := range members {
			if assign[i] >= 0 || (ban && !allowed(i, j)) {
				continue
			}
			if d := capDist(m.pos, tasks[j].p.Position); best < 0 || d < bestD || (d == bestD && m.order < members[best].order) {
				best, bestD = i, d
			}
		}
		if best < 0 {
			return false
		}
		assign[best], covered[j] = j, true
		free--
		return true
	}
	// 2. One member for each point to defend or capture, then one guard for
	// each owned point.
	for _, guard := range []bool{false, true} {
		for j, t := range tasks {
			if free > 0 && !covered[j] && (t.priority == prioGuard) == guard {
				nearest(j, true)
			}
		}
	}
	// 3. The rest reinforce the points to defend or capture, in turn (or guard,
	// when the team owns every point).
	var extra []int
	for j, t := range tasks {
		if t.priority != prioGuard {
			extra = append(extra, j)
		}
	}
	if len(extra) == 0 {
		for j := range tasks {
			extra = append(extra, j)
		}
	}
	for stuck := 0; free > 0 && stuck < len(extra); {
		for _, j := range extra {
			if free > 0 && nearest(j, true) {
				stuck = 0
			} else {
				stuck++
			}
		}
	}
	// Whoever is left (this agent, with every such point given up) takes the
	// nearest point regardless.
	for free > 0 {
		best := -1
		for j := range tasks {
			if best < 0 || capDist(members[0].pos, tasks[j].p.Position) < capDist(members[0].pos, tasks[best].p.Position) {
				best = j
			}
		}
		nearest(best, false)
	}
	return assign
}

// capSpot is where the slot-th member sent to a point stands: the centre for
// the first, around it for the others, well inside the radius.
func capSpot(p *world.EntityView, slot int) world.Vec3 {
	if slot == 0 {
		return p.Position
	}
	r := math.Min(1.5, p.Radius*0.5)
	a := float64(slot) * 2.399963 // the golden angle spreads the slots evenly
	return world.Vec3{p.Position[0] + r*math.Cos(a), p.Position[1], p.Position[2] + r*math.Sin(a)}
}

func capDist(a, b world.Vec3) float64 {
	dx, dz := a[0]-b[0], a[2]-b[2]
	return math.Sqrt(dx*dx + dz*dz)
}
