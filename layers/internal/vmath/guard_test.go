//go:build unix

package vmath

import (
	"testing"

	"github.com/alibi-go/alibi/layers/internal/memtest"
)

// TestNoOverread runs every kernel on slices that end right before an
// inaccessible page: any access past the last element crashes the test.
func TestNoOverread(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		for n := 0; n <= 40; n++ {
			in := func() []float32 {
				s := memtest.Guarded32(t, n)
				copy(s, grid(-3, 3, n, 0, 0))
				return s
			}
			x, y, z, w := in(), in(), in(), in()
			Exp(x, y)
			GELU(x, y)
			GELUGrad(x, y, z)
			ExpSubSum(x, 1)
			AddMax(x, y)
			Add(x, y, z)
			Max(x)
			Scale(x, 0.5)
			Moments(x)
			Normalize(x, y, z, w, 0.1, 2)
			LayerNormGradSums(x, y, z, 0.1, 2, memtest.Guarded64(t, n), memtest.Guarded64(t, n))
			LayerNormGradX(x, y, z, w, 0.1, 2, 0.3, 0.4)
			for i := range z {
				z[i] = z[i] * z[i]
			}
			AdamW(x, y, w, z, AdamWCoeffs{Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, Shrink: 1, StepSize: 1e-3, InvSqrtBC2: 1})
		}
	})
}
