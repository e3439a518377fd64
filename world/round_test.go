package world

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestRound2MatchesMathRound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 1000000; i++ {
		v := (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(12)))
		if got, want := round2(v), math.Round(v*100)/100; got != want {
			t.Fatalf("round2(%v) = %v, want %v", v, got, want)
		}
	}
	for _, v := range []float64{0.005, -0.005, 1.005, 2.675, -2.675, 0, 1e20, -1e20} {
		if got, want := round2(v), math.Round(v*100)/100; got != want {
			t.Fatalf("round2(%v) = %v, want %v", v, got, want)
		}
	}
}
