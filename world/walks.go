package world

import (
	"math"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/arena-sim/arena/internal/prefetch"
	"github.com/arena-sim/arena/nav"
)

// The walks of a world step on two goroutines (StepWith).
//
// A walk reads, of the other agents, only those registered in the physics
// cells within its speed, radius and skin of where it starts (nearBodies),
// and it changes, of what other walks read, only its own agent's position
// and registration: the cells of its old span and of its new one. Its
// footprint is those cells grown by walkSlack, which moveAgent never lets a
// walk exceed, so that it holds all of them (checked after every walk:
// walkPlan.escapes stays zero, as the tests assert). Two walks whose
// footprints share no cell therefore commute, and the step's outcome is
// that of walking every agent in index order as long as every pair of walks
// whose footprints meet still runs in index order.
//
// The grid's rows are cut in two at the median agent. A walk whose footprint
// lies within one half belongs to that half's part, unless its footprint
// meets that of an earlier walk left for later (one pass in index order
// decides: those crossing the cut are left for later, and so is every walk
// whose footprint meets theirs, transitively). The two parts walk at the same
// time, each in index order, on two goroutines; then the tick goroutine
// walks those left for later, in index order. Any pair of meeting footprints
// then walks in index order: within a part by construction; between a part
// and a later walk because a walk that meets an earlier later walk's
// footprint is itself later; and no footprint of one part meets one of the
// other. Events are kept by agent and published in index order, and re-plans
// use each goroutine's own planner, which plans as the world's does.
//
// The first part covers the lower rows and usually goes to the calling
// goroutine (the engine's pool gives the first chunk to it), which also
// observes them (the front of World.ObserveOrder), so that each core walks
// agents whose lines it has just read.

// PartRunner runs fn(k, i) for every i in [0, n) and returns once all have
// returned: the calls may run at the same time, each with a Worker of its
// own (the engine's pool of workers, whose first worker is the calling
// goroutine's).
type PartRunner func(n int, fn func(k *Worker, i int))

// walkScratch is what a walk writes besides the world: collision's lists,
// the planner for a re-plan, and, in a parallel step, the events it
// publishes, kept to be published in agent order.
type walkScratch struct {
	bodies     []body
	nearObs    []int32
	nearAgents []int32
	planner    *nav.Planner // nil: the world's
	buffered   bool         // keep the events in events
	events     []walkEvent
}

type walkEvent struct {
	agent int
	ev    Event
}

func (sc *walkScratch) plannerOf(w *World) *nav.Planner {
	if sc.planner != nil {
		return sc.planner
	}
	return w.planner
}

func (sc *walkScratch) publish(w *World, a *Agent, e Event) {
	if !sc.buffered {
		w.Publish(e)
		return
	}
	sc.events = append(sc.events, walkEvent{a.index, e})
}

// walkPlan is a parallel step's plan of the walks, reused from tick to tick.
type walkPlan struct {
	foot   []walkFoot // by agent
	of     [2][]int32 // the living agents of each part's rows, in index order
	parts  [2][]int32 // the walks of each part, in index order
	later  []int32    // the walks left for the tick goroutine, in index order
	marks  []uint32   // by physics cell: stamp while a later walk's footprint covers it
	stamp  uint32
	rows   []int32         // agents by physics row, to place the cut
	cut    int             // the first row of the second part
	cols   int             // the grid's
	used   [2]*walkScratch // each part's scratch, for its events (one may walk both)
	events []walkEvent
	// escapes counts the walks that left their footprints.
	escapes atomic.Int64
}

// walkFoot is an agent's walk this tick: none, or its footprint and part.
type walkFoot struct {
	cells [4]int16 // x0, z0, x1, z1, as footprint
	part  uint8    // 0: no walk; 1, 2: the part; crossing: across the cut
}

const crossing = 3

// walkSlack is how much further than its speed (and the skin) a walk may
// carry an agent along x or z in a tick: a radius. Sliding along others
// carries a walk about a hundredth of a unit past its speed (0.0116 at most
// in 300 ticks of the bench worlds of 300 to 16,000 agents); only pushes out
// of deep overlaps, which walks do not make, go further, and moveAgent
// leaves an agent that they would carry further where it was.
func walkSlack(radius float64) float64 { return radius }

