package world

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// stirAgents kills every killEvery-th agent of w and moves every
// moveEvery-th of the others to a random point of the sx × sz rectangle
// centred on the origin.
func stirAgents(w *World, rng *rand.Rand, killEvery, moveEvery int, sx, sz float64) {
	for i, a := range w.agents {
		switch {
		case i%killEvery == 0:
			w.kill(a, "test")
		case i%moveEvery == 0:
			w.setPos(a, rng.Float64()*sx-sx/2, rng.Float64()*sz-sz/2)
			w.agentIdxDirty = true
		}
	}
}

// TestObserveOrderListsTheLivingAgentsByPlace checks ObserveOrder on a
// random crowd with dead agents and agents that moved: every living agent
// exactly once, no dead one, and bucket by bucket of the agent index in
// Morton order (agents of a bucket by index).
func TestObserveOrderListsTheLivingAgentsByPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	cfg := Config{Name: "order", Seed: 5, Bounds: Bounds{MinX: -60, MinZ: -40, MaxX: 60, MaxZ: 40}}
	for i := 0; i < 400; i++ {
		cfg.Agents = append(cfg.Agents, AgentSpec{ID: fmt.Sprintf("a%d", i), X: rng.Float64()*118 - 59, Z: rng.Float64()*78 - 39})
	}
	w, err := New(cfg)
	require.NoError(t, err)
	stirAgents(w, rng, 7, 5, 118, 78)
	var living []int
	for i, a := range w.agents {
		if a.Alive {
			living = append(living, i)
		}
	}
	order := w.ObserveOrder(nil)
	require.ElementsMatch(t, living, order, "every living agent once")
	g := w.agentIdx
	key := func(i int) uint64 {
		cx, cz := g.coord(w.agents[i].Pos[0], w.agents[i].Pos[2])
		return morton(uint32(cx), uint32(cz))
	}
	for k := 1; k < len(order); k++ {
		a, b := order[k-1], order[k]
		require.True(t, key(a) < key(b) || key(a) == key(b) && a < b, "agents %d then %d", a, b)
	}
	require.NotEqual(t, living, order, "not the index order")
	// Reusing dst appends.
	require.Equal(t, append([]int{-1}, order...), w.ObserveOrder([]int{-1}))
}

func TestMortonInterleaves(t *testing.T) {
	require.Equal(t, uint64(0), morton(0, 0))
	require.Equal(t, uint64(1), morton(1, 0))
	require.Equal(t, uint64(2), morton(0, 1))
	require.Equal(t, uint64(0b0111), morton(0b11, 0b01))
	require.Equal(t, uint64(0b1011), morton(0b01, 0b11))
	require.Equal(t, uint64(0xffffffff), morton(0xffff, 0xffff))
}

// TestObservedResourcesMatchAScan checks the resources in observations
// against a scan of every resource (within the perception radius and in
// sight), on a map where most buckets around an agent hold resources out of
// its range: whatever the resource index skips must be out of view.
func TestObservedResourcesMatchAScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	b := Bounds{MinX: -60, MinZ: -40, MaxX: 70, MaxZ: 50}
	cfg := Config{Name: "resources", Seed: 7, CellSize: 0.5, Bounds: b}
	for i := range 12 {
		cfg.Obstacles = append(cfg.Obstacles, ObstacleSpec{Name: fmt.Sprintf("rock%d", i), ObstacleType: "rock",
			X: b.MinX + rng.Float64()*b.Width(), Z: b.MinZ + rng.Float64()*b.Depth(), Radius: 1 + rng.Float64()})
	}
	for i := range 300 {
		cfg.Resources = append(cfg.Resources, ResourceSpec{Name: fmt.Sprintf("r%d", i), ResourceType: "wood",
			X: b.MinX + rng.Float64()*b.Width(), Z: b.MinZ + rng.Float64()*b.Depth()})
	}
	for i := range 30 {
		cfg.Agents = append(cfg.Agents, AgentSpec{ID: fmt.Sprintf("a%d", i),
			X: b.MinX + rng.Float64()*b.Width(), Z: b.MinZ + rng.Float64()*b.Depth()})
	}
	w, err := New(cfg)
	require.NoError(t, err)
	radius := w.rules.PerceptionRadius
	seen := 0
	for _, a := range w.agents {
		var want []string
		for _, r := range w.resources {
			d := GroundDist(a.Pos, r.Pos)
			if d <= radius && w.lineOfSight(a.Pos, r.Pos, d) {
				want = append(want, r.Name)
			}
		}
		var got []string
		for _, e := range w.Observe(a).NearbyResources {
			got = append(got, e.Name)
		}
		require.ElementsMatch(t, want, got, "%s at %v", a.ID, a.Pos)
		seen += len(got)
	}
	require.Greater(t, seen, 30, "too few resources in view to test anything")
}
