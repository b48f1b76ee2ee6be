package vmath

import (
	"math"
	"math/rand"
	"testing"
)

// GELUAndGrad gives the bits of GELU in h and, multiplied by g with Mul,
// those of GELUGrad, on every path, for every position of a vector and the
// tails, over values across GELU's range, large and tiny magnitudes and the
// special values (±Inf, where the two kernels clamp differently, ±MaxFloat32,
// NaN, ±0, subnormals), also with d written over x. It fails when the
// derivative is taken of x clamped as GELU clamps it, or GELU of x clamped as
// the derivative does.
func TestGELUAndGradMatches(t *testing.T) {
	x := grid(-12, 12, 2001, 3000, 11)
	x = append(x, inf32, -inf32, math.MaxFloat32, -math.MaxFloat32, nan32, 0, float32(math.Copysign(0, -1)),
		1e-39, -1e-39, 1e30, -1e30, 1e4, -1e4, 9.5, -9.5, 87, -87, 1e-20)
	rng := rand.New(rand.NewSource(12))
	g := make([]float32, len(x))
	for i := range g {
		g[i] = float32(rng.NormFloat64())
	}
	forEachPath(t, func(t *testing.T) {
		for _, n := range []int{len(x), 1, 7, 8, 9, 15, 16, 17, 33} {
			for off := 0; off+n <= len(x) && off < 40; off += 13 {
				xs, gs := x[len(x)-n-off:len(x)-off], g[len(x)-n-off:len(x)-off]
				wantH, wantG := make([]float32, n), make([]float32, n)
				GELU(wantH, xs)
				GELUGrad(wantG, xs, gs)
				h, d := make([]float32, n), append([]float32(nil), xs...)
				GELUAndGrad(h, d, d) // d over x
				Mul(d, d, gs)
				for i := range xs {
					if !same(h[i], wantH[i]) {
						t.Fatalf("n=%d: GELU(%g): %g (%#x), GELU gives %g (%#x)", n, xs[i], h[i], math.Float32bits(h[i]), wantH[i], math.Float32bits(wantH[i]))
					}
					if !same(d[i], wantG[i]) {
						t.Fatalf("n=%d: GELU'(%g)·%g: %g (%#x), GELUGrad gives %g (%#x)", n, xs[i], gs[i], d[i], math.Float32bits(d[i]), wantG[i], math.Float32bits(wantG[i]))
					}
				}
			}
		}
	})
}
