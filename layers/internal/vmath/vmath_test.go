package vmath

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"
)

var (
	inf32 = float32(math.Inf(1))
	nan32 = float32(math.NaN())
)

// forEachPath runs f as a subtest on every path (see Path); a path that the
// CPU or the build does not support is skipped.
func forEachPath(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, p := range Paths {
		t.Run(p.String(), func(t *testing.T) {
			if !p.Supported() {
				t.Skipf("the %v path is not supported by this CPU or build", p)
			}
			defer setPath(setPath(p))
			f(t)
		})
	}
}

func refExp(x float32) float64 { return math.Exp(float64(x)) }

func refPhi(x float64) float64 { return 0.5 * (1 + math.Erf(x/math.Sqrt2)) }

func refGELU(x float32) float64 {
	v := float64(x)
	return v * refPhi(v)
}

func refGELUGrad(x, g float32) float64 {
	v := float64(x)
	return float64(g) * (refPhi(v) + v*math.Exp(-v*v/2)/math.Sqrt(2*math.Pi))
}

// grid returns n evenly spaced values from lo to hi followed by m uniform
// random values in the same range.
func grid(lo, hi float64, n, m int, seed int64) []float32 {
	x := make([]float32, 0, n+m)
	for i := 0; i < n; i++ {
		x = append(x, float32(lo+(hi-lo)*float64(i)/float64(n-1)))
	}
	rng := rand.New(rand.NewSource(seed))
	for i := 0; i < m; i++ {
		x = append(x, float32(lo+(hi-lo)*rng.Float64()))
	}
	return x
}

func same(a, b float32) bool {
	return a == b && math.Signbit(float64(a)) == math.Signbit(float64(b)) || a != a && b != b
}

func TestExpAccuracy(t *testing.T) {
	x := grid(-87, 88, 400001, 400000, 1)
	// Also the ends of the range, which use the extreme exponents.
	x = append(x, grid(-87.33654, -87, 10001, 0, 0)...)
	x = append(x, grid(88, 88.72283, 10001, 0, 0)...)
	x = append(x, float32(expLo), float32(expHi), -1e-8, 1e-8, 0.34657359, -0.34657359)
	forEachPath(t, func(t *testing.T) {
		y := make([]float32, len(x))
		Exp(y, x)
		var worst float64
		for i, v := range x {
			want := refExp(v)
			rel := math.Abs(float64(y[i])-want) / want
			if !(rel <= 5e-7) {
				t.Fatalf("Exp(%.9g) = %.9g, want %.9g (rel error %.3g)", v, y[i], want, rel)
			}
			worst = max(worst, rel)
		}
		t.Logf("max relative error %.3g", worst)
	})
}

func TestExpSpecial(t *testing.T) {
	cases := []struct {
		x, want float32
	}{
		{-1e9, 0},
		{-87.4, 0},
		{math.Nextafter32(float32(expLo), float32(math.Inf(-1))), 0},
		{-1e30, 0},
		{float32(math.Inf(-1)), 0},
		{0, 1},
		{float32(math.Copysign(0, -1)), 1},
		{88.73, inf32},
		{89, inf32},
		{1e4, inf32},
		{1e30, inf32},
		{math.MaxFloat32, inf32},
		{inf32, inf32},
		{nan32, nan32},
		{-nan32, nan32},
		{math.Float32frombits(0x7fc00001), nan32}, // NaN with a low payload bit
		{math.Float32frombits(0xffc001ff), nan32},
	}
	forEachPath(t, func(t *testing.T) {
		for _, c := range cases {
			// Put the value at every position of a 19-element slice so that it
			// goes through both the vector loop and the tail.
			for pos := 0; pos < 19; pos++ {
				x := make([]float32, 19)
				x[pos] = c.x
				y := make([]float32, 19)
				Exp(y, x)
				got := y[pos]
				if c.want != c.want {
					if got == got {
						t.Errorf("Exp(%g) at %d = %g, want NaN", c.x, pos, got)
					}
				} else if got != c.want {
					t.Errorf("Exp(%g) at %d = %g, want %g", c.x, pos, got, c.want)
				}
				for i, v := range y {
					if i != pos && v != 1 {
						t.Fatalf("Exp(0) = %g next to %g", v, c.x)
					}
				}
			}
		}
		// The ends of the range are finite and accurate.
		for _, v := range []float32{float32(expLo), float32(expHi)} {
			y := []float32{0}
			Exp(y, []float32{v})
			if math.IsInf(float64(y[0]), 0) || math.Abs(float64(y[0])/refExp(v)-1) > 5e-7 {
				t.Errorf("Exp(%.9g) = %g, want %g", v, y[0], refExp(v))
			}
		}
	})
}

