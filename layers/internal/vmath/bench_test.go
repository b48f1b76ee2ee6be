package vmath

import (
	"math/rand"
	"testing"
)

// benchN is the vector length of the benchmarks, a typical row or chunk.
const benchN = 4096

// benchPaths runs f as sub-benchmarks "asm" (when available) and "go" and
// reports the time per element.
func benchPaths(b *testing.B, f func()) {
	saved := useAsm
	defer func() { useAsm = saved }()
	run := func(b *testing.B) {
		for b.Loop() {
			f()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchN), "ns/elem")
	}
	if saved {
		useAsm = true
		b.Run("asm", run)
	}
	useAsm = false
	b.Run("go", run)
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
