//go:build amd64 && !purego

package bf16

import (
	"testing"
	"unsafe"
)

// BenchmarkKernel times the assembly kernel alone on packed operands that
// stay in cache (18 slivers of 8 rows, 128 pairs, one 32-column sliver of
// B), one goroutine: its GFLOP/s against BenchmarkPeak of
// layers/internal/gemm (one core's FMA peak) tells how near the
// instruction's rate it runs.
func BenchmarkKernel(b *testing.B) {
	if !useAsm {
		b.Skip("no AVX512_BF16")
	}
	const nsl, kp = 18, 128
	a, bw := make([]uint32, nsl*kp*MR), make([]uint32, kp*NR)
	for i := range a {
		a[i] = 0x3f803f80
	}
	for i := range bw {
		bw[i] = 0x3f803f80
	}
	c := make([]float32, nsl*MR*NR)
	for range b.N {
		kernelAsm(nsl, kp, unsafe.SliceData(a), unsafe.SliceData(bw), unsafe.SliceData(c), NR, 1, 0, MR, ^uint32(0), nil)
	}
	b.ReportMetric(2*float64(nsl*MR)*NR*2*kp*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
