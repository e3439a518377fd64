// Package engine owns the tick loop: the one goroutine that owns a world. At
// each decision point it builds every agent's observation, asks its controller
// for a decision, applies the decisions through the tool registry in a seeded
// order, steps the world, and records the tick in the journal. It also gathers
// an episode's results. Transports (the IPC server) plug in as Controllers.
package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime/pprof"
	"runtime/trace"
	"slices"

	"github.com/arena-sim/arena/internal/prefetch"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// Controller decides for one agent. Built-in bots run in-process; remote agents
// are controllers backed by a connection.
type Controller interface {
	Decide(ctx context.Context, obs *world.Observation) world.Decision
}

// A Prefetcher is a Controller whose state is worth asking the processor
// for ahead of Decide, in a loop over thousands of agents (see
// World.PrefetchObserve): Prefetch only brings it into the caches. The
// runner calls it only for a ConcurrentController that decides
// concurrently, on the worker goroutine that will decide for it, while
// other workers decide for other agents: it must not read state that
// another controller's Decide changes.
type Prefetcher interface {
	Prefetch()
}

// Gatherer collects the decisions of one decision point. The runner calls it
// on the world's own goroutine, with the observation of every living agent (nil
// for dead ones), so it may read the world (to answer mid-turn queries, say)
// while it waits. It fills decisions; an empty Tool means no decision.
type Gatherer interface {
	Gather(ctx context.Context, tick int, obs []*world.Observation, decisions []world.Decision) error
}

// Streamer is implemented by Gatherers that want observations as soon as
// they are built, before the others (a server sends them on their way, so
// that agents think while the rest are built). Observed gets them in runs:
// obs[k] is the observation of the agent at index lo+k, nil for a dead
// agent; every living agent's comes in exactly one run, in no set order of
// runs. Gather is still called with all of them.
type Streamer interface {
	Observed(tick, lo int, obs []*world.Observation)
}

// A CompactStreamer is a Streamer that takes compact observations
// (world.Worker.ObserveCompact) of some agents: those whose observation
// nothing but a wire encoder reads until the next decision point, such as
// a lockstep server's remote agents. Compact reports, at each decision
// point, whether the agent at index i is one. The runner builds compact
// observations on several workers only, and not when OnObserve or
// KeepObservations asks for every observation whole.
type CompactStreamer interface {
	Streamer
	Compact(i int) bool
}

// ConcurrentController is a Controller whose Decide may run on any goroutine
// at the same time as other agents' controllers, because it reads only its
// observation and its own state and draws any randomness from a stream of its
// own. The runner then decides for such agents on its workers; the others
// still decide one at a time on the tick goroutine, in agent order. Decide
// must not keep obs, or its slices and maps, once it returns: unless the
// runner keeps observations (Runner.KeepObservations), the next agent's is
// built in the same memory.
type ConcurrentController interface {
	Controller
	DecidesConcurrently() bool
}

// Controllers is the Gatherer of in-process agents: each decides in turn.
type Controllers map[string]Controller

// Gather implements Gatherer.
func (cs Controllers) Gather(ctx context.Context, _ int, obs []*world.Observation, decisions []world.Decision) error {
	for i, o := range obs {
		if o == nil {
			continue
		}
		if c := cs[o.AgentID]; c != nil {
			decisions[i] = c.Decide(ctx, o)
		}
	}
	return nil
}