// walkRounding is what a parallel step's footprints reach beyond the slack,
// for the rounding of the positions compared.
const walkRounding = physicsCell / 64

// StepWith is Step, with the walks of agents far enough apart run on two
// goroutines by run (see the top of walks.go): the outcome, events included,
// is exactly Step's. A nil run steps as Step; so does a grid of fewer than
// four rows. Two goroutines gain on hundreds of agents, not on a few.
func (w *World) StepWith(run PartRunner) {
	w.publishScheduled()
	w.deliverMessages()
	w.stepCrafting()
	if run == nil || w.serialWalks || !w.stepMovementParallel(run) {
		w.stepMovement()
	}
	w.stepHazards()
	w.stepRespawns()
	w.stepCapture()
	for _, c := range w.components {
		c.Tick(w)
	}
	w.updateCompletion()
	w.tick++
}

// SetParallelWalks turns on (the default) or off StepWith's walks on two
// parts: off, StepWith steps as Step does. They change nothing but time;
// turning them off measures what they gain (BenchmarkParallelWalksGain in
// internal/benchworld) or rules them out. Call it on the tick goroutine
// between ticks, as any other change to the world.
func (w *World) SetParallelWalks(on bool) { w.serialWalks = !on }

// stepMovementParallel walks the agents as stepMovement does, on run's
// goroutines; false, having changed nothing, when the world does not suit.
func (w *World) stepMovementParallel(run PartRunner) bool {
	g := &w.grid
	if g.rows < 4 || g.rows > math.MaxInt16 || g.cols > math.MaxInt16 {
		return false
	}
	p := &w.walks
	p.cols = g.cols
	if n := g.cols * g.rows; len(p.marks) != n {
		p.marks, p.stamp = make([]uint32, n), 0
	}
	p.cut = w.walkCut()
	p.foot = slices.Grow(p.foot[:0], len(w.agents))[:len(w.agents)]
	p.of[0], p.of[1] = p.of[0][:0], p.of[1][:0]
	for i, pos := range g.pos {
		switch {
		case !g.placed[i]: // dead: no walk
			w.agents[i].Vel = Vec3{}
			p.foot[i] = walkFoot{}
		case w.walkRow(pos[1]) < p.cut:
			p.of[0] = append(p.of[0], int32(i))
		default:
			p.of[1] = append(p.of[1], int32(i))
		}
	}
	run(2, func(k *Worker, part int) { w.footprints(part) })
	p.assign()
	moved := len(p.parts[0])+len(p.parts[1])+len(p.later) > 0
	run(2, func(k *Worker, part int) {
		sc := k.walkScratch() // its events were taken at the last step's end
		p.used[part] = sc
		w.walkAll(p.parts[part], sc)
	})
	w.walk.buffered, w.walk.events = true, w.walk.events[:0]
	w.walkAll(p.later, &w.walk)
	w.walk.buffered = false
	// The events in agent order (each walk publishes one at most).
	p.events = append(p.events[:0], w.walk.events...)
	for i, sc := range p.used {
		if sc != nil { // a goroutine that walked both parts comes once
			p.events = append(p.events, sc.events...)
			sc.events = sc.events[:0]
			for j := i; j < len(p.used); j++ {
				if p.used[j] == sc {
					p.used[j] = nil
				}
			}
		}
	}
	slices.SortStableFunc(p.events, func(a, b walkEvent) int { return a.agent - b.agent })
	for _, e := range p.events {
		w.Publish(e.ev)
	}
	clear(p.events)
	if moved {
		w.agentIdxDirty = true
	}
	return true
}

// walkCut is the row that splits the living agents about in half.
func (w *World) walkCut() int {
	g := &w.grid
	p := &w.walks
	p.rows = slices.Grow(p.rows[:0], g.rows)[:g.rows]
	clear(p.rows)
	n := 0
	for i, pos := range g.pos {
		if g.placed[i] {
			p.rows[w.walkRow(pos[1])]++
			n++
		}
	}
	seen := 0
	for r, c := range p.rows {
		seen += int(c)
		if 2*seen >= n {
			return min(max(r+1, 1), g.rows-1)
		}
	}
	return g.rows / 2
}

