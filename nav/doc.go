// Package nav owns navigation over a 2D cell grid: tiles, line of sight,
// connectivity, and a hierarchical path planner with any-angle smoothing.
//
// # Coordinates
//
// A cell (x, y) covers the square [x, x+1) × [y, y+1) in "cell units".
// Continuous points ([Point]) are in cell units too, so the centre of cell
// (3, 4) is (3.5, 4.5) and [PointCell] maps a point to its cell by flooring.
// nav knows nothing about the world: callers convert their world coordinates
// to cell units and back.
//
// # Tiles
//
// Every cell holds a [Tile]: [Free] (step cost 1), [Costly] (a hazard: walkable,
// step cost [Options.HazardCost]) or [Blocked] (impassable). Cells outside the
// grid read as Blocked.
//
// # Planning
//
// [Planner] is an HPA*-style hierarchical planner. The grid is cut into square
// clusters; every maximal run of cells that are walkable on both sides of a
// cluster border gets one or more transitions (entrances); the transitions of
// a cluster are linked by intra-cluster edges whose costs (and cell paths) are
// computed when the planner is built. A query inserts its start and goal into
// their clusters, runs A* over this abstract graph and concatenates the cached
// cell paths of the edges it used. Queries with a clear line of sight over
// Free cells skip every search. Queries of up to 32 steps first run an
// octile A* restricted to a window 8 cells around start and goal; its route
// is used when it is provably the cheapest of the whole grid (no route that
// leaves the window can cost less: a bound from the octile distances through
// the walkable cells just outside), and taken at once when its smoothed path
// is within 1% of the straight-line distance. Otherwise short queries
// (within 56 steps, the limit of one github.com/quasilyte/pathing search)
// try a direct quasilyte/pathing A* leg, taken on the same terms, and the
// cheapest of it and the HPA* path is used.
//
// The planner's own searches (cluster-restricted Dijkstra, abstract A*, the
// windowed A*) use an octile move model over the same tile costs: straight
// steps cost the entered cell's cost, diagonal steps √2 times as much and
// only between two walkable orthogonal cells; diagonals are returned as two
// 4-connected steps. Costing diagonals like their Euclidean length keeps cell routes
// close to the any-angle optimum, which a purely 4-directional search (whose
// many equally cheap staircases include L shapes) does not.
//
// The 4-connected cell route is turned into an any-angle path by greedy
// string pulling with [Grid.LineOfSight], then pulled taut: every bend is
// replaced by the convex chain of the obstacle corners inside the triangle
// it spans until none changes, which gives the shortest path homotopic to
// the route, bending 0.001 cell off obstacle corners. Smoothing never leads
// a path into hazard cells that the cell route avoided.
//
// The taut path keeps the octile route's homotopy class, which on cluttered
// maps is not always the class of the any-angle optimum. When a path over
// Free cells is more than 1% but at most 20% longer than the straight line
// and bends at least once every 12.5 cells on average (it winds between
// many obstacles), a Lazy Theta* search over the corners of the Free
// cells, within 8 cells of the route, looks for a shorter path; its path
// is turned back into a 4-connected route of Free cells, smoothed and
// pulled taut the same way, and kept when it is shorter. Every path therefore passes the same
// line-of-sight checks, whichever search found it.
//
// # Exact obstacles
//
// [Options.Obstacles] gives the planner obstacles as exact [Shape]s (discs
// and rounded boxes, already grown by an agent's clearance). They block the
// cells whose interior they meet ([Grid.FillShape]); [Planner.Blocked] and
// FindPath's "inside an obstacle" use the shapes themselves, so a target in
// a partly covered cell is reached by a last leg the exact geometry clears.
//
// Connected components (4-connectivity over non-Blocked cells) are computed
// up front, so unreachable targets are detected in constant time and reported
// as a [*NoPathError] carrying the nearest reachable point, found through a
// per-component index of blocks of cells rather than a scan of the grid.
package nav
