package vmath

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// benchN is the vector length of the benchmarks, a typical row or chunk.
const benchN = 4096

// benchPaths runs f as a sub-benchmark on every supported path and reports
// the time per element.
func benchPaths(b *testing.B, f func()) {
	for _, p := range Paths {
		b.Run(p.String(), func(b *testing.B) {
			if !p.Supported() {
				b.Skipf("the %v path is not supported by this CPU or build", p)
			}
			defer setPath(setPath(p))
			for b.Loop() {
				f()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchN), "ns/elem")
		})
	}
}

func benchInput(scale float64) []float32 {
	rng := rand.New(rand.NewSource(1))
	x := make([]float32, benchN)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * scale)
	}
	return x
}

func BenchmarkExp(b *testing.B) {
	x, dst := benchInput(10), make([]float32, benchN)
	benchPaths(b, func() { Exp(dst, x) })
}

func BenchmarkExpSubSum(b *testing.B) {
	// After the first call x holds values in [0, 1], whose exponentials
	// (shifted by the original maximum) stay in the normal range; the
	// kernels have no data-dependent branches.
	x := benchInput(3)
	m := Max(x)
	benchPaths(b, func() { ExpSubSum(x, m) })
}

func BenchmarkAddMax(b *testing.B) {
	x, bias := benchInput(1), benchInput(1)
	benchPaths(b, func() { AddMax(x, bias) })
}

func BenchmarkMax(b *testing.B) {
	x := benchInput(1)
	benchPaths(b, func() { Max(x) })
}

func BenchmarkScale(b *testing.B) {
	x := benchInput(1)
	benchPaths(b, func() { Scale(x, 1) })
}

func BenchmarkGELU(b *testing.B) {
	x, dst := benchInput(2), make([]float32, benchN)
	benchPaths(b, func() { GELU(dst, x) })
}

func BenchmarkGELUGrad(b *testing.B) {
	x, g, dst := benchInput(2), benchInput(1), make([]float32, benchN)
	benchPaths(b, func() { GELUGrad(dst, x, g) })
}

// benchRows runs f on benchN/d rows of d elements (a LayerNorm over a batch
// of d-wide rows) for the model widths.
func benchRows(b *testing.B, f func(b *testing.B, d int)) {
	for _, d := range []int{128, 256} {
		b.Run(fmt.Sprintf("d%d", d), func(b *testing.B) { f(b, d) })
	}
}

func BenchmarkMoments(b *testing.B) {
	x := benchInput(1)
	benchRows(b, func(b *testing.B, d int) {
		benchPaths(b, func() {
			for r := 0; r < benchN; r += d {
				Moments(x[r : r+d])
			}
		})
	})
}

func BenchmarkNormalize(b *testing.B) {
	x, gamma, beta, out := benchInput(1), benchInput(1), benchInput(1), make([]float32, benchN)
	benchRows(b, func(b *testing.B, d int) {
		benchPaths(b, func() {
			for r := 0; r < benchN; r += d {
				Normalize(out[r:r+d], x[r:r+d], gamma[:d], beta[:d], 0.1, 1.1)
			}
		})
	})
}

func BenchmarkLayerNormGrad(b *testing.B) {
	x, dy, gamma, dx := benchInput(1), benchInput(1), benchInput(1), make([]float32, benchN)
	pg, pb := make([]float64, 256), make([]float64, 256)
	benchRows(b, func(b *testing.B, d int) {
		benchPaths(b, func() {
			for r := 0; r < benchN; r += d {
				sg, sgx := LayerNormGradSums(x[r:r+d], dy[r:r+d], gamma[:d], 0.1, 1.1, pg[:d], pb[:d])
				LayerNormGradX(dx[r:r+d], x[r:r+d], dy[r:r+d], gamma[:d], 0.1, 1.1, sg/float64(d), sgx/float64(d))
			}
		})
	})
}