// Runner steps one episode. Set the fields, then call Run. Fields left zero take
// defaults: DecisionPeriod 1, MaxTicks the objective's time limit (or 1000).
type Runner struct {
	World *world.World
	Tools *tools.Registry
	// Controllers by agent id. An agent without one idles. Ignored when
	// Gatherer is set. Run reads the map (and whether each controller
	// decides concurrently) once, when it starts: changing it during a run
	// has no effect on that run.
	Controllers map[string]Controller
	// Gatherer, when set, collects every decision point's decisions.
	Gatherer       Gatherer
	DecisionPeriod int
	MaxTicks       int
	// Journal, when set, records every tick.
	Journal *Journal
	// OnTick, when set, is called after every tick (progress bars, viewers)
	// with the tick's record: its number (the world is now at Tick+1), its
	// decisions and events, and, when journaling or Record is set, its state
	// hash. The record is valid until the next tick.
	OnTick func(rec *TickRecord)
	// Record fills every tick's state hash for OnTick even without a
	// journal.
	Record bool
	// OmitDecisions leaves the records OnTick gets without their Decisions
	// when there is no journal: a caller that only counts ticks (a bench)
	// spares the tick goroutine a record of every decision.
	OmitDecisions bool
	// OnObserve, when set, is called at every decision point once every
	// living agent's observation is built (nil for dead ones), before the
	// decisions are gathered: viewers keep the one they inspect. The
	// observations are reused by the next decision point; copy what you keep.
	OnObserve func(tick int, obs []*world.Observation)
	// KeepObservations keeps every living agent's observation until the
	// next decision point, for Observation. Without it, when nothing else
	// needs them (no Gatherer, no OnObserve, and, on several workers, no
	// components, whose sections the tick goroutine adds), the observation
	// of an agent whose controller decides concurrently is built in scratch
	// memory of the goroutine that builds it, decided on at once and not
	// kept: writing a few kilobytes per agent to memory at every decision
	// point is spared, and Observation returns nil for that agent. It may
	// change between ticks.
	KeepObservations bool
	// Workers is how many goroutines build observations, run concurrent
	// controllers and plan paths at a decision point (0: GOMAXPROCS). The
	// world's state is the same at every tick whatever their number:
	// workers read the world and apply only decisions that commute with
	// every other (idle), and the others are applied on the tick goroutine
	// in the seeded order.
	Workers int

	pool   pool
	labels context.Context // the helpers' profile labels (Run)
	// minParallel: see pool (set by tests through export_test.go).
	minParallel int
	obs         map[string]*world.Observation
	obsList     []*world.Observation
	order       []int
	// ctrls and conc hold, by agent index, the agent's controller and
	// whether it decides concurrently, read from Controllers when Run
	// starts: looking up 16,000 ids in a map at every decision point was
	// 5% of a tick.
	ctrls     []Controller
	conc      []bool
	decisions []world.Decision
	scratch   world.Observation // the one-worker decision point's
	rng       *rand.Rand
}

// TickRecord is one tick as the journal keeps it.
type TickRecord struct {
	Tick      int             `json:"tick"`
	Decisions []DecisionEntry `json:"decisions,omitempty"`
	Events    []world.Event   `json:"events,omitempty"`
	Hash      string          `json:"hash"`
}

// DecisionEntry is one applied decision and its outcome.
type DecisionEntry struct {
	Agent     string             `json:"agent"`
	Tool      string             `json:"tool"`
	Params    map[string]any     `json:"params,omitempty"`
	Reasoning string             `json:"reasoning,omitempty"`
	TimedOut  bool               `json:"timed_out,omitempty"`
	Result    world.ActionResult `json:"result"`
}

// Run plays the episode until the world is done, MaxTicks pass, or ctx is
// cancelled (reason "stopped"), and returns the results.
func (r *Runner) Run(ctx context.Context) (*Results, error) {
	w := r.World
	if r.Tools == nil {
		reg, err := tools.ForWorld(w)
		if err != nil {
			return nil, fmt.Errorf("build tool registry: %w", err)
		}
		r.Tools = reg
	}
	period := max(r.DecisionPeriod, 1)
	maxTicks := r.MaxTicks
	if maxTicks <= 0 {
		maxTicks = w.Objective().TimeLimit
	}
	if maxTicks <= 0 {
		maxTicks = 1000
	}
	r.obs = make(map[string]*world.Observation, len(w.Agents()))
	r.readControllers()
	r.pool.obs = r.pool.obs[:0]
	// The helpers' time shows in CPU profiles under the labels of ctx
	// and tick=worker (go tool pprof -tagfocus tick=worker).
	r.labels = pprof.WithLabels(ctx, pprof.Labels("tick", "worker"))
	r.rng = w.Rand("decision_order")
	defer r.pool.release() // helpers woken ahead for a tick that did not come
	reason := ""
	for reason == "" {
		if err := ctx.Err(); err != nil {
			reason = "stopped"
			break
		}
		rec, err := r.step(ctx, period)
		if err != nil {
			return nil, err
		}
		if r.Journal != nil {
			if err := r.Journal.WriteTick(rec); err != nil {
				return nil, fmt.Errorf("journal tick %d: %w", rec.Tick, err)
			}
		}
		if r.OnTick != nil {
			r.OnTick(&rec)
		}
		if done, why := w.Done(); done {
			reason = why
		} else if w.Tick() >= maxTicks {
			reason = "time_limit"
		}
	}
	res := Collect(w, reason)
	for i := range res.Agents {
		// Collect lists the agents in order: the usage is that of the
		// controller that decided.
		if u, ok := r.ctrls[i].(UsageReporter); ok && r.Gatherer == nil {
			v := u.Usage()
			res.Agents[i].Usage = &v
		}
	}
	if r.Journal != nil {
		if err := r.Journal.WriteEnd(res); err != nil {
			return nil, fmt.Errorf("journal end: %w", err)
		}
	}
	return res, nil
}

