package nav

import (
	"errors"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// abstractGraph is the HPA* graph: nodes are transition cells on cluster
// borders; inter-cluster edges join the two cells of a transition (one
// straight step); intra-cluster edges join every pair of nodes of a cluster
// that are connected inside it, with the cost of the cluster-restricted
// shortest path. The path itself is recoverable from the node's search tree.
type abstractGraph struct {
	cs, ncx, ncy int

	nodeCell    []Cell
	nodeCluster []int32

	// clStart/clNodes list the nodes of each cluster (CSR).
	clStart []int32
	clNodes []int32

	// edgeStart/edges list each node's outgoing edges (CSR).
	edgeStart []int32
	edges     []absEdge

	// trees holds, for each node, the parent directions of a forward
	// Dijkstra rooted at it and restricted to its cluster (cs*cs bytes per
	// node, laid out with the cluster's own width).
	trees []uint8
}

type absEdge struct {
	to   int32
	cost float32
}

// clusterRect returns the origin and size of cluster cl.
func (p *Planner) clusterRect(cl int) (x0, y0, w, h int) {
	cs := p.opt.ClusterSize
	ncx := (p.grid.cols + cs - 1) / cs
	cx, cy := cl%ncx, cl/ncx
	x0, y0 = cx*cs, cy*cs
	return x0, y0, min(cs, p.grid.cols-x0), min(cs, p.grid.rows-y0)
}

func (p *Planner) clusterOf(c Cell) int {
	cs := p.opt.ClusterSize
	return (c.Y/cs)*p.abs.ncx + c.X/cs
}

// transitionOffsets returns the offsets, within a run of n cells that are
// walkable on both sides of a border, of the run's transitions. Short runs
// get one transition in the middle; longer runs get one at each end and
// more in between so that consecutive transitions are at most
// transitionSpacing apart.
func transitionOffsets(n int, dst []int) []int {
	dst = dst[:0]
	if n <= shortRun {
		return append(dst, (n-1)/2)
	}
	gaps := (n - 1 + transitionSpacing - 1) / transitionSpacing
	for i := 0; i <= gaps; i++ {
		dst = append(dst, i*(n-1)/gaps)
	}
	return dst
}

const (
	shortRun          = 3
	transitionSpacing = 8
)

// buildAbstract places transitions, computes intra-cluster edges by
// cluster-restricted Dijkstra from every node, and stores the search trees.
func (p *Planner) buildAbstract() *abstractGraph {
	g := p.grid
	cs := p.opt.ClusterSize
	a := &abstractGraph{cs: cs, ncx: (g.cols + cs - 1) / cs, ncy: (g.rows + cs - 1) / cs}
	p.abs = a
	nodeOf := make(map[int]int32)
	var adj [][]absEdge
	node := func(c Cell) int32 {
		i := c.Y*g.cols + c.X
		if id, ok := nodeOf[i]; ok {
			return id
		}
		id := int32(len(a.nodeCell))
		nodeOf[i] = id
		a.nodeCell = append(a.nodeCell, c)
		a.nodeCluster = append(a.nodeCluster, int32(p.clusterOf(c)))
		adj = append(adj, nil)
		return id
	}
	link := func(c1, c2 Cell) {
		n1, n2 := node(c1), node(c2)
		adj[n1] = append(adj[n1], absEdge{n2, float32(p.tileCost[g.At(c2)])})
		adj[n2] = append(adj[n2], absEdge{n1, float32(p.tileCost[g.At(c1)])})
	}
	var offs []int
	// scanBorder walks the border cells (first side, second side) given by
	// cell(i) for i in [0, n) and links transitions of each run.
	scanBorder := func(n int, cell func(i int) (Cell, Cell)) {
		start := -1
		for i := 0; i <= n; i++ {
			open := false
			if i < n {
				c1, c2 := cell(i)
				open = g.At(c1) != Blocked && g.At(c2) != Blocked
			}
			switch {
			case open && start < 0:
				start = i
			case !open && start >= 0:
				offs = transitionOffsets(i-start, offs)
				for _, o := range offs {
					link(cell(start + o))
				}
				start = -1
			}
		}
	}
	for cy := 0; cy < a.ncy; cy++ {
		y0 := cy * cs
		h := min(cs, g.rows-y0)
		for cx := 0; cx+1 < a.ncx; cx++ {
			x := (cx+1)*cs - 1
			scanBorder(h, func(i int) (Cell, Cell) { return Cell{x, y0 + i}, Cell{x + 1, y0 + i} })
		}
	}
	for cx := 0; cx < a.ncx; cx++ {
		x0 := cx * cs
		w := min(cs, g.cols-x0)
		for cy := 0; cy+1 < a.ncy; cy++ {
			y := (cy+1)*cs - 1
			scanBorder(w, func(i int) (Cell, Cell) { return Cell{x0 + i, y}, Cell{x0 + i, y + 1} })
		}
	}

	// Nodes per cluster.
	ncl := a.ncx * a.ncy
	a.clStart = make([]int32, ncl+1)
	for _, cl := range a.nodeCluster {
		a.clStart[cl+1]++
	}
	for i := 0; i < ncl; i++ {
		a.clStart[i+1] += a.clStart[i]
	}
	a.clNodes = make([]int32, len(a.nodeCell))
	fill := append([]int32(nil), a.clStart[:ncl]...)
	for id, cl := range a.nodeCluster {
		a.clNodes[fill[cl]] = int32(id)
		fill[cl]++
	}

	// Intra-cluster edges and search trees: one cluster-restricted Dijkstra
	// per node, stopped once every node of the cluster is settled (only the
	// tree paths between nodes are ever read). Clusters are independent and
	// each node belongs to one cluster, so workers write disjoint parts of
	// trees and adj.
	cs2 := cs * cs
	a.trees = make([]uint8, len(a.nodeCell)*cs2)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := min(runtime.GOMAXPROCS(0), ncl); w > 0; w-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newClusterSearch(cs)
			var targets []Cell
			for {
				cl := int(next.Add(1) - 1)
				if cl >= ncl {
					return
				}
				members := a.clNodes[a.clStart[cl]:a.clStart[cl+1]]
				targets = targets[:0]
				for _, id := range members {
					targets = append(targets, a.nodeCell[id])
				}
				for _, id := range members {
					p.runCluster(s, cl, a.nodeCell[id], false, targets)
					copy(a.trees[int(id)*cs2:], s.par[:s.w*s.h])
					for _, other := range members {
						if other == id {
							continue
						}
						if d := s.distTo(a.nodeCell[other]); !math.IsInf(d, 1) {
							adj[id] = append(adj[id], absEdge{other, float32(d)})
						}
					}
				}
			}
		}()
	}
	wg.Wait()

	a.edgeStart = make([]int32, len(adj)+1)
	for i, es := range adj {
		a.edgeStart[i+1] = a.edgeStart[i] + int32(len(es))
	}
	a.edges = make([]absEdge, 0, a.edgeStart[len(adj)])
	for _, es := range adj {
		a.edges = append(a.edges, es...)
	}
	return a
}

