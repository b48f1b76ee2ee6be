// Package gemm provides a fast single-precision general matrix multiply
// (SGEMM) for row-major matrices, written in pure Go plus Go assembly.
//
// The implementation follows the GotoBLAS/BLIS design. op(B) is packed into
// panels of nr-column slivers and op(A) into blocks of mr-row slivers, unless
// they can be read in place; a register-blocked mr x nr micro-kernel
// computes the tiles of C, looping over a column of tiles in assembly. The k
// dimension is blocked (kc <= 256) so that a B sliver stays close to the
// core and an A block in L2. When there are few column slivers, or A is not
// transposed, A is read directly from the caller's matrix instead of being
// packed, which matters for the small, strided attention products; on the
// AVX-512 path, non-transposed B is also read in place when the product has
// few rows (the weight gradients X^T dY of a Linear layer, whose B is large
// and reused by few A slivers).
//
// Three paths implement the micro-kernel and the packing (see Path), and the
// fastest one the CPU supports is chosen at run time: AVX-512 (8x32 tiles in
// 16 zmm accumulators; masked loads and stores handle partial tiles), AVX2
// with FMA (6x16 tiles in 12 ymm accumulators), and portable Go (6x16), the
// only path on other architectures and with the purego build tag. The
// environment variable ALIBI_SIMD=avx2 or ALIBI_SIMD=portable selects a
// slower path. Every path accumulates each element of C over k in the same
// order (one fused multiply-add per k step within a k block, in the asm
// paths), so the AVX2 and AVX-512 paths give bit-identical results except on
// partial tiles with beta != 0.
//
// The assembly kernels flush subnormal numbers: they run with MXCSR's
// flush-to-zero and denormals-are-zero bits set (mxcsr_amd64.h), so in them
// a subnormal element of A, B or C reads as zero and a result below 2^-126
// in magnitude is stored as zero. On Intel cores each multiply-add that
// meets a subnormal number otherwise takes a microcode assist; the
// attention's backward pass meets them for distant keys, and ran three
// times slower for it. The Go code around the kernels keeps IEEE gradual
// underflow: the whole portable path, and on the assembly paths the beta
// step and the dot products of fewer than 8 rows of the small-M path with B
// transposed, and C scaled by beta alone when k or alpha is 0. Those
// results can differ from the kernels' where a subnormal number appears.
//
// Products of at most 4 rows with A not transposed (a Linear layer on the
// new token of each sequence during generation, or one query's attention
// scores) take a small-M path instead (smallm.go): each row of C is a sum of
// B's rows scaled by A's entries, or with B transposed a set of dot
// products, B read in place, no row of work wasted. With B not transposed
// it accumulates in the tiled path's order, so a row of C has the same bits
// whether its product has one row or many; with B transposed the dot
// products are summed in another order.
//
// Two variants fold work into the product: TrySgemmBias adds a bias row in
// the kernel's stores (a linear layer's forward product), and SgemmSumB
// sums B's columns while it packs B (a linear layer's weight gradient
// x^T dy, which then gives the bias gradient too, with the bits of a
// separate product of a row of ones). PackedB packs a B once for several
// products on one goroutine that share it (SgemmPackedB), such as an
// attention head's keys for each of its query tiles.
//
// Sgemm can optionally use several goroutines. With threads <= 1 it runs
// entirely on the calling goroutine, which is the right choice when the
// caller already parallelises over independent products (for example one
// goroutine per attention head). With threads > 1, large enough products are
// packed once into shared buffers and their chunks of C are handed out
// dynamically, so a helper goroutine that starts late (waking an idle core
// can take tens of microseconds or more) just takes fewer chunks. The split
// never changes the order of the k accumulation, so the result does not
// depend on the number of threads.
package gemm

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/alibi-go/alibi/layers/parallel"
)

// minParallelFlops is the smallest 2*m*n*k for which Sgemm splits the work
// across goroutines. Starting a goroutine on an idle core can take tens of
// microseconds, so smaller products run faster on one goroutine. It is a
// variable so that tests can exercise the parallel paths on small shapes.
var minParallelFlops = float64(1 << 23)