// readControllers reads Controllers into r.ctrls and r.conc, by agent index.
func (r *Runner) readControllers() {
	agents := r.World.Agents()
	r.ctrls = slices.Grow(r.ctrls[:0], len(agents))[:len(agents)]
	r.conc = slices.Grow(r.conc[:0], len(agents))[:len(agents)]
	for i, a := range agents {
		c := r.Controllers[a.ID]
		cc, ok := c.(ConcurrentController)
		r.ctrls[i], r.conc[i] = c, ok && cc.DecidesConcurrently()
	}
}

// concurrentController returns the controller of the agent at index i if
// it may decide on a worker, or nil. Run must have read the controllers.
func (r *Runner) concurrentController(i int) Controller {
	if r.conc[i] {
		return r.ctrls[i]
	}
	return nil
}

// prefetch asks for what observing the agents of order after order[j], and
// their controllers deciding, will read (World.PrefetchObserve).
func (r *Runner) prefetch(order []int, j int) {
	if !r.World.Prefetching() {
		return
	}
	r.World.PrefetchObserve(order, j)
	if k := j + world.PrefetchAhead; k < len(order) && order[k] < len(r.ctrls) && r.conc[order[k]] {
		if p, ok := r.ctrls[order[k]].(Prefetcher); ok {
			p.Prefetch()
		}
	}
}

// byIndex is the Gatherer of in-process agents by agent index (Runner.ctrls):
// Controllers without a map lookup per agent.
type byIndex []Controller

// Gather implements Gatherer.
func (cs byIndex) Gather(ctx context.Context, _ int, obs []*world.Observation, decisions []world.Decision) error {
	cs.decide(ctx, obs, decisions, nil)
	return nil
}

// decide asks, in agent order, each agent with an observation and a
// controller for its decision, but those done reports (when not nil).
func (cs byIndex) decide(ctx context.Context, obs []*world.Observation, decisions []world.Decision, done func(i int) bool) {
	for i, o := range obs {
		if o != nil && cs[i] != nil && (done == nil || !done(i)) {
			decisions[i] = cs[i].Decide(ctx, o)
		}
	}
}

// Observation is the agent's latest observation (for a dead agent, its
// last one alive), or nil before its first and when it was not kept (see
// KeepObservations). It may be compact (see CompactStreamer): call its
// Expand before reading its lists of entities in view. Call it on the runner's
// goroutine (from OnTick, OnObserve or a Gatherer); the observation is
// rebuilt at the next decision point.
func (r *Runner) Observation(agentID string) *world.Observation { return r.obs[agentID] }

// keepsAll reports whether every observation is kept: asked for, or read
// by more than the agent's controller (a Gatherer, OnObserve).
func (r *Runner) keepsAll() bool {
	return r.KeepObservations || r.Gatherer != nil || r.OnObserve != nil
}

// kept returns the observation the runner keeps for agent a, at index i,
// making it on first use.
func (r *Runner) kept(i int, a *world.Agent) *world.Observation {
	p := &r.pool
	if len(p.obs) <= i {
		p.obs = append(p.obs, make([]*world.Observation, i+1-len(p.obs))...)
	}
	if p.obs[i] == nil {
		p.obs[i] = &world.Observation{}
		r.obs[a.ID] = p.obs[i]
	}
	return p.obs[i]
}

// unkeep forgets the observation kept for agent a, at index i: the agent's
// observations are now built in scratch.
func (r *Runner) unkeep(i int, a *world.Agent) {
	if p := &r.pool; i < len(p.obs) && p.obs[i] != nil {
		p.obs[i] = nil
		delete(r.obs, a.ID)
	}
}