// kernelCase is one function under test, applied to inputs of length n.
type kernelCase struct {
	name string
	// run applies the function to x (and y, a second input) and returns the
	// outputs and, for the reductions, the returned value.
	run func(x, y []float32) (out []float32, ret float32)
	// check reports whether out[i] is acceptable for inputs x[i], y[i].
	check func(x, y, out float32) bool
}

func relOK(got float32, want, tol float64) bool {
	return math.Abs(float64(got)-want) <= tol*math.Abs(want)
}

var kernelCases = []kernelCase{
	{
		name:  "Exp",
		run:   func(x, _ []float32) ([]float32, float32) { d := make([]float32, len(x)); Exp(d, x); return d, 0 },
		check: func(x, _, out float32) bool { return relOK(out, refExp(x), 5e-7) },
	},
	{
		name: "ExpSubSum",
		run: func(x, _ []float32) ([]float32, float32) {
			d := append([]float32(nil), x...)
			return d, ExpSubSum(d, 0.75)
		},
		check: func(x, _, out float32) bool { return relOK(out, refExp(x-0.75), 5e-7) },
	},
	{
		name: "AddMax",
		run: func(x, y []float32) ([]float32, float32) {
			d := append([]float32(nil), x...)
			return d, AddMax(d, y)
		},
		check: func(x, y, out float32) bool { return out == x+y },
	},
	{
		name:  "Max",
		run:   func(x, _ []float32) ([]float32, float32) { return x, Max(x) },
		check: func(_, _, _ float32) bool { return true },
	},
	{
		name: "Scale",
		run: func(x, _ []float32) ([]float32, float32) {
			d := append([]float32(nil), x...)
			Scale(d, -1.7)
			return d, 0
		},
		check: func(x, _, out float32) bool { return out == x*-1.7 },
	},
	{
		name: "GELU",
		run:  func(x, _ []float32) ([]float32, float32) { d := make([]float32, len(x)); GELU(d, x); return d, 0 },
		check: func(x, _, out float32) bool {
			return math.Abs(float64(out)-refGELU(x)) <= 1e-6*max(1, math.Abs(float64(x)))
		},
	},
	{
		name: "GELUGrad",
		run: func(x, y []float32) ([]float32, float32) {
			d := make([]float32, len(x))
			GELUGrad(d, x, y)
			return d, 0
		},
		check: func(x, g, out float32) bool {
			return math.Abs(float64(out)-refGELUGrad(x, g)) <= 2e-6*max(1, math.Abs(float64(g)))
		},
	},
}

// TestLengths runs every function on every length 0..40, so that the vector
// loops and the scalar tails are exercised, and checks each element and the
// returned reductions.
func TestLengths(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	forEachPath(t, func(t *testing.T) {
		for _, kc := range kernelCases {
			for n := 0; n <= 40; n++ {
				x, y := make([]float32, n), make([]float32, n)
				for i := range x {
					x[i] = float32(rng.NormFloat64() * 4)
					y[i] = float32(rng.NormFloat64())
				}
				out, ret := kc.run(x, y)
				if len(out) != n {
					t.Fatalf("%s n=%d: len(out) = %d", kc.name, n, len(out))
				}
				for i := range out {
					if !kc.check(x[i], y[i], out[i]) {
						t.Fatalf("%s n=%d: element %d = %.9g for inputs %.9g, %.9g", kc.name, n, i, out[i], x[i], y[i])
					}
				}
				switch kc.name {
				case "ExpSubSum":
					var sum float64
					for _, v := range out {
						sum += float64(v)
					}
					if !relOK(ret, sum, 1e-6) {
						t.Errorf("%s n=%d: sum = %.9g, want %.9g", kc.name, n, ret, sum)
					}
				case "AddMax", "Max":
					want := float32(math.Inf(-1))
					for _, v := range out {
						want = max(want, v)
					}
					if ret != want {
						t.Errorf("%s n=%d: max = %g, want %g", kc.name, n, ret, want)
					}
				}
			}
		}
	})
}

