//go:build amd64 && !purego

package bf16

import (
	"unsafe"

	"github.com/alibi-go/alibi/layers/internal/simd"
)

// kernelAsm computes nsl vertically adjacent MR x NR tiles of C, as
// kernelGo does, with VDPBF16PS: a holds nsl slivers of kp pairs of MR
// words, b one sliver of kp pairs of NR words; only the first rows rows of
// the last tile and the columns whose bit is set in mask are stored, and C
// is not read when beta is zero (either sign) or bias is not nil (C =
// alpha*acc + bias, the masked columns of bias read).
//
//go:noescape
func kernelAsm(nsl, kp int, a, b *uint32, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32)

// useAsm says whether the kernel runs in assembly; tests switch it.
var useAsm = simd.BF16()

// Assembly reports whether Gemm runs the AVX512_BF16 kernel.
func Assembly() bool { return useAsm }

func kernel(nsl, kp int, a, b []uint32, c []float32, ldc int, alpha, beta float32, bias []float32, rows, cols int) {
	if !useAsm || kp == 0 {
		kernelGo(nsl, kp, a, b, c, ldc, alpha, beta, bias, rows, cols)
		return
	}
	_ = a[nsl*kp*MR-1]
	_ = b[kp*NR-1]
	_ = c[(nsl-1)*MR*ldc+(rows-1)*ldc+cols-1]
	var bp *float32
	if bias != nil {
		_ = bias[cols-1]
		bp = unsafe.SliceData(bias)
	}
	kernelAsm(nsl, kp, unsafe.SliceData(a), unsafe.SliceData(b), unsafe.SliceData(c), ldc, alpha, beta, rows, uint32(1)<<cols-1, bp)
}

// roundAsm converts n floats, a multiple of 32, to bfloat16 as Round does,
// with VCVTNEPS2BF16.
//
//go:noescape
func roundAsm(dst *uint16, src *float32, n int)

// RoundSlice sets dst[i] = Round(src[i]) for every i < len(src); dst must be
// at least as long.
func RoundSlice(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	done := 0
	if useAsm {
		if done = len(src) &^ 31; done > 0 {
			roundAsm(unsafe.SliceData(dst), unsafe.SliceData(src), done)
		}
	}
	for i := done; i < len(src); i++ {
		dst[i] = Round(src[i])
	}
}

// pairsAsm writes, for groups groups of width floats (width a multiple of
// 8), dst[g*stride+j] = Round(lo[g*width+j]) | Round(hi[g*width+j])<<16.
//
//go:noescape
func pairsAsm(dst *uint32, lo, hi *float32, groups, width, stride int)

// pairs is pairsAsm on slices, checked; it reports false (and writes
// nothing) without the assembly path or for a width that is not a
// multiple of 8, and the caller packs those groups itself.
func pairs(dst []uint32, lo, hi []float32, groups, width, stride int) bool {
	if !useAsm || width%8 != 0 || groups < 1 {
		return false
	}
	_ = dst[(groups-1)*stride+width-1]
	_ = lo[groups*width-1]
	_ = hi[groups*width-1]
	pairsAsm(unsafe.SliceData(dst), unsafe.SliceData(lo), unsafe.SliceData(hi), groups, width, stride)
	return true
}

// alongAsm packs 8 lines of src (line i at src[i*ld:]) over chunks chunks
// of 16 k steps: dst[(8c+q)*ldd+i] = Round(line i's step 16c+2q) |
// Round(step 16c+2q+1)<<16.
//
//go:noescape
func alongAsm(dst *uint32, src *float32, ld, chunks, ldd int)

// along is alongAsm on slices, checked; it reports false (and writes
// nothing) without the assembly path, and the caller packs those words
// itself.
func along(dst []uint32, src []float32, ld, chunks, ldd int) bool {
	if !useAsm || chunks < 1 {
		return false
	}
	_ = dst[(8*chunks-1)*ldd+7]
	_ = src[7*ld+16*chunks-1]
	alongAsm(unsafe.SliceData(dst), unsafe.SliceData(src), ld, chunks, ldd)
	return true
}
