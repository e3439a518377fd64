package world

import (
	"math"
	"math/bits"
	"slices"
)

// bucketGrid is a uniform spatial hash of entity indices on the ground plane,
// used to find what lies within a radius without scanning every entity.
type bucketGrid struct {
	minX, minZ float64
	inv        float64
	cols, rows int
	cells      [][]int32
}

func newBucketGrid(b Bounds, size float64) *bucketGrid {
	if size <= 0 {
		size = 8
	}
	cols := max(1, int(math.Ceil(b.Width()/size)))
	rows := max(1, int(math.Ceil(b.Depth()/size)))
	return &bucketGrid{minX: b.MinX, minZ: b.MinZ, inv: 1 / size, cols: cols, rows: rows, cells: make([][]int32, cols*rows)}
}

func (g *bucketGrid) coord(x, z float64) (int, int) {
	cx := int((x - g.minX) * g.inv)
	cz := int((z - g.minZ) * g.inv)
	return min(max(cx, 0), g.cols-1), min(max(cz, 0), g.rows-1)
}

// bucket is the index of the bucket holding (x, z).
func (g *bucketGrid) bucket(x, z float64) int {
	cx, cz := g.coord(x, z)
	return cz*g.cols + cx
}

// near reports, by bucket, whether each from some point of the bucket, with
// half-side r, could find anything: false means that every bucket such a
// call visits is empty.
func (g *bucketGrid) near(r float64) []bool {
	near := make([]bool, len(g.cells))
	// Within k buckets of one that holds an index; no more than the grid,
	// however wide r (a huge radius would overflow the conversion).
	k := int(math.Min(math.Ceil(r*g.inv), float64(max(g.cols, g.rows)))) + 1
	for c, cell := range g.cells {
		if len(cell) == 0 {
			continue
		}
		cx, cz := c%g.cols, c/g.cols
		for z := max(cz-k, 0); z <= min(cz+k, g.rows-1); z++ {
			for x := max(cx-k, 0); x <= min(cx+k, g.cols-1); x++ {
				near[z*g.cols+x] = true
			}
		}
	}
	return near
}

func (g *bucketGrid) insert(idx int, p Vec3) {
	cx, cz := g.coord(p[0], p[2])
	c := cz*g.cols + cx
	g.cells[c] = append(g.cells[c], int32(idx))
}

func (g *bucketGrid) remove(idx int, p Vec3) {
	cx, cz := g.coord(p[0], p[2])
	c := cz*g.cols + cx
	cell := g.cells[c]
	for i, v := range cell {
		if v == int32(idx) {
			g.cells[c] = append(cell[:i], cell[i+1:]...)
			return
		}
	}
}

// span returns the bucket rectangle covering the square around (x, z) of
// half-side r, for callers that loop over g.cells themselves (hot paths).
func (g *bucketGrid) span(x, z, r float64) (x0, z0, x1, z1 int) {
	x0, z0 = g.coord(x-r, z-r)
	x1, z1 = g.coord(x+r, z+r)
	return
}

// each calls fn for every index whose bucket overlaps the square around (x, z)
// of half-side r. Callers filter by exact distance.
func (g *bucketGrid) each(x, z, r float64, fn func(idx int)) {
	x0, z0 := g.coord(x-r, z-r)
	x1, z1 := g.coord(x+r, z+r)
	for cz := z0; cz <= z1; cz++ {
		row := cz * g.cols
		for cx := x0; cx <= x1; cx++ {
			for _, idx := range g.cells[row+cx] {
				fn(int(idx))
			}
		}
	}
}

// agentGrid is the living agents' spatial hash, rebuilt after agents move. Each
// entry carries the agent's ground position, so that range tests do not touch
// the (large) Agent structs of agents that turn out to be out of range.
//
// The entries are packed in one array, bucket after bucket in the buckets'
// Morton order (and by index within a bucket): spans[c] is bucket c's. The
// buckets around an observer are then a few stretches of one array that
// the observers before it (in the same order: ObserveOrder) read too, where
// a slice per bucket scattered them over the heap; at 16,000 agents on
// 1024² that cost a miss per bucket and observer.
type agentGrid struct {
	bucketGrid
	spans   []tileSpan   // per bucket, its entries in entries; empty when it has none
	entries []agentEntry // packed (see above)
	staged  []agentEntry // the inserts, in order, until pack
	used    []int32      // the buckets holding entries, so that reset costs the agents, not the map
	// mortonRank is each bucket's place in the Morton (Z) order of the
	// buckets and byRank its inverse; usedRanks has a bit per place, set
	// while its bucket holds entries, so that ObserveOrder walks the used
	// buckets in that order without sorting them.
	mortonRank, byRank []int32
	usedRanks          []uint64
	// Crowded buckets (crowdMin entries or more) are split into tileDiv ×
	// tileDiv tiles, so that an observer can take a whole tile in view at
	// once (viewer.agents): tileSpans[c] is bucket c's tiles in tiles (empty when
	// it is not split), whose entries are in tiled.
	tileDiv      int
	tileSpans    []tileSpan
	tiles        []agentTile
	tiled        []agentEntry
	splitBuckets []int32
	tileBuf      []int32
}

// crowdMin is how many agents a bucket holds before it is split into tiles.
const crowdMin = 16

// tileSide is about how wide, in world units, a tile of a crowded bucket is.
const tileSide = 2.0

type tileSpan struct{ lo, hi int32 }

// agentTile is the agents of a crowded bucket in one of its tiles: their
// entries are tiled[lo:hi], and [x0, x1] × [z0, z1] is the bounding box of
// their positions. key is the bucket times tileDiv² plus the tile's place
// in it.
type agentTile struct {
	x0, x1, z0, z1 float64
	lo, hi         int32
	key            int32
}

type agentEntry struct {
	idx, rank int32 // index in World.agents; rank in the order of ids
	x, z      float64
}

func newAgentGrid(b Bounds, size float64) *agentGrid {
	g := &agentGrid{bucketGrid: *newBucketGrid(b, size)}
	n := len(g.cells)
	g.spans = make([]tileSpan, n)
	g.tileSpans = make([]tileSpan, n)
	g.cells = nil // entries live in entries
	g.tileDiv = max(1, int(math.Round(size/tileSide)))
	keys := make([]uint64, n)
	for c := range n {
		keys[c] = morton(uint32(c%g.cols), uint32(c/g.cols))<<32 | uint64(c)
	}
	slices.Sort(keys)
	g.mortonRank, g.byRank = make([]int32, n), make([]int32, n)
	for r, k := range keys {
		g.byRank[r] = int32(uint32(k))
		g.mortonRank[uint32(k)] = int32(r)
	}
	g.usedRanks = make([]uint64, (n+63)/64)
	return g
}

func (g *agentGrid) reset() {
	for _, c := range g.used {
		g.spans[c] = tileSpan{}
		r := g.mortonRank[c]
		g.usedRanks[r>>6] &^= 1 << (r & 63)
	}
	g.used = g.used[:0]
	g.entries, g.staged = g.entries[:0], g.staged[:0]
	for _, c := range g.splitBuckets {
		g.tileSpans[c] = tileSpan{}
	}
	g.splitBuckets = g.splitBuckets[:0]
	g.tiles, g.tiled = g.tiles[:0], g.tiled[:0]
}

// tileKey is the tile of a crowded bucket that holds the point (x, z).
func (g *agentGrid) tileKey(x, z float64) int32 {
	cx, cz := g.coord(x, z)
	k := g.tileDiv
	tx := min(max(int((x-g.minX)*g.inv*float64(k))-cx*k, 0), k-1)
	tz := min(max(int((z-g.minZ)*g.inv*float64(k))-cz*k, 0), k-1)
	return int32(((cz*g.cols+cx)*k+tz)*k + tx)
}

// at is bucket c's entries.
func (g *agentGrid) at(c int) []agentEntry {
	sp := g.spans[c]
	return g.entries[sp.lo:sp.hi]
}

