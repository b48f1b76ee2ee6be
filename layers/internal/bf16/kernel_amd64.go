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

// kernelEmuAsm is kernelAsm on AVX-512F, with the A slivers split into
// floats (splitAsm): a holds nsl slivers of kp groups of 2*MR floats.
//
//go:noescape
func kernelEmuAsm(nsl, kp int, a *float32, b *uint32, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32)

// kernelAVX2Asm is kernelEmuAsm on AVX2 for whole tiles: nsl tiles of MR
// x NR, every row and column stored (kernelAVX2 computes the partial ones
// through a scratch tile).
//
//go:noescape
func kernelAVX2Asm(nsl, kp int, a *float32, b *uint32, c *float32, ldc int, alpha, beta float32, bias *float32)

// path is the way the conversions run (the packing and RoundSlice), and
// the products' kernel unless productsPath says otherwise; tests switch it.
var path = choosePath()

// choosePath is pathFor this CPU, build and ALIBI_SIMD.
func choosePath() kpath { return pathFor(simd.Best(), simd.BF16(), simd.BF16Emulated()) }

// pathFor is the fastest path for the float32 kernels' path best (the
// fastest the CPU and build support, or the slower one ALIBI_SIMD names):
// the instructions where the CPU has AVX512_BF16 (bf16) and best is
// AVX-512; their emulation on AVX-512F where it has AVX512VL instead (vl);
// on AVX2 where best is AVX2, or AVX-512 without either; else portable Go.
func pathFor(best simd.Path, bf16, vl bool) kpath {
	switch {
	case best == simd.AVX512 && bf16:
		return native
	case best == simd.AVX512 && vl:
		return emulated
	case best >= simd.AVX2:
		return avx2
	}
	return portable
}

// kernel runs nsl tiles with kernel kern from packed words a and b, or for
// the emulated kernels from a's split floats af and b.
func kernel(kern kpath, nsl, kp int, a, b []uint32, af []float32, c []float32, ldc int, alpha, beta float32, bias []float32, rows, cols int) {
	if kern == portable || kp == 0 {
		kernelGo(nsl, kp, a, b, c, ldc, alpha, beta, bias, rows, cols)
		return
	}
	if kern == avx2 {
		kernelAVX2(nsl, kp, af, b, c, ldc, alpha, beta, bias, rows, cols)
		return
	}
	_ = c[(nsl-1)*MR*ldc+(rows-1)*ldc+cols-1]
	var bp *float32
	if bias != nil {
		_ = bias[cols-1]
		bp = unsafe.SliceData(bias)
	}
	_ = b[kp*NR-1]
	if kern == emulated {
		_ = af[nsl*kp*2*MR-1]
		kernelEmuAsm(nsl, kp, unsafe.SliceData(af), unsafe.SliceData(b), unsafe.SliceData(c), ldc, alpha, beta, rows, uint32(1)<<cols-1, bp)
		return
	}
	_ = a[nsl*kp*MR-1]
	kernelAsm(nsl, kp, unsafe.SliceData(a), unsafe.SliceData(b), unsafe.SliceData(c), ldc, alpha, beta, rows, uint32(1)<<cols-1, bp)
}

// kernelAVX2 is kernel on the AVX2 path (kp > 0). The assembly stores
// whole tiles only, which it writes to C directly; a tile with fewer rows
// (the last, rows < MR) or columns (cols < NR) is computed into a scratch
// tile as alpha*acc and stored from there as kernelGo stores: each
// product and the sum rounded, the bias or beta*C added, C not read when
// beta is 0.
func kernelAVX2(nsl, kp int, af []float32, b []uint32, c []float32, ldc int, alpha, beta float32, bias []float32, rows, cols int) {
	_ = af[nsl*kp*2*MR-1]
	_ = b[kp*NR-1]
	full := nsl // tiles stored whole
	switch {
	case cols < NR:
		full = 0
	case rows < MR:
		full = nsl - 1
	}
	if full > 0 {
		_ = c[(full-1)*MR*ldc+(MR-1)*ldc+NR-1]
		var bp *float32
		if bias != nil {
			_ = bias[NR-1]
			bp = unsafe.SliceData(bias)
		}
		kernelAVX2Asm(full, kp, unsafe.SliceData(af), unsafe.SliceData(b), unsafe.SliceData(c), ldc, alpha, beta, bp)
	}
	var tile [MR * NR]float32
	for s := full; s < nsl; s++ {
		kernelAVX2Asm(1, kp, &af[s*kp*2*MR], unsafe.SliceData(b), &tile[0], NR, alpha, 0, nil)
		n := MR
		if s == nsl-1 {
			n = rows
		}
		for i := range n {
			row := c[(s*MR+i)*ldc : (s*MR+i)*ldc+cols]
			t := tile[i*NR : i*NR+cols]
			for j := range row {
				switch {
				case bias != nil:
					row[j] = t[j] + bias[j]
				case beta == 0:
					row[j] = t[j]
				default:
					row[j] = t[j] + float32(beta*row[j])
				}
			}
		}
	}
}