// absSearch is the scratch state of the abstract A*.
type absSearch struct {
	state   []absState
	pos     []int32 // heap positions; -1 once closed
	gen     uint32
	heap    indexedHeap
	path    []int32
	targets []Cell
}

// absState is one node's A* state; it is valid only if gen matches.
type absState struct {
	g   float64
	par int32
	gen uint32
}

func (s *absSearch) prepare(n int) {
	if len(s.state) < n {
		s.state = make([]absState, n)
		s.pos = make([]int32, n)
		s.gen = 0
	}
	s.gen++
	if s.gen == 0 { // wrapped: clear stamps
		clear(s.state)
		s.gen = 1
	}
	s.heap.reset()
}

// heuristicWeight scales the octile heuristic of the abstract A*. 1 keeps
// the abstract search optimal; larger values expand far fewer nodes on
// large open maps at some cost in path length (measured on random512-10-0:
// 1.1 is about 4x faster, with a 1.5% longer mean path).
const heuristicWeight = 1.0

// tieBreak makes A* prefer deeper nodes among equal f values, which avoids
// expanding whole plateaus of equally good nodes in open terrain.
const tieBreak = 1e-9

var errNoAbstractRoute = errors.New("internal error: abstract graph has no route between connected cells")

// clusterNodeCells appends the cells of cluster cl's nodes to dst.
func (p *Planner) clusterNodeCells(dst []Cell, cl int) []Cell {
	a := p.abs
	for _, m := range a.clNodes[a.clStart[cl]:a.clStart[cl+1]] {
		dst = append(dst, a.nodeCell[m])
	}
	return dst
}

