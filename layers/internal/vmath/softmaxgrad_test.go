package vmath

import (
	"math"
	"math/rand"
	"runtime"
	"testing"
)

// softmaxGradRef is p*(dp-d) in float64 with float32's flushing: inputs
// and the result below 2^-126 in magnitude give zero. The float32
// difference and product are each rounded once, as the kernels do, so the
// reference rounds the difference to float32 first.
func softmaxGradRef(p, dp, d float32) float32 {
	p, dp, d = flushSubnormal(p), flushSubnormal(dp), flushSubnormal(d)
	diff := flushSubnormal(float32(float64(dp) - float64(d)))
	return flushSubnormal(float32(float64(p) * float64(diff)))
}

func TestSoftmaxGrad(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sub := math.Float32frombits(0x00400000) // 2^-127
	cases := []struct {
		name      string
		p, dp, d  float32
		want      float32
		wantFlush bool // the exact result is subnormal and must be stored as zero
	}{
		{"normal", 0.25, 3, 1, 0.5, false},
		{"subnormal product", 0x1p-100, 0x1p-30, 0, 0, true},
		{"negative subnormal product", 0x1p-100, -0x1p-30, 0, float32(math.Copysign(0, -1)), true},
		{"subnormal probability", sub, 4, 1, 0, false},
		{"subnormal difference", 1, 0x1p-126 * 1.5, 0x1p-126, 0, false},
		{"smallest normal product", 0x1p-63, 0x1p-63, 0, 0x1p-126, false},
	}
	forEachPath(t, func(t *testing.T) {
		for _, n := range []int{1, 7, 8, 15, 16, 17, 33, 100} {
			for _, c := range cases {
				p, dp := make([]float32, n), make([]float32, n)
				for i := range p {
					p[i], dp[i] = c.p, c.dp
				}
				SoftmaxGrad(p, dp, c.d)
				for i, v := range p {
					if math.Float32bits(v) != math.Float32bits(c.want) {
						t.Fatalf("n=%d, %s: p[%d] = %g (%#x), want %g", n, c.name, i, v, math.Float32bits(v), c.want)
					}
				}
			}
		}
		// Random rows, with magnitudes across the whole float32 range and
		// many results near 2^-126: every path gives the reference's bits.
		rng := rand.New(rand.NewSource(3))
		const n = 4099
		p, dp, want := make([]float32, n), make([]float32, n), make([]float32, n)
		for r := 0; r < 20; r++ {
			d := float32(rng.NormFloat64())
			for i := range p {
				p[i] = float32(math.Ldexp(rng.Float64(), -rng.Intn(140)))
				dp[i] = d + float32(math.Ldexp(rng.NormFloat64(), -rng.Intn(40)))
				want[i] = softmaxGradRef(p[i], dp[i], d)
			}
			SoftmaxGrad(p, dp, d)
			for i := range p {
				if math.Float32bits(p[i]) != math.Float32bits(want[i]) {
					t.Fatalf("round %d: element %d = %g, want %g", r, i, p[i], want[i])
				}
			}
		}
		// The kernels restore the caller's MXCSR.
		if v := mul(0x1p-126, 0.25); v == 0 {
			t.Fatal("2^-126 * 0.25 gives 0 after SoftmaxGrad: flush-to-zero was left set")
		}
	})
	// A subnormal product under IEEE arithmetic, so the flush above is the
	// kernels' doing and not the test's inputs.
	if v := mul(0x1p-100, 0x1p-30); v == 0 {
		t.Fatal("2^-100 * 2^-30 is 0 in Go: the subnormal cases test nothing")
	}
}

// mul is x*y computed at run time, under the thread's MXCSR.
//
//go:noinline
func mul(x, y float32) float32 { return x * y }