// walkRow is the physics row of a ground position z, within the grid.
func (w *World) walkRow(z float64) int {
	return min(max(int(math.Floor((z-w.bounds.MinZ)/physicsCell)), 0), w.grid.rows-1)
}

// footprints notes the walk of every living agent of the part (of), and
// stops the others'. Each part's goroutine writes only its own agents.
func (w *World) footprints(part int) {
	g := &w.grid
	p := &w.walks
	of := p.of[part]
	for j, i := range of {
		if k := j + PrefetchAhead; k < len(of) && !w.noPrefetch {
			prefetch.Bytes(unsafe.Pointer(&w.agents[of[k]].action), 1)
		}
		a := w.agents[i]
		if a.action.kind != actMove {
			a.Vel = Vec3{}
			p.foot[i] = walkFoot{}
			continue
		}
		pos := g.pos[i]
		// Beyond its reach by more than moveAgent lets collisions carry an
		// agent past its speed (walkSlack), and a little for rounding: every
		// cell the walk reads and every cell its new span can touch.
		f := w.footprint(pos[0], pos[1], w.walkReach(a)+walkSlack(w.rules.AgentRadius)+walkRounding)
		ft := walkFoot{cells: [4]int16{int16(f[0]), int16(f[1]), int16(f[2]), int16(f[3])}, part: uint8(part + 1)}
		if f[1] < p.cut && f[3] >= p.cut {
			ft.part = crossing
		}
		p.foot[i] = ft
	}
}

// assign lists each part's walks and those left for later, in index order.
func (p *walkPlan) assign() {
	p.parts[0], p.parts[1], p.later = p.parts[0][:0], p.parts[1][:0], p.later[:0]
	p.stamp++
	if p.stamp == 0 { // wrapped: no cell may look marked
		clear(p.marks)
		p.stamp = 1
	}
	// The box of the cells marked so far: most footprints lie outside.
	box := [4]int16{math.MaxInt16, math.MaxInt16, -1, -1}
	for i := range p.foot {
		f := &p.foot[i]
		c := &f.cells
		switch {
		case f.part == 0:
		case f.part == crossing || c[0] <= box[2] && c[2] >= box[0] && c[1] <= box[3] && c[3] >= box[1] && p.marked(f):
			p.later = append(p.later, int32(i))
			p.mark(f)
			box = [4]int16{min(box[0], c[0]), min(box[1], c[1]), max(box[2], c[2]), max(box[3], c[3])}
		default:
			p.parts[f.part-1] = append(p.parts[f.part-1], int32(i))
		}
	}
}

func (p *walkPlan) cell(x, z int) int { return z*p.cols + x }

func (p *walkPlan) marked(f *walkFoot) bool {
	c := f.cells
	for z := int(c[1]); z <= int(c[3]); z++ {
		for x := int(c[0]); x <= int(c[2]); x++ {
			if p.marks[p.cell(x, z)] == p.stamp {
				return true
			}
		}
	}
	return false
}

func (p *walkPlan) mark(f *walkFoot) {
	c := f.cells
	for z := int(c[1]); z <= int(c[3]); z++ {
		for x := int(c[0]); x <= int(c[2]); x++ {
			p.marks[p.cell(x, z)] = p.stamp
		}
	}
}

// walkAll walks the agents of idx in order with the scratch sc.
func (w *World) walkAll(idx []int32, sc *walkScratch) {
	for j, i := range idx {
		if k := j + PrefetchAhead; k < len(idx) && !w.noPrefetch {
			prefetch.Of(w.agents[idx[k]])
		}
		w.moveAgent(w.agents[i], sc)
		if !w.walks.within(int(i), w.grid.spans[i]) {
			w.walks.escapes.Add(1)
		}
	}
}

// within reports whether the span of cells lies inside agent i's footprint.
func (p *walkPlan) within(i int, s [4]int) bool {
	c := p.foot[i].cells
	return s[0] >= int(c[0]) && s[1] >= int(c[1]) && s[2] <= int(c[2]) && s[3] <= int(c[3])
}
