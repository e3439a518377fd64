package world

import "math"

// Terrain is the ground's height field. With no heights the ground is flat at
// Base. Otherwise Heights is a grid of samples laid evenly over the world bounds
// (Heights[row][col], rows along z from MinZ to MaxZ, columns along x from MinX to
// MaxX) and the height between samples is interpolated bilinearly.
type Terrain struct {
	Base    float64
	Heights [][]float64
}

// HeightAt is the ground height at (x, z) inside bounds b.
func (t Terrain) HeightAt(b Bounds, x, z float64) float64 {
	rows := len(t.Heights)
	if rows == 0 {
		return t.Base
	}
	cols := len(t.Heights[0])
	if rows == 1 && cols == 1 {
		return t.Base + t.Heights[0][0]
	}
	fx := 0.0
	if cols > 1 {
		fx = clamp((x-b.MinX)/b.Width(), 0, 1) * float64(cols-1)
	}
	fz := 0.0
	if rows > 1 {
		fz = clamp((z-b.MinZ)/b.Depth(), 0, 1) * float64(rows-1)
	}
	c0, r0 := int(math.Floor(fx)), int(math.Floor(fz))
	c1, r1 := min(c0+1, cols-1), min(r0+1, rows-1)
	tx, tz := fx-float64(c0), fz-float64(r0)
	h00, h10 := t.Heights[r0][c0], t.Heights[r0][c1]
	h01, h11 := t.Heights[r1][c0], t.Heights[r1][c1]
	top := h00 + (h10-h00)*tx
	bottom := h01 + (h11-h01)*tx
	return t.Base + top + (bottom-top)*tz
}
