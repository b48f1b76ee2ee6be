package vmath

import (
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// rowLengths are the row lengths of the LayerNorm and AdamW tests: every
// length up to 70 (each lane, the 16-element blocks and every tail), then
// the model widths and some odd ones.
func rowLengths() []int {
	var ns []int
	for n := 0; n <= 70; n++ {
		ns = append(ns, n)
	}
	return append(ns, 127, 128, 129, 256, 512, 1000, 4099)
}

func randRow(rng *rand.Rand, n int, mean, std float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(mean + std*rng.NormFloat64())
	}
	return x
}

// The LayerNorm row code before the kernels, verbatim (float32 instance of
// rowStats and the row loops of lnForward and lnBackward): the kernels must
// reproduce its element-wise arithmetic exactly and its reductions to
// within float64 rounding.

func oldRowStats(x []float32) (mean, rstd float64) {
	for _, v := range x {
		mean += float64(v)
	}
	mean /= float64(len(x))
	var v2 float64
	for _, v := range x {
		d := float64(v) - mean
		v2 += d * d
	}
	return mean, 1 / math.Sqrt(v2/float64(len(x))+1e-5)
}

func oldNormalize(or, xr, gamma, beta []float32, m, s float32) {
	for j, v := range xr {
		or[j] = (v-m)*s*gamma[j] + beta[j]
	}
}

func oldGradSums(xr, gr, gamma []float32, mean, rstd float64, pg, pb []float64) (mg, mgx float64) {
	for j, v := range xr {
		xh := (float64(v) - mean) * rstd
		g := float64(gr[j])
		pg[j] += g * xh
		pb[j] += g
		g *= float64(gamma[j])
		mg += g
		mgx += g * xh
	}
	return mg, mgx
}

func oldGradX(or, xr, gr, gamma []float32, mean, rstd, mg, mgx float64) {
	for j, v := range xr {
		xh := (float64(v) - mean) * rstd
		or[j] = float32(rstd * (float64(gr[j])*float64(gamma[j]) - mg - xh*mgx))
	}
}

// exactSum returns the correctly rounded sum of terms.
func exactSum(terms []float64) float64 {
	s := new(big.Float).SetPrec(2000)
	for _, v := range terms {
		s.Add(s, new(big.Float).SetFloat64(v))
	}
	f, _ := s.Float64()
	return f
}

// onEveryPath returns f's result on every supported path, checking that
// they are bit-identical (eq), and returns the portable one.
func onEveryPath[R any](t *testing.T, what string, f func() R, eq func(a, b R) bool) R {
	t.Helper()
	var ref R
	for _, p := range Paths {
		if !p.Supported() {
			continue
		}
		prev := setPath(p)
		r := f()
		setPath(prev)
		if p == Portable {
			ref = r
		} else if !eq(ref, r) {
			t.Fatalf("%s: the %v path differs from the portable one", what, p)
		}
	}
	return ref
}

func bitsEq32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func bitsEq64(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// wideRow returns n values of random sign and magnitudes spread from 1e-10
// to 1e10.
func wideRow(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * math.Pow(10, 20*rng.Float64()-10))
	}
	return x
}

func TestMoments(t *testing.T) {
	rng := rand.New(rand.NewSource(20))
	var worstMean, worstDev, worstOld float64
	for _, n := range rowLengths() {
		for _, c := range [][2]float64{{0, 1}, {3, 0.01}, {-50, 20}, {0, 0}} {
			x := randRow(rng, n, c[0], c[1])
			if c[1] == 0 {
				// Magnitudes from 1e-10 to 1e10: the float64 sums
				// round, so any change of their order shows.
				x = wideRow(rng, n)
			}
			what := fmt.Sprintf("Moments n=%d mean=%g std=%g", n, c[0], c[1])
			got := onEveryPath(t, what, func() [2]float64 {
				m, d := Moments(x)
				return [2]float64{m, d}
			}, func(a, b [2]float64) bool { return bitsEq64(a[:], b[:]) })
			if n == 0 {
				if got != [2]float64{} {
					t.Fatalf("%s = %v, want 0, 0", what, got)
				}
				continue
			}
			// Against the exact values (the mean from the exact sum,
			// the deviations from the computed mean).
			terms := make([]float64, n)
			for i, v := range x {
				terms[i] = float64(v)
			}
			mean := exactSum(terms) / float64(n)
			for i, v := range x {
				d := float64(v) - got[0]
				terms[i] = d * d
			}
			dev := exactSum(terms)
			em := math.Abs(got[0]-mean) / max(math.Abs(mean), 1e-300)
			ed := math.Abs(got[1]-dev) / max(dev, 1e-300)
			if em > 1e-13 && math.Abs(got[0]-mean) > 1e-16*math.Abs(c[0])+1e-18 || ed > 1e-13 {
				t.Fatalf("%s = %v, exact %v, %v", what, got, mean, dev)
			}
			worstMean, worstDev = max(worstMean, em), max(worstDev, ed)
			// Against the old sequential code: the same statistics up
			// to float64 rounding.
			om, orstd := oldRowStats(x)
			rstd := 1 / math.Sqrt(got[1]/float64(n)+1e-5)
			if d := math.Abs(rstd-orstd) / orstd; d > 1e-13 || math.Abs(got[0]-om) > 1e-13*max(math.Abs(om), 1e-3) {
				t.Fatalf("%s: mean %v rstd %v, old code %v %v", what, got[0], rstd, om, orstd)
			} else {
				worstOld = max(worstOld, d)
			}
		}
	}
	t.Logf("relative error: mean %.2g, squared deviations %.2g; rstd vs the old sequential sums %.2g", worstMean, worstDev, worstOld)
}

