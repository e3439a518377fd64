package world

import "github.com/arena-sim/arena/nav"

// A Worker builds observations and plans paths for a world on a goroutine
// other than the tick goroutine, with scratch memory of its own, so that the
// read-only parts of a tick can run on several cores:
//
//  1. on the tick goroutine, BeginObserve brings the world's lazily built
//     indexes up to date;
//  2. Workers (one per goroutine) call ObserveInto and PlanMove, for
//     different agents, while nothing changes the world;
//  3. back on the tick goroutine, FinishObserve completes each observation
//     (when ObservesWhole is false), and decisions are applied;
//  4. StepWith walks the agents of two parts of the map on two Workers'
//     goroutines.
//
// What a Worker builds is exactly what the tick goroutine would have built.
type Worker struct {
	w       *World
	scratch observeScratch
	planner *nav.Planner // a fork of the world's, made on first use
	walk    walkScratch  // for the walks of a parallel step (StepWith)
}

// walkScratch is the Worker's scratch for walks, with its planner.
func (k *Worker) walkScratch() *walkScratch {
	if k.planner == nil {
		k.planner = k.w.planner.Fork()
	}
	k.walk.planner, k.walk.buffered = k.planner, true
	return &k.walk
}

// NewWorker returns a Worker for the world. Keep one per goroutine and reuse
// it: it holds the scratch of path searches (a few MB on large maps).
func (w *World) NewWorker() *Worker { return &Worker{w: w} }

// BeginObserve brings up to date, on the tick goroutine, everything that
// ObserveInto would otherwise build on first use (the agents' spatial index,
// the roster, the texts of bridged events), so that Workers only read what
// they share. Call it after the world last changed and before Workers run. It
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
	k.w.observeInto(a, obs, &k.scratch, k.w.ObservesWhole(), false)
}

// ObserveCompact is ObserveInto for an observation that only a wire encoder
// reads (a server's, sent to its client): its lists of agents, resources,
// obstacles and hazards in view stay empty, and references into views of
// those entities that every observation of the decision point shares stand
// for them (Observation.Compact), so that no entity's view is written or
// encoded once per agent that sees it. Expand turns it into the ordinary
// observation. (Stations are listed whole: whether one is in use depends on
// who looks.) Call World.PrepareCompactObserve after BeginObserve first.
func (k *Worker) ObserveCompact(a *Agent, obs *Observation) {
	k.w.observeInto(a, obs, &k.scratch, k.w.ObservesWhole(), true)
}

// PrepareCompactObserve builds the views of the entities that the compact
// observations of this decision point share (Worker.ObserveCompact). Call
// it on the tick goroutine after BeginObserve, and only after the compact
// observations of the previous decision point that are still read were
// expanded (Observation.Expand): it rebuilds those views in place.
func (w *World) PrepareCompactObserve() {
	v := &w.compactViews
	// fill builds list l's n views; those that never change (obstacles and
	// hazards are as New made them) only once.
	fill := func(l ViewList, n int, changing bool, view func(i int) EntityView) {
		built := v[l] != nil && len(v[l]) == n
		if built && !changing {
			return
		}
		if !built {
			v[l] = make([]EntityView, n)
		}
		for i := range n {
			v[l][i] = view(i)
		}
	}
	fill(AgentsInView, len(w.agentByRank), true, func(r int) EntityView { return w.agents[w.agentByRank[r]].view(0) })
	fill(ResourcesInView, len(w.resources), true, func(i int) EntityView { return w.resources[i].view(0) })
	fill(ObstaclesInView, len(w.obstacles), false, func(i int) EntityView { return w.obstacles[i].view(0) })
	fill(HazardsInView, len(w.hazards), false, func(i int) EntityView { return w.hazards[i].view(0) })
}

// PlanMove plans ahead, without changing the world, the path that MoveTo(a,
// target, speedMul) would plan at this tick, and the data of the result that
// starts the walk, and keeps them in the agent: MoveTo uses them instead of
// planning when the agent is still where it was at this tick (and the data
// when the speed is still the same), so the outcome is the same whether or
// not PlanMove ran. Call it like ObserveInto; at most one Worker may plan for
// an agent at a time.
func (k *Worker) PlanMove(a *Agent, target Vec3, speedMul float64) {
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
	if err == nil { // MoveTo refuses a speed out of range before it looks at the data
		p := &a.plan
		p.speed, p.capped = w.moveSpeed(a, speedMul)
		p.data = w.moveData(a.Pos, target, path, p.speed, p.capped)
	}
}

// plannedPath is a path planned ahead by a Worker for one agent.
type plannedPath struct {
	valid    bool
	tick     int
	from, to Vec3
	path     []Vec3
	err      error
	// data is the result's data for a walk at speed (capped: the cap cut
	// the multiplier asked for); nil when not worked out.
	data   map[string]any
	speed  float64
	capped bool
}

// take returns the planned path (or planning error) and clears it; ok is
// false unless it was planned at tick from from to to.
func (p *plannedPath) take(tick int, from, to Vec3) (planned plannedPath, ok bool) {
	planned, *p = *p, plannedPath{}
	return planned, planned.valid && planned.tick == tick && planned.from == from && planned.to == to
}
