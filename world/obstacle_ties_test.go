package world_test

import (
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// TestObstaclesAtOneDistanceListedByName: obstacles as far from the
// observer tie by name, whatever their order in the config (the names the
// sight path fills in after the distances break the tie).
func TestObstaclesAtOneDistanceListedByName(t *testing.T) {
	rock := func(name string, x, z float64) world.ObstacleSpec {
		return world.ObstacleSpec{Name: name, ObstacleType: "rock", X: x, Z: z, Shape: "circle", Radius: 0.5}
	}
	for _, tc := range []struct {
		name      string
		obstacles []world.ObstacleSpec
	}{
		{"by name", []world.ObstacleSpec{rock("A", 5, 0), rock("B", -5, 0), rock("C", 0, 5)}},
		{"reversed", []world.ObstacleSpec{rock("C", 5, 0), rock("B", -5, 0), rock("A", 0, 5)}},
		{"first last", []world.ObstacleSpec{rock("B", 5, 0), rock("C", -5, 0), rock("A", 0, 5)}},
		{"last first", []world.ObstacleSpec{rock("C", 5, 0), rock("A", -5, 0), rock("B", 0, 5)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testutil.Config()
			cfg.Obstacles, cfg.Resources, cfg.Hazards = tc.obstacles, nil, nil
			cfg.Agents = cfg.Agents[:1] // a1 at the origin
			w := testutil.World(t, cfg)
			obs := w.Observe(w.Agent("a1"))
			require.Equal(t, []string{"A", "B", "C"}, names(obs.NearbyObstacles))
			for _, e := range obs.NearbyObstacles {
				require.Equal(t, 5.0, e.Distance, e.Name)
			}
		})
	}
}