func TestNormalize(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	for _, n := range rowLengths() {
		x, gamma, beta := randRow(rng, n, 1, 3), randRow(rng, n, 1, 0.2), randRow(rng, n, 0, 0.2)
		m, s := float32(0.9), float32(0.37)
		want := make([]float32, n)
		oldNormalize(want, x, gamma, beta, m, s)
		for _, inPlace := range []bool{false, true} {
			got := onEveryPath(t, fmt.Sprintf("Normalize n=%d in place=%v", n, inPlace), func() []float32 {
				out := make([]float32, n)
				src := x
				if inPlace {
					out = append(out[:0], x...)
					src = out
				}
				Normalize(out, src, gamma, beta, m, s)
				return out
			}, bitsEq32)
			if !bitsEq32(got, want) {
				t.Fatalf("Normalize n=%d in place=%v differs from the old loop", n, inPlace)
			}
		}
	}
}

func TestLayerNormGrad(t *testing.T) {
	rng := rand.New(rand.NewSource(22))
	for _, n := range rowLengths() {
		x, dy, gamma := randRow(rng, n, 0.5, 2), wideRow(rng, n), randRow(rng, n, 1, 0.3)
		mean, rstd := 0.47, 0.51
		pg0, pb0 := make([]float64, n), make([]float64, n)
		for i := range pg0 {
			pg0[i], pb0[i] = rng.NormFloat64(), rng.NormFloat64()
		}
		type sums struct {
			pg, pb  []float64
			sg, sgx float64
		}
		got := onEveryPath(t, fmt.Sprintf("LayerNormGradSums n=%d", n), func() sums {
			r := sums{pg: append([]float64(nil), pg0...), pb: append([]float64(nil), pb0...)}
			r.sg, r.sgx = LayerNormGradSums(x, dy, gamma, mean, rstd, r.pg, r.pb)
			return r
		}, func(a, b sums) bool {
			return bitsEq64(a.pg, b.pg) && bitsEq64(a.pb, b.pb) && bitsEq64([]float64{a.sg, a.sgx}, []float64{b.sg, b.sgx})
		})
		wpg, wpb := append([]float64(nil), pg0...), append([]float64(nil), pb0...)
		mg, mgx := oldGradSums(x, dy, gamma, mean, rstd, wpg, wpb)
		if !bitsEq64(got.pg, wpg) || !bitsEq64(got.pb, wpb) {
			t.Fatalf("LayerNormGradSums n=%d: column sums differ from the old loop", n)
		}
		var scale, scaleX float64 // Σ|terms|: the error bound of the sums
		for i := range x {
			g := float64(dy[i]) * float64(gamma[i])
			scale += math.Abs(g)
			scaleX += math.Abs(g * (float64(x[i]) - mean) * rstd)
		}
		if math.Abs(got.sg-mg) > 1e-14*scale || math.Abs(got.sgx-mgx) > 1e-14*scaleX {
			t.Fatalf("LayerNormGradSums n=%d = %v, %v, old loop %v, %v", n, got.sg, got.sgx, mg, mgx)
		}

		mg, mgx = 0.13, -0.21
		want := make([]float32, n)
		oldGradX(want, x, dy, gamma, mean, rstd, mg, mgx)
		for _, alias := range []string{"none", "x", "dy"} {
			dx := onEveryPath(t, fmt.Sprintf("LayerNormGradX n=%d dx=%s", n, alias), func() []float32 {
				xs, dys := append([]float32(nil), x...), append([]float32(nil), dy...)
				out := make([]float32, n)
				switch alias {
				case "x":
					out = xs
				case "dy":
					out = dys
				}
				LayerNormGradX(out, xs, dys, gamma, mean, rstd, mg, mgx)
				return out
			}, bitsEq32)
			if !bitsEq32(dx, want) {
				t.Fatalf("LayerNormGradX n=%d dx=%s differs from the old loop", n, alias)
			}
		}
	}
}

