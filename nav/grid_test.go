package nav

import (
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// gridFromRows builds a grid from ASCII rows: '#' Blocked, '~' Costly, any
// other character Free. It also returns the cells of every other letter
// (e.g. 'S', 'G') by character.
func gridFromRows(rows ...string) (*Grid, map[byte][]Cell) {
	g := NewGrid(len(rows[0]), len(rows))
	marks := map[byte][]Cell{}
	for y, row := range rows {
		if len(row) != g.Cols() {
			panic("ragged rows")
		}
		for x := 0; x < len(row); x++ {
			switch ch := row[x]; ch {
			case '#':
				g.Set(Cell{x, y}, Blocked)
			case '~':
				g.Set(Cell{x, y}, Costly)
			case '.':
			default:
				marks[ch] = append(marks[ch], Cell{x, y})
			}
		}
	}
	return g, marks
}

// marked returns the sorted cells holding t.
func marked(g *Grid, t Tile) []Cell {
	var out []Cell
	for y := 0; y < g.Rows(); y++ {
		for x := 0; x < g.Cols(); x++ {
			if g.At(Cell{x, y}) == t {
				out = append(out, Cell{x, y})
			}
		}
	}
	return out
}

// cellsIn returns the sorted cells of the inclusive rectangle.
func cellsIn(x0, y0, x1, y1 int) []Cell {
	var out []Cell
	for y := y0; y <= y1; y++ {
		for x := x0; x <= x1; x++ {
			out = append(out, Cell{x, y})
		}
	}
	return out
}

func sortCells(cs []Cell) []Cell {
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].Y != cs[j].Y {
			return cs[i].Y < cs[j].Y
		}
		return cs[i].X < cs[j].X
	})
	return cs
}

func TestGridBasics(t *testing.T) {
	g := NewGrid(4, 3)
	require.Equal(t, 4, g.Cols())
	require.Equal(t, 3, g.Rows())
	require.True(t, g.InBounds(Cell{3, 2}))
	require.False(t, g.InBounds(Cell{4, 0}))
	require.False(t, g.InBounds(Cell{0, -1}))
	require.Equal(t, Free, g.At(Cell{1, 1}))
	require.Equal(t, Blocked, g.At(Cell{-1, 0}), "out of bounds reads Blocked")
	require.Equal(t, Blocked, g.At(Cell{0, 3}))
	g.Set(Cell{1, 1}, Costly)
	g.Set(Cell{9, 9}, Blocked) // ignored
	require.Equal(t, Costly, g.At(Cell{1, 1}))
	g.Set(Cell{2, 1}, Tile(7))
	require.Equal(t, Blocked, g.At(Cell{2, 1}), "out-of-range tiles store as Blocked")
	require.Equal(t, 1, g.Count(Costly))

	c := g.Clone()
	c.Set(Cell{0, 0}, Blocked)
	require.Equal(t, Free, g.At(Cell{0, 0}), "clone is independent")

	require.Equal(t, Point{3.5, 4.5}, Cell{3, 4}.Center())
	require.Equal(t, Cell{3, 4}, PointCell(Point{3.99, 4}))
	require.Equal(t, Cell{-1, -2}, PointCell(Point{-0.5, -1.2}))
	require.Equal(t, "blocked", Blocked.String())
	require.Panics(t, func() { NewGrid(-1, 2) })
}

func TestFillRect(t *testing.T) {
	tests := []struct {
		name     string
		min, max Point
		want     []Cell
	}{
		{"integer corners touch neighbours", Point{2, 2}, Point{4, 4}, cellsIn(1, 1, 4, 4)},
		{"fractional", Point{2.2, 2.5}, Point{3.7, 2.9}, cellsIn(2, 2, 3, 2)},
		{"swapped corners", Point{3.7, 2.9}, Point{2.2, 2.5}, cellsIn(2, 2, 3, 2)},
		{"degenerate point inside a cell", Point{5.5, 5.5}, Point{5.5, 5.5}, cellsIn(5, 5, 5, 5)},
		{"degenerate point on a corner", Point{5, 5}, Point{5, 5}, cellsIn(4, 4, 5, 5)},
		{"clipped to the grid", Point{-3, 6.5}, Point{1.5, 20}, cellsIn(0, 6, 1, 7)},
		{"fully outside", Point{-5, -5}, Point{-1, -1}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGrid(8, 8)
			g.FillRect(tc.min, tc.max, Blocked)
			require.Equal(t, tc.want, marked(g, Blocked))
		})
	}
}