// TestNoOverrun checks that nothing beyond len(dst) is written.
func TestNoOverrun(t *testing.T) {
	const sentinel = float32(-12345.5)
	forEachPath(t, func(t *testing.T) {
		for n := 0; n <= 40; n++ {
			buf := make([]float32, n+9)
			for i := range buf {
				buf[i] = sentinel
			}
			x := grid(-3, 3, n+9, 0, 0)
			x[n] = sentinel
			Exp(buf[:n], x[:n])
			GELU(buf[:n], x[:n])
			GELUGrad(buf[:n], x[:n], x[:n])
			s := append([]float32(nil), x...)
			ExpSubSum(s[:n], 1)
			AddMax(s[:n], x[:n])
			Scale(s[:n], 2)
			Add(buf[:n], x[:n], s[:n])
			for i := n; i < len(buf); i++ {
				if buf[i] != sentinel || s[i] != x[i] {
					t.Fatalf("n=%d: element %d overwritten", n, i)
				}
			}
		}
	})
}

func TestAliasing(t *testing.T) {
	x := grid(-10, 10, 37, 0, 3)
	g := grid(-2, 3, 37, 0, 4)
	forEachPath(t, func(t *testing.T) {
		type fn func(dst, x, g []float32)
		fns := map[string]fn{
			"Exp":         func(d, x, _ []float32) { Exp(d, x) },
			"GELU":        func(d, x, _ []float32) { GELU(d, x) },
			"GELUGrad":    func(d, x, g []float32) { GELUGrad(d, x, g) },
			"GELUGrad(g)": func(d, x, g []float32) { GELUGrad(d, g, x) }, // dst aliases the gradient
		}
		for name, f := range fns {
			want := make([]float32, len(x))
			f(want, append([]float32(nil), x...), append([]float32(nil), g...))
			got := append([]float32(nil), x...)
			f(got, got, append([]float32(nil), g...))
			for i := range got {
				if !same(got[i], want[i]) {
					t.Fatalf("%s in place: element %d = %g, want %g", name, i, got[i], want[i])
				}
			}
		}
	})
}

// TestAsmMatchesPortable compares each assembly path with the portable
// kernels on the same inputs; they differ only by the rounding of fused
// multiply-adds. The AVX-512 kernels must also match the AVX2 ones bit for
// bit.
func TestAsmMatchesPortable(t *testing.T) {
	x := grid(-30, 30, 20001, 20000, 5)
	x = append(x, grid(-90, 90, 20001, 0, 0)...)
	x = append(x, 0, -0, 1e4, -1e4, 1e30, -1e30, inf32, -inf32, nan32, -1e9)
	g := grid(-3, 3, len(x), 0, 6)
	type result struct {
		exp, sub, gelu, grad []float32
		sum                  float32
	}
	run := func(p Path) result {
		defer setPath(setPath(p))
		var r result
		r.exp = make([]float32, len(x))
		Exp(r.exp, x)
		r.sub = append([]float32(nil), x[:40001]...) // within ±30: a finite sum
		r.sum = ExpSubSum(r.sub, 0.5)
		r.gelu = make([]float32, len(x))
		GELU(r.gelu, x)
		r.grad = make([]float32, len(x))
		GELUGrad(r.grad, x, g)
		return r
	}
	p := run(Portable)
	close := func(a, p float32, abs float64) bool {
		if same(a, p) {
			return true
		}
		d := math.Abs(float64(a) - float64(p))
		return d <= 4e-7*math.Abs(float64(p)) || d <= abs
	}
	var asm []result
	for _, path := range []Path{AVX2, AVX512} {
		if !path.Supported() {
			t.Logf("the %v path is not supported by this CPU or build", path)
			continue
		}
		a := run(path)
		asm = append(asm, a)
		for i, v := range x {
			if !close(a.exp[i], p.exp[i], 0) {
				t.Fatalf("%v: Exp(%g): %g, portable %g", path, v, a.exp[i], p.exp[i])
			}
			if i < len(a.sub) && !close(a.sub[i], p.sub[i], 0) {
				t.Fatalf("%v: ExpSubSum element (%g): %g, portable %g", path, v, a.sub[i], p.sub[i])
			}
			if !close(a.gelu[i], p.gelu[i], 5e-7*max(1, math.Abs(float64(v)))) {
				t.Fatalf("%v: GELU(%g): %g, portable %g", path, v, a.gelu[i], p.gelu[i])
			}
			if !close(a.grad[i], p.grad[i], 5e-7*max(1, math.Abs(float64(g[i])))) {
				t.Fatalf("%v: GELUGrad(%g, %g): %g, portable %g", path, v, g[i], a.grad[i], p.grad[i])
			}
		}
		if !relOK(a.sum, float64(p.sum), 1e-6) {
			t.Errorf("%v: ExpSubSum = %g, portable %g", path, a.sum, p.sum)
		}
	}
	if len(asm) < 2 {
		return
	}
	a, b := asm[0], asm[1]
	for i, v := range x {
		if !same(a.exp[i], b.exp[i]) || i < len(a.sub) && !same(a.sub[i], b.sub[i]) || !same(a.gelu[i], b.gelu[i]) || !same(a.grad[i], b.grad[i]) {
			t.Fatalf("x = %g: avx2 exp %g, ExpSubSum %g, GELU %g, GELUGrad %g; avx512 %g, %g, %g, %g",
				v, a.exp[i], a.sub[i], a.gelu[i], a.grad[i], b.exp[i], b.sub[i], b.gelu[i], b.grad[i])
		}
	}
	if a.sum != b.sum {
		t.Errorf("ExpSubSum: avx2 %g, avx512 %g", a.sum, b.sum)
	}
}