// BenchmarkLayerNormRows is LayerNorm's forward on benchN elements in rows
// of d: Moments and Normalize row by row (byRow) against one
// LayerNormRows call (rows).
func BenchmarkLayerNormRows(b *testing.B) {
	x, gamma, beta, out := benchInput(1), benchInput(1), benchInput(1), make([]float32, benchN)
	benchRows(b, func(b *testing.B, d int) {
		stats := make([]float64, 2*benchN/d)
		b.Run("byRow", func(b *testing.B) {
			benchPaths(b, func() {
				for r := 0; r < benchN; r += d {
					mean, sqDev := Moments(x[r : r+d])
					rstd := 1 / math.Sqrt(sqDev/float64(d)+1e-5)
					stats[2*r/d], stats[2*r/d+1] = mean, rstd
					Normalize(out[r:r+d], x[r:r+d], gamma[:d], beta[:d], float32(mean), float32(rstd))
				}
			})
		})
		b.Run("rows", func(b *testing.B) {
			benchPaths(b, func() { LayerNormRows(out, x, gamma[:d], beta[:d], d, 1e-5, stats) })
		})
	})
}

// BenchmarkLayerNormGradRows is LayerNorm's backward on benchN elements in
// rows of d: LayerNormGradSums and LayerNormGradX row by row (byRow)
// against one LayerNormGradRows call (rows).
func BenchmarkLayerNormGradRows(b *testing.B) {
	x, dy, gamma, dx := benchInput(1), benchInput(1), benchInput(1), make([]float32, benchN)
	pg, pb := make([]float64, 256), make([]float64, 256)
	benchRows(b, func(b *testing.B, d int) {
		stats := make([]float64, 2*benchN/d)
		for i := range stats {
			stats[i] = 0.5
		}
		b.Run("byRow", func(b *testing.B) {
			benchPaths(b, func() {
				for r := 0; r < benchN; r += d {
					mean, rstd := stats[2*r/d], stats[2*r/d+1]
					sg, sgx := LayerNormGradSums(x[r:r+d], dy[r:r+d], gamma[:d], mean, rstd, pg[:d], pb[:d])
					LayerNormGradX(dx[r:r+d], x[r:r+d], dy[r:r+d], gamma[:d], mean, rstd, sg/float64(d), sgx/float64(d))
				}
			})
		})
		b.Run("rows", func(b *testing.B) {
			benchPaths(b, func() { LayerNormGradRows(dx, x, dy, gamma[:d], d, stats, pg[:d], pb[:d]) })
		})
	})
}

func BenchmarkAdamW(b *testing.B) {
	w, g, m, v := benchInput(1), benchInput(1), benchInput(1), benchInput(1)
	for i := range v {
		v[i] *= v[i]
	}
	c := AdamWCoeffs{Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, Shrink: 1, StepSize: 1e-3, InvSqrtBC2: 1}
	benchPaths(b, func() { AdamW(w, g, m, v, c) })
}

// BenchmarkDot4Rows is the attention backward's row dots at the tiny
// model's shape (128 rows of a head's 32 values, rows 128 apart in dO and
// 128 in O): Dot4 row by row (byRow) against one Dot4Rows call (rows).
func BenchmarkDot4Rows(b *testing.B) {
	const rows, n, ld = 128, 32, 128 // rows*n = benchN: ns/elem per product
	x, y, d := make([]float32, rows*ld), make([]float32, rows*ld), make([]float32, rows)
	for r := range rows {
		copy(x[r*ld:][:n], benchInput(1)[r*n:])
		copy(y[r*ld:][:n], benchInput(2)[r*n:])
	}
	b.Run("byRow", func(b *testing.B) {
		benchPaths(b, func() {
			for r := range rows {
				d[r] = Dot4(x[r*ld:][:n], y[r*ld:][:n])
			}
		})
	})
	b.Run("rows", func(b *testing.B) {
		benchPaths(b, func() { Dot4Rows(d, x, ld, y, ld, n) })
	})
}
