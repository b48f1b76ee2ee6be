package vmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// logInputs are values for Log64: random positive normal numbers of every
// exponent, the rows' sums of exponentials the attention takes the log of
// (1 to 2^20), numbers next to 1, the fractions at frexp's √2/2 boundary
// (where archLog and Go's log.go compare differently: <= against <) at
// every exponent and their neighbours, and the special cases, in lengths that leave a tail.
func logInputs(rng *rand.Rand) []float64 {
	var x []float64
	for range 4000 {
		bits := uint64(rng.IntN(2046)+1)<<52 | rng.Uint64()&(1<<52-1)
		x = append(x, math.Float64frombits(bits))
		x = append(x, 1+rng.Float64()*(1<<20))
	}
	for k := range 40 {
		x = append(x, math.Nextafter(1, 2)+float64(k)*0x1p-52, math.Nextafter(1, 0)-float64(k)*0x1p-53)
	}
	h := math.Float64frombits(0x3fe6a09e667f3bcd) // √2/2 as archLog has it
	for e := -1021; e <= 1024; e++ {
		v := math.Ldexp(h, e)
		x = append(x, v, math.Nextafter(v, 0), math.Nextafter(v, math.Inf(1)))
	}
	x = append(x, 1, 2, 0.5, math.E, 0x1p-1022, math.MaxFloat64, 0x1p-1074, 0x1p-1030, 0, math.Copysign(0, -1),
		-1, -0x1p-1022, math.Inf(1), math.Inf(-1), math.NaN(), 3)
	return x
}

// Log64 has the bits of math.Log on every element, on every path, for
// every length up to a few vectors and for the whole set at once.
func TestLog64MatchesMathLog(t *testing.T) {
	x := logInputs(rand.New(rand.NewPCG(7, 8)))
	forEachPath(t, func(t *testing.T) {
		check := func(x []float64) {
			t.Helper()
			dst := make([]float64, len(x))
			Log64(dst, x)
			for i, v := range x {
				if want := math.Log(v); math.Float64bits(dst[i]) != math.Float64bits(want) && !(math.IsNaN(want) && math.IsNaN(dst[i])) {
					t.Fatalf("Log64(%v (%#x)) = %v, math.Log gives %v", v, math.Float64bits(v), dst[i], want)
				}
			}
		}
		check(x)
		for n := 0; n <= 27; n++ {
			check(x[len(x)-n:])
		}
	})
}

func BenchmarkLog64(b *testing.B) {
	x := make([]float64, 64)
	for i := range x {
		x[i] = 1 + float64(i)*1.7
	}
	dst := make([]float64, len(x))
	b.Run("Log64", func(b *testing.B) {
		for range b.N {
			Log64(dst, x)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/elem")
	})
	b.Run("math.Log", func(b *testing.B) {
		for range b.N {
			for i, v := range x {
				dst[i] = math.Log(v)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/elem")
	})
}

func TestLog1pUnit(t *testing.T) {
	for i := 0; i <= 100000; i++ {
		e := float64(i) / 100000
		if i < 100 {
			e = math.Ldexp(1, -i) // down to the smallest scales
		}
		want := math.Log1p(e)
		if got := Log1pUnit(e); math.Abs(got-want) > 1e-9*want {
			t.Fatalf("Log1pUnit(%g) = %.17g, math.Log1p %.17g", e, got, want)
		}
	}
	if got := Log1pUnit(0); got != 0 {
		t.Fatalf("Log1pUnit(0) = %g", got)
	}
}
