package nav

// smoother turns a 4-connected cell route into an any-angle path. It owns
// scratch buffers and is not goroutine-safe.
type smoother struct {
	pts    []Point // candidate points, one per route cell
	wpts   []Point // positions of the chosen waypoints
	costly []int32 // costly[i] = number of Costly cells among route[0:i]
	way    []int   // indices into pts of the chosen waypoints
	tiles  []Tile  // tiles[k]: worst tile a segment wpts[k]→wpts[k+1] may cross
	next   []Point // tauten scratch
	nextT  []Tile
	corner []tautCorner // bend scratch
	hull   []tautCorner
	chain  []Point
	dirty  []bool // tauten scratch
	// Convex obstacle corners of the planner's grid (see indexCorners).
	cornerAt  []uint8
	cornerPre []int32
	nextD     []bool
}

// maxTile returns the worst tile of route cells i..j (inclusive); route
// cells are never Blocked.
func (s *smoother) maxTile(i, j int) Tile {
	if i > j {
		i, j = j, i
	}
	if s.costly[j+1]-s.costly[i] > 0 {
		return Costly
	}
	return Free
}

// costlyCells returns the number of Costly cells on the last smoothed route.
func (s *smoother) costlyCells() int { return int(s.costly[len(s.costly)-1]) }

func (s *smoother) visible(g *Grid, i, j int) bool {
	return g.LineOfSight(s.pts[i], s.pts[j], s.maxTile(i, j))
}

// smooth returns the any-angle path for route (route[0] is from's cell, or
// the displaced start cell when displaced; route[len-1] is to's cell).
//
// Every line-of-sight test uses as maxTile the worst tile of the route
// cells between the two points it joins, so a route that avoided hazards
// stays out of them while a route forced through a hazard may be smoothed
// within it.
//
//  1. Greedy string pulling: from the current anchor, a galloping search
//     (2, 4, 8, … points ahead, then bisection) finds a far route point
//     still in line of sight; it becomes the next waypoint and anchor.
//  2. The path is pulled taut ([smoother.tauten]): every bend whose two
//     segments avoid Costly cells is replaced by the shortest path around
//     the obstacle corners inside the triangle it spans, repeatedly, so
//     that bends end up on obstacle corners (tautOffset away from them).
//  3. Collinear waypoints are dropped ([smoother.finish]).
func (s *smoother) smooth(g *Grid, from, to Point, route []Cell, displaced bool) []Point {
	n := len(route)
	s.pts = s.pts[:0]
	for _, c := range route {
		s.pts = append(s.pts, c.Center())
	}
	if !displaced {
		s.pts[0] = from
	}
	if n > 1 || !displaced {
		s.pts[n-1] = to
	} else {
		s.pts = append(s.pts, to) // displaced into the goal cell: centre, then to
		route = append(route[:1:1], route[0])
		n = 2
	}
	s.costly = s.costly[:0]
	s.costly = append(s.costly, 0)
	for i, c := range route {
		add := int32(0)
		if g.At(c) == Costly {
			add = 1
		}
		s.costly = append(s.costly, s.costly[i]+add)
	}

	out := make([]Point, 0, 8)
	if displaced {
		out = append(out, from)
	}
	if n == 1 {
		// from and to share a walkable cell.
		if g.LineOfSight(from, to, g.At(route[0])) {
			return append(out, from, to)
		}
		return append(out, from, route[0].Center(), to)
	}

	// Pass 1: greedy string pulling.
	s.way = append(s.way[:0], 0)
	for a := 0; a < n-1; {
		good, bad := a+1, -1
		for step := 1; ; step *= 2 {
			cand := a + step*2
			if cand >= n-1 {
				cand = n - 1
			}
			if cand <= good {
				break
			}
			if s.visible(g, a, cand) {
				good = cand
				if cand == n-1 {
					break
				}
			} else {
				bad = cand
				break
			}
		}
		if bad >= 0 {
			for bad-good > 1 {
				mid := (good + bad) / 2
				if s.visible(g, a, mid) {
					good = mid
				} else {
					bad = mid
				}
			}
		}
		s.way = append(s.way, good)
		a = good
	}

	// Pass 2: pull the path taut (which also drops waypoints whose
	// neighbours see each other).
	s.wpts, s.tiles = s.wpts[:0], s.tiles[:0]
	for k, i := range s.way {
		s.wpts = append(s.wpts, s.pts[i])
		if k > 0 {
			s.tiles = append(s.tiles, s.maxTile(s.way[k-1], i))
		}
	}
	return s.finish(g, out)
}

// finish pulls s.wpts (segment tiles in s.tiles) taut, drops collinear
// waypoints (keeping only turning points) and appends the result to out.
// A merge is confirmed with LineOfSight: a segment through a grid corner
// can be judged differently once its endpoints move (rounding).
func (s *smoother) finish(g *Grid, out []Point) []Point {
	s.tauten(g)
	base := len(out) // 1 when out starts with a displaced from
	s.nextT = s.nextT[:0]
	for k, p := range s.wpts {
		if m := len(out); m-base >= 2 {
			a, b := out[m-2], out[m-1]
			t := max(s.nextT[len(s.nextT)-1], s.tiles[k-1])
			if collinearBetween(a, b, p) && g.LineOfSight(a, p, t) {
				out[m-1] = p
				s.nextT[len(s.nextT)-1] = t
				continue
			}
		}
		out = append(out, p)
		if k > 0 {
			s.nextT = append(s.nextT, s.tiles[k-1])
		}
	}
	return out
}

// tautFree pulls taut the path pts, whose segments all have line of sight
// over Free cells, and returns it freshly allocated.
func (s *smoother) tautFree(g *Grid, pts []Point) []Point {
	s.wpts, s.tiles = append(s.wpts[:0], pts...), s.tiles[:0]
	for range len(pts) - 1 {
		s.tiles = append(s.tiles, Free)
	}
	return s.finish(g, make([]Point, 0, len(pts)))
}

// collinearBetween reports whether b lies on the segment a→c (up to
// floating-point noise), so that it can be dropped.
func collinearBetween(a, b, c Point) bool {
	abx, aby := b.X-a.X, b.Y-a.Y
	bcx, bcy := c.X-b.X, c.Y-b.Y
	cross := abx*bcy - aby*bcx
	dot := abx*bcx + aby*bcy
	scale := (abs(abx) + abs(aby)) * (abs(bcx) + abs(bcy))
	return dot >= 0 && abs(cross) <= 1e-9*scale
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
