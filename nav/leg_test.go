package nav

import (
	"fmt"
	"testing"

	"github.com/quasilyte/pathing"
	"github.com/stretchr/testify/require"
)

// corridor returns a grid holding one straight 1-cell-wide corridor of
// steps+1 cells, starting offset cells from the grid edge, and its two ends.
// A vertical corridor runs along a column, a horizontal one along a row.
func corridor(steps, offset int, vertical bool) (*Grid, Cell, Cell) {
	length := offset + steps + 2
	g := NewGrid(length, 3)
	if vertical {
		g = NewGrid(3, length)
	}
	g.FillRect(Point{0.5, 0.5}, Point{float64(g.Cols()) - 0.5, float64(g.Rows()) - 0.5}, Blocked)
	var a, b Cell
	for i := 0; i <= steps; i++ {
		c := Cell{offset + 1 + i, 1}
		if vertical {
			c = Cell{1, offset + 1 + i}
		}
		g.Set(c, Free)
		if i == 0 {
			a = c
		}
		b = c
	}
	return g, a, b
}

// requireRoute checks that route is a 4-connected walkable route from→to
// with exactly steps steps.
func requireRoute(t *testing.T, g *Grid, route []Cell, from, to Cell, steps int) {
	t.Helper()
	require.Len(t, route, steps+1)
	require.Equal(t, from, route[0])
	require.Equal(t, to, route[len(route)-1])
	for i, c := range route {
		require.NotEqual(t, Blocked, g.At(c), "route cell %d %v is blocked", i, c)
		if i > 0 {
			require.True(t, adjacent4(route[i-1], c), "route cells %d %v and %d %v are not 4-adjacent", i-1, route[i-1], i, c)
		}
	}
}

func TestPathingDefectAt57Steps(t *testing.T) {
	// Documents the library behaviour the leg decoder works around: a goal
	// exactly 57 steps away comes back complete with Len 57, but only 56
	// directions fit, so the first step reads DirNone.
	g, a, b := corridor(57, 0, false)
	ls := newLegSearcher(g, defaultHazardCost)
	res := ls.astar.BuildPath(ls.pg, toCoord(a), toCoord(b), ls.layer)
	require.False(t, res.Partial)
	require.Equal(t, 57, res.Steps.Len())
	require.Equal(t, pathing.DirNone, res.Steps.Next())
	require.Equal(t, pathing.DirRight, res.Steps.Next())
}

func TestChainLeg(t *testing.T) {
	for _, steps := range []int{1, 55, 56, 57, 58, 112, 113, 114, 250} {
		for _, offset := range []int{0, 60} {
			for _, vertical := range []bool{false, true} {
				for _, reverse := range []bool{false, true} {
					name := fmt.Sprintf("steps=%d/offset=%d/vertical=%v/reverse=%v", steps, offset, vertical, reverse)
					t.Run(name, func(t *testing.T) {
						g, a, b := corridor(steps, offset, vertical)
						if reverse {
							a, b = b, a
						}
						ls := newLegSearcher(g, defaultHazardCost)
						route, ok := ls.chainLeg(nil, a, b, 10*steps)
						require.True(t, ok)
						requireRoute(t, g, route, a, b, steps)
					})
				}
			}
		}
	}
}

func TestChainLegOpenField(t *testing.T) {
	// Manhattan distances around the 56/57 boundary in open terrain, where
	// the library picks its own staircase.
	g := NewGrid(300, 300)
	ls := newLegSearcher(g, defaultHazardCost)
	for _, d := range []Cell{{56, 0}, {57, 0}, {30, 27}, {29, 27}, {40, 18}, {100, 13}, {113, 0}, {120, 130}} {
		a := Cell{150, 150}
		b := Cell{a.X + d.X, a.Y - d.Y}
		route, ok := ls.chainLeg(nil, a, b, 1000)
		require.True(t, ok, "to %v", b)
		requireRoute(t, g, route, a, b, d.X+d.Y)
	}
}

func TestChainLegAppendsAndLimits(t *testing.T) {
	g, a, b := corridor(120, 0, false)
	ls := newLegSearcher(g, defaultHazardCost)
	prefix := []Cell{{-7, -7}}
	route, ok := ls.chainLeg(prefix, a, b, 200)
	require.True(t, ok)
	require.Equal(t, Cell{-7, -7}, route[0], "appends to dst")
	requireRoute(t, g, route[1:], a, b, 120)

	_, ok = ls.chainLeg(nil, a, b, 119)
	require.False(t, ok, "maxSteps bounds the chained route")
}

// deadEndGrid: a wide wall between start and goal leaves a dead end right
// in front of the goal; the way around is far longer than one pathing
// window, so naive chaining gets stuck at the dead end.
func deadEndGrid() (*Grid, Cell, Cell) {
	g := NewGrid(100, 100)
	g.FillRect(Point{40.5, 1.5}, Point{59.5, 97.5}, Blocked) // cells 40..59 × 1..97
	return g, Cell{2, 50}, Cell{97, 50}
}

func TestChainLegDeadEnd(t *testing.T) {
	g, a, b := deadEndGrid()
	ls := newLegSearcher(g, defaultHazardCost)
	_, ok := ls.chainLeg(nil, a, b, 10000)
	require.False(t, ok, "naive chaining stalls in the dead end before the wall")

	p := NewPlanner(g, Options{})
	route, err := p.FindCells(a, b)
	require.NoError(t, err)
	requireRoute(t, g, route, a, b, len(route)-1)
	require.Equal(t, bfsDistance(g, a, b), len(route)-1, "the planner's route is a shortest one")
}
