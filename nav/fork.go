package nav

import "github.com/quasilyte/pathing"

// Fork returns a planner that answers exactly as p does but owns its own
// query scratch: the grid, the abstract graph and the other indexes built by
// NewPlanner are shared (they never change after it), the search state is
// not. A planner and its forks may answer queries on different goroutines at
// the same time; each one still serves one goroutine at a time.
func (p *Planner) Fork() *Planner {
	q := *p // every index built by NewPlanner, shared
	// The query scratch, the fork's own (zero values work).
	q.shapeSeen, q.shapeStamp = make([]uint32, len(p.shapes)), 0
	q.legs = &legSearcher{
		pg:    p.legs.pg,
		astar: pathing.NewAStar(pathing.AStarConfig{NumCols: uint(p.grid.cols), NumRows: uint(p.grid.rows)}),
		layer: p.legs.layer,
		tiles: p.legs.tiles,
	}
	q.startSearch, q.goalSearch = newClusterSearch(p.opt.ClusterSize), newClusterSearch(p.opt.ClusterSize)
	q.astar, q.theta, q.local = absSearch{}, thetaSearch{}, localSearch{}
	q.cellScratch, q.route, q.route2, q.route3 = nil, nil, nil, nil
	// The corner index is read-only after NewPlanner; the rest of the
	// smoother is scratch.
	q.smooth = smoother{cornerAt: p.smooth.cornerAt, cornerPre: p.smooth.cornerPre}
	return &q
}
