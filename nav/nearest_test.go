package nav

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// nearestInComponentByScan is the first nearestInComponent, kept as the
// oracle of the indexed one: it scans rings of cells around target's cell (Chebyshev
// radius r = 0, 1, ...) and returns the cell of component label whose centre
// is nearest to target. A cell on ring r is at least r-0.5 away, which
// bounds the scan.
func (p *Planner) nearestInComponentByScan(label int32, target Point) (Cell, bool) {
	g := p.grid
	tc := Cell{floorInt(target.X), floorInt(target.Y)}
	// Rings closer than the grid rectangle are empty: start at its distance.
	r0 := max(0, -tc.X, tc.X-(g.cols-1), -tc.Y, tc.Y-(g.rows-1))
	rMax := max(tc.X, g.cols-1-tc.X, tc.Y, g.rows-1-tc.Y)
	best, bestD := Cell{}, math.Inf(1)
	found := false
	check := func(x, y int) {
		if p.comp[y*g.cols+x] != label {
			return
		}
		c := Cell{x, y}
		if d := target.Dist(c.Center()); d < bestD {
			best, bestD, found = c, d, true
		}
	}
	for r := r0; r <= rMax; r++ {
		if float64(r)-0.5 > bestD {
			break
		}
		g.ring(tc, r, check)
	}
	return best, found
}

// nearestGrids are grids with many components: the benchmark's arena, the
// same with walled rooms (small components far from much of the grid), and
// noise, in sizes that are not multiples of the index's blocks.
func nearestGrids() map[string]*Grid {
	rooms := func(g *Grid, seed uint64) *Grid {
		rng := rand.New(rand.NewPCG(seed, 3))
		for i := 0; i < 6; i++ {
			x, y := rng.Float64()*float64(g.Cols()-10), rng.Float64()*float64(g.Rows()-10)
			w, h := 3+rng.Float64()*8, 3+rng.Float64()*8
			g.FillRect(Point{x, y}, Point{x + w, y + 1}, Blocked)
			g.FillRect(Point{x, y + h}, Point{x + w + 1, y + h + 1}, Blocked)
			g.FillRect(Point{x, y}, Point{x + 1, y + h}, Blocked)
			g.FillRect(Point{x + w, y}, Point{x + w + 1, y + h}, Blocked)
		}
		return g
	}
	noise := func(cols, rows int, fill float64, seed uint64) *Grid {
		rng := rand.New(rand.NewPCG(seed, 5))
		g := NewGrid(cols, rows)
		for y := 0; y < rows; y++ {
			for x := 0; x < cols; x++ {
				if rng.Float64() < fill {
					g.Set(Cell{x, y}, Blocked)
				}
			}
		}
		return g
	}
	return map[string]*Grid{
		"arena 100":       genArena(100, 1),
		"arena rooms 150": rooms(genArena(150, 2), 2),
		"noise 37x53":     noise(37, 53, 0.4, 3),
		"noise 130x70":    noise(130, 70, 0.45, 4),
		"rooms 64x200":    rooms(NewGrid(64, 200), 5),
	}
}

// TestNearestInComponentEqualsTheRingScan compares the indexed nearest cell
// with the ring scan over random components and targets: anywhere in the
// grid, on cell corners and centres (where distances tie), and outside it,
// near and far.
func TestNearestInComponentEqualsTheRingScan(t *testing.T) {
	for name, g := range nearestGrids() {
		p := NewPlanner(g, Options{ClusterSize: 8})
		rng := rand.New(rand.NewPCG(9, uint64(len(name))))
		var walkable []Cell
		for y := 0; y < g.Rows(); y++ {
			for x := 0; x < g.Cols(); x++ {
				if g.At(Cell{x, y}) != Blocked {
					walkable = append(walkable, Cell{x, y})
				}
			}
		}
		cols, rows := float64(g.Cols()), float64(g.Rows())
		far, ties := 0, 0
		for q := 0; q < 4000; q++ {
			label := p.compOf(walkable[rng.IntN(len(walkable))])
			var target Point
			switch q % 5 {
			case 0, 1:
				target = Point{rng.Float64() * cols, rng.Float64() * rows}
			case 2: // corners and centres: equal distances
				target = Point{float64(rng.IntN(g.Cols()+1)) + 0.5*float64(rng.IntN(2)), float64(rng.IntN(g.Rows()+1)) + 0.5*float64(rng.IntN(2))}
			case 3: // just outside
				target = Point{-3 + rng.Float64()*(cols+6), -3 + rng.Float64()*(rows+6)}
			case 4: // far outside
				target = Point{(rng.Float64()*2 - 1) * 1e4, (rng.Float64()*2 - 1) * 1e4}
			}
			want, wantOK := p.nearestInComponentByScan(label, target)
			got, ok := p.nearestInComponent(label, target)
			require.Equal(t, wantOK, ok, "%s: component %d, target %v", name, label, target)
			require.Equal(t, want, got, "%s: component %d, target %v", name, label, target)
			d := target.Dist(want.Center())
			if d > nearRings+0.5 {
				far++
			}
			if math.Abs(target.X-math.Floor(target.X)-0.5) < 1e-12 || target.X == math.Floor(target.X) {
				ties++
			}
		}
		require.Greater(t, far, 100, "%s: too few answers beyond the rings scanned cell by cell", name)
		require.Greater(t, ties, 100, name)
	}
}

func BenchmarkNearestInComponent(b *testing.B) {
	g := genArena(512, 1)
	p := NewPlanner(g, Options{})
	rng := rand.New(rand.NewPCG(1, 2))
	type query struct {
		label  int32
		target Point
	}
	var qs []query
	// Half the queries ask for the component of a random cell (mostly the
	// large one), half for a random component (mostly small pockets).
	labels := int32(len(p.near.compBox))
	for len(qs) < 1024 {
		c := Cell{rng.IntN(512), rng.IntN(512)}
		l := p.compOf(c)
		if len(qs)%2 == 1 {
			l = rng.Int32N(labels)
		}
		if l >= 0 {
			qs = append(qs, query{l, Point{rng.Float64() * 512, rng.Float64() * 512}})
		}
	}
	for _, impl := range []struct {
		name string
		fn   func(int32, Point) (Cell, bool)
	}{{"index", p.nearestInComponent}, {"scan", p.nearestInComponentByScan}} {
		b.Run(impl.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				q := qs[i%len(qs)]
				impl.fn(q.label, q.target)
			}
		})
	}
}
