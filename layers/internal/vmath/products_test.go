package vmath

import (
	"math"
	"testing"
)

// Mul is the product of each pair, on every path and length.
func TestMul(t *testing.T) {
	a, b := grid(-3, 3, 100, 100, 13), grid(-1e-20, 1e20, 100, 100, 14)
	forEachPath(t, func(t *testing.T) {
		for n := 0; n <= len(a); n += 7 {
			dst := make([]float32, n)
			Mul(dst, a[:n], b[:n])
			for i := range dst {
				if want := a[i] * b[i]; !same(dst[i], want) {
					t.Fatalf("n=%d: %g·%g = %g, want %g", n, a[i], b[i], dst[i], want)
				}
			}
		}
	})
}

// Dot4 has the bits of the plain loop with four accumulators on every path
// and length, over values of mixed signs and magnitudes (where the order of
// the sums shows in the last bits).
func TestDot4(t *testing.T) {
	a, b := grid(-3, 3, 50, 150, 15), grid(-1e3, 1e3, 50, 150, 16)
	forEachPath(t, func(t *testing.T) {
		for n := 0; n <= len(a); n++ {
			if got, want := Dot4(a[:n], b), dot4Go(a[:n], b); !same(got, want) {
				t.Fatalf("n=%d: %g (%#x), the loop gives %g (%#x)", n, got, math.Float32bits(got), want, math.Float32bits(want))
			}
		}
	})
}
