//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

// The assembly paths the CPU supports. The AVX-512 path also uses the AVX2
// packing routines.
var (
	hasAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasAVX512 = hasAVX2 && cpu.X86.HasAVX512F
)

// AVX2 path.

// packB16N copies kb rows of 16 floats (row stride ldb elements) from src to
// consecutive 16-float rows of dst.
//
//go:noescape
func packB16N(kb int, src *float32, ldb int, dst *float32)

// packB16T transposes the 16 x kb8 block of src (16 rows with stride ldb
// elements; kb8 a multiple of 8) into kb8 consecutive 16-float rows of dst.
//
//go:noescape
func packB16T(kb8 int, src *float32, ldb int, dst *float32)

// packA6T packs nsl full 6-row slivers of a transposed A block: for each k
// step p and sliver s, dst[s*6*kb+p*6+i] = src[p*lda+s*6+i] for i < 6.
//
//go:noescape
func packA6T(kb, nsl int, src *float32, lda int, dst *float32)

// kernel6x16L computes nsl vertically adjacent 6x16 tiles of C: for tile s,
// C[6s:6s+6, 0:16] = alpha*A_s*B + beta*C[6s:6s+6, 0:16], where element (i, p)
// of A_s is a[s*asl + i*rsa + p*csa] and b is a packed kc x 16 sliver. Strides
// are in elements; ldc is the row stride of c. When beta is zero c is not read.
// The accumulators are Y0-Y11 (row i in Y(2i) and Y(2i+1)); each k step loads
// the 16 B values into Y12-Y13 and broadcasts the 6 A values into Y14-Y15.
//
//go:noescape
func kernel6x16L(nsl, kc int, a *float32, rsa, csa, asl int, b, c *float32, ldc int, alpha, beta float32)

// AVX-512 path.

// kernel8x32 computes nsl vertically adjacent 8x32 tiles of C: for tile s,
// C[8s:8s+8, 0:32] = alpha*A_s*B + beta*C[8s:8s+8, 0:32], where element
// (i, p) of A_s is a[s*asl + i*rsa + p*csa] and B(p, j) is b[p*ldb + j]
// (ldb = 32 for a packed sliver). Strides are in elements; ldc is the row
// stride of c. Only the first rows rows (1 <= rows <= 8) of the last tile
// and only the columns whose bit is set in mask (bit j for column j) are
// stored; other elements of C are neither read nor written, and when beta
// is zero (either sign) C is not read at all. All 8 rows of every A_s and
// all 32 columns of B are read, so they must be readable (pad partial
// slivers). The accumulators are Z0-Z15 (row i in Z(2i), Z(2i+1)); each k
// step loads 32 B values into Z16-Z17 and broadcasts the 8 A values.
//
//go:noescape
func kernel8x32(nsl, kc int, a *float32, rsa, csa, asl int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32)

// transpose8 transposes the 8 x kb8 block of src (8 rows with stride lds
// elements, kb8 a multiple of 8) into kb8 rows of 8 floats with stride ldd
// elements: dst[p*ldd + i] = src[i*lds + p]. It uses AVX only.
//
//go:noescape
func transpose8(kb8 int, src *float32, lds int, dst *float32, ldd int)

// packA8T packs nsl full 8-row slivers of a transposed A block: for each k
// step p and sliver s, dst[s*8*kb+p*8+i] = src[p*lda+s*8+i] for i < 8.
//
//go:noescape
func packA8T(kb, nsl int, src *float32, lda int, dst *float32)

// packB32N copies kb rows of 32 floats (row stride ldb elements) from src to
// consecutive 32-float rows of dst, reading only the columns whose bit is set
// in mask and writing zeros in the others (masked AVX-512 loads, which do not
// fault on masked-off elements).
//
//go:noescape
func packB32N(kb int, src *float32, ldb int, dst *float32, mask uint32)

// Peak throughput loops, for the benchmarks.

// fmaPeakAVX2 runs n iterations of 12 independent 8-lane FMAs on Y0-Y11
// (192 floating-point operations per iteration).
//
//go:noescape
func fmaPeakAVX2(n int)

// fmaPeakAVX512 runs n iterations of 24 independent 16-lane FMAs on Z0-Z23
// (768 floating-point operations per iteration).
//
//go:noescape
func fmaPeakAVX512(n int)
