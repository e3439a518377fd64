package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// TestPoolRunsEveryCallOnceWokenAheadOrNot checks the pool's runs: every
// call made exactly once and every chunk finished, for runs whose helpers
// were woken ahead (prewake), which serve run after run until released, and
// runs that start their own, for a run too small for the helpers after a
// prewake (done on the calling goroutine, the helpers waiting on), and with
// more helpers than chunks.
func TestPoolRunsEveryCallOnceWokenAheadOrNot(t *testing.T) {
	w := testutil.World(t, testutil.Config())
	for _, workers := range []int{2, 3, 8} {
		for _, keep := range []bool{true, false} {
			var p pool
			p.resize(w, workers)
			p.minParallel = 10
			runsEveryCallOnce(t, &p, workers, keep)
		}
	}
}

func runsEveryCallOnce(t *testing.T, p *pool, workers int, keep bool) {
	{
		for _, tc := range []struct {
			prewake, n int
		}{{0, 50}, {50, 50}, {50, 3}, {50, 0}, {40, 12}, {0, 200}, {200, 200}, {10, 10}} {
			p.prewake(tc.prewake, keep)
			calls := make([]atomic.Int32, tc.n)
			finished := make([]int, tc.n)
			p.run(tc.n, func(k *worker, i int) { calls[i].Add(1) }, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					finished[i]++
				}
			})
			for i := range tc.n {
				require.EqualValues(t, 1, calls[i].Load(), "workers %d, %+v: call %d", workers, tc, i)
				require.Equal(t, 1, finished[i], "workers %d, %+v: chunk of %d finished once", workers, tc, i)
			}
			// Helpers woken ahead to keep serve the next run too; the others
			// serve a run that goes to them, and return.
			require.Equal(t, keep && tc.prewake >= p.minParallel, p.woken, "workers %d, keep %v, %+v", workers, keep, tc)
			p.run(tc.n, func(k *worker, i int) { calls[i].Add(1) }, nil)
			for i := range tc.n {
				require.EqualValues(t, 2, calls[i].Load())
			}
			p.release()
			require.False(t, p.woken)
			p.helpers.Wait()                                             // returns: no helper is left
			p.run(tc.n, func(k *worker, i int) { calls[i].Add(1) }, nil) // and the next starts its own
			for i := range tc.n {
				require.EqualValues(t, 3, calls[i].Load())
			}
		}
	}
}

// TestPoolReleaseEndsAPrewakeNoRunTookUp: helpers woken ahead of a run
// that never comes (the tick goroutine panicked in between) stop spinning
// and return once released, and the next run starts its own.
func TestPoolReleaseEndsAPrewakeNoRunTookUp(t *testing.T) {
	w := testutil.World(t, testutil.Config())
	var p pool
	p.resize(w, 3)
	p.minParallel = 10
	func() {
		defer func() { require.NotNil(t, recover()) }()
		p.prewake(50, true)
		defer p.release()
		panic("a component's code")
	}()
	require.False(t, p.woken)
	p.helpers.Wait() // returns: no helper is left spinning
	var calls atomic.Int32
	p.run(50, func(*worker, int) { calls.Add(1) }, nil)
	require.EqualValues(t, 50, calls.Load())
}

// TestPoolHelpersAsleepTakeTheirJob: helpers woken ahead that spun for
// longer than spinLimit and went to sleep take part in the run that comes
// later, whether a second prewake (the decision point's) set them spinning
// again first or not; a release ends them as well.
func TestPoolHelpersAsleepTakeTheirJob(t *testing.T) {
	w := testutil.World(t, testutil.Config())
	for _, tc := range []struct {
		name          string
		nudge, cancel bool
	}{{"posted", false, false}, {"woken again, then posted", true, false}, {"released", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			var p pool
			p.resize(w, 3)
			p.minParallel = 10
			p.prewake(60, true)
			locked := func(f func() bool) func() bool {
				return func() bool {
					p.parkMu.Lock()
					defer p.parkMu.Unlock()
					return f()
				}
			}
			require.Eventually(t, locked(func() bool { return p.asleep == 2 }), 5*time.Second, spinLimit/4,
				"helpers spin on past spinLimit")
			if tc.nudge {
				p.prewake(60, true)
				require.Eventually(t, locked(func() bool { return p.rewoken == 2 }), 5*time.Second, spinLimit/4,
					"a second prewake does not wake the helpers asleep")
			}
			done := make(chan struct{})
			var byHelpers, calls atomic.Int32
			go func() {
				defer close(done)
				if tc.cancel {
					p.release()
					return
				}
				p.run(60, func(k *worker, i int) {
					calls.Add(1)
					if k != p.workers[0] {
						byHelpers.Add(1)
					}
					time.Sleep(200 * time.Microsecond) // long enough for a helper to wake
				}, nil)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the run did not end: a helper asleep was never woken")
			}
			require.Equal(t, !tc.cancel, p.woken, "helpers woken ahead serve until released")
			p.release()
			if !tc.cancel {
				require.EqualValues(t, 60, calls.Load())
				require.Positive(t, byHelpers.Load(), "no helper took part")
			}
		})
	}
}

