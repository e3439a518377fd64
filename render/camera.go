package render

import (
	"image"
	"math"

	"github.com/arena-sim/arena/world"
)

// Camera maps the ground plane to the screen, top-down: world x goes right,
// world z goes down the screen, and height (y) is shown by shading, not by
// position. Scale is pixels per metre; (CenterX, CenterZ) is the world point
// at the middle of a W × H screen.
type Camera struct {
	CenterX, CenterZ float64
	Scale            float64
	W, H             float64
}

// Zoom limits, in pixels per metre.
const (
	MinScale = 0.5
	MaxScale = 200
)

// WorldToScreen projects a ground point to screen pixels.
func (c *Camera) WorldToScreen(x, z float64) (sx, sy float64) {
	return c.W/2 + (x-c.CenterX)*c.Scale, c.H/2 + (z-c.CenterZ)*c.Scale
}

// ScreenToWorld is WorldToScreen's inverse.
func (c *Camera) ScreenToWorld(sx, sy float64) (x, z float64) {
	return c.CenterX + (sx-c.W/2)/c.Scale, c.CenterZ + (sy-c.H/2)/c.Scale
}

// Fit centres the bounds and scales them to fill the screen.
func (c *Camera) Fit(b world.Bounds) {
	c.CenterX, c.CenterZ = (b.MinX+b.MaxX)/2, (b.MinZ+b.MaxZ)/2
	w, h := max(b.MaxX-b.MinX, 1), max(b.MaxZ-b.MinZ, 1)
	c.Scale = clamp(math.Min(c.W/w, c.H/h), MinScale, MaxScale)
}

// FitIn centres the bounds in the screen rectangle r (the world's part of
// the screen, between the panels) and scales them to fill it.
func (c *Camera) FitIn(b world.Bounds, r image.Rectangle) {
	if r.Dx() <= 0 || r.Dy() <= 0 {
		c.Fit(b)
		return
	}
	w, h := max(b.MaxX-b.MinX, 1), max(b.MaxZ-b.MinZ, 1)
	c.Scale = clamp(math.Min(float64(r.Dx())/w, float64(r.Dy())/h), MinScale, MaxScale)
	mx, my := float64(r.Min.X+r.Max.X)/2, float64(r.Min.Y+r.Max.Y)/2
	c.CenterX = (b.MinX+b.MaxX)/2 - (mx-c.W/2)/c.Scale
	c.CenterZ = (b.MinZ+b.MaxZ)/2 - (my-c.H/2)/c.Scale
}

// Pan moves the view by a screen offset in pixels (a drag of dx, dy moves
// the world with the mouse).
func (c *Camera) Pan(dx, dy float64) {
	c.CenterX -= dx / c.Scale
	c.CenterZ -= dy / c.Scale
}

// ZoomAt multiplies the scale by factor, keeping the world point under the
// screen point (sx, sy) where it is.
func (c *Camera) ZoomAt(sx, sy, factor float64) {
	x, z := c.ScreenToWorld(sx, sy)
	c.Scale = clamp(c.Scale*factor, MinScale, MaxScale)
	c.CenterX = x - (sx-c.W/2)/c.Scale
	c.CenterZ = z - (sy-c.H/2)/c.Scale
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }
