package render

import (
	"image/color"
	"math"

	"github.com/hajimehoshi/ebiten/v2"
)

// shapes collects filled triangles of any colours and draws them with one
// DrawTriangles32 call: the viewer's discs, rings, arcs, rectangles, lines
// and polygons. Edges are smoothed by a one-pixel band whose outer vertices
// are transparent (the colours interpolate across it), which costs a few
// vertices where Ebiten's anti-aliased vector paths cost a stencil pass per
// shape and, drawn many times a frame, hundreds of MB of queued commands.
// The vertex and index slices are kept from frame to frame.
type shapes struct {
	vs    []ebiten.Vertex
	is    []uint32
	white *ebiten.Image // a white texel to draw from
}

// feather is the width, in pixels, of the band that smooths an edge.
const feather = 1

func (s *shapes) reset() { s.vs, s.is = s.vs[:0], s.is[:0] }

// flush draws what was collected onto dst and starts again.
func (s *shapes) flush(dst *ebiten.Image) {
	if len(s.is) == 0 {
		s.reset()
		return
	}
	if s.white == nil {
		img := ebiten.NewImage(3, 3)
		img.Fill(color.White)
		s.white = img.SubImage(img.Bounds().Inset(1)).(*ebiten.Image)
	}
	op := &ebiten.DrawTrianglesOptions{ColorScaleMode: ebiten.ColorScaleModePremultipliedAlpha}
	dst.DrawTriangles32(s.vs, s.is, s.white, op)
	s.reset()
}

// premul is c's premultiplied components, times alpha.
func premul(c color.Color, alpha float32) [4]float32 {
	r, g, b, a := c.RGBA()
	return [4]float32{float32(r) / 0xffff * alpha, float32(g) / 0xffff * alpha, float32(b) / 0xffff * alpha, float32(a) / 0xffff * alpha}
}

func (s *shapes) vertex(x, y float32, c [4]float32) uint32 {
	s.vs = append(s.vs, ebiten.Vertex{DstX: x, DstY: y, SrcX: 1, SrcY: 1, ColorR: c[0], ColorG: c[1], ColorB: c[2], ColorA: c[3]})
	return uint32(len(s.vs) - 1)
}

// segments is how many straight pieces make a circle of radius r pixels.
func segments(r float32) int {
	return int(clamp(float64(r)*0.8, 12, 96))
}

// band adds the annulus sector between radii r0 and r1 from angle a0 to a1
// (radians, clockwise on screen), coloured c0 on the inner edge and c1 on
// the outer one.
func (s *shapes) band(x, y, r0, r1 float32, a0, a1 float64, c0, c1 [4]float32) {
	if r1 <= 0 || a1 <= a0 {
		return
	}
	r0 = max(r0, 0)
	n := max(2, int(math.Ceil(float64(segments(r1))*(a1-a0)/(2*math.Pi))))
	var prevIn, prevOut uint32
	for i := 0; i <= n; i++ {
		a := a0 + (a1-a0)*float64(i)/float64(n)
		sin, cos := math.Sincos(a)
		in := s.vertex(x+r0*float32(cos), y+r0*float32(sin), c0)
		out := s.vertex(x+r1*float32(cos), y+r1*float32(sin), c1)
		if i > 0 {
			s.is = append(s.is, prevIn, prevOut, out, prevIn, out, in)
		}
		prevIn, prevOut = in, out
	}
}

// disc fills a circle, its edge smoothed.
func (s *shapes) disc(x, y, r float32, col color.Color, alpha float32) {
	c := premul(col, alpha)
	inner := max(r-feather/2, 0)
	n := segments(r)
	centre := s.vertex(x, y, c)
	first := uint32(len(s.vs))
	for i := range n {
		sin, cos := math.Sincos(2 * math.Pi * float64(i) / float64(n))
		s.vertex(x+inner*float32(cos), y+inner*float32(sin), c)
	}
	for i := range n {
		s.is = append(s.is, centre, first+uint32(i), first+uint32((i+1)%n))
	}
	s.band(x, y, inner, r+feather/2, 0, 2*math.Pi, c, [4]float32{})
}

// ring strokes a circle (or, from angle a0 to a1, an arc) of radius r with
// a line w pixels wide, its edges smoothed.
func (s *shapes) ring(x, y, r, w float32, col color.Color, alpha float32) {
	s.arc(x, y, r, w, 0, 2*math.Pi, col, alpha)
}

func (s *shapes) arc(x, y, r, w float32, a0, a1 float64, col color.Color, alpha float32) {
	c := premul(col, alpha)
	in, out := r-w/2, r+w/2
	s.band(x, y, in-feather, in, a0, a1, [4]float32{}, c)
	s.band(x, y, in, out, a0, a1, c, c)
	s.band(x, y, out, out+feather, a0, a1, c, [4]float32{})
}

// rect fills an axis-aligned rectangle (sharp: rectangles sit on pixels).
func (s *shapes) rect(x, y, w, h float32, col color.Color, alpha float32) {
	if w <= 0 || h <= 0 {
		return
	}
	s.quad(x, y, x+w, y, x+w, y+h, x, y+h, premul(col, alpha))
}

func (s *shapes) quad(x0, y0, x1, y1, x2, y2, x3, y3 float32, c [4]float32) {
	a, b, d, e := s.vertex(x0, y0, c), s.vertex(x1, y1, c), s.vertex(x2, y2, c), s.vertex(x3, y3, c)
	s.is = append(s.is, a, b, d, a, d, e)
}

// line strokes a segment w pixels wide.
func (s *shapes) line(x0, y0, x1, y1, w float32, col color.Color, alpha float32) {
	dx, dy := x1-x0, y1-y0
	l := float32(math.Hypot(float64(dx), float64(dy)))
	if l == 0 {
		return
	}
	nx, ny := -dy/l*w/2, dx/l*w/2
	s.quad(x0+nx, y0+ny, x1+nx, y1+ny, x1-nx, y1-ny, x0-nx, y0-ny, premul(col, alpha))
}

// strokeRect outlines a rectangle with lines w pixels wide, inside it.
func (s *shapes) strokeRect(x, y, w, h, lw float32, col color.Color, alpha float32) {
	s.rect(x, y, w, lw, col, alpha)
	s.rect(x, y+h-lw, w, lw, col, alpha)
	s.rect(x, y+lw, lw, h-2*lw, col, alpha)
	s.rect(x+w-lw, y+lw, lw, h-2*lw, col, alpha)
}

// polygon fills a convex polygon of n corners of radius r around (x, y),
// the first at angle a0: a triangle, a diamond, a hexagon.
func (s *shapes) polygon(x, y, r float32, n int, a0 float64, col color.Color, alpha float32) {
	c := premul(col, alpha)
	centre := s.vertex(x, y, c)
	first := uint32(len(s.vs))
	for i := range n {
		sin, cos := math.Sincos(a0 + 2*math.Pi*float64(i)/float64(n))
		s.vertex(x+r*float32(cos), y+r*float32(sin), c)
	}
	for i := range n {
		s.is = append(s.is, centre, first+uint32(i), first+uint32((i+1)%n))
	}
}

// triangle fills the triangle of three points.
func (s *shapes) triangle(x0, y0, x1, y1, x2, y2 float32, col color.Color, alpha float32) {
	c := premul(col, alpha)
	a, b, d := s.vertex(x0, y0, c), s.vertex(x1, y1, c), s.vertex(x2, y2, c)
	s.is = append(s.is, a, b, d)
}
