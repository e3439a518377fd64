package bots

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

// TestExplorerOnALargeWorldStaysInItsWindow walks an explorer over a world
// of 100 × 100 exploration cells: every target is the centre of a cell of
// the window around the bot that it has not seen, so no walk is longer than
// the window's half-diagonal, and cells a window apart (the same slot of the
// ring) are remembered apart.
func TestExplorerOnALargeWorldStaysInItsWindow(t *testing.T) {
	info := Info{AgentID: "a", Seed: 3, Bounds: world.Bounds{MinX: -500, MinZ: -500, MaxX: 500, MaxZ: 500},
		Rules: world.Rules{PerceptionRadius: 10, AgentRadius: 0.4}}
	e := newExplorer(info, rand.New(rand.NewPCG(1, 2)))
	require.Equal(t, 100, e.cols)
	require.Len(t, e.seen, exploreWindow*exploreWindow, "what a bot keeps does not grow with the world")

	e.mark(3, 4)
	require.True(t, e.isSeen(3, 4))
	require.False(t, e.isSeen(3+exploreWindow, 4), "same slot, other cell")
	require.False(t, e.isSeen(3, 4+exploreWindow))

	pos := world.Vec3{-480, 0, -470}
	reach := math.Sqrt2*exploreWindow/2*e.cell + e.cell
	for range 400 {
		e.markSeen(pos)
		to := e.exploreTarget(pos)
		require.LessOrEqual(t, math.Hypot(to[0]-pos[0], to[2]-pos[2]), reach)
		cx, cz := e.cellXZ(to[0], to[2])
		require.False(t, e.isSeen(cx, cz), "target %v was seen", to)
		pos = to
	}
	require.Greater(t, math.Hypot(pos[0]+480, pos[2]+470), 3*e.cell, "the bot moved on")
}

// TestExplorerOnASmallWorldVisitsEveryCell: a world of at most a window's
// cells is remembered whole, and the explorer visits all of it before it
// starts over.
func TestExplorerOnASmallWorldVisitsEveryCell(t *testing.T) {
	info := Info{AgentID: "a", Seed: 3, Bounds: world.Bounds{MinX: -60, MinZ: -40, MaxX: 60, MaxZ: 40},
		Rules: world.Rules{PerceptionRadius: 10, AgentRadius: 0.4}}
	e := newExplorer(info, rand.New(rand.NewPCG(1, 2)))
	require.Equal(t, 12, e.cols)
	require.Equal(t, 8, e.rows)
	require.Len(t, e.seen, 12*8)
	visited := map[[2]int]bool{}
	pos := world.Vec3{0, 0, 0}
	for range 12 * 8 {
		e.markCell(pos)
		pos = e.exploreTarget(pos)
		cx, cz := e.cellXZ(pos[0], pos[2])
		if visited[[2]int{cx, cz}] {
			break
		}
		visited[[2]int{cx, cz}] = true
	}
	require.Len(t, visited, 12*8-1, "every cell but the first")
}

// TestAvoidListForgetsWhatItNoLongerSkips: a name is skipped for avoidTicks
// ticks from its failure, and a bot failing on a new name every tick for a
// long run holds only the names of the last avoidTicks ticks.
func TestAvoidListForgetsWhatItNoLongerSkips(t *testing.T) {
	l := avoidList{}
	l.skip("r1", 10)
	require.True(t, l.avoided("r1", 10))
	require.True(t, l.avoided("r1", 10+avoidTicks-1))
	require.False(t, l.avoided("r1", 10+avoidTicks))
	require.False(t, l.avoided("r2", 10))
	for tick := range 20 * avoidTicks {
		l.skip(fmt.Sprintf("r%d", tick), tick)
		require.LessOrEqual(t, len(l), avoidTicks)
	}
	last := 20*avoidTicks - 1
	for tick := last - avoidTicks + 1; tick <= last; tick++ {
		require.True(t, l.avoided(fmt.Sprintf("r%d", tick), last), tick)
	}
}