// hpaRoute appends the route sc→gc (sc included) to dst: start and goal are
// inserted into their clusters by cluster-restricted Dijkstra, A* runs over
// the abstract graph, and the cached edge paths are concatenated.
func (p *Planner) hpaRoute(dst []Cell, sc, gc Cell) ([]Cell, error) {
	a := p.abs
	cls, clg := p.clusterOf(sc), p.clusterOf(gc)
	ss, gs := p.startSearch, p.goalSearch
	// Insert start and goal: cluster-restricted searches that stop once
	// every node of the cluster (and, in a shared cluster, the other
	// endpoint) is settled.
	s := &p.astar
	s.targets = p.clusterNodeCells(s.targets[:0], cls)
	if cls == clg {
		s.targets = append(s.targets, gc)
	}
	p.runCluster(ss, cls, sc, false, s.targets)
	s.targets = p.clusterNodeCells(s.targets[:0], clg)
	p.runCluster(gs, clg, gc, true, s.targets)

	best := math.Inf(1)
	bestLast := int32(-1) // -1: direct path inside the shared cluster
	if cls == clg {
		best = ss.distTo(gc)
	}

	s.prepare(len(a.nodeCell))
	st := s.state
	const w = heuristicWeight
	for _, m := range a.clNodes[a.clStart[cls]:a.clStart[cls+1]] {
		d := ss.distTo(a.nodeCell[m])
		if math.IsInf(d, 1) {
			continue
		}
		st[m] = absState{g: d, par: -1, gen: s.gen}
		s.pos[m] = 0
		s.heap.push(d+w*octile(a.nodeCell[m], gc)-tieBreak*d, m, s.pos)
	}
	for s.heap.len() > 0 {
		it := s.heap.pop(s.pos)
		if it.key >= best {
			break
		}
		u := it.val
		s.pos[u] = -1
		gu := st[u].g
		if int(a.nodeCluster[u]) == clg {
			if d := gs.distTo(a.nodeCell[u]); gu+d < best {
				best, bestLast = gu+d, u
			}
		}
		for _, e := range a.edges[a.edgeStart[u]:a.edgeStart[u+1]] {
			v := e.to
			ng := gu + float64(e.cost)
			sv := &st[v]
			if sv.gen != s.gen {
				*sv = absState{g: ng, par: u, gen: s.gen}
				s.pos[v] = 0
				s.heap.push(ng+w*octile(a.nodeCell[v], gc)-tieBreak*ng, v, s.pos)
			} else if ng < sv.g && s.pos[v] >= 0 {
				sv.g, sv.par = ng, u
				s.heap.decrease(v, ng+w*octile(a.nodeCell[v], gc)-tieBreak*ng, s.pos)
			}
		}
	}
	if math.IsInf(best, 1) {
		return dst, errNoAbstractRoute
	}

	dst = append(dst, sc)
	if bestLast < 0 {
		return p.appendTreePath(dst, ss.par, ss.x0, ss.y0, ss.w, false, sc, gc, &p.cellScratch), nil
	}
	path := s.path[:0]
	for n := bestLast; n >= 0; n = st[n].par {
		path = append(path, n)
	}
	s.path = path
	first := a.nodeCell[path[len(path)-1]]
	dst = p.appendTreePath(dst, ss.par, ss.x0, ss.y0, ss.w, false, sc, first, &p.cellScratch)
	cs2 := a.cs * a.cs
	for i := len(path) - 1; i > 0; i-- {
		u, v := path[i], path[i-1]
		cu, cv := a.nodeCell[u], a.nodeCell[v]
		if a.nodeCluster[u] != a.nodeCluster[v] {
			dst = append(dst, cv) // inter-cluster step
			continue
		}
		x0, y0, w, h := p.clusterRect(int(a.nodeCluster[u]))
		tree := a.trees[int(u)*cs2 : int(u)*cs2+w*h]
		dst = p.appendTreePath(dst, tree, x0, y0, w, false, cu, cv, &p.cellScratch)
	}
	last := a.nodeCell[bestLast]
	return p.appendTreePath(dst, gs.par, gs.x0, gs.y0, gs.w, true, gc, last, &p.cellScratch), nil
}
