package engine

import "time"

// OnWorkersAlways makes r hand even a few agents to its workers, so that
// tests of small worlds run them concurrently.
func OnWorkersAlways(r *Runner) { r.minParallel = 1 }

// FakeAutoClock makes r, choosing between its workers and the tick
// goroutine alone (Workers 0), see every tick take alone or onWorkers.
func FakeAutoClock(r *Runner, alone, onWorkers time.Duration) {
	var t time.Time
	start, parallel, seen := true, false, 0
	r.auto.now = func() time.Time {
		// Called at the start and the end of every timed tick, right
		// after the choice.
		if start {
			parallel, seen = r.auto.picks[1] != seen, r.auto.picks[1]
		} else if parallel {
			t = t.Add(onWorkers)
		} else {
			t = t.Add(alone)
		}
		start = !start
		return t
	}
}
