package world

import (
	"math"

	"github.com/arena-sim/arena/nav"
)

// A Worker builds observations, plans paths and works out agents' walks for
// a world on a goroutine other than the tick goroutine, with scratch memory of
// its own, so that the read-only parts of a tick can run on several cores
// (walks: see walkAhead; observations and paths:
//
//  1. on the tick goroutine, BeginObserve brings the world's lazily built
//     indexes up to date;
//  2. Workers (one per goroutine) call ObserveInto and PlanMove, for
//     different agents, while nothing changes the world;
//  3. back on the tick goroutine, FinishObserve completes each observation
//     (when ObservesWhole is false), and decisions are applied).
//
// What a Worker builds is exactly what the tick goroutine would have built.
type Worker struct {
	w       *World
	cands   []cand
	planner *nav.Planner // a fork of the world's, made on first use
	bodies  []body       // scratch for walks
	tags    []shapeTag
}

// NewWorker returns a Worker for the world. Keep one per goroutine and reuse
// it: it holds the scratch of path searches (a few MB on large maps).
func (w *World) NewWorker() *Worker { return &Worker{w: w} }

// BeginObserve brings up to date, on the tick goroutine, everything that
// ObserveInto would otherwise build on first use (the agents' spatial index,
// the roster, the texts of bridged events), so that Workers only read shared
// state. Call it after the world last changed and before Workers run. It
// changes nothing that observing a living agent would not.
func (w *World) BeginObserve() {
	w.refreshAgentIndex()
	w.roster()
	w.recipeViews()
	w.variablesView()
	b := &w.bridge
	// The digests' length is in the state hash: grow it as the first
	// observation would, and only when there will be one.
	if len(w.rosterIDs) > 0 {
		for len(b.seen) < len(w.agents) {
			b.seen = append(b.seen, 0)
		}
	}
	for k := range b.events {
		if be := &b.events[k]; be.text == "" {
			be.text = w.formatEvent(be.ev)
		}
	}
}

// ObservesWhole reports whether Worker.ObserveInto builds whole observations:
// true unless the world has components, whose sections (and metrics) only the
// tick goroutine may read (see FinishObserve).
func (w *World) ObservesWhole() bool { return len(w.components) == 0 }

// ObserveInto is World.ObserveInto for a Worker's goroutine, between
// BeginObserve and the next change to the world. Different Workers may observe
// different agents at the same time. In a world with components it leaves
// out their sections, objective progress and score: call FinishObserve for
// those on the tick goroutine.
func (k *Worker) ObserveInto(a *Agent, obs *Observation) {
	k.w.observeInto(a, obs, &k.cands, k.w.ObservesWhole())
}

// PlanMove plans ahead, without changing the world, the path that MoveTo(a,
// target, ...) would plan at this tick, and keeps it in the agent: MoveTo uses
// it instead of planning when the agent is still where it was at this tick,
// so the outcome is the same whether or not PlanMove ran. Call it like
// ObserveInto; at most one Worker may plan for an agent at a time.
func (k *Worker) PlanMove(a *Agent, target Vec3) {
	w := k.w
	a.plan = plannedPath{}
	if !a.Alive || a.action.kind == actCraft || !target.Finite() || !w.bounds.Contains(target[0], target[2]) {
		return // MoveTo refuses these
	}
	target = w.moveTarget(target)
	if GroundDist(a.Pos, target) <= w.rules.ArrivalTolerance ||
		a.action.kind == actMove && GroundDist(a.action.target, target) < 1e-6 {
		return // MoveTo plans nothing (or likely nothing) for these
	}
	if k.planner == nil {
		k.planner = w.planner.Fork()
	}
	path, err := w.planPath(k.planner, a.Pos, target)
	a.plan = plannedPath{valid: true, tick: w.tick, from: a.Pos, to: target, path: path, err: err}
}

// plannedPath is a path planned ahead by a Worker for one agent.
type plannedPath struct {
	valid    bool
	tick     int
	from, to Vec3
	path     []Vec3
	err      error
}

// take returns the planned path (or planning error) and clears it; ok is
// false unless it was planned at tick from from to to.
func (p *plannedPath) take(tick int, from, to Vec3) (planned plannedPath, ok bool) {
	planned, *p = *p, plannedPath{}
	return planned, planned.valid && planned.tick == tick && planned.from == from && planned.to == to
}

// ParallelFor calls fn(k, i) for every i in [0, n), spread over goroutines,
// each with a Worker of its own, and returns once every call has returned.
// engine's worker pool is one.
type ParallelFor func(n int, fn func(k *Worker, i int))

// walkAhead works out on the Workers, through each, the walk of every walking
// agent against where every body stands now, before any of them moves. It
// reports false when there was nothing worth doing ahead.
//
// Agents move one at a time, each against where the ones before it ended
// up, so a walk worked out ahead is what moving the agent would give unless
// an agent that moved before it came within reach of a position the walk
// tested (takeWalk checks that).
func (w *World) walkAhead(each ParallelFor) bool {
	walkers := w.walkers[:0]
	for _, a := range w.agents {
		if a.Alive && a.action.kind == actMove {
			walkers = append(walkers, int32(a.index))
		}
	}
	w.walkers = walkers
	if len(walkers) < 2 {
		return false
	}
	for len(w.walks) < len(w.agents) {
		w.walks = append(w.walks, walk{})
	}
	w.moved.reset(w.bounds)
	each(len(walkers), func(k *Worker, j int) {
		a := w.agents[walkers[j]]
		w.walks[a.index] = k.walk(a)
	})
	return true
}