// TestExpEdgesAVX512 compares the AVX-512 exponential, which scales by 2^n
// with VSCALEFPS, with the AVX2 one, which adds n to the exponent field, bit
// for bit on every float32 where the two could part: around expLo (-87.34,
// where results turn subnormal and both give 0 below), around expHi (88.72,
// where they overflow) and every 4096th float beyond, up to NaN. (All 2^32
// inputs of Exp, ExpSubSum and GELUAndGrad were compared once, taking a
// minute: no difference.) It fails when the clamp before the polynomial is
// 88 instead of 89, and when the mask that gives 0 below expLo is left off.
func TestExpEdgesAVX512(t *testing.T) {
	if !AVX2.Supported() || !AVX512.Supported() {
		t.Skip("needs the AVX2 and AVX-512 paths")
	}
	var x []float32
	span := func(lo, hi float32, step uint32) {
		for b := math.Float32bits(lo); b <= math.Float32bits(hi); b += step {
			x = append(x, math.Float32frombits(b))
		}
	}
	span(86, 104, 1)      // -x, below
	span(88, 90, 1)       // around expHi
	span(90, inf32, 4096) // far above, to +Inf
	n := len(x)
	for _, v := range x[:n] { // and the negatives
		x = append(x, -v)
	}
	x = append(x, nan32, -nan32, 0, -0)
	run := func(p Path) (e, s []float32, sum float32) {
		defer setPath(setPath(p))
		e = make([]float32, len(x))
		Exp(e, x)
		s = append([]float32(nil), x...)
		return e, s, ExpSubSum(s, -1)
	}
	e2, s2, _ := run(AVX2)
	e5, s5, _ := run(AVX512)
	for i, v := range x {
		if !same(e2[i], e5[i]) || !same(s2[i], s5[i]) {
			t.Fatalf("x = %g [%08x]: Exp avx2 %g, avx512 %g; ExpSubSum element avx2 %g, avx512 %g",
				v, math.Float32bits(v), e2[i], e5[i], s2[i], s5[i])
		}
	}
}

