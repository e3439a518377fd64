package engine

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// A decision point on several workers (Runner.Workers > 1):
//
//  1. the tick goroutine brings the world's lazy indexes up to date
//     (world.BeginObserve);
//  2. workers build observations in chunks of agents; where nothing else has
//     to see the observations first, they also run the agents' concurrent
//     controllers and plan ahead the paths of their move_to decisions
//     (tools.Registry.Prepare);
//  3. the tick goroutine finishes each chunk as it completes (component
//     sections, streaming to a Gatherer), then gathers the other decisions,
//     and workers plan ahead the paths those need;
//  4. the tick goroutine applies the decisions in the seeded order, but for
//     those the workers applied as they were made (tools.Registry.DecideAhead:
//     idle, which commutes with every other decision);
//  5. in the world step, the helpers woken ahead of the next decision point
//     walk the agents of one part of the map while the tick goroutine walks
//     the other's (world.World.StepWith: walks whose footprints meet keep
//     their order).
//
// With in-process controllers the helpers, once woken, serve run after run
// (spinning between them for up to spinLimit, then asleep) until released:
// at the end of Run, or by ReleaseHelpers.
//
// Workers read the world, each with its own scratch (world.Worker), and write
// only what a Private decision changes of its own agent, which nothing else
// they do reads; what they plan ahead is used only while still exactly what
// the tick goroutine would compute, so the state hash is the same for any
// number of workers.

