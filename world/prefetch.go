package world

import (
	"unsafe"

	"github.com/arena-sim/arena/internal/prefetch"
)

// PrefetchAhead is how many places ahead of the agent being observed
// PrefetchObserve asks for the first of its stages; a caller that has
// state of its own per agent (a controller) asks for it that far ahead too.
const PrefetchAhead = 4

// pathAhead is how many waypoints of a path are asked for ahead: the walk
// and its observation read the first few (16 gained nothing over 4).
const pathAhead = 4

// PrefetchObserve asks the processor for what observing the agents soon
// after order[j] will read, in a loop that observes order[j] next. On a large
// world the agents' structures are cold by the time their turn comes in a
// tick, and each is reached through a pointer the hardware cannot guess, so
// observing one would wait on memory several times in turn. The three
// stages follow the pointers one level each, by which time the previous
// stage's lines have come: the lines of order[j+4] itself, the heads of what
// order[j+2] points to (its inventory, path, inbox and list of nearby
// obstacles), and the entries of order[j+1]'s inventory. They read those
// agents' fields, so no other goroutine may write the agents of order after
// j meanwhile: a pool of workers passes each the rest of its own chunk. It
// changes nothing: a prefetch has no effect but on time (docs/performance.md,
// session 27).
func (w *World) PrefetchObserve(order []int, j int) {
	if w.noPrefetch {
		return
	}
	n := len(order)
	if k := j + PrefetchAhead; k < n {
		prefetch.Of(w.agents[order[k]])
	}
	if k := j + PrefetchAhead/2; k < n {
		a := w.agents[order[k]]
		prefetch.Bytes(mapHead(a.Inventory), 1)
		prefetch.Slice(a.action.path, pathAhead)
		prefetch.Slice(a.inbox, 1)
		prefetch.Slice(a.nearObstacles.idx, 64)
	}
	if k := j + PrefetchAhead/4; k < n {
		if h := (*swissMap)(mapHead(w.agents[order[k]].Inventory)); h != nil && h.dirLen == 0 {
			// A map of up to 8 entries is one group: its control word
			// and its slots.
			prefetch.Bytes(h.dirPtr, smallInventoryGroup)
		}
	}
}

// SetPrefetch turns on (the default) or off the prefetches of observing,
// applying decisions and stepping: PrefetchObserve, and those the engine
// makes when Prefetching reports true. They change nothing but time;
// turning them off measures what they gain (BenchmarkPrefetchGain in
// internal/benchworld). Workers read the setting: call it on the tick
// goroutine between ticks (before Run, or from OnTick), as any other
// change to the world.
func (w *World) SetPrefetch(on bool) { w.noPrefetch = !on }

// Prefetching reports whether the prefetches are on (SetPrefetch).
func (w *World) Prefetching() bool { return !w.noPrefetch }

// mapHead is the runtime's head of a map: what a map value points to.
func mapHead(m map[string]int) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
}

// swissMap is the start of the runtime's map head (internal/runtime/maps.Map
// since Go 1.24): TestSwissMapHead holds it to the runtime's, so that a Go
// release that changes it fails a test rather than prefetching the wrong
// lines.
type swissMap struct {
	used   uint64
	seed   uintptr
	dirPtr unsafe.Pointer // the group of a small map, else the directory
	dirLen int            // 0 for a small map
}

// smallInventoryGroup is the size of the group of a small map[string]int:
// an 8-byte control word and 8 slots of a key and a value.
const smallInventoryGroup = 8 + 8*(unsafe.Sizeof("")+unsafe.Sizeof(0))

// prefetchWalk asks for what the world step will read of the agents after
// the i-th: the lines of the agent PrefetchAhead places on, and the path of
// the one half as far (read through the agent, whose lines have come).
func (w *World) prefetchWalk(i int) {
	if w.noPrefetch {
		return
	}
	if k := i + PrefetchAhead; k < len(w.agents) {
		prefetch.Of(w.agents[k])
	}
	if k := i + PrefetchAhead/2; k < len(w.agents) {
		if a := w.agents[k]; a.action.kind == actMove {
			prefetch.Slice(a.action.path, pathAhead)
		}
	}
}

// agentViewBytes is how far into an Agent the fields that another agent's
// view of it reads go (ID, Team, Health, shown, status.Status).
const agentViewBytes = unsafe.Offsetof(Agent{}.status) + unsafe.Offsetof(ActionStatus{}.Status) + unsafe.Sizeof("")
