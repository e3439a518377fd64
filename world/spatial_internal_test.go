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
