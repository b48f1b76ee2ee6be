package gemm

import (
	"math"
	"runtime"
	"testing"
)

// The assembly kernels flush subnormal numbers (see Sgemm): a subnormal
// operand reads as zero and a subnormal result is stored as zero. The
// portable path keeps IEEE gradual underflow. Each case is one shape that
// reaches one kernel: the tiled one (8x32 or 6x16), the small-M one with B
// not transposed (smallN512, smallN256) and with B transposed (dotsNT8).
func TestSubnormalsFlushed(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sub := float32(math.Float32frombits(0x00400000)) // 2^-127, subnormal
	tiny := float32(0x1p-70)                         // normal; tiny*tiny = 2^-140 is subnormal
	cases := []struct {
		name    string
		tB      bool
		m, n, k int
	}{
		{"tiled", false, 24, 40, 9},
		{"tiled, B transposed", true, 24, 40, 9},
		{"small M", false, 2, 300, 5},
		{"small M, B transposed", true, 3, 20, 5},
	}
	forEachPath(t, func(t *testing.T) {
		flushes := Active() != Portable
		for _, tc := range cases {
			for _, in := range []struct {
				name string
				a, b float32
				want float32 // on the assembly paths; the portable path gives k*a*b
			}{
				{"subnormal operand", sub, 4, 0},
				{"subnormal product", tiny, tiny, 0},
				{"normal", 0.5, 0.25, 0},
			} {
				a := fill(tc.m*tc.k, in.a)
				b := fill(tc.k*tc.n, in.b)
				ldb := tc.n
				if tc.tB {
					ldb = tc.k
				}
				c := fill(tc.m*tc.n, 7)
				Sgemm(false, tc.tB, tc.m, tc.n, tc.k, 1, a, tc.k, b, ldb, 0, c, tc.n, 1)
				exact := float32(tc.k) * in.a * in.b // under Go's (IEEE) arithmetic
				want := exact
				if flushes && in.name != "normal" {
					want = in.want
				}
				if exact == 0 {
					t.Fatalf("%s: the case's exact result underflowed to 0 in Go: not a test", in.name)
				}
				for i, v := range c {
					if v != want {
						t.Fatalf("%s, %s: c[%d] = %g, want %g", tc.name, in.name, i, v, want)
					}
				}
			}
		}
		// The kernels restore the caller's MXCSR: Go arithmetic on this
		// thread still gives subnormal results.
		if d := mul(0x1p-126, 0.25); d == 0 {
			t.Fatal("2^-126 * 0.25 gives 0 after Sgemm: flush-to-zero was left set")
		}
		if d := mul(sub, 2); d != 0x1p-126 {
			t.Fatalf("2^-127 * 2 gives %g after Sgemm: denormals-are-zero was left set", d)
		}
	})
}

func fill(n int, v float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// mul is x*y computed at run time, under the thread's MXCSR.
//
//go:noinline
func mul(x, y float32) float32 { return x * y }