// oldAdamW is the inner loop of AdamW.Update (train/optim.go) before the
// kernel, verbatim.
func oldAdamW(w, g, m, v []float32, b1, b2, eps, shrink, stepSize, invSqrtBC2 float32) {
	for j := range w {
		m[j] = b1*m[j] + (1-b1)*g[j]
		v[j] = b2*v[j] + (1-b2)*g[j]*g[j]
		denom := float32(math.Sqrt(float64(v[j])))*invSqrtBC2 + eps
		w[j] = w[j]*shrink - stepSize*m[j]/denom
	}
}

func TestAdamW(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	c := AdamWCoeffs{Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, Shrink: 1 - 1e-4, StepSize: 1e-3 / (1 - 0.9*0.9*0.9), InvSqrtBC2: float32(1 / math.Sqrt(1-0.99*0.99*0.99))}
	for _, n := range rowLengths() {
		w, g := randRow(rng, n, 0, 0.1), randRow(rng, n, 0, 1e-2)
		m, v := randRow(rng, n, 0, 1e-3), randRow(rng, n, 0, 1e-4)
		for i := range v {
			v[i] = v[i] * v[i]
			switch i % 11 {
			case 3:
				g[i], m[i], v[i] = 0, 0, 0 // a parameter that never had a gradient
			case 7:
				g[i] = 1e-30 // subnormal squares
			case 9:
				g[i] = 1e3
			}
		}
		type state struct{ w, m, v []float32 }
		got := onEveryPath(t, fmt.Sprintf("AdamW n=%d", n), func() state {
			s := state{append([]float32(nil), w...), append([]float32(nil), m...), append([]float32(nil), v...)}
			AdamW(s.w, g, s.m, s.v, c)
			return s
		}, func(a, b state) bool { return bitsEq32(a.w, b.w) && bitsEq32(a.m, b.m) && bitsEq32(a.v, b.v) })
		want := state{append([]float32(nil), w...), append([]float32(nil), m...), append([]float32(nil), v...)}
		oldAdamW(want.w, g, want.m, want.v, c.Beta1, c.Beta2, c.Eps, c.Shrink, c.StepSize, c.InvSqrtBC2)
		if !bitsEq32(got.w, want.w) || !bitsEq32(got.m, want.m) || !bitsEq32(got.v, want.v) {
			t.Fatalf("AdamW n=%d differs from the old loop", n)
		}
	}
}

// TestRowKernelsNoOverrun checks that the row kernels write nothing past
// the end of their outputs.
func TestRowKernelsNoOverrun(t *testing.T) {
	const sentinel = float32(-12345.5)
	forEachPath(t, func(t *testing.T) {
		for n := 0; n <= 40; n++ {
			buf := func() []float32 {
				b := make([]float32, n+17)
				for i := range b {
					b[i] = sentinel
				}
				return b
			}
			x := grid(-3, 3, n+17, 0, 0)
			out := buf()
			Normalize(out[:n], x[:n], x[:n], x[:n], 0.5, 2)
			dx := buf()
			LayerNormGradX(dx[:n], x[:n], x[:n], x[:n], 0.1, 2, 0.3, 0.4)
			w, m, v := buf(), buf(), buf()
			for i := 0; i < n; i++ {
				w[i], m[i], v[i] = 1, 0, 0
			}
			AdamW(w[:n], x[:n], m[:n], v[:n], AdamWCoeffs{Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, Shrink: 1, StepSize: 1e-3, InvSqrtBC2: 1})
			pg, pb := make([]float64, n+17), make([]float64, n+17)
			LayerNormGradSums(x[:n], x[:n], x[:n], 0.1, 2, pg[:n], pb[:n])
			for _, b := range [][]float32{out, dx, w, m, v} {
				for i := n; i < len(b); i++ {
					if b[i] != sentinel {
						t.Fatalf("n=%d: element %d overwritten", n, i)
					}
				}
			}
			for i := n; i < len(pg); i++ {
				if pg[i] != 0 || pb[i] != 0 {
					t.Fatalf("n=%d: column sum %d overwritten", n, i)
				}
			}
		}
	})
}

