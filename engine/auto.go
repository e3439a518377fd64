package engine

import "time"

// A Runner with Workers 0 and its own controllers (no Gatherer) chooses at
// every decision point between its workers and the tick goroutine alone,
// whichever has made ticks faster lately: on a machine whose cores cost each
// other much (a small VM), two workers make a tick of a few hundred agents
// slower than one (docs/performance.md, "Workers chosen as they pay"), and
// where cores are cheap they pay from a few dozen. The choice changes no
// state: the world is the same for any number of workers.
//
// It times whole ticks (a second worker slows the tick goroutine's own
// part too, reading what the other core wrote) in trials: autoBlocks runs
// of autoBlock decision points, alone and on the workers in turn, then
// autoKeep decision points the way whose runs took less time, and again. A
// tick's own cost varies more than the two ways differ, and each way leaves
// the caches to the other: runs, not ticks, tell them apart, and runs in
// turn keep a drift of the world or the host from favouring one way.
//
// With a Gatherer the wait for decisions (clients, language models) is in
// every tick and would drown the difference; the workers are used then.
type autoWorkers struct {
	point int              // decision points so far
	took  [2]time.Duration // this trial's ticks: [0] alone, [1] on the workers
	keep  bool             // the way of the last trial's faster run
	picks [2]int           // decision points run each way
	// now reads the clock (time.Now; tests replace it).
	now func() time.Time
}

const (
	autoBlock  = 8   // decision points in a run of a trial
	autoBlocks = 4   // runs in a trial, alone first (an even number)
	autoKeep   = 224 // decision points of the faster way after a trial
	autoTrial  = autoBlock * autoBlocks
)

// parallel reports whether the next decision point should use the workers.
func (a *autoWorkers) parallel() bool {
	p := a.keep
	if k := a.point % (autoTrial + autoKeep); k < autoTrial {
		p = k/autoBlock%2 == 1
	}
	a.point++
	a.picks[b2i(p)]++
	return p
}

// record notes how long a tick took the way parallel says.
func (a *autoWorkers) record(parallel bool, d time.Duration) {
	k := (a.point - 1) % (autoTrial + autoKeep)
	if k >= autoTrial {
		return
	}
	a.took[b2i(parallel)] += d
	if k == autoTrial-1 { // the trial's last tick
		a.keep = a.took[1] < a.took[0]
		a.took = [2]time.Duration{}
	}
}

func (a *autoWorkers) clock() time.Time {
	if a.now != nil {
		return a.now()
	}
	return time.Now()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// WorkerShare reports, for a Runner with Workers 0 and its own controllers,
// at how many of the decision points so far it used its workers, of how
// many; it reports 0, 0 for the others.
func (r *Runner) WorkerShare() (onWorkers, points int) {
	return r.auto.picks[1], r.auto.picks[0] + r.auto.picks[1]
}
