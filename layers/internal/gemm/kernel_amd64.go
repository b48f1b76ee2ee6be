//go:build amd64 && !purego

package gemm

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
// step loads 32 B values into Z16-Z17 and broadcasts the 8 A values (with
// a shorter loop when rsa or csa is 1; the same bits either way). With
// a bias (not nil: the tile's 32 columns of it, the masked ones read), C =
// alpha*acc + bias, C is not read and beta is not used. Every four k steps
// it prefetches the next 64-byte line from pf on into L2 (see
// aSource.prefetch): nsl*(kc/4) lines a call.
//
//go:noescape
func kernel8x32(nsl, kc int, a *float32, rsa, csa, asl int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32, pf uintptr)

// transpose8 transposes the 8 x kb8 block of src (8 rows with stride lds
// elements, kb8 a multiple of 8) into kb8 rows of 8 floats with stride ldd
// elements: dst[p*ldd + i] = src[i*lds + p]. It uses AVX only.
//
//go:noescape
func transpose8(kb8 int, src *float32, lds int, dst *float32, ldd int)

// transpose16 is transpose8 on 16 rows of src (dst[p*ldd + i] =
// src[i*lds + p] for i < 16), each row of dst stored whole (64 bytes).
// It uses AVX-512.
//
//go:noescape
func transpose16(kb8 int, src *float32, lds int, dst *float32, ldd int)

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

// packB32NSum is packB32N that also sums the kb rows of each column in mask,
// in row order from zero, and sets sum[j] to the column's sum (add == 0) or
// adds it to sum[j] (add != 0): the bits of the small-M kernel's product of
// a row of ones with these rows, as one k block of it. Only the columns in
// mask of sum are written. Subnormal numbers are flushed as in the kernels.
//
//go:noescape
func packB32NSum(kb int, src *float32, ldb int, dst *float32, mask uint32, sum *float32, add int)

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

// Small-M products (see smallm.go).

// smallN512 computes C = alpha*A*B + beta*C for rows (1 to 4) rows of A
// and n columns, reading B in place: A(i, p) is a[i*lda + p] and B(p, j) is
// b[p*ldb + j] for p < kb; C(i, j) is c[i*ldc + j]. Strides are in elements.
// It walks blocks of 64 columns; for each, the accumulators of row i are
// Z(4i)-Z(4i+3), and each k step loads 64 B values into Z16-Z19 (masked
// loads K1-K4 in the last, partial block, which neither read nor write
// columns past n) and adds A(i, p) times them, one fused multiply-add per
// element in the order of k, as kernel8x32 does; C is then stored as
// alpha*acc + beta*C with one fused multiply-add, so each element is
// bit-identical to kernel8x32's. One row takes blocks of 128 columns while
// at least 128 are left (accumulators Z0-Z7, B in Z16-Z19 and Z21-Z24):
// longer contiguous runs of each B row, which stream from L3 about 10%
// faster (BenchmarkSmallMToken). When beta is zero (either sign) C is not
// read.
//
//go:noescape
func smallN512(rows, n, kb int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

// smallN256 is smallN512 for one row with AVX2: c[j] = alpha*sum_p a[p]*
// b[p*ldb+j] + beta*c[j] for j < n, p < kb, accumulated in the same order
// and stored the same way. It walks blocks of 64 columns with the
// accumulators in Y0-Y7 and B read by the multiply-adds, then a block of
// 32 with the accumulators in Y0-Y3 and B in Y4-Y7; the last, partial block
// uses VMASKMOVPS loads and stores (masks Y9-Y12 from tailMask), which do
// not touch columns past n.
//
//go:noescape
func smallN256(n, kb int, a, b *float32, ldb int, c *float32, alpha, beta float32)

// dotsNT8 computes blocks blocks of 8 dot products: for block q and row
// r < 8, c[8q+r] = alpha * sum_{p<k} a[p]*b[(8q+r)*ldb + p]. Each row's
// products are accumulated in an 8-lane vector (Y0-Y7) in the order of k,
// with the last k%8 elements read by masked loads (mask Y14), then the 8
// vectors are reduced pairwise with VHADDPS and the two 128-bit halves
// added, which gives the 8 sums in one vector. The summation order thus
// differs from the micro-kernels', which accumulate each element over k in
// one chain.
//
//go:noescape
func dotsNT8(blocks, k int, a, b *float32, ldb int, c *float32, alpha float32)