// workers is the number of workers in effect.
func (r *Runner) workers() int {
	if r.Workers > 0 {
		return r.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// pool holds one worker per worker goroutine.
type pool struct {
	world    *world.World
	labels   context.Context // the profile labels of the helpers (Runner.Run's, and tick=worker)
	workers  []*worker
	finished chan int
	preps    []prepared // per agent: what a worker did for its decision
	// results holds, by agent, the result of a decision applied on a worker
	// (prepared.applied); other entries are stale.
	results []world.ActionResult
	// conc holds, by agent, the concurrent controller that decides for it
	// on a worker, or nil.
	conc []Controller
	// compact holds, by agent, whether its observation is built compact
	// (CompactStreamer).
	compact []bool
	// obs holds the observations the runner keeps (also in Runner.obs by
	// id), by the agent's index; nil for an agent whose observation is
	// built in scratch (see Runner.KeepObservations) or not yet built.
	obs []*world.Observation
	// minParallel replaces the constant when set (tests put small worlds
	// on the workers).
	minParallel int
	// helpers are the worker goroutines of the run under way; woken, that
	// they were started ahead of it (prewake) and wait for posted: they
	// spin for up to spinLimit, then sleep on parked until nudged (again
	// woken ahead, or a job posted).
	helpers sync.WaitGroup
	woken   bool
	keep    bool // the helpers woken serve run after run (prewake)
	posted  atomic.Pointer[job]
	parkMu  sync.Mutex
	parked  *sync.Cond
	nudges  int // under parkMu
	asleep  int // helpers asleep, under parkMu
	rewoken int // helpers set spinning again by a prewake, under parkMu
}

// job is a run's work as the helper goroutines take it: work runs the next
// chunk on a worker and returns its number, or -1 once none is left; report
// sends each chunk done to pool.finished.
type job struct {
	work   func(k *worker) int
	report bool
	left   atomic.Int32 // helpers woken ahead yet to be done with it
}

// noJob ends a prewake that no run needs.
var noJob = &job{work: func(*worker) int { return -1 }}

// prepared is what workers did for an agent's decision. The flag lives with
// what was prepared, not in a []bool of its own: a cache line of those held
// the flags of four chunks, which the workers set at the same time.
type prepared struct {
	tools.Prepared
	decided bool // decided and prepared on a worker
	applied bool // and applied there (tools.Registry.DecideAhead): the result is in pool.results
}

// worker is a worker goroutine's world.Worker and the observation it builds
// in scratch for agents whose observations are not kept.
type worker struct {
	*world.Worker
	obs  world.Observation
	call tools.Call // the scratch of the decisions it applies (DecideAhead)
	// end is the end of the calls it runs now, in a run of the pool:
	// the others run the calls from end on, at the same time.
	end int
}

// resize makes n workers for w, keeping those it has.
func (p *pool) resize(w *world.World, n int) {
	if p.world != w {
		p.release() // helpers woken ahead for the world before
		*p = pool{world: w}
	}
	if n != len(p.workers) {
		p.release() // helpers woken for the workers before: a job counts one per worker but the first
	}
	for len(p.workers) < n {
		p.workers = append(p.workers, &worker{Worker: w.NewWorker()})
	}
	p.workers = p.workers[:n]
}

// maxChunk is the largest number of agents a worker takes at once; chunks are
// smaller when there are few agents, so that every worker gets some.
const maxChunk = 16

// minParallel is the fewest agents worth handing to worker goroutines; fewer
// are done on the calling goroutine (a decision point of a few agents takes
// microseconds, a goroutine's wake-up about as much).
const minParallel = 32

// run calls fn(k, i) for every i in [0, n) on the workers, k being the
// calling worker, and, when done is not nil, done(lo, hi) on
// the calling goroutine for each chunk [lo, hi) as it completes. It returns
// once every call has returned.
//
// The calling goroutine is one of the workers (it has the first
// worker; the others are goroutines): it takes chunks as they do, and
// between its own it finishes (done) those they completed. Waiting for the
// others instead cost a wake-up before anything was finished: on this
// 2-vCPU VM the tick goroutine, woken by the first completed chunk onto the
// core of the worker that completed it, ran only once that worker ran out
// of chunks, about 0.2 ms into a 100-agent decision point whose first chunk
// took 0.05 ms; and the planning ahead took as long on two workers as on one.
func (p *pool) run(n int, fn func(k *worker, i int), done func(lo, hi int)) {
	if !p.parallel(n) {
		// Waking goroutines would cost more than the work: do it here
		// (helpers woken ahead to keep wait on for the next run).
		if !p.keep {
			p.release()
		}
		k := p.workers[0]
		k.end = n
		for i := range n {
			fn(k, i)
			if done != nil {
				done(i, i+1)
			}
		}
		return
	}
	p.runChunks(n, max(1, min(maxChunk, n/(4*len(p.workers)))), fn, done)
}

// runChunks is run on the helpers, in chunks of chunk calls.
func (p *pool) runChunks(n, chunk int, fn func(k *worker, i int), done func(lo, hi int)) {
	chunks := (n + chunk - 1) / chunk
	if done != nil && cap(p.finished) < chunks {
		p.finished = make(chan int, chunks)
	}
	// The last worker takes chunks from the back, the others from the
	// front, so that on two workers each works through its own half of the
	// calls (of the map, when they follow it) and shares what neighbouring
	// agents read with its own caches. taken counts the chunks handed out:
	// front and back never meet.
	var taken, front atomic.Int64
	back, last := chunks, p.workers[len(p.workers)-1]
	// work runs the next chunk on k and returns it, or -1 once none is left.
	work := func(k *worker) int {
		if int(taken.Add(1)) > chunks {
			return -1
		}
		var c int
		if k == last {
			back-- // only the last worker's goroutine touches back
			c = back
		} else {
			c = int(front.Add(1)) - 1
		}
		k.end = min(n, (c+1)*chunk)
		for i := c * chunk; i < k.end; i++ {
			fn(k, i)
		}
		return c
	}
	j := &job{work: work, report: done != nil}
	p.start(j, min(len(p.workers), chunks)-1)
	finished := 0
	finish := func(c int) {
		done(c*chunk, min(n, (c+1)*chunk))
		finished++
	}
	for {
		// Finish what the others completed meanwhile, then take a chunk.
		for drained := false; done != nil && !drained && finished < chunks; {
			select {
			case c := <-p.finished:
				finish(c)
			default:
				drained = true
			}
		}
		c := work(p.workers[0])
		if c < 0 {
			break
		}
		if done != nil {
			finish(c)
		}
	}
	for done != nil && finished < chunks {
		finish(<-p.finished)
	}
	p.wait(j)
}

// parts runs fn(k, i) for i in [0, n) on the helpers woken ahead, one call
// per chunk, however few (the world step's parts: World.StepWith), or on
// the calling goroutine when none are.
func (p *pool) parts(n int, fn func(k *worker, i int)) {
	if !p.woken || len(p.workers) < 2 {
		for i := range n {
			fn(p.workers[0], i)
		}
		return
	}
	p.runChunks(n, 1, fn, nil)
}

// parallel reports whether a run of n calls goes to the helpers.
func (p *pool) parallel(n int) bool {
	return n >= cmp.Or(p.minParallel, minParallel) && len(p.workers) > 1
}

// prewake starts the helper goroutines of the next run before it, when it
// will have n calls: the host takes 0.13–0.17 ms to get a goroutine started
// on the other, idle core (measured at 1,000 agents, with each run
// starting its own), which then overlaps what the tick goroutine does
// before the run (the world step, when woken that far ahead: wakeAhead;
// classifying the agents, refreshing the indexes) instead of the run's
// first chunks. They spin, yielding, until run posts its job, for
// spinLimit at most, and then sleep; a prewake of helpers already woken
// sets those asleep spinning again. With keep, they serve every run's job
// until released (the decision point's runs and the world step's, for
// in-process controllers); without, the first run's only, and return as
// soon as they find no chunk left, leaving the core to whatever else runs
// (a Gatherer's clients, reading the observations meanwhile).
func (p *pool) prewake(n int, keep bool) {
	if !p.parallel(n) {
		return
	}
	if p.woken && p.keep == keep {
		p.nudge()
		return
	}
	p.release()
	if p.parked == nil {
		p.parked = sync.NewCond(&p.parkMu)
	}
	p.woken, p.keep = true, keep
	p.posted.Store(nil)
	labels := p.helperLabels()
	for _, k := range p.workers[1:] {
		p.helpers.Go(func() {
			defer pprof.SetGoroutineLabels(context.Background())
			pprof.SetGoroutineLabels(labels)
			var last *job
			for {
				j := p.awaitJob(last)
				if j == noJob {
					return
				}
				p.serve(k, j)
				j.left.Add(-1)
				if !keep {
					return
				}
				last = j
			}
		})
	}
}

// spinLimit is how long a helper woken ahead spins for its job before it
// sleeps: longer than the world step of 1,000 agents (about 0.5 ms), so
// that back-to-back ticks never wait for a wake-up, and short enough that
// a run whose ticks are far apart (paced, or waiting on an OnTick that
// blocks) does not keep a core busy.
const spinLimit = time.Millisecond

// awaitJob returns the job posted for the helpers woken ahead after last.
func (p *pool) awaitJob(last *job) *job {
	seen := -1
	for {
		deadline := time.Now().Add(spinLimit)
		for {
			if j := p.posted.Load(); j != nil && j != last {
				return j
			}
			if time.Now().After(deadline) {
				break
			}
			runtime.Gosched()
		}
		p.parkMu.Lock()
		if seen < 0 {
			seen = p.nudges
		}
		p.asleep++
		for j := p.posted.Load(); (j == nil || j == last) && p.nudges == seen; j = p.posted.Load() {
			p.parked.Wait()
		}
		p.asleep--
		if j := p.posted.Load(); j == nil || j == last {
			p.rewoken++
		}
		seen = p.nudges
		p.parkMu.Unlock()
	}
}

// nudge sets spinning again the helpers woken ahead that sleep.
func (p *pool) nudge() {
	p.parkMu.Lock()
	p.nudges++
	p.parkMu.Unlock()
	p.parked.Broadcast()
}

// start hands j to the helpers: to those woken ahead (all of them take
// part; those that find no chunk left return), or to n new ones.
func (p *pool) start(j *job, n int) {
	if p.woken {
		j.left.Store(int32(len(p.workers) - 1)) // resize releases helpers woken for other workers
		p.posted.Store(j)
		p.nudge()
		return
	}
	labels := p.helperLabels()
	for _, k := range p.workers[1 : n+1] {
		p.helpers.Go(func() {
			// The label lets CPU profiles tell workers' time from the tick
			// goroutine's (go tool pprof -tagfocus tick=worker).
			defer pprof.SetGoroutineLabels(context.Background())
			pprof.SetGoroutineLabels(labels)
			p.serve(k, j)
		})
	}
}

// helperLabels are the profile labels of the helpers: Runner.Run's, or
// only tick=worker.
func (p *pool) helperLabels() context.Context {
	if p.labels == nil {
		p.labels = pprof.WithLabels(context.Background(), pprof.Labels("tick", "worker"))
	}
	return p.labels
}

// serve runs j's chunks on k until none is left.
func (p *pool) serve(k *worker, j *job) {
	for c := j.work(k); c >= 0; c = j.work(k) {
		if j.report {
			p.finished <- c
		}
	}
}

// release ends a prewake that no run took up (the tick goroutine panicked
// in between, in a component's code, say), so that no helper spins on.
func (p *pool) release() {
	if p.woken {
		p.posted.Store(noJob)
		p.nudge()
		p.helpers.Wait()
		p.woken = false
	}
}

// wait returns once the helpers are done with j: those woken ahead to keep
// have taken it and found no chunk left; the others have returned, and the
// next run starts its own.
func (p *pool) wait(j *job) {
	if p.woken && p.keep {
		for j.left.Load() > 0 {
			runtime.Gosched()
		}
		return
	}
	p.helpers.Wait()
	p.woken = false
}

// prepare does on worker k what can be done ahead of applying the decision
// of the agent at index i (tools.Registry.Prepare); a decision that commutes
// with every other (idle) it applies at once (tools.Registry.DecideAhead),
// where the agent's data is in this core's caches, rather than leave it to
// the tick goroutine. decided: the worker also made the decision.
func (r *Runner) prepare(k *worker, tick, i int, decided bool) {
	p, w, d, a := &r.pool, r.World, r.decisions[i], r.World.Agents()[i]
	pr := prepared{Prepared: r.Tools.Prepare(k.Worker, w, a.ID, d), decided: decided}
	if res, ok := r.Tools.DecideAhead(&k.call, w, a, tick, d, &pr.Prepared); ok {
		p.results[i], pr.applied = res, true // written only then: neighbouring entries are other workers'
	}
	p.preps[i] = pr
}

// ReleaseHelpers stops the worker goroutines that the last tick woke ahead
// of the next decision point (they spin for up to 1 ms, then sleep): call it
// on the runner's goroutine, from OnTick, before the runner waits on
// something else, so that they take no core from it meanwhile. The next
// decision point starts its own.
func (r *Runner) ReleaseHelpers() { r.pool.release() }

// wakeAhead wakes the helpers of the next decision point's first run while
// the world steps, when workers decide for in-process controllers: a
// goroutine takes 0.13–0.17 ms to start on the other, idle core of the
// 2-vCPU VM, longer than what the tick goroutine does before the run, so
// that helpers woken at the decision point joined its run about 0.07 ms
// late. They spin until the run posts its job; a Gatherer's decision points
// wait on clients, which the spinning would take a core from, so theirs are
// woken at the decision point as before.
func (r *Runner) wakeAhead() {
	if r.Gatherer != nil || r.workers() < 2 {
		return
	}
	r.readyPool().prewake(len(r.World.Agents()), true)
}

// minParallelWalks is the fewest agents whose walks go to the helpers.
const minParallelWalks = 256

// stepParts is the world step's PartRunner: the helpers woken ahead of the
// next decision point (wakeAhead) walk one part of the map while the tick
// goroutine walks the other (World.StepWith); nil when none are woken or
// the world has too few agents to gain.
func (r *Runner) stepParts() world.PartRunner {
	p := &r.pool
	if !p.woken || len(r.World.Agents()) < cmp.Or(r.minParallel, minParallelWalks) {
		return nil
	}
	return func(n int, fn func(k *world.Worker, i int)) {
		p.parts(n, func(k *worker, i int) { fn(k.Worker, i) })
	}
}

// readyPool sizes the pool for the runner's world and workers.
func (r *Runner) readyPool() *pool {
	p := &r.pool
	p.resize(r.World, r.workers())
	p.minParallel, p.labels = r.minParallel, r.labels
	return p
}

// markCompact sets p.compact: which agents' observations are built compact
// (CompactStreamer), and reports whether any is.
func (r *Runner) markCompact(obs []*world.Observation) bool {
	p := &r.pool
	p.compact = slices.Grow(p.compact[:0], len(obs))[:len(obs)]
	cs, ok := r.Gatherer.(CompactStreamer)
	if !ok || r.OnObserve != nil || r.KeepObservations {
		clear(p.compact)
		return false
	}
	any := false
	for i, o := range obs {
		p.compact[i] = o != nil && cs.Compact(i)
		any = any || p.compact[i]
	}
	return any
}

// decideParallel fills r.obsList and r.decisions for this decision point
// using the workers (see the top of this file).
func (r *Runner) decideParallel(ctx context.Context, tick int) error {
	w := r.World
	agents := w.Agents()
	p := r.readyPool()
	n := len(agents)
	// The first run's helpers, which has one call per agent or per living
	// one. In-process controllers keep them for the world step and the
	// next decision point (wakeAhead); a Gatherer's return after it, so
	// that none spins while its clients read and decide.
	p.prewake(n, r.Gatherer == nil)
	r.decisions = append(r.decisions[:0], make([]world.Decision, n)...)
	decisions := r.decisions
	p.preps = slices.Grow(p.preps[:0], n)[:n]
	clear(p.preps)
	p.results = slices.Grow(p.results[:0], n)[:n]
	g := r.Gatherer
	stream, _ := g.(Streamer)
	whole := w.ObservesWhole()
	// Controllers may decide right after their observation is built unless
	// something must see or complete every observation first; those
	// observations need not be kept.
	early := g == nil && whole && r.OnObserve == nil
	scratch := whole && !r.keepsAll()
	p.conc = slices.Grow(p.conc[:0], n)[:n]
	obs := r.obsList[:0]
	for i, a := range agents {
		var c Controller
		if g == nil && a.Alive {
			c = r.concurrentController(i)
		}
		p.conc[i] = c
		switch {
		case !a.Alive:
			obs = append(obs, nil)
		case scratch && c != nil:
			r.unkeep(i, a)
			obs = append(obs, nil)
		default:
			obs = append(obs, r.kept(i, a))
		}
	}
	r.obsList = obs
	compact := r.markCompact(obs)
	decide := func(k *worker, i int, o *world.Observation) {
		if c := p.conc[i]; c != nil {
			decisions[i] = c.Decide(ctx, o)
			r.prepare(k, tick, i, true)
		}
	}
	reg := trace.StartRegion(ctx, "observe")
	w.BeginObserve()
	if compact {
		// The kept observations not built again (of agents now dead)
		// must not read the views rebuilt now.
		for i, o := range p.obs {
			if o != nil && (i >= n || obs[i] == nil) {
				o.Expand()
			}
		}
		w.PrepareCompactObserve()
	}
	if stream == nil && whole {
		// Nothing needs the chunks in agent order: the workers observe in
		// the order of the map, as one worker does (see World.ObserveOrder),
		// so that a chunk's agents share what is around them.
		r.order = w.ObserveOrder(r.order[:0])
		order := r.order
		p.run(len(order), func(k *worker, j int) {
			// Not past the chunk: other workers observe those agents
			// meanwhile, writing what PrefetchObserve reads.
			r.prefetch(order[:k.end], j)
			i := order[j]
			o := obs[i]
			if o == nil {
				o = &k.obs // not kept: decided on at once
			}
			k.ObserveInto(agents[i], o)
			if early {
				decide(k, i, o)
			}
		}, nil)
	} else {
		p.run(n, func(k *worker, i int) {
			switch {
			case obs[i] == nil:
			case p.compact[i]:
				k.ObserveCompact(agents[i], obs[i])
			default:
				k.ObserveInto(agents[i], obs[i])
			}
		}, func(lo, hi int) {
			for i := lo; i < hi && !whole; i++ {
				if obs[i] != nil {
					w.FinishObserve(agents[i], obs[i])
				}
			}
			if stream != nil {
				stream.Observed(tick, lo, obs[lo:hi])
			}
		})
	}
	reg.End()
	if r.OnObserve != nil {
		r.OnObserve(tick, obs)
	}
	if g != nil {
		reg := trace.StartRegion(ctx, "gather")
		err := g.Gather(ctx, tick, obs, decisions)
		reg.End()
		if err != nil {
			return fmt.Errorf("gather decisions at tick %d: %w", tick, err)
		}
	} else {
		if !early {
			p.run(n, func(k *worker, i int) {
				if obs[i] != nil {
					decide(k, i, obs[i])
				}
			}, nil)
		}
		byIndex(r.ctrls).decide(ctx, obs, decisions, func(i int) bool { return p.preps[i].decided })
	}
	// Plan ahead for the decisions the workers have not seen yet.
	defer trace.StartRegion(ctx, "prepare").End()
	for i, d := range decisions {
		if d.Tool != "" && !p.preps[i].decided {
			p.run(n-i, func(k *worker, j int) {
				if decisions[i+j].Tool != "" && !p.preps[i+j].decided {
					r.prepare(k, tick, i+j, false)
				}
			}, nil)
			break
		}
	}
	return nil
}