// Sgemm computes C = alpha*op(A)*op(B) + beta*C for row-major matrices, where
// op(X) is X or X^T.
//
// op(A) is m x k, op(B) is k x n, C is m x n; lda, ldb, ldc are row strides
// (leading dimensions) as in row-major CBLAS: A is stored as m x k (k x m when
// transA) with row stride lda, B as k x n (n x k when transB) with row stride
// ldb, and C as m x n with row stride ldc. Elements of C outside the m x n
// window are never touched. When beta == 0, C is overwritten without being
// read, so NaNs in C do not propagate; when alpha == 0 or k == 0, A and B are
// not read and C is only scaled by beta.
//
// It uses up to threads goroutines (threads <= 1: run on the calling
// goroutine only). Small products are always run on the calling goroutine.
//
// Sgemm panics if a dimension is negative, a leading dimension is too small,
// or a slice is too short for the described matrix.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, threads int) {
	SgemmThen(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, threads, nil)
}

// Epilogue is work on a finished block of C: rows [i0, i1) and columns
// [j0, j1) of the product hold their final values when it is called. An
// element-wise function applied there (an activation, or its derivative
// times the product) reads the block while it is still in the cache of
// the core that computed it, instead of in a later pass over the whole of
// C from memory.
type Epilogue func(i0, i1, j0, j1 int)