// splitAsm writes, for groups groups of width pair words (width a
// multiple of 8), the words' top halves as floats (the odd steps), then
// their bottom halves (the even steps).
//
//go:noescape
func splitAsm(dst *float32, src *uint32, groups, width int)

// split is splitAsm on slices: the floats of groups of width words, into
// dst (twice as long as the words).
func split(dst []float32, src []uint32, width int) {
	groups := len(src) / width
	if groups == 0 {
		return
	}
	_ = dst[2*len(src)-1]
	splitAsm(unsafe.SliceData(dst), unsafe.SliceData(src), groups, width)
}

// roundAsm converts n floats, a multiple of 32, to bfloat16 as Round does,
// with VCVTNEPS2BF16.
//
//go:noescape
func roundAsm(dst *uint16, src *float32, n int)

// roundEmuAsm is roundAsm on AVX-512F.
//
//go:noescape
func roundEmuAsm(dst *uint16, src *float32, n int)

// roundAVX2Asm is roundAsm on AVX2 (n a multiple of 16).
//
//go:noescape
func roundAVX2Asm(dst *uint16, src *float32, n int)

// RoundSlice sets dst[i] = Round(src[i]) for every i < len(src); dst must be
// at least as long.
func RoundSlice(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	done := 0
	if path != portable {
		done = len(src) &^ 31
	}
	switch {
	case done == 0:
	case path == native:
		roundAsm(unsafe.SliceData(dst), unsafe.SliceData(src), done)
	case path == emulated:
		roundEmuAsm(unsafe.SliceData(dst), unsafe.SliceData(src), done)
	default:
		roundAVX2Asm(unsafe.SliceData(dst), unsafe.SliceData(src), done)
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

// pairsEmuAsm is pairsAsm on AVX-512F.
//
//go:noescape
func pairsEmuAsm(dst *uint32, lo, hi *float32, groups, width, stride int)

// pairsAVX2Asm is pairsAsm on AVX2.
//
//go:noescape
func pairsAVX2Asm(dst *uint32, lo, hi *float32, groups, width, stride int)

// pairs is pairsAsm on slices, checked; it reports false (and writes
// nothing) on the portable path or for a width that is not a
// multiple of 8, and the caller packs those groups itself.
func pairs(dst []uint32, lo, hi []float32, groups, width, stride int) bool {
	if path == portable || width%8 != 0 || groups < 1 {
		return false
	}
	_ = dst[(groups-1)*stride+width-1]
	_ = lo[groups*width-1]
	_ = hi[groups*width-1]
	switch path {
	case native:
		pairsAsm(unsafe.SliceData(dst), unsafe.SliceData(lo), unsafe.SliceData(hi), groups, width, stride)
	case emulated:
		pairsEmuAsm(unsafe.SliceData(dst), unsafe.SliceData(lo), unsafe.SliceData(hi), groups, width, stride)
	default:
		pairsAVX2Asm(unsafe.SliceData(dst), unsafe.SliceData(lo), unsafe.SliceData(hi), groups, width, stride)
	}
	return true
}

// alongAsm packs 8 lines of src (line i at src[i*ld:]) over chunks chunks
// of 16 k steps: dst[(8c+q)*ldd+i] = Round(line i's step 16c+2q) |
// Round(step 16c+2q+1)<<16.
//
//go:noescape
func alongAsm(dst *uint32, src *float32, ld, chunks, ldd int)

// alongEmuAsm is alongAsm on AVX-512F.
//
//go:noescape
func alongEmuAsm(dst *uint32, src *float32, ld, chunks, ldd int)

// alongAVX2Asm is alongAsm on AVX2.
//
//go:noescape
func alongAVX2Asm(dst *uint32, src *float32, ld, chunks, ldd int)

// along is alongAsm on slices, checked; it reports false (and writes
// nothing) on the portable path, and the caller packs those words
// itself.
func along(dst []uint32, src []float32, ld, chunks, ldd int) bool {
	if path == portable || chunks < 1 {
		return false
	}
	_ = dst[(8*chunks-1)*ldd+7]
	_ = src[7*ld+16*chunks-1]
	switch path {
	case native:
		alongAsm(unsafe.SliceData(dst), unsafe.SliceData(src), ld, chunks, ldd)
	case emulated:
		alongEmuAsm(unsafe.SliceData(dst), unsafe.SliceData(src), ld, chunks, ldd)
	default:
		alongAVX2Asm(unsafe.SliceData(dst), unsafe.SliceData(src), ld, chunks, ldd)
	}
	return true
}
