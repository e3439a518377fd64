package world

import "math"

// Vec3 is a position or velocity [x, y, z]: x and z span the ground plane and y is up.
type Vec3 [3]float64

// X returns the x coordinate.
func (v Vec3) X() float64 { return v[0] }

// Y returns the height.
func (v Vec3) Y() float64 { return v[1] }

// Z returns the z coordinate.
func (v Vec3) Z() float64 { return v[2] }

// Finite reports whether every component is a finite number.
func (v Vec3) Finite() bool {
	for _, c := range v {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return false
		}
	}
	return true
}

// GroundDist is the distance between a and b on the ground plane (x, z).
func GroundDist(a, b Vec3) float64 {
	dx, dz := a[0]-b[0], a[2]-b[2]
	return math.Sqrt(dx*dx + dz*dz)
}

func groundDist2(a, b Vec3) float64 {
	dx, dz := a[0]-b[0], a[2]-b[2]
	return dx*dx + dz*dz
}

// round2 rounds to two decimals; observations report distances this way so that
// they read well in a prompt and stay identical across runs.
func round2(v float64) float64 {
	x := v * 100
	if x > -1e15 && x < 1e15 {
		// Same result as math.Round (half away from zero) for these magnitudes, faster.
		if x >= 0 {
			return float64(int64(x+0.5)) / 100
		}
		return -float64(int64(-x+0.5)) / 100
	}
	return v // too large for two decimals to mean anything (or not finite)
}

func roundVec(v Vec3) Vec3 { return Vec3{round2(v[0]), round2(v[1]), round2(v[2])} }

// Bounds is the rectangle of the ground plane the world covers.
type Bounds struct {
	MinX, MinZ, MaxX, MaxZ float64
}

// Contains reports whether (x, z) lies inside the bounds (edges included).
func (b Bounds) Contains(x, z float64) bool {
	return x >= b.MinX && x <= b.MaxX && z >= b.MinZ && z <= b.MaxZ
}

// Width is the extent along x.
func (b Bounds) Width() float64 { return b.MaxX - b.MinX }

// Depth is the extent along z.
func (b Bounds) Depth() float64 { return b.MaxZ - b.MinZ }

func clamp(v, lo, hi float64) float64 {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

func hypot(a, b float64) float64 { return math.Sqrt(a*a + b*b) }

// GroundDistTo is the ground distance from an agent to (x, z).
func (w *World) GroundDistTo(a *Agent, x, z float64) float64 {
	return GroundDist(a.Pos, Vec3{x, 0, z})
}
