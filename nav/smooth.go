package nav

// smoother turns a 4-connected cell route into an any-angle path. It owns
// scratch buffers and is not goroutine-safe.
type smoother struct {
	pts    []Point // candidate points, one per route cell
	wpts   []Point // positions of the chosen waypoints
	outIdx []int   // route index of each output waypoint
	costly []int32 // costly[i] = number of Costly cells among route[0:i]
	way    []int   // indices into pts of the chosen waypoints
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
//  2. Waypoints whose neighbours see each other are dropped (repeated until
//     stable).
//  3. Each interior waypoint is pulled from its cell centre towards the
//     cell corner that shortens the path most, as far as both of its
//     segments keep line of sight (staying cornerClearance inside its
//     cell), so paths hug obstacle corners instead of cell centres; then
//     step 2 is applied once more.
//  4. Collinear waypoints are dropped.
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

	// Pass 2: drop waypoints whose neighbours see each other.
	for changed := true; changed; {
		changed = false
		w := s.way
		k := 1
		for i := 1; i < len(w)-1; i++ {
			if s.visible(g, w[k-1], w[i+1]) {
				changed = true
				continue
			}
			w[k] = w[i]
			k++
		}
		w[k] = w[len(w)-1]
		s.way = w[:k+1]
	}

	// Pass 3: pull each interior waypoint from its cell centre towards a
	// corner of its cell, as far as both of its segments keep line of
	// sight, then drop waypoints made redundant.
	s.wpts = s.wpts[:0]
	for _, i := range s.way {
		s.wpts = append(s.wpts, s.pts[i])
	}
	s.pullCorners(g)

	// Pass 4: drop collinear waypoints (keeping only turning points). A
	// merge is confirmed with LineOfSight: a segment through a grid corner
	// can be judged differently once its endpoints move (rounding).
	base := len(out) // 1 when out starts with a displaced from
	s.outIdx = s.outIdx[:0]
	for k, p := range s.wpts {
		if m := len(out); m-base >= 2 {
			a, b := out[m-2], out[m-1]
			if collinearBetween(a, b, p) && g.LineOfSight(a, p, s.maxTile(s.outIdx[m-2-base], s.way[k])) {
				out[m-1] = p
				s.outIdx[m-1-base] = s.way[k]
				continue
			}
		}
		out = append(out, p)
		s.outIdx = append(s.outIdx, s.way[k])
	}
	return out
}

// cornerClearance is how close (in cells, per axis) a pulled waypoint may
// come to the edges of its cell. Waypoints stay inside their own walkable
// cell with some margin, so an agent that steers slightly wide of a
// waypoint is not immediately in an obstacle.
const cornerClearance = 0.1

// pullCorners moves interior waypoints (s.wpts, indices s.way) towards the
// corner of their cell that shortens the path most, keeping line of sight
// (with the route-span maxTile) to both neighbours; then it drops waypoints
// whose neighbours now see each other.
func (s *smoother) pullCorners(g *Grid) {
	// Endpoints stay: w[0] is from, or the displaced start cell's centre
	// (from itself is not in w), and w[len-1] is to.
	w, idx := s.wpts, s.way
	for i := 1; i < len(w)-1; i++ {
		a, c, b := w[i-1], w[i], w[i+1]
		ta, tb := s.maxTile(idx[i-1], idx[i]), s.maxTile(idx[i], idx[i+1])
		best, bestLen := c, a.Dist(c)+c.Dist(b)
		for _, d := range [4]Point{{-1, -1}, {1, -1}, {-1, 1}, {1, 1}} {
			// Candidate: centre + t·(corner - centre), t in [0, tMax].
			const tMax = 1 - 2*cornerClearance
			at := func(t float64) Point { return Point{c.X + 0.5*t*d.X, c.Y + 0.5*t*d.Y} }
			ok := func(q Point) bool { return g.LineOfSight(a, q, ta) && g.LineOfSight(q, b, tb) }
			q := at(tMax)
			if l := a.Dist(q) + q.Dist(b); l >= bestLen-1e-12 {
				continue
			}
			if !ok(q) {
				lo, hi := 0.0, tMax
				for k := 0; k < 5; k++ {
					mid := (lo + hi) / 2
					if ok(at(mid)) {
						lo = mid
					} else {
						hi = mid
					}
				}
				q = at(lo)
			}
			if l := a.Dist(q) + q.Dist(b); l < bestLen {
				best, bestLen = q, l
			}
		}
		w[i] = best
	}
	// Drop waypoints whose neighbours now see each other.
	k := 1
	for i := 1; i < len(w)-1; i++ {
		if g.LineOfSight(w[k-1], w[i+1], s.maxTile(idx[k-1], idx[i+1])) {
			continue
		}
		w[k], idx[k] = w[i], idx[i]
		k++
	}
	w[k], idx[k] = w[len(w)-1], idx[len(w)-1]
	s.wpts, s.way = w[:k+1], idx[:k+1]
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
