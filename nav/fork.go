package nav

import "github.com/quasilyte/pathing"

// Fork returns a planner that answers exactly as p does but owns its own
// query scratch: the grid, the abstract graph and the other indexes built by
// NewPlanner are shared (they never change after it), the search state is
// not. A planner and its forks may answer queries on different goroutines at
// the same time; each one still serves one goroutine at a time.
func (p *Planner) Fork() *Planner {
	q := &Planner{
		grid:       p.grid,
		opt:        p.opt,
		tileCost:   p.tileCost,
		solid:      p.solid,
		shapes:     p.shapes,
		shapeStart: p.shapeStart,
		shapeIdx:   p.shapeIdx,
		shapeSeen:  make([]uint32, len(p.shapes)),
		comp:       p.comp,
		abs:        p.abs,
		legs: &legSearcher{
			pg:    p.legs.pg,
			astar: pathing.NewAStar(pathing.AStarConfig{NumCols: uint(p.grid.cols), NumRows: uint(p.grid.rows)}),
			layer: p.legs.layer,
			tiles: p.legs.tiles,
		},
		startSearch: newClusterSearch(p.opt.ClusterSize),
		goalSearch:  newClusterSearch(p.opt.ClusterSize),
	}
	// The corner index is read-only after NewPlanner; the rest of the
	// smoother is scratch.
	q.smooth.cornerAt, q.smooth.cornerPre = p.smooth.cornerAt, p.smooth.cornerPre
	return q
}