// pack lays the inserts out bucket by bucket (see agentGrid), after the
// inserts and before anything reads the grid.
func (g *agentGrid) pack() {
	// The buckets' places, in Morton order; hi counted each one's inserts.
	var at int32
	for i, word := range g.usedRanks {
		for ; word != 0; word &= word - 1 {
			c := g.byRank[i<<6|bits.TrailingZeros64(word)]
			n := g.spans[c].hi
			g.spans[c] = tileSpan{at, at} // hi fills up to at + n below
			at += n
		}
	}
	g.entries = slices.Grow(g.entries[:0], len(g.staged))[:len(g.staged)]
	for _, e := range g.staged {
		sp := &g.spans[g.bucket(e.x, e.z)]
		g.entries[sp.hi] = e
		sp.hi++
	}
}

// split files the entries of every crowded bucket by tile (see agentGrid),
// after pack.
func (g *agentGrid) split() {
	k := g.tileDiv
	if k < 2 {
		return
	}
	for _, c := range g.used {
		at := g.at(int(c))
		if len(at) < crowdMin {
			continue
		}
		// A counting sort of the bucket's entries by tile; within a tile
		// they keep the bucket's order.
		if n := k*k + len(at); cap(g.tileBuf) < n {
			g.tileBuf = make([]int32, n)
		}
		buf := g.tileBuf[:k*k+len(at)]
		count, of := buf[:k*k], buf[k*k:]
		clear(count)
		for i, e := range at {
			t := g.tileKey(e.x, e.z) - int32(int(c)*k*k)
			of[i] = t
			count[t]++
		}
		lo := int32(len(g.tiles))
		start := int32(len(g.tiled))
		for t, n := range count {
			if n == 0 {
				continue
			}
			g.tiles = append(g.tiles, agentTile{x0: math.Inf(1), x1: math.Inf(-1), z0: math.Inf(1), z1: math.Inf(-1),
				lo: start, hi: start, key: int32(int(c)*k*k + t)})
			count[t] = int32(len(g.tiles)) - 1 // from here on: the tile's index
			start += n
		}
		g.tiled = append(g.tiled, at...)
		for i, e := range at {
			t := &g.tiles[count[of[i]]]
			g.tiled[t.hi] = e
			t.hi++
			t.x0, t.x1 = min(t.x0, e.x), max(t.x1, e.x)
			t.z0, t.z1 = min(t.z0, e.z), max(t.z1, e.z)
		}
		g.tileSpans[c] = tileSpan{lo, int32(len(g.tiles))}
		g.splitBuckets = append(g.splitBuckets, c)
	}
}

// insert files the agent at index idx, of the given rank, standing at (x, z)
// (pack lays it out).
func (g *agentGrid) insert(idx, rank int32, x, z float64) {
	c := g.bucket(x, z)
	if g.spans[c].hi == 0 {
		g.used = append(g.used, int32(c))
		r := g.mortonRank[c]
		g.usedRanks[r>>6] |= 1 << (r & 63)
	}
	g.spans[c].hi++ // counted until pack
	g.staged = append(g.staged, agentEntry{idx, rank, x, z})
}

// ObserveOrder appends to dst the indices (in Agents) of the living agents in
// an order that follows the map: bucket by bucket of the agents' spatial
// index, the buckets in Morton (Z) order, agents of a bucket in index order.
// Observing agents in this order rather than by index keeps what nearby
// agents share (the sight table's rows, the entities and buckets around them)
// in the caches from one agent to the next, where on large maps much of an
// observation's cost goes. Every observation is the same whatever the order.
func (w *World) ObserveOrder(dst []int) []int {
	w.refreshAgentIndex()
	for _, e := range w.agentIdx.entries { // bucket by bucket in Morton order
		dst = append(dst, int(e.idx))
	}
	return dst
}

// morton interleaves the bits of x and z (each below 2¹⁶): x in the even
// bits, z in the odd ones.
func morton(x, z uint32) uint64 {
	return uint64(spread(x) | spread(z)<<1)
}

// spread puts the 16 low bits of v in the even bits of the result.
func spread(v uint32) uint32 {
	v &= 0xffff
	v = (v | v<<8) & 0x00ff00ff
	v = (v | v<<4) & 0x0f0f0f0f
	v = (v | v<<2) & 0x33333333
	v = (v | v<<1) & 0x55555555
	return v
}