// SgemmThen is Sgemm followed by then on every block of C: the blocks
// tile the m x n window exactly once, and each is handed to then, on the
// goroutine that computed it, right after its last k block (on the shared
// and serial paths; on the others after the goroutine's part or the whole
// product). Calls for different blocks may run concurrently, so then must
// only touch its own block's elements (of C or of arrays laid out like
// it). The product's bits are those of Sgemm. A nil then is Sgemm.
func SgemmThen(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, threads int, then Epilogue) {
	CheckArgs(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		ScaleC(m, n, beta, c, ldc)
		finish(then, 0, m, 0, n)
		return
	}

	g := geom()
	threaded := threads > 1 && 2*float64(m)*float64(n)*float64(k) >= minParallelFlops
	if !threaded && useSmallM(transA, m) {
		smallM(g, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		finish(then, 0, m, 0, n)
		return
	}
	blocked(g, threaded, threads, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, nil, nil, c, ldc, then)
}

// finish calls then (if any) on a finished block.
func finish(then Epilogue, i0, i1, j0, j1 int) {
	if then != nil {
		then(i0, i1, j0, j1)
	}
}

// blocked runs a product on the blocked kernels: on shared packing or the
// static split when threaded (threads goroutines at most), else on the
// calling goroutine. A bias (nil for none; AVX-512 only) is added to every
// row in the first k block's stores, in place of beta*C. then (nil for
// none) is called on finished blocks of C (see SgemmThen). With sums (n
// elements; nil for none; AVX-512 with B not transposed only) it reports
// whether it also set sums to the column sums of op(B) while packing B
// (see SgemmSumB); the shared path and B read in place do not.
func blocked(g *geometry, threaded bool, threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, bias, sums, c []float32, ldc int, then Epilogue) bool {
	if threaded {
		if trySharedParallel(g, threads, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, bias, c, ldc, then) {
			return false
		}
		tr, tc := splitGrid(g, m, n, k, threads)
		if tr*tc > 1 {
			return gridSplit(g, tr, tc, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, bias, sums, c, ldc, then)
		}
	}
	return gemmSerial(g, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, bias, sums, c, ldc, then, nil)
}

// TrySgemmBias computes C = A·B + bias for A (m x k) and B (k x n) not
// transposed, bias (n elements) added to every row: a linear layer's
// forward product. The result has the bits of copying bias into every row
// of C and calling Sgemm with alpha 1 and beta 1. It runs, and reports
// true, when that Sgemm would run the AVX-512 kernel (every product on
// that path but those of at most 4 rows on one goroutine, which take the
// small-M kernel): the kernel then adds the bias as it stores the first k
// block, without a pass over C to copy it in and the kernel reading it
// back. Otherwise it does nothing and reports false, and the caller copies
// and calls Sgemm. It panics as Sgemm does, and if bias is shorter than n.
func TrySgemmBias(m, n, k int, a []float32, lda int, b []float32, ldb int, bias, c []float32, ldc int, threads int) bool {
	return TrySgemmBiasThen(m, n, k, a, lda, b, ldb, bias, c, ldc, threads, nil)
}

// TrySgemmBiasThen is TrySgemmBias with an epilogue, called as SgemmThen
// calls it when the product runs (it is not called when it reports false).
func TrySgemmBiasThen(m, n, k int, a []float32, lda int, b []float32, ldb int, bias, c []float32, ldc int, threads int, then Epilogue) bool {
	CheckArgs(false, false, m, n, k, a, lda, b, ldb, c, ldc)
	_ = bias[:n]
	g := geom()
	if g.path != AVX512 || m == 0 || n == 0 || k == 0 {
		return false
	}
	threaded := threads > 1 && 2*float64(m)*float64(n)*float64(k) >= minParallelFlops
	if !threaded && useSmallM(false, m) {
		return false
	}
	blocked(g, threaded, threads, false, false, m, n, k, 1, a, lda, b, ldb, 1, bias, nil, c, ldc, then)
	return true
}

// SgemmSumB computes C = op(A)·B (alpha 1, beta 0, B not transposed) as
// Sgemm does, and where the product packs B as it goes (the AVX-512 path,
// B not read in place, the static split or one goroutine: a linear layer's
// weight gradient X^T dY over a step of more than 1024 tokens), it also
// sets sums (n elements) to the column sums of B, the sum over k of
// B[p][j], and reports true. Those sums have the bits of
// Sgemm(false, false, 1, n, k, 1, ones, k, b, ldb, 0, sums, n, 1) with a
// row of k ones (the small-M path, which sums in the same k blocks): the
// bias gradient of the same layer, without a pass of its own over dY. When
// it reports false, sums is not written and the caller sums B itself. C has
// the bits of Sgemm either way. It panics as Sgemm does, and if sums is
// shorter than n.
func SgemmSumB(transA bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, sums []float32, threads int) bool {
	CheckArgs(transA, false, m, n, k, a, lda, b, ldb, c, ldc)
	_ = sums[:n]
	g := geom()
	threaded := threads > 1 && 2*float64(m)*float64(n)*float64(k) >= minParallelFlops
	if g.path != AVX512 || m == 0 || n == 0 || k == 0 || (!threaded && useSmallM(transA, m)) {
		Sgemm(transA, false, m, n, k, 1, a, lda, b, ldb, 0, c, ldc, threads)
		return false
	}
	return blocked(g, threaded, threads, transA, false, m, n, k, 1, a, lda, b, ldb, 0, nil, sums[:n], c, ldc, nil)
}

// CheckArgs panics with a descriptive message if the arguments do not
// describe valid matrices, as Sgemm's contract says (other products with
// that contract, such as the bfloat16 one, check with it too).
func CheckArgs(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("gemm: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	// Stored shapes (rows x cols) of A and B.
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	checkMatrix("A", ar, ac, a, lda)
	checkMatrix("B", br, bc, b, ldb)
	checkMatrix("C", m, n, c, ldc)
}

func checkMatrix(name string, rows, cols int, s []float32, ld int) {
	if ld < max(1, cols) {
		panic(fmt.Sprintf("gemm: ld%s=%d is smaller than max(1, %d)", lower(name), ld, cols))
	}
	if rows == 0 || cols == 0 {
		return
	}
	if need := (rows-1)*ld + cols; len(s) < need {
		panic(fmt.Sprintf("gemm: %s has length %d, need at least %d for a %dx%d matrix with stride %d",
			name, len(s), need, rows, cols, ld))
	}
}

func lower(name string) string {
	switch name {
	case "A":
		return "a"
	case "B":
		return "b"
	}
	return "c"
}

// ScaleC sets C = beta*C on the m x n window (C = 0 when beta == 0): the
// whole product when alpha or k is 0.
func ScaleC(m, n int, beta float32, c []float32, ldc int) {
	if beta == 1 {
		return
	}
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// splitGrid chooses a tr x tc grid (tr*tc <= threads) of output blocks that
// minimises an estimate of the per-goroutine cost: the multiply-adds of one
// block plus the packing of its A and B panels.
func splitGrid(g *geometry, m, n, k, threads int) (tr, tc int) {
	mTiles := ceilDiv(m, g.mr)
	nTiles := ceilDiv(n, g.nr)
	best := -1.0
	tr, tc = 1, 1
	for r := 1; r <= threads && r <= mTiles; r++ {
		c := min(threads/r, nTiles)
		rows := float64(ceilDiv(mTiles, r) * g.mr)
		cols := float64(ceilDiv(nTiles, c) * g.nr)
		cost := (rows*cols + 8*(rows+cols)) * float64(k)
		if best < 0 || cost < best*0.999 {
			best, tr, tc = cost, r, c
		}
	}
	return tr, tc
}

// gridSplit runs a tr x tc grid of independent sub-products, one per worker
// of parallel.Run (worker 0, the calling goroutine, takes the first). A
// bias (nil for none) is passed on to each sub-product's columns, and then
// (nil for none) gets each sub-product's finished blocks at their place in
// the whole of C. Column sums (nil for none) are taken by the first row of
// sub-products, each for its columns; it reports whether they were (the
// sub-products of a row have the same rows, so all or none take them).
func gridSplit(g *geometry, tr, tc int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, bias, sums, c []float32, ldc int, then Epilogue) bool {
	mTiles := ceilDiv(m, g.mr)
	nTiles := ceilDiv(n, g.nr)
	summed := false
	parallel.Run(tr*tc, func(w int) {
		r, q := w/tc, w%tc
		i0 := min(m, r*mTiles/tr*g.mr)
		i1 := min(m, (r+1)*mTiles/tr*g.mr)
		j0 := min(n, q*nTiles/tc*g.nr)
		j1 := min(n, (q+1)*nTiles/tc*g.nr)
		if i0 >= i1 || j0 >= j1 {
			return
		}
		var sa, sb []float32
		if transA {
			sa = a[i0:]
		} else {
			sa = a[i0*lda:]
		}
		if transB {
			sb = b[j0*ldb:]
		} else {
			sb = b[j0:]
		}
		var sbias []float32
		if bias != nil {
			sbias = bias[j0:j1]
		}
		var sthen Epilogue
		if then != nil {
			sthen = func(r0, r1, c0, c1 int) { then(i0+r0, i0+r1, j0+c0, j0+c1) }
		}
		var ssums []float32
		if sums != nil && r == 0 {
			ssums = sums[j0:j1]
		}
		ok := gemmSerial(g, transA, transB, i1-i0, j1-j0, k, alpha, sa, lda, sb, ldb, beta, sbias, ssums, c[i0*ldc+j0:], ldc, sthen, nil)
		if w == 0 {
			summed = ok
		}
	})
	return summed
}

// workspace holds the packing buffers of one goroutine.
type workspace struct {
	ap   []float32 // packed A block: mc x kc, in mr-row slivers
	bp   []float32 // packed B panel: kc x nc, in nr-column slivers
	edge []float32 // one packed mr x kc A sliver for partial tiles of A read in place
	// edgeB is one packed kc x nr B sliver for partial tiles of B read in
	// place.
	edgeB []float32
}

var workspacePool = sync.Pool{New: func() any { return new(workspace) }}

// useDirectA reports whether A should be read in place for a B panel of
// cols columns and a product with k steps (see geometry). Non-transposed A
// whose row stride is a multiple of 4 KiB is packed unless the geometry
// says it can be read in place (stridedAInPlace): its mr rows share one
// set of the L1 cache.
func (g *geometry) useDirectA(transA bool, lda, cols, k int) bool {
	if !transA && lda%1024 == 0 && !g.stridedAInPlace {
		return false
	}
	if transA && g.directMaxK > 0 && k > g.directMaxK {
		return false
	}
	return cols <= g.directACols || (!transA && cols <= g.directARowMajorCols)
}

// useDirectB reports whether non-transposed B should be read in place for a
// product with m rows and k steps (see geometry).
func (g *geometry) useDirectB(transB bool, m, k int) bool {
	if g.directMaxK > 0 && k > g.directMaxK {
		return false
	}
	return !transB && m <= g.directBMaxRows
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// blockSize splits total into ceil(total/maxBlock) nearly equal blocks and
// returns the block size rounded up to a multiple of unit. The common cases
// take no division (each is a 64-bit integer division, and the attention
// makes many small products, each asking for three block sizes): a total
// that fits one block, and a unit that is a power of two, as the kernels'
// tile sizes are.
func blockSize(total, maxBlock, unit int) int {
	if total > maxBlock {
		total = ceilDiv(total, ceilDiv(total, maxBlock))
	}
	if unit&(unit-1) == 0 {
		return (total + unit - 1) &^ (unit - 1)
	}
	return ceilDiv(total, unit) * unit
}

// grow returns a buffer of at least n floats whose first element is 64-byte
// aligned (a cache line: vector loads of packed data then never straddle
// two lines), reusing s if it is large enough. s must be nil or a result of
// grow.
func grow(s []float32, n int) []float32 {
	if cap(s) >= n {
		return s[:cap(s)]
	}
	buf := make([]float32, n+15)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(buf)))/4) & 15
	return buf[off : off+n : off+n]
}

// bSource describes where the micro-kernels read B from: either a packed
// panel (nr-column slivers of kb steps) or op(B) in place (not transposed),
// with element (p, j) of the current block at b[base + p*ld + j].
type bSource struct {
	b      []float32
	base   int
	ld     int
	packed bool
}

// aSource describes where the micro-kernels read A from: either a packed
// block (mr-row slivers of kb steps) or op(A) in place, with element (i, p)
// of the current block at a[base + i*rs + p*cs].
type aSource struct {
	a      []float32
	base   int
	rs, cs int
	packed bool
	// pf and pfEnd bound memory for the AVX-512 kernel to prefetch into
	// L2 as it runs, a line every four k steps: with a transposed A packed
	// a k block at a time (the weight gradients x^T dy), the rows of the
	// next k block, which the next packing reads 8 values at a time from
	// rows far apart in memory, waiting on each line; prefetched while the
	// kernel computes, they come from L2 instead. pf >= pfEnd: none.
	pf, pfEnd uintptr
}

// prefetch returns where the kernel's next call over nsl slivers of kb k
// steps starts prefetching, and moves pf past what it covers; when nothing
// is left, it returns b (a sliver already in the cache, whose lines the
// kernel then touches again for nothing). A prefetch never faults and does
// not change any result.
func (s *aSource) prefetch(b *float32, nsl, kb int) uintptr {
	if s.pf >= s.pfEnd {
		return uintptr(unsafe.Pointer(b))
	}
	p := s.pf
	s.pf += uintptr(nsl * (kb / 4) * 64)
	return p
}

// gemmSerial computes the product on the calling goroutine. m, n, k > 0 and
// alpha != 0. A bias (n elements, nil for none; AVX-512 only) is added to
// every row in the first k block's stores, in place of beta*C. then (nil
// for none) gets each block of C after its last k block. With sums (n
// elements; nil for none) on the AVX-512 path with B not transposed, it
// sets sums to the column sums of B as it packs B, and reports whether it
// did (not when B is read in place).
//
// A panel (nil for none) is op(B) already packed for all n columns in one
// k block (see PackedB), used in place of packing B.
func gemmSerial(g *geometry, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, bias, sums, c []float32, ldc int, then Epilogue, panel []float32) bool {
	kc := blockSize(k, g.kcMax, 1)
	mc := blockSize(m, g.mcMax, g.mr)
	nc := blockSize(n, g.ncMax, g.nr)
	directA := g.useDirectA(transA, lda, nc, k)
	directB := g.useDirectB(transB, m, k) && panel == nil
	if directB || transB || g.path != AVX512 || panel != nil {
		sums = nil
	}

	ws := workspacePool.Get().(*workspace)
	defer workspacePool.Put(ws)
	if directA {
		ws.edge = grow(ws.edge, g.mr*kc)
	} else {
		ws.ap = grow(ws.ap, min(mc, ceilDiv(m, g.mr)*g.mr)*kc)
	}
	bsrc := bSource{b: b, ld: ldb}
	switch {
	case directB:
		ws.edgeB = grow(ws.edgeB, g.nr*kc)
	case panel != nil:
		bsrc = bSource{b: panel, ld: g.nr, packed: true}
	default:
		ws.bp = grow(ws.bp, min(nc, ceilDiv(n, g.nr)*g.nr)*kc)
		bsrc = bSource{b: ws.bp, ld: g.nr, packed: true}
	}

	asrc := aSource{a: a, rs: lda, cs: 1}
	if transA {
		asrc.rs, asrc.cs = 1, lda
	}
	if !directA {
		asrc = aSource{a: ws.ap, rs: 1, cs: g.mr, packed: true}
	}
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			switch {
			case directB:
				bsrc.base = pc*ldb + jc
			case panel != nil: // one panel, one k block: packed already
			default:
				var ps []float32 // the panel's column sums
				if sums != nil {
					ps = sums[jc : jc+nb]
				}
				g.packB(transB, kb, nb, b, ldb, pc, jc, ws.bp, ps, pc == 0)
			}
			bet := beta
			if pc > 0 {
				bet = 1
			}
			for ic := 0; ic < m; ic += mc {
				mb := min(mc, m-ic)
				if directA {
					asrc.base = ic*asrc.rs + pc*asrc.cs
				} else {
					g.packA(transA, mb, kb, a, lda, ic, pc, ws.ap)
					asrc.pf, asrc.pfEnd = 0, 0
					if next := pc + kb; transA && next < k {
						nk := min(kc, k-next)
						asrc.pf = uintptr(unsafe.Pointer(&a[next*lda+ic]))
						asrc.pfEnd = asrc.pf + uintptr(((nk-1)*lda+mb)*4)
					}
				}
				var bs []float32 // the first k block's bias
				if pc == 0 && bias != nil {
					bs = bias[jc : jc+nb]
				}
				g.macroKernel(mb, nb, kb, alpha, asrc, bsrc, bet, bs, c[ic*ldc+jc:], ldc, ws.edge, ws.edgeB)
				if pc+kb == k {
					finish(then, ic, ic+mb, jc, jc+nb)
				}
			}
		}
	}
	return sums != nil
}