// walk works out an agent's walk ahead (see walkAhead), and the path that
// checkProgress would re-plan at its end.
func (k *Worker) walk(a *Agent) walk {
	w := k.w
	k.bodies = w.nearBodies(a.Pos[0], a.Pos[2], a.action.speed+w.rules.AgentRadius+collisionSkin, a.index, &k.tags, k.bodies[:0])
	wk := w.walkAgent(a, k.bodies)
	wk.ok = true
	if pos := w.ground(wk.x, wk.z); !a.action.replanned && !w.arrived(a, pos) {
		if due, stuck := w.progress(a, pos); due && stuck {
			if k.planner == nil {
				k.planner = w.planner.Fork()
			}
			wk.replan, wk.planErr = w.planPath(k.planner, pos, a.action.target)
			wk.planned = true
		}
	}
	return wk
}

// takeWalk returns, and forgets, the agent's walk worked out ahead; ok is
// false when there is none, when it is tangled, or when an agent that moved
// before it could change it: one that pushed it (it pushes from elsewhere
// now, if at all), or one that went near enough to a position the walk
// tested to push the agent there. The agents that moved away from where the
// walk saw them without pushing it change nothing: it never touched them.
func (w *World) takeWalk(a *Agent) (wk walk, ok bool) {
	wk, w.walks[a.index] = w.walks[a.index], walk{}
	if !wk.ok || wk.tangled {
		return walk{}, false
	}
	for _, i := range wk.pushers[:wk.npush] {
		if w.moved.moved(int(i)) {
			return walk{}, false
		}
	}
	// Every position tested lies within spread of the start; an agent body
	// pushes only closer than two radii. The margin covers rounding.
	reach := math.Sqrt(wk.spread2) + 2*w.rules.AgentRadius + 1e-6
	if w.moved.near(a.Pos[0], a.Pos[2], reach) {
		return walk{}, false
	}
	return wk, true
}

// movedGrid holds the agents that have moved so far in this tick's
// movement, and where they went, in a bucket grid.
type movedGrid struct {
	minX, minZ float64
	cols, rows int
	head       []int32 // per cell: 1 + the index in pts of its latest point, when stamp is epoch
	stamp      []uint32
	epoch      uint32
	pts        []movedPoint
	agents     []uint32 // by agent index: epoch when it moved
}

type movedPoint struct {
	x, z float64
	next int32 // 1 + the index of the cell's previous point; 0: none
}

// movedCell is the side of a movedGrid cell in world units.
const movedCell = 4

// reset empties the grid, sizing it for bounds.
func (g *movedGrid) reset(b Bounds) {
	if g.cols == 0 {
		g.minX, g.minZ = b.MinX, b.MinZ
		g.cols = int(b.Width()/movedCell) + 1
		g.rows = int(b.Depth()/movedCell) + 1
		g.head = make([]int32, g.cols*g.rows)
		g.stamp = make([]uint32, g.cols*g.rows)
	}
	g.epoch++
	if g.epoch == 0 { // wrapped: forget every stamp
		clear(g.stamp)
		clear(g.agents)
		g.epoch = 1
	}
	g.pts = g.pts[:0]
}

// cell returns the cell of (x, z), clamped into the grid.
func (g *movedGrid) cell(x, z float64) (int, int) {
	cx := clampInt(int(math.Floor((x-g.minX)/movedCell)), 0, g.cols-1)
	cz := clampInt(int(math.Floor((z-g.minZ)/movedCell)), 0, g.rows-1)
	return cx, cz
}

func clampInt(v, lo, hi int) int { return max(lo, min(v, hi)) }

// add notes that agent i moved to (x, z).
func (g *movedGrid) add(i int, x, z float64) {
	for len(g.agents) <= i {
		g.agents = append(g.agents, 0)
	}
	g.agents[i] = g.epoch
	cx, cz := g.cell(x, z)
	c := cz*g.cols + cx
	next := int32(0)
	if g.stamp[c] == g.epoch {
		next = g.head[c]
	}
	g.pts = append(g.pts, movedPoint{x: x, z: z, next: next})
	g.head[c], g.stamp[c] = int32(len(g.pts)), g.epoch
}

// moved reports whether agent i has moved.
func (g *movedGrid) moved(i int) bool { return i < len(g.agents) && g.agents[i] == g.epoch }

// near reports whether a point of the grid lies closer than r to (x, z).
func (g *movedGrid) near(x, z, r float64) bool {
	if len(g.pts) == 0 {
		return false
	}
	cx0, cz0 := g.cell(x-r, z-r)
	cx1, cz1 := g.cell(x+r, z+r)
	for cz := cz0; cz <= cz1; cz++ {
		for cx := cx0; cx <= cx1; cx++ {
			c := cz*g.cols + cx
			if g.stamp[c] != g.epoch {
				continue
			}
			for p := g.head[c]; p != 0; p = g.pts[p-1].next {
				q := &g.pts[p-1]
				if dx, dz := q.x-x, q.z-z; dx*dx+dz*dz < r*r {
					return true
				}
			}
		}
	}
	return false
}