// TestExpSub checks that ExpSub leaves the bits ExpSubSum leaves, on every
// path, for lengths around the kernels' 16 and 8 lanes and their tails,
// with masked elements, special values and shifts inside and outside the
// row's range.
func TestExpSub(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	special := []float32{float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.NaN()), -1e9, 88, -87.5, 0}
	forEachPath(t, func(t *testing.T) {
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 24, 31, 33, 100, 128, 1000} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64() * 20)
				if rng.Intn(5) == 0 {
					x[i] = special[rng.Intn(len(special))]
				}
			}
			for _, shift := range []float32{0, 3.5, -40, Max(x)} {
				want := append([]float32(nil), x...)
				ExpSubSum(want, shift)
				got := append([]float32(nil), x...)
				ExpSub(got, shift)
				if !bitsEq32(got, want) {
					t.Fatalf("n=%d shift=%g: not the bits of ExpSubSum", n, shift)
				}
			}
		}
	})
}

// TestExpAddSub checks that ExpAddSub gives the bits of Add then ExpSub on
// every path, for rows around the kernels' 16 and 8 lanes and biases
// covering none, some or all of a row, with special values. The elements
// of the bias's backing array past its length are NaN, so a lane read
// beyond it shows (the test fails when the AVX-512 kernel's bias mask
// covers one lane too many: checked).
func TestExpAddSub(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	special := []float32{float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.NaN()), -1e9, 88, -87.5, 0}
	forEachPath(t, func(t *testing.T) {
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 100, 128, 1000} {
			for _, nb := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 33, n / 2, n - 1, n} {
				if nb < 0 || nb > n {
					continue
				}
				x, backing := make([]float32, n), make([]float32, n+16)
				for i := range x {
					x[i] = float32(rng.NormFloat64() * 20)
					if rng.Intn(5) == 0 {
						x[i] = special[rng.Intn(len(special))]
					}
				}
				for i := range backing {
					backing[i] = float32(rng.NormFloat64() * 5)
					if i >= nb {
						backing[i] = float32(math.NaN())
					}
				}
				b := backing[:nb]
				for _, shift := range []float32{0, 3.5, -40} {
					want := append([]float32(nil), x...)
					Add(want[:nb], want[:nb], b)
					ExpSub(want, shift)
					got := append([]float32(nil), x...)
					ExpAddSub(got, b, shift)
					if !bitsEq32(got, want) {
						t.Fatalf("n=%d nb=%d shift=%g: not the bits of Add and ExpSub", n, nb, shift)
					}
				}
			}
		}
	})
}

// TestDot4Rows checks that Dot4Rows gives Dot4's bits row by row on every
// path: lengths the four-row assembly takes (multiples of 4) and others,
// row counts around its groups of 4, strides longer than the rows.
func TestDot4Rows(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	forEachPath(t, func(t *testing.T) {
		for _, n := range []int{4, 8, 32, 64, 3, 6} {
			for _, rows := range []int{1, 3, 4, 5, 8, 11} {
				lda, ldb := n+5, 3*n
				a, b := make([]float32, rows*lda), make([]float32, rows*ldb)
				for i := range a {
					a[i] = float32(rng.NormFloat64())
				}
				for i := range b {
					b[i] = float32(rng.NormFloat64() * 3)
				}
				got := make([]float32, rows)
				Dot4Rows(got, a, lda, b, ldb, n)
				for r := range rows {
					if want := Dot4(a[r*lda:][:n], b[r*ldb:][:n]); math.Float32bits(got[r]) != math.Float32bits(want) {
						t.Fatalf("n=%d rows=%d: row %d = %g, Dot4 gives %g", n, rows, r, got[r], want)
					}
				}
			}
		}
	})
}

func TestExpSubSum(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	forEachPath(t, func(t *testing.T) {
		for _, n := range []int{1, 7, 8, 9, 100, 128, 1000, 4096, 100003} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64() * 5)
				if rng.Intn(4) == 0 {
					x[i] = -1e9 // attention mask
				}
			}
			x[rng.Intn(n)] = 12
			shift := Max(x)
			want := make([]float32, n)
			for i, v := range x {
				want[i] = v - shift
			}
			Exp(want, want)
			got := append([]float32(nil), x...)
			sum := ExpSubSum(got, shift)
			var ref float64
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("n=%d: element %d = %g, want Exp(%g-%g) = %g", n, i, got[i], x[i], shift, want[i])
				}
				if x[i] == -1e9 && got[i] != 0 {
					t.Fatalf("n=%d: masked element %d = %g, want 0", n, i, got[i])
				}
				ref += float64(got[i])
			}
			if !relOK(sum, ref, 1e-6) {
				t.Errorf("n=%d: sum = %.9g, want %.9g", n, sum, ref)
			}
			if sum < 1 {
				t.Errorf("n=%d: sum = %g < 1 with the maximum as shift", n, sum)
			}
		}
		// A fully masked row stays finite: every element is e^0 = 1.
		x := []float32{-1e9, -1e9, -1e9, -1e9, -1e9, -1e9, -1e9, -1e9, -1e9}
		if s := ExpSubSum(x, Max(x)); s != 9 || x[8] != 1 {
			t.Errorf("fully masked row: sum %g, x = %v", s, x)
		}
		if s := ExpSubSum(nil, 0); s != 0 {
			t.Errorf("ExpSubSum(nil) = %g", s)
		}
	})
}

