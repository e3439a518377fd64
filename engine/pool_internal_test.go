package engine

import (
	"sync/atomic"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/stretchr/testify/require"
)

// TestPoolRunsEveryCallOnceWokenAheadOrNot checks the pool's runs: every
// call made exactly once and every chunk finished, for runs whose helpers
// were woken ahead (prewake) and runs that start their own, for a run too
// small for the helpers after a prewake (which must release them), and
// with more helpers than chunks.
func TestPoolRunsEveryCallOnceWokenAheadOrNot(t *testing.T) {
	w := testutil.World(t, testutil.Config())
	for _, workers := range []int{2, 3, 8} {
		var p pool
		p.resize(w, workers)
		p.minParallel = 10
		for _, tc := range []struct {
			prewake, n int
		}{{0, 50}, {50, 50}, {50, 3}, {50, 0}, {40, 12}, {0, 200}, {200, 200}, {10, 10}} {
			p.prewake(tc.prewake)
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
			require.False(t, p.woken, "a run ends a prewake")
			p.run(tc.n, func(k *worker, i int) { calls[i].Add(1) }, nil) // and the next starts its own
			for i := range tc.n {
				require.EqualValues(t, 2, calls[i].Load())
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
		p.prewake(50)
		defer p.release()
		panic("a component's code")
	}()
	require.False(t, p.woken)
	p.helpers.Wait() // returns: no helper is left spinning
	var calls atomic.Int32
	p.run(50, func(*worker, int) { calls.Add(1) }, nil)
	require.EqualValues(t, 50, calls.Load())
}
