//go:build amd64 && !purego

package bf16

import (
	"testing"
	"unsafe"
)

// BenchmarkKernel times each assembly kernel alone on packed operands that
// stay in cache (18 slivers of 8 rows, 128 pairs, one 32-column sliver of
// B), one goroutine: its GFLOP/s against BenchmarkPeak of
// layers/internal/gemm (one core's FMA peak) tells how near the
// instructions' rate it runs. The AVX-512F and AVX2 emulations read their
// A slivers split into floats (splitAsm), as Gemm gives them to them.
func BenchmarkKernel(b *testing.B) {
	const nsl, kp = 18, 128
	a, bw := make([]uint32, nsl*kp*MR), make([]uint32, kp*NR)
	for i := range a {
		a[i] = 0x3f803f80
	}
	for i := range bw {
		bw[i] = 0x3f803f80
	}
	af := make([]float32, 2*len(a))
	splitGo(af, a, MR)
	c := make([]float32, nsl*MR*NR)
	for _, p := range asmPaths() {
		b.Run(p.String(), func(b *testing.B) {
			for range b.N {
				switch p {
				case native:
					kernelAsm(nsl, kp, unsafe.SliceData(a), unsafe.SliceData(bw), unsafe.SliceData(c), NR, 1, 0, MR, ^uint32(0), nil)
				case emulated:
					kernelEmuAsm(nsl, kp, unsafe.SliceData(af), unsafe.SliceData(bw), unsafe.SliceData(c), NR, 1, 0, MR, ^uint32(0), nil)
				default:
					kernelAVX2Asm(nsl, kp, unsafe.SliceData(af), unsafe.SliceData(bw), unsafe.SliceData(c), NR, 1, 0, nil)
				}
			}
			b.ReportMetric(2*float64(nsl*MR)*NR*2*kp*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