func TestMaxAddMax(t *testing.T) {
	ninf := float32(math.Inf(-1))
	cases := []struct {
		x, b []float32
		want float32
	}{
		{nil, nil, ninf},
		{[]float32{3}, []float32{-1}, 2},
		{[]float32{ninf, ninf}, []float32{0, 0}, ninf},
		{[]float32{-5, -4, -3, -2, -1, -7, -8, -9, -10}, make([]float32, 9), -1},
		{[]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, make([]float32, 17), 17},
		{make([]float32, 17), []float32{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 40, -1e9}, 40},
		{make([]float32, 24), append(make([]float32, 23), inf32), inf32},
	}
	forEachPath(t, func(t *testing.T) {
		for _, c := range cases {
			x := append([]float32(nil), c.x...)
			if got := AddMax(x, c.b); got != c.want {
				t.Errorf("AddMax(%v, %v) = %g, want %g", c.x, c.b, got, c.want)
			}
			if got := Max(x); got != c.want {
				t.Errorf("Max(%v) = %g, want %g", x, got, c.want)
			}
			// The generic forms: float32 through the kernels, float64 in Go.
			x32 := append([]float32(nil), c.x...)
			x64, b64 := make([]float64, len(c.x)), make([]float64, len(c.b))
			for i := range c.x {
				x64[i], b64[i] = float64(c.x[i]), float64(c.b[i])
			}
			if got := AddToMax(x32, c.b); got != c.want || !slices.Equal(x32, x) {
				t.Errorf("AddToMax(%v, %v) = %g, %v; want %g, %v", c.x, c.b, got, x32, c.want, x)
			}
			if got := AddToMax(x64, b64); got != float64(c.want) {
				t.Errorf("AddToMax in float64 (%v, %v) = %g, want %g", c.x, c.b, got, c.want)
			}
			if got := MaxOf(x64); got != float64(c.want) {
				t.Errorf("MaxOf(%v) = %g, want %g", x64, got, c.want)
			}
			for i := range x64 {
				if float32(x64[i]) != x[i] {
					t.Errorf("AddToMax in float64 (%v, %v) left %v, want %v", c.x, c.b, x64, x)
					break
				}
			}
		}
		// NaN must not crash; the result is unspecified.
		x := make([]float32, 21)
		x[3], x[18] = nan32, nan32
		AddMax(x, make([]float32, 21))
		Max(x)
	})
}

// TestAdd checks Add bit for bit against Go's float32 addition at every
// length up to 70 and some longer ones, with values that exercise the
// rounding of the sum (mixed magnitudes), signed zeros, subnormal operands
// and sums (kept: Add does not flush), infinities and NaN; then in place
// (dst aliasing a and b) and that nothing past dst is written.
func TestAdd(t *testing.T) {
	// 3e38 twice, so that 3e38 + 3e38 (which overflows to +Inf) comes up often.
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-45, -1e-45, 0x1p-127, -0x1p-126,
		inf32, -inf32, nan32, 1, 1e-8, -1, 3e38, 3e38}
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(5))
		for _, n := range maxLengths() {
			a, b := make([]float32, n), make([]float32, n)
			for i := range a {
				a[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.Intn(9)-4)))
				b[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.Intn(9)-4)))
				if rng.Intn(4) == 0 {
					a[i] = special[rng.Intn(len(special))]
				}
				if rng.Intn(4) == 0 {
					b[i] = special[rng.Intn(len(special))]
				}
			}
			const sentinel = float32(-12345.5)
			got := make([]float32, n+1) // got[n] stands past dst's end
			got[n] = sentinel
			Add(got[:n], a, b)
			for i := 0; i < n; i++ {
				if want := a[i] + b[i]; !same(got[i], want) {
					t.Fatalf("n=%d: Add element %d = %g + %g = %g, want %g", n, i, a[i], b[i], got[i], want)
				}
			}
			if got[n] != sentinel {
				t.Fatalf("n=%d: element past dst overwritten", n)
			}
			inA := append([]float32(nil), a...)
			Add(inA, inA, b)
			inB := append([]float32(nil), b...)
			Add(inB, a, inB)
			for i := 0; i < n; i++ {
				if !same(inA[i], got[i]) || !same(inB[i], got[i]) {
					t.Fatalf("n=%d: Add in place element %d = %g (dst = a), %g (dst = b), want %g", n, i, inA[i], inB[i], got[i])
				}
			}
		}
	})
}