// step runs one tick: decisions (at decision points), then the world step.
func (r *Runner) step(ctx context.Context, period int) (TickRecord, error) {
	w := r.World
	tick := w.Tick()
	rec := TickRecord{Tick: tick}
	defer trace.StartRegion(ctx, "tick").End()
	if tick%period == 0 && r.workers() > 1 {
		if err := r.decideParallel(ctx, tick); err != nil {
			return rec, err
		}
		reg := trace.StartRegion(ctx, "apply")
		r.apply(tick, &rec, r.pool.preps, r.pool.results)
		reg.End()
	} else if tick%period == 0 {
		agents := w.Agents()
		decisions := r.decisions[:0]
		decisions = append(decisions, make([]world.Decision, len(agents))...)
		r.decisions = decisions
		g := r.Gatherer
		if g == nil {
			g = byIndex(r.ctrls)
		}
		stream, _ := g.(Streamer)
		obs := append(r.obsList[:0], make([]*world.Observation, len(agents))...)
		observe := func(i int) {
			obs[i] = r.kept(i, agents[i])
			w.ObserveInto(agents[i], obs[i])
		}
		if stream != nil {
			// A Streamer sends each observation on as it is built: in
			// agent order.
			for i, a := range agents {
				if a.Alive {
					observe(i)
					stream.Observed(tick, i, obs[i:i+1])
				}
			}
		} else {
			// In the order of the map, which keeps the caches warm (see
			// World.ObserveOrder); the observations are the same.
			scratch := !r.keepsAll()
			r.order = w.ObserveOrder(r.order[:0])
			for j, i := range r.order {
				r.prefetch(r.order, j)
				if scratch {
					if c := r.concurrentController(i); c != nil {
						// Not kept: decided on at once.
						r.unkeep(i, agents[i])
						w.ObserveInto(agents[i], &r.scratch)
						decisions[i] = c.Decide(ctx, &r.scratch)
						continue
					}
				}
				observe(i)
			}
		}
		r.obsList = obs
		if r.OnObserve != nil {
			r.OnObserve(tick, obs)
		}
		if err := g.Gather(ctx, tick, obs, decisions); err != nil {
			return rec, fmt.Errorf("gather decisions at tick %d: %w", tick, err)
		}
		r.apply(tick, &rec, nil, nil)
	}
	if (tick+1)%period == 0 {
		r.wakeAhead()
	}
	reg := trace.StartRegion(ctx, "worldstep")
	w.StepWith(r.stepParts())
	reg.End()
	rec.Events = w.TakeEvents()
	if r.Journal != nil || r.Record {
		rec.Hash = world.FormatHash(w.StateHash())
	}
	return rec, nil
}

// apply applies the decision point's decisions in a seeded random order, so
// that no agent always wins a race for the same resource, and replays apply
// them the same way. preps, when not nil, holds by agent what workers
// prepared for the decisions, and results the results of those they
// applied.
func (r *Runner) apply(tick int, rec *TickRecord, preps []prepared, results []world.ActionResult) {
	w, agents, decisions := r.World, r.World.Agents(), r.decisions
	r.order = r.order[:0]
	for i := range agents {
		r.order = append(r.order, i)
	}
	r.rng.Shuffle(len(r.order), func(i, j int) { r.order[i], r.order[j] = r.order[j], r.order[i] })
	record := r.Journal != nil || r.OnTick != nil && !r.OmitDecisions
	if record {
		// The entries allocated at once rather than grown one by one (OnTick
		// may keep the record's slices, so they are not reused).
		n := 0
		for _, d := range decisions {
			if d.Tool != "" {
				n++
			}
		}
		if n > 0 {
			rec.Decisions = make([]DecisionEntry, 0, n)
		}
	}
	prefetching := w.Prefetching()
	for j, i := range r.order {
		if k := j + world.PrefetchAhead; k < len(r.order) && prefetching {
			// In a shuffled order: neither the decisions nor the agents
			// come in a pattern the processor can guess.
			n := r.order[k]
			prefetch.Of(&decisions[n])
			prefetch.Of(agents[n])
		}
		d := decisions[i]
		if d.Tool == "" {
			continue
		}
		var res world.ActionResult
		switch {
		case preps == nil:
			res = r.Tools.DecidePrepared(w, agents[i], tick, d, nil)
		case preps[i].applied:
			if !record {
				continue
			}
			res = results[i]
		default:
			res = r.Tools.DecidePrepared(w, agents[i], tick, d, &preps[i].Prepared)
		}
		if record {
			rec.Decisions = append(rec.Decisions, DecisionEntry{Agent: agents[i].ID, Tool: d.Tool, Params: d.Params,
				Reasoning: d.Reasoning, TimedOut: d.TimedOut, Result: res})
		}
	}
}