func TestRowKernelsLengthMismatch(t *testing.T) {
	a, b := make([]float32, 8), make([]float32, 9)
	d8, d9 := make([]float64, 8), make([]float64, 9)
	calls := map[string]func(){
		"Normalize":         func() { Normalize(a, a, b, a, 0, 1) },
		"LayerNormGradSums": func() { LayerNormGradSums(a, a, a, 0, 1, d8, d9) },
		"LayerNormGradX":    func() { LayerNormGradX(a, b, a, a, 0, 1, 0, 0) },
		"AdamW":             func() { AdamW(a, a, a, b, AdamWCoeffs{}) },
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

// TestLayerNormGradRows checks that the whole-rows backward gives, on
// every path, the bits of LayerNormGradSums and LayerNormGradX called row
// by row: row lengths that take the assembly (multiples of 16 up to
// lnGradRowsMaxD, whose first pass keeps values in a frame the second
// reads, a row's second pass after the next row's first) and others (one
// past that limit among them), column sums that start non-zero, and one
// row, two or more.
func TestLayerNormGradRows(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	type result struct {
		dx     []float32
		pg, pb []float64
	}
	eq := func(a, b result) bool {
		return bitsEq32(a.dx, b.dx) && bitsEq64(a.pg, b.pg) && bitsEq64(a.pb, b.pb)
	}
	for _, d := range []int{16, 128, 256, lnGradRowsMaxD, lnGradRowsMaxD + 16, 48, 40, 8, 1} {
		for _, rows := range []int{1, 2, 3, 17} {
			x, dy, gamma := randRow(rng, rows*d, 0.5, 2), wideRow(rng, rows*d), randRow(rng, d, 1, 0.3)
			stats := make([]float64, 2*rows)
			for r := range rows {
				stats[2*r], stats[2*r+1] = rng.NormFloat64(), 0.5+rng.Float64()
			}
			pg0, pb0 := make([]float64, d), make([]float64, d)
			for i := range pg0 {
				pg0[i], pb0[i] = rng.NormFloat64(), rng.NormFloat64()
			}
			start := func() result {
				return result{make([]float32, rows*d), append([]float64(nil), pg0...), append([]float64(nil), pb0...)}
			}
			what := fmt.Sprintf("LayerNormGradRows d=%d rows=%d", d, rows)
			onEveryPath(t, what, func() result {
				want := start()
				for r := range rows {
					xr, gr := x[r*d:(r+1)*d], dy[r*d:(r+1)*d]
					sg, sgx := LayerNormGradSums(xr, gr, gamma, stats[2*r], stats[2*r+1], want.pg, want.pb)
					LayerNormGradX(want.dx[r*d:(r+1)*d], xr, gr, gamma, stats[2*r], stats[2*r+1], sg/float64(d), sgx/float64(d))
				}
				got := start()
				LayerNormGradRows(got.dx, x, dy, gamma, d, stats, got.pg, got.pb)
				if !eq(got, want) {
					t.Fatalf("%s on the %v path: not the bits of the row-by-row passes", what, kernels.Path())
				}
				return got
			}, eq)
		}
	}
}

// TestLayerNormRows checks that the whole-rows forward gives, on every
// path, the bits of Moments and Normalize called row by row, with the
// statistics stored or not and out in place of x or not.
func TestLayerNormRows(t *testing.T) {
	rng := rand.New(rand.NewSource(24))
	const eps = 1e-5
	type result struct {
		out   []float32
		stats []float64
	}
	eq := func(a, b result) bool { return bitsEq32(a.out, b.out) && bitsEq64(a.stats, b.stats) }
	for _, d := range []int{16, 128, 256, 48, 40, 8, 1} {
		for _, rows := range []int{1, 2, 3, 17} {
			x, gamma, beta := randRow(rng, rows*d, 0.5, 2), randRow(rng, d, 1, 0.3), randRow(rng, d, 0, 0.3)
			for _, mode := range []string{"stats", "nostats", "inplace"} {
				what := fmt.Sprintf("LayerNormRows d=%d rows=%d %s", d, rows, mode)
				onEveryPath(t, what, func() result {
					want := result{make([]float32, rows*d), make([]float64, 2*rows)}
					for r := range rows {
						xr := x[r*d : (r+1)*d]
						mean, sqDev := Moments(xr)
						rstd := 1 / math.Sqrt(sqDev/float64(d)+eps)
						want.stats[2*r], want.stats[2*r+1] = mean, rstd
						Normalize(want.out[r*d:(r+1)*d], xr, gamma, beta, float32(mean), float32(rstd))
					}
					got := result{make([]float32, rows*d), make([]float64, 2*rows)}
					switch mode {
					case "stats":
						LayerNormRows(got.out, x, gamma, beta, d, eps, got.stats)
					case "nostats":
						LayerNormRows(got.out, x, gamma, beta, d, eps, nil)
						copy(got.stats, want.stats)
					case "inplace":
						copy(got.out, x)
						LayerNormRows(got.out, got.out, gamma, beta, d, eps, got.stats)
					}
					if !eq(got, want) {
						t.Fatalf("%s on the %v path: not the bits of the row-by-row passes", what, kernels.Path())
					}
					return got
				}, eq)
			}
		}
	}
}