// macroKernel multiplies an mb x kb block of op(A) (packed or in place, see
// aSource) by a kb x nb panel of op(B) (packed, or in place on the paths
// whose directBMaxRows is positive, see bSource) into C (whose top-left
// element is c[0]). edgeA is scratch for one packed mr x kb A sliver, used
// for the partial last sliver of A read in place, and edgeB for one packed
// kb x nr B sliver, used for the partial last sliver of B read in place.
// A bias (nb elements, nil for none; the AVX-512 path only) is added to
// every row in place of beta*C.
func (g *geometry) macroKernel(mb, nb, kb int, alpha float32, asrc aSource, bsrc bSource, beta float32, bias, c []float32, ldc int, edgeA, edgeB []float32) {
	if g.path == AVX512 {
		macroKernel8x32(mb, nb, kb, alpha, &asrc, bsrc, beta, bias, c, ldc, edgeA, edgeB)
		return
	}
	if bias != nil {
		panic("gemm: a bias in the stores on the " + g.path.String() + " path") // TrySgemmBias keeps it to AVX-512
	}
	macroKernel6x16(g.path == AVX2, mb, nb, kb, alpha, asrc, bsrc.b, beta, c, ldc, edgeA)
}

// packA packs the mb x kb block of op(A) starting at (ic, pc) into ap as
// consecutive mr-row slivers; within a sliver, the mr values of each k step
// are contiguous. Rows beyond mb are zero-filled.
func (g *geometry) packA(transA bool, mb, kb int, a []float32, lda, ic, pc int, ap []float32) {
	if g.path == AVX512 {
		packA8(transA, mb, kb, a, lda, ic, pc, ap)
		return
	}
	packA6(g.path == AVX2, transA, mb, kb, a, lda, ic, pc, ap)
}

// packB packs the kb x nb panel of op(B) starting at (pc, jc) into bp as
// consecutive nr-column slivers; within a sliver, the nr values of each k
// step are contiguous. Columns beyond nb are zero-filled. With sums (nb
// elements; nil for none, and only on the AVX-512 path with B not
// transposed) it also sets them to the panel's column sums (first) or adds
// those to them, as packB32 does.
func (g *geometry) packB(transB bool, kb, nb int, b []float32, ldb, pc, jc int, bp, sums []float32, first bool) {
	if g.path == AVX512 {
		packB32(transB, kb, nb, b, ldb, pc, jc, bp, sums, first)
		return
	}
	if sums != nil {
		panic("gemm: column sums while packing on the " + g.path.String() + " path")
	}
	packB16(g.path == AVX2, transB, kb, nb, b, ldb, pc, jc, bp)
}
