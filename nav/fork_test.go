package nav

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestForkAnswersLikeThePlanner runs the same queries on a planner alone and
// on four forks at once: every path and every failure must be identical. Run
// with -race, it also shows that forks share nothing they write.
func TestForkAnswersLikeThePlanner(t *testing.T) {
	const size, n = 128, 400
	rng := rand.New(rand.NewPCG(3, 4))
	var shapes []Shape
	for range 60 {
		shapes = append(shapes, Shape{Center: Point{rng.Float64() * size, rng.Float64() * size}, HalfX: rng.Float64() * 2, Radius: 0.3 + rng.Float64()})
	}
	p := NewPlanner(genArena(size, 9), Options{ClusterSize: 12, Obstacles: shapes})
	// Reachable pairs, and random ones that may start or end inside
	// obstacles, off the map or in another component.
	qs := randomQueries(p, n/2, 5)
	for range n / 2 {
		qs = append(qs, [2]Point{{rng.Float64()*size*1.1 - 2, rng.Float64() * size}, {rng.Float64() * size, rng.Float64()*size*1.1 - 2}})
	}
	answer := func(pl *Planner, q [2]Point) string {
		path, err := pl.FindPath(q[0], q[1])
		return fmt.Sprintf("%v %v", path, err)
	}
	want := make([]string, len(qs))
	for i, q := range qs {
		want[i] = answer(p, q)
	}
	got := make([]string, len(qs))
	var wg sync.WaitGroup
	for k := range 4 {
		f := p.Fork()
		wg.Go(func() {
			// Each fork answers every fourth query, in reverse, so that its
			// scratch holds another history than the planner's did.
			for i := len(qs) - 1 - k; i >= 0; i -= 4 {
				got[i] = answer(f, qs[i])
			}
		})
	}
	wg.Wait()
	for i := range qs {
		require.Equal(t, want[i], got[i], "query %d %v", i, qs[i])
	}
}