// refMax is the maximum of x by a plain loop, -Inf for an empty x.
func refMax(x []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	return m
}

// maxLengths are the lengths of TestMax: every length up to 70 (each vector
// lane, both unrolled accumulators and every tail), then some longer ones.
func maxLengths() []int {
	var ns []int
	for n := 0; n <= 70; n++ {
		ns = append(ns, n)
	}
	return append(ns, 127, 128, 129, 255, 256, 1000, 4099)
}

// TestMax checks Max and AddMax against refMax over many lengths, with the
// maximum planted at every position (at 40 random ones for the longest
// slices) of otherwise smaller, all-negative data, so that a kernel that
// skips an element, a lane or the tail, or returns its initial value or 0,
// is caught; and on random data without a planted maximum.
func TestMax(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(11))
		for _, n := range maxLengths() {
			base := make([]float32, n)
			for i := range base {
				base[i] = -1000 - 1000*rng.Float32()
			}
			if n > 0 && n%3 == 0 {
				base[rng.Intn(n)] = float32(math.Inf(-1))
			}
			positions := make([]int, 0, n)
			for pos := 0; pos < n; pos++ {
				if n <= 70 || pos == 0 || pos == n-1 || rng.Intn(n) < 40 {
					positions = append(positions, pos)
				}
			}
			if n == 0 {
				positions = append(positions, -1)
			}
			for _, pos := range positions {
				x := append([]float32(nil), base...)
				want := float32(math.Inf(-1))
				if pos >= 0 {
					x[pos] = -0.5 - float32(pos%7)
					want = x[pos]
				}
				orig := append([]float32(nil), x...)
				if got := Max(x); got != want || got != refMax(orig) {
					t.Fatalf("n=%d, maximum at %d: Max = %g, want %g", n, pos, got, want)
				}
				for i := range x {
					if x[i] != orig[i] {
						t.Fatalf("n=%d: Max changed element %d", n, i)
					}
				}
				// AddMax with the maximum in b.
				b := make([]float32, n)
				if pos >= 0 {
					b[pos] = 3000
				}
				y := append([]float32(nil), base...)
				sum := make([]float32, n)
				for i := range sum {
					sum[i] = base[i] + b[i]
				}
				if got := AddMax(y, b); got != refMax(sum) {
					t.Fatalf("n=%d, maximum at %d: AddMax = %g, want %g", n, pos, got, refMax(sum))
				}
				for i := range y {
					if y[i] != sum[i] {
						t.Fatalf("n=%d: AddMax element %d = %g, want %g", n, i, y[i], sum[i])
					}
				}
			}
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64() * 10)
			}
			if got, want := Max(x), refMax(x); got != want {
				t.Fatalf("n=%d random: Max = %g, want %g", n, got, want)
			}
		}
	})
}