func TestFillCircle(t *testing.T) {
	// Radius 1 around a lattice point: the 4 cells sharing the point plus
	// the 8 whose edges the circle touches at distance exactly 1.
	ring := append(cellsIn(3, 3, 4, 4), Cell{3, 2}, Cell{4, 2}, Cell{2, 3}, Cell{5, 3}, Cell{2, 4}, Cell{5, 4}, Cell{3, 5}, Cell{4, 5})
	tests := []struct {
		name   string
		center Point
		radius float64
		want   []Cell
	}{
		{"small inside one cell", Point{4.5, 4.5}, 0.3, cellsIn(4, 4, 4, 4)},
		{"touching edges counts", Point{4.5, 4.5}, 0.5, append(cellsIn(4, 3, 4, 5), Cell{3, 4}, Cell{5, 4})},
		{"lattice centre radius 1", Point{4, 4}, 1, ring},
		{"zero radius on a corner", Point{4, 4}, 0, cellsIn(3, 3, 4, 4)},
		{"clipped, touching at 1.5", Point{0.5, 0.5}, 1.5, append(cellsIn(0, 0, 1, 1), Cell{2, 0}, Cell{0, 2})},
		{"negative radius", Point{4, 4}, -1, nil},
		{"NaN radius", Point{4, 4}, math.NaN(), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGrid(8, 8)
			g.FillCircle(tc.center, tc.radius, Costly)
			require.Equal(t, sortCells(tc.want), marked(g, Costly))
		})
	}
}

func TestFillNeverDowngrades(t *testing.T) {
	g := NewGrid(8, 8)
	g.FillRect(Point{2.5, 2.5}, Point{3.5, 3.5}, Blocked) // cells 2..3
	g.FillCircle(Point{3, 3}, 2, Costly)
	g.FillRect(Point{0, 0}, Point{8, 8}, Free)
	require.Equal(t, cellsIn(2, 2, 3, 3), marked(g, Blocked), "Blocked survives Costly and Free fills")
	require.NotEmpty(t, marked(g, Costly))
	g.FillCircle(Point{3, 3}, 2, Blocked)
	require.Empty(t, marked(g, Costly), "Costly upgrades to Blocked")
}

func TestLineOfSight(t *testing.T) {
	base := []string{
		"........",
		".#......",
		"..#.....",
		"........",
		"...~....",
		"........",
		"........",
		"........",
	}
	tests := []struct {
		name    string
		rows    []string
		a, b    Point
		maxTile Tile
		want    bool
	}{
		{"clear row", base, Point{0.5, 0.5}, Point{7.5, 0.5}, Free, true},
		{"clear diagonal-ish", base, Point{0.5, 7.5}, Point{7.5, 5.2}, Free, true},
		{"blocked through a wall cell", base, Point{0.5, 1.5}, Point{3.5, 1.5}, Free, false},
		{"blocked diagonal through cells", base, Point{0.2, 0.2}, Point{3.5, 3.5}, Costly, false},
		{"squeeze between diagonal blocked cells", base, Point{1.5, 2.5}, Point{2.5, 1.5}, Costly, false},
		{"squeeze far endpoints", base, Point{0.5, 3.5}, Point{3.5, 0.5}, Costly, false},
		{"corner touch allowed with one blocked neighbour", []string{
			"....",
			"..#.",
			"....",
			"....",
		}, Point{0.5, 0.5}, Point{3.5, 3.5}, Free, true},
		{"exact corner, both off-diagonal cells blocked", []string{
			"....",
			"..#.",
			".#..",
			"....",
		}, Point{0.5, 0.5}, Point{3.5, 3.5}, Free, false},
		{"along grid line next to blocked cell", base, Point{0.5, 3}, Point{6.5, 3}, Costly, false},
		{"along grid line next to costly cell", base, Point{1.5, 4}, Point{6.5, 4}, Free, false},
		{"along grid line, costly allowed", base, Point{1.5, 4}, Point{6.5, 4}, Costly, true},
		{"along vertical grid line next to blocked cell", base, Point{2, 0.5}, Point{2, 6.5}, Costly, false},
		{"along vertical grid line, clear", base, Point{5, 0.5}, Point{5, 7.5}, Free, true},
		{"along grid line touching blocked cell only at its corner", base, Point{3, 3}, Point{3, 7.5}, Costly, true},
		{"along grid line overlapping blocked cell edge", base, Point{3, 2.5}, Point{3, 7.5}, Costly, false},
		{"through costly with Free", base, Point{0.5, 4.5}, Point{7.5, 4.5}, Free, false},
		{"through costly with Costly", base, Point{0.5, 4.5}, Point{7.5, 4.5}, Costly, true},
		{"endpoint in blocked cell", base, Point{1.5, 1.5}, Point{5.5, 5.5}, Costly, false},
		{"same point", base, Point{4.2, 6.1}, Point{4.2, 6.1}, Free, true},
		{"start out of bounds", base, Point{-0.5, 0.5}, Point{3.5, 0.5}, Costly, false},
		{"end on the far grid edge is out of bounds", base, Point{0.5, 0.5}, Point{8, 0.5}, Costly, false},
		{"NaN", base, Point{math.NaN(), 0.5}, Point{3.5, 0.5}, Costly, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := gridFromRows(tc.rows...)
			require.Equal(t, tc.want, g.LineOfSight(tc.a, tc.b, tc.maxTile))
			require.Equal(t, tc.want, g.LineOfSight(tc.b, tc.a, tc.maxTile), "symmetric")
		})
	}
}

func TestLineOfSightNoAlloc(t *testing.T) {
	g := genArena(64, 3)
	allocs := testing.AllocsPerRun(100, func() {
		g.LineOfSight(Point{1.5, 1.5}, Point{60.5, 40.5}, Costly)
		g.LineOfSight(Point{1.5, 7}, Point{60.5, 7}, Costly)
	})
	require.Zero(t, allocs)
}
