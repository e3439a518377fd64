package benchworld

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestObstacleBucketsAnswerAsTheScan holds the bucketed test to the test of
// every obstacle, on the obstacles of a generated world and random points.
func TestObstacleBucketsAnswerAsTheScan(t *testing.T) {
	cfg := Config(Options{Seed: 3, Agents: 10, Size: 200})
	scan := func(x, z float64) bool {
		for i := range cfg.Obstacles {
			if nearObstacle(&cfg.Obstacles[i], x, z) {
				return true
			}
		}
		return false
	}
	b := indexObstacles(cfg.Obstacles, 200)
	rng := rand.New(rand.NewPCG(1, 2))
	hits := 0
	for range 20000 {
		x, z := rng.Float64()*210-105, rng.Float64()*210-105
		want := scan(x, z)
		require.Equal(t, want, b.blocked(x, z), "(%g, %g)", x, z)
		if want {
			hits++
		}
	}
	require.Greater(t, hits, 1000)
	for _, r := range cfg.Resources {
		require.False(t, scan(r.X, r.Z), r.Name)
	}
}