func TestGELUAccuracy(t *testing.T) {
	x := grid(-20, 20, 400001, 400000, 8)
	x = append(x, grid(-1e4, 1e4, 100001, 0, 0)...)
	g := grid(-3, 3, len(x), 0, 9)
	forEachPath(t, func(t *testing.T) {
		y := make([]float32, len(x))
		GELU(y, x)
		var worst float64
		for i, v := range x {
			err := math.Abs(float64(y[i])-refGELU(v)) / max(1, math.Abs(float64(v)))
			if !(err <= 1e-6) {
				t.Fatalf("GELU(%.9g) = %.9g, want %.9g", v, y[i], refGELU(v))
			}
			worst = max(worst, err)
		}
		t.Logf("GELU: max error/max(1,|x|) %.3g", worst)

		GELUGrad(y, x, g)
		worst = 0
		for i, v := range x {
			if math.Abs(float64(v)) > 20 {
				continue
			}
			err := math.Abs(float64(y[i])-refGELUGrad(v, g[i])) / max(1, math.Abs(float64(g[i])))
			if !(err <= 2e-6) {
				t.Fatalf("GELUGrad(%.9g, %.9g) = %.9g, want %.9g", v, g[i], y[i], refGELUGrad(v, g[i]))
			}
			worst = max(worst, err)
		}
		t.Logf("GELUGrad: max error/max(1,|g|) %.3g", worst)
	})
}

// matches reports whether got is NaN when want is, exactly want when want is
// 0, infinite or huge, and otherwise within 1e-6 relative error of want.
func matches(got, want float32) bool {
	if want != want || got != got {
		return want != want && got != got
	}
	if want == 0 || math.Abs(float64(want)) > 100 {
		return got == want
	}
	return relOK(got, float64(want), 1e-6)
}

func TestGELUSpecial(t *testing.T) {
	ninf := float32(math.Inf(-1))
	cases := []struct {
		x, g           float32
		gelu, geluGrad float32 // NaN: want NaN
	}{
		{0, 1, 0, 0.5},
		{1e4, 2, 1e4, 2},
		{1e30, 2, 1e30, 2},
		{math.MaxFloat32, 2, math.MaxFloat32, 2},
		{inf32, 2, inf32, 2},
		{-1e4, 2, 0, 0},
		{-1e30, 2, 0, 0},
		{-math.MaxFloat32, 2, 0, 0},
		{ninf, 2, 0, 0},
		{nan32, 2, nan32, nan32},
		{-nan32, 2, nan32, nan32},
		{3, nan32, float32(refGELU(3)), nan32},
	}
	forEachPath(t, func(t *testing.T) {
		for _, c := range cases {
			for pos := 0; pos < 19; pos++ {
				x, g := make([]float32, 19), make([]float32, 19)
				x[pos], g[pos] = c.x, c.g
				y := make([]float32, 19)
				GELU(y, x)
				if got := y[pos]; !matches(got, c.gelu) {
					t.Errorf("GELU(%g) at %d = %g, want %g", c.x, pos, got, c.gelu)
				}
				GELUGrad(y, x, g)
				if got := y[pos]; !matches(got, c.geluGrad) {
					t.Errorf("GELUGrad(%g, %g) at %d = %g, want %g", c.x, c.g, pos, got, c.geluGrad)
				}
			}
		}
	})
}

func TestLengthMismatchPanics(t *testing.T) {
	calls := map[string]func(){
		"Exp":      func() { Exp(make([]float32, 8), make([]float32, 9)) },
		"AddMax":   func() { AddMax(make([]float32, 9), make([]float32, 8)) },
		"Add(a)":   func() { Add(make([]float32, 9), make([]float32, 8), make([]float32, 9)) },
		"Add(b)":   func() { Add(make([]float32, 9), make([]float32, 9), make([]float32, 10)) },
		"GELU":     func() { GELU(make([]float32, 3), make([]float32, 2)) },
		"GELUGrad": func() { GELUGrad(make([]float32, 16), make([]float32, 16), make([]float32, 15)) },
	}
	forEachPath(t, func(t *testing.T) {
		for name, f := range calls {
			t.Run(name, func(t *testing.T) {
				defer func() {
					if recover() == nil {
						t.Error("no panic")
					}
				}()
				f()
			})
		}
	})
}

func Example() {
	// A softmax row with a masked entry.
	row := []float32{1, 2, -1e9, 3}
	Scale(row, 0.5)
	m := Max(row)
	sum := ExpSubSum(row, m)
	Scale(row, 1/sum)
	fmt.Printf("%.4f\n", row)
	// Output: [0.1863 0.3072 0.0000 0.5065]
}