// TestPoolPartsOnTheHelpers: parts (the world step's) run every call once,
// on the helpers woken ahead as well as on the calling goroutine however
// few the calls, and on the calling goroutine alone when none are woken.
func TestPoolPartsOnTheHelpers(t *testing.T) {
	w := testutil.World(t, testutil.Config())
	for _, woken := range []bool{false, true} {
		var p pool
		p.resize(w, 2)
		p.minParallel = 10
		if woken {
			p.prewake(60, true)
		}
		var byHelper atomic.Int32
		for range 50 {
			calls := make([]atomic.Int32, 2)
			p.parts(2, func(k *worker, i int) {
				time.Sleep(100 * time.Microsecond) // long enough for the helper to take its part
				if k != p.workers[0] {
					byHelper.Add(1)
				}
				calls[i].Add(1) // last: parts returns only once every call has
			})
			require.EqualValues(t, 1, calls[0].Load())
			require.EqualValues(t, 1, calls[1].Load())
		}
		if woken {
			require.Positive(t, byHelper.Load(), "the helper took no part")
		} else {
			require.Zero(t, byHelper.Load(), "a part ran on a goroutine started for it")
		}
		require.Equal(t, woken, p.woken)
		if woken {
			// Between runs, kept helpers spin for spinLimit, then sleep:
			// they do not serve a job again.
			require.Eventually(t, func() bool {
				p.parkMu.Lock()
				defer p.parkMu.Unlock()
				return p.asleep == 1
			}, 5*time.Second, spinLimit/4, "a kept helper did not go to sleep after its run")
		}
		p.release()
		p.helpers.Wait()
	}
}

// TestWorkersChangedMidRun: a runner whose number of workers changes between
// ticks (OnTick, or GOMAXPROCS for Workers 0) while its helpers are kept
// awake neither hangs nor races, and computes what one worker does.
func TestWorkersChangedMidRun(t *testing.T) {
	play := func(workers func(tick int) int) []string {
		w := testutil.World(t, testutil.Config())
		ctrls := map[string]Controller{}
		for _, a := range w.Agents() {
			ctrls[a.ID] = idler{}
		}
		r := &Runner{World: w, Controllers: ctrls, MaxTicks: 8, Workers: workers(0), minParallel: 1, Record: true}
		var hashes []string
		r.OnTick = func(rec *TickRecord) {
			hashes = append(hashes, rec.Hash)
			r.Workers = workers(rec.Tick + 1)
		}
		done := make(chan error, 1)
		go func() { _, err := r.Run(context.Background()); done <- err }()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("the run hangs")
		}
		return hashes
	}
	want := play(func(int) int { return 1 })
	require.Equal(t, want, play(func(tick int) int { return []int{2, 3, 2, 4, 2, 2, 3, 1, 2}[tick] }))
}

// idler idles, on any worker.
type idler struct{}

func (idler) Decide(context.Context, *world.Observation) world.Decision {
	return world.Decision{Tool: "idle"}
}
func (idler) DecidesConcurrently() bool { return true }

// TestRunLeavesNoHelperAwake: the helpers that the last tick's world step
// woke ahead of a decision point that never comes (the episode ended, or
// the context was cancelled) are released when Run returns.
func TestRunLeavesNoHelperAwake(t *testing.T) {
	for _, cancelled := range []bool{false, true} {
		w := testutil.World(t, testutil.Config())
		ctrls := map[string]Controller{}
		for _, a := range w.Agents() {
			ctrls[a.ID] = idler{}
		}
		ctx, cancel := context.WithCancel(context.Background())
		r := &Runner{World: w, Controllers: ctrls, MaxTicks: 5, Workers: 2, minParallel: 1}
		if cancelled {
			r.OnTick = func(rec *TickRecord) {
				if rec.Tick == 2 {
					cancel()
				}
			}
		}
		_, err := r.Run(ctx)
		cancel()
		require.NoError(t, err)
		require.False(t, r.pool.woken, "cancelled %v: helpers left spinning", cancelled)
		r.pool.helpers.Wait()
	}
}

// spinWatcher is a Gatherer that notes whether helpers were woken while
// it gathered, and idles every agent.
type spinWatcher struct {
	r      *Runner
	woken  int
	rounds int
}

func (g *spinWatcher) Gather(_ context.Context, _ int, obs []*world.Observation, decisions []world.Decision) error {
	g.rounds++
	if g.r.pool.woken {
		g.woken++
	}
	for i, o := range obs {
		if o != nil {
			decisions[i] = world.Decision{Tool: "idle"}
		}
	}
	return nil
}

// TestNoHelperSpinsWhileClientsDecide: a Gatherer's clients get both cores
// while they decide: the helpers that built the observations are released
// before Gather, though in-process controllers keep theirs from run to run.
func TestNoHelperSpinsWhileClientsDecide(t *testing.T) {
	w := testutil.World(t, testutil.Config())
	r := &Runner{World: w, MaxTicks: 6, Workers: 2, minParallel: 1}
	g := &spinWatcher{r: r}
	r.Gatherer = g
	_, err := r.Run(context.Background())
	require.NoError(t, err)
	require.Equal(t, 6, g.rounds)
	require.Zero(t, g.woken, "helpers spun while the clients decided")
}
