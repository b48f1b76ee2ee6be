package gemm

// The small-M path: products with very few rows, such as a Linear layer on
// the one new token of each sequence while generating text, or the
// attention scores of one query against a key/value cache. The micro-kernels
// compute mr rows per tile (8 on the AVX-512 path), so on one row they waste
// most of their multiply-adds, and packing B costs more than the product.
// Here each row of C is a sum of B's rows scaled by A's entries, read in
// place: no packing, no wasted rows.
//
// With B not transposed, each element of C is accumulated over k in the
// same order, with the same k blocks (kcMax) and the same rounding of
// alpha and beta, as on the tiled path of the same Path, so a row of C has
// the same bits whether it is computed alone or within a product of many
// rows (see TestSmallMBitIdentical). With B transposed, the small-M path
// computes dot products of A's rows with B's rows, whose summation order
// differs from the tiled path's: its results agree with it to rounding, not
// bit for bit.

import "github.com/alibi-go/alibi/layers/internal/vmath"

// smallMRows is the most rows for which Sgemm uses the small-M path (the
// AVX-512 kernel takes up to 4 rows at once); BenchmarkSmallM compares it
// with the tiled path. It is a variable so that tests and benchmarks can
// turn the path off (0).
var smallMRows = 4

// useSmallM reports whether Sgemm computes the product on the small-M path.
func useSmallM(transA bool, m int) bool { return !transA && m <= smallMRows }

// smallM computes C = alpha*A*op(B) + beta*C on the calling goroutine for
// A not transposed and 1 <= m <= smallMRows; n, k > 0 and alpha != 0.
func smallM(g *geometry, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if transB {
		smallNT(g.path != Portable, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	kc := blockSize(k, g.kcMax, 1)
	for pc := 0; pc < k; pc += kc {
		kb := min(kc, k-pc)
		bet := beta
		if pc > 0 {
			bet = 1
		}
		bb := b[pc*ldb : (pc+kb-1)*ldb+n]
		switch g.path {
		case AVX512:
			_ = a[(m-1)*lda+pc+kb-1]
			_ = c[(m-1)*ldc+n-1]
			smallN512(m, n, kb, &a[pc], lda, &bb[0], ldb, &c[0], ldc, alpha, bet)
		case AVX2:
			for i := 0; i < m; i++ {
				_ = a[i*lda+pc+kb-1]
				_ = c[i*ldc+n-1]
				smallN256(n, kb, &a[i*lda+pc], &bb[0], ldb, &c[i*ldc], alpha, bet)
			}
		default:
			for i := 0; i < m; i++ {
				smallNGeneric(a[i*lda+pc:i*lda+pc+kb], bb, ldb, c[i*ldc:i*ldc+n], alpha, bet)
			}
		}
	}
}

// smallNGeneric is the portable small-M kernel for one row: c[j] =
// alpha*sum_p a[p]*b[p*ldb+j] + beta*c[j] for j < len(c), p < len(a), with
// the arithmetic of kernelGeneric (dot8 and store8 for whole groups of 8
// columns, so the same rounding). When beta == 0 c is not read.
func smallNGeneric(a, b []float32, ldb int, c []float32, alpha, beta float32) {
	n, kb := len(c), len(a)
	j := 0
	for ; j+8 <= n; j += 8 {
		store8((*[8]float32)(c[j:j+8]), dot8(kb, a, 0, 1, b, ldb, j), alpha, beta)
	}
	for ; j < n; j++ {
		var s float32
		for p := 0; p < kb; p++ {
			s += a[p] * b[p*ldb+j]
		}
		if beta == 0 {
			c[j] = alpha * s
		} else {
			c[j] = alpha*s + beta*c[j]
		}
	}
}

// smallNT computes C = alpha*A*B^T + beta*C for A not transposed and few
// rows: each element is the dot product of a row of A and a row of B (the
// assembly kernel dotsNT8 when asm is set, 8 rows of B at a time). When
// beta == 0 C is not read.
func smallNT(asm bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	var tmp []float32
	if beta != 0 {
		ws := workspacePool.Get().(*workspace)
		defer workspacePool.Put(ws)
		ws.edge = grow(ws.edge, n)
		tmp = ws.edge[:n]
	}
	for i := 0; i < m; i++ {
		crow := c[i*ldc : i*ldc+n]
		dst := crow
		if beta != 0 {
			dst = tmp
		}
		dotRows(asm, a[i*lda:i*lda+k], b, ldb, alpha, dst)
		if beta != 0 {
			for j, v := range dst {
				crow[j] = v + beta*crow[j]
			}
		}
	}
}

// dotRows sets dst[j] = alpha * (a . B row j) for j < len(dst), B row j being
// b[j*ldb : j*ldb+len(a)]. With asm, blocks of 8 rows go to dotsNT8; a last
// partial block is computed as the 8 rows ending at row len(dst)-1 (the
// rows it shares with the previous block get the same values again), so
// only products of fewer than 8 rows take the portable loop.
func dotRows(asm bool, a, b []float32, ldb int, alpha float32, dst []float32) {
	n, k := len(dst), len(a)
	j := 0
	if asm && n >= 8 {
		blocks := n / 8
		_ = b[(n-1)*ldb+k-1]
		dotsNT8(blocks, k, &a[0], &b[0], ldb, &dst[0], alpha)
		if j = blocks * 8; j < n {
			dotsNT8(1, k, &a[0], &b[(n-8)*ldb], ldb, &dst[n-8], alpha)
			j = n
		}
	}
	for ; j < n; j++ {
		dst[j] = alpha * vmath.Dot4(a, b[j*ldb:j*ldb+k])
	}
}
