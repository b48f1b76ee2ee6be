// Package gemm provides a fast single-precision general matrix multiply
// (SGEMM) for row-major matrices, written in pure Go plus Go assembly.
//
// The implementation follows the GotoBLAS/BLIS design. op(B) is packed into
// panels of 16-column slivers and, unless it can be read in place, op(A) into
// blocks of 6-row slivers; a register-blocked 6x16 micro-kernel (AVX2 + FMA on
// amd64, 12 accumulator registers) computes the tiles of C, looping over a
// column of tiles in assembly. The k dimension is blocked (kc <= 256) so that
// a B sliver stays in L1 and an A block in L2. When there are few column
// slivers, or A is not transposed, A is read directly from the caller's
// matrix instead of being packed, which matters for the small, strided
// attention products. A portable Go micro-kernel is used when the CPU lacks
// AVX2/FMA, on other architectures, and with the purego build tag.
//
// Sgemm can optionally use several goroutines. With threads <= 1 it runs
// entirely on the calling goroutine, which is the right choice when the
// caller already parallelises over independent products (for example one
// goroutine per attention head). With threads > 1, large enough products are
// packed once into shared buffers and their chunks of C are handed out
// dynamically, so a helper goroutine that starts late (waking an idle core
// can take tens of microseconds or more) just takes fewer chunks.
package gemm

import (
	"fmt"
	"sync"
)

// Register tile and cache-block sizes.
const (
	mr = 6  // rows of the micro-kernel tile
	nr = 16 // columns of the micro-kernel tile

	kcMax = 256  // k block: a 16 x kc B sliver (16 KiB) stays in L1
	mcMax = 144  // m block: a mc x kc packed A block (144 KiB) stays in L2
	ncMax = 2048 // n block: a kc x nc packed B panel (2 MiB) lives in L3
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
	checkArgs(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}

	if threads > 1 && 2*float64(m)*float64(n)*float64(k) >= minParallelFlops {
		if trySharedParallel(threads, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) {
			return
		}
		tr, tc := splitGrid(m, n, k, threads)
		if tr*tc > 1 {
			parallel(tr, tc, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			return
		}
	}
	gemmSerial(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// checkArgs panics with a descriptive message if the arguments do not
// describe valid matrices.
func checkArgs(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
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

// scaleC sets C = beta*C on the m x n window (C = 0 when beta == 0).
func scaleC(m, n int, beta float32, c []float32, ldc int) {
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
func splitGrid(m, n, k, threads int) (tr, tc int) {
	mTiles := (m + mr - 1) / mr
	nTiles := (n + nr - 1) / nr
	best := -1.0
	tr, tc = 1, 1
	for r := 1; r <= threads && r <= mTiles; r++ {
		c := min(threads/r, nTiles)
		rows := float64(ceilDiv(mTiles, r) * mr)
		cols := float64(ceilDiv(nTiles, c) * nr)
		cost := (rows*cols + 8*(rows+cols)) * float64(k)
		if best < 0 || cost < best*0.999 {
			best, tr, tc = cost, r, c
		}
	}
	return tr, tc
}

// parallel runs a tr x tc grid of independent sub-products, one per goroutine,
// with the last one on the calling goroutine.
func parallel(tr, tc int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	mTiles := (m + mr - 1) / mr
	nTiles := (n + nr - 1) / nr
	var wg sync.WaitGroup
	for r := 0; r < tr; r++ {
		i0 := min(m, r*mTiles/tr*mr)
		i1 := min(m, (r+1)*mTiles/tr*mr)
		for q := 0; q < tc; q++ {
			j0 := min(n, q*nTiles/tc*nr)
			j1 := min(n, (q+1)*nTiles/tc*nr)
			if i0 >= i1 || j0 >= j1 {
				continue
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
			sc := c[i0*ldc+j0:]
			if r == tr-1 && q == tc-1 {
				gemmSerial(transA, transB, i1-i0, j1-j0, k, alpha, sa, lda, sb, ldb, beta, sc, ldc)
				continue
			}
			wg.Add(1)
			go func(mm, nn int) {
				defer wg.Done()
				gemmSerial(transA, transB, mm, nn, k, alpha, sa, lda, sb, ldb, beta, sc, ldc)
			}(i1-i0, j1-j0)
		}
	}
	wg.Wait()
}

// workspace holds the packing buffers of one goroutine.
type workspace struct {
	ap   []float32 // packed A block: mc x kc, in 6-row slivers
	bp   []float32 // packed B panel: kc x nc, in 16-column slivers
	edge []float32 // one packed 6 x kc A sliver for partial tiles of A read in place
}

var workspacePool = sync.Pool{New: func() any { return new(workspace) }}

// directASlivers is the largest number of 16-column slivers in a B panel for
// which A is read in place instead of being packed: with so few column slivers
// the packing cost of A is not amortised.
var directASlivers = 4

// directARowMajorSlivers is the same limit for non-transposed A, whose rows
// are contiguous in k and therefore cheap to read in place.
var directARowMajorSlivers = 32

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// blockSize splits total into ceil(total/maxBlock) nearly equal blocks and
// returns the block size rounded up to a multiple of unit.
func blockSize(total, maxBlock, unit int) int {
	nb := ceilDiv(total, maxBlock)
	return ceilDiv(ceilDiv(total, nb), unit) * unit
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:cap(s)]
}

// aSource describes where the micro-kernels read A from: either a packed
// block (6-row slivers of kb steps) or op(A) in place, with element (i, p) of
// the current block at a[base + i*rs + p*cs].
type aSource struct {
	a      []float32
	base   int
	rs, cs int
	packed bool
}

// gemmSerial computes the product on the calling goroutine. m, n, k > 0 and
// alpha != 0.
func gemmSerial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	kc := blockSize(k, kcMax, 1)
	mc := blockSize(m, mcMax, mr)
	nc := blockSize(n, ncMax, nr)
	directA := useDirectA(transA, ceilDiv(nc, nr))

	ws := workspacePool.Get().(*workspace)
	defer workspacePool.Put(ws)
	if directA {
		ws.edge = grow(ws.edge, mr*kc)
	} else {
		ws.ap = grow(ws.ap, min(mc, ceilDiv(m, mr)*mr)*kc)
	}
	ws.bp = grow(ws.bp, min(nc, ceilDiv(n, nr)*nr)*kc)

	asrc := aSource{a: a, rs: lda, cs: 1}
	if transA {
		asrc.rs, asrc.cs = 1, lda
	}
	if !directA {
		asrc = aSource{a: ws.ap, rs: 1, cs: mr, packed: true}
	}
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			packB(transB, kb, nb, b, ldb, pc, jc, ws.bp)
			bet := beta
			if pc > 0 {
				bet = 1
			}
			for ic := 0; ic < m; ic += mc {
				mb := min(mc, m-ic)
				if directA {
					asrc.base = ic*asrc.rs + pc*asrc.cs
				} else {
					packA(transA, mb, kb, a, lda, ic, pc, ws.ap)
				}
				macroKernel(mb, nb, kb, alpha, asrc, ws.bp, bet, c[ic*ldc+jc:], ldc, ws.edge)
			}
		}
	}
}

// macroKernel multiplies an mb x kb block of op(A) (packed or in place, see
// aSource) by a packed kb x nb panel of op(B) into C (whose top-left element
// is c[0]). edgeA is scratch for one packed 6 x kb A sliver, used for the
// partial last sliver of A read in place.
func macroKernel(mb, nb, kb int, alpha float32, asrc aSource, bp []float32, beta float32, c []float32, ldc int, edgeA []float32) {
	full := mb / mr * mr // rows covered by full A slivers
	rem := mb - full
	// Geometry of the full A slivers: element (i, p) of sliver s is
	// aFull[s*asl + i*rs + p*cs].
	var aFull []float32
	var rs, cs, asl int
	if asrc.packed {
		rs, cs, asl = 1, mr, mr*kb
		aFull = asrc.a[:full*kb]
	} else {
		rs, cs, asl = asrc.rs, asrc.cs, mr*asrc.rs
		if full > 0 {
			aFull = asrc.a[asrc.base : asrc.base+(full/mr-1)*asl+(mr-1)*rs+(kb-1)*cs+1]
		}
	}
	// The partial last sliver, packed and zero-padded.
	var aRem []float32
	if rem != 0 {
		if asrc.packed {
			aRem = asrc.a[full*kb : full*kb+mr*kb]
		} else {
			aRem = edgeA[:mr*kb]
			clear(aRem)
			for i := 0; i < rem; i++ {
				off := asrc.base + (full+i)*asrc.rs
				for p := 0; p < kb; p++ {
					aRem[p*mr+i] = asrc.a[off+p*asrc.cs]
				}
			}
		}
	}
	asm := useAsm
	var tmp [mr * nr]float32
	for jr := 0; jr < nb; jr += nr {
		nrr := min(nr, nb-jr)
		bs := bp[jr*kb : jr*kb+nr*kb]
		if nrr == nr && full > 0 {
			cs6 := c[jr : jr+(full-1)*ldc+nr]
			if asm {
				kernel6x16L(full/mr, kb, &aFull[0], rs, cs, asl, &bs[0], &cs6[0], ldc, alpha, beta)
			} else {
				for s := 0; s < full/mr; s++ {
					kernelGeneric(kb, aFull[s*asl:], rs, cs, bs, nr, cs6[s*mr*ldc:], ldc, alpha, beta)
				}
			}
		}
		// Edge tiles (partial rows or columns): compute into a scratch
		// tile, then merge the valid part into C.
		for ir := 0; ir < mb; ir += mr {
			mrr := min(mr, mb-ir)
			if mrr == mr && nrr == nr {
				continue
			}
			as, ars, acs := aRem, 1, mr
			if mrr == mr {
				as, ars, acs = aFull[ir/mr*asl:], rs, cs
			}
			if asm {
				kernel6x16L(1, kb, &as[0], ars, acs, 0, &bs[0], &tmp[0], nr, 1, 0)
			} else {
				kernelGeneric(kb, as, ars, acs, bs, nr, tmp[:], nr, 1, 0)
			}
			for i := 0; i < mrr; i++ {
				crow := c[(ir+i)*ldc+jr : (ir+i)*ldc+jr+nrr]
				trow := tmp[i*nr : i*nr+nrr]
				if beta == 0 {
					for j, v := range trow {
						crow[j] = alpha * v
					}
				} else {
					for j, v := range trow {
						crow[j] = alpha*v + beta*crow[j]
					}
				}
			}
		}
	}
}

// kernelGeneric is the portable micro-kernel for one tile (see kernel6x16L):
// c[0:6 rows, 0:16] = alpha*A*B + beta*c, where A(i, p) is
// a[i*rs + p*cs] and B(p, j) is b[p*ldb + j]. When beta == 0 c is not read.
func kernelGeneric(kc int, a []float32, rs, cs int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32) {
	// One row and 8 columns at a time, so that the 8 accumulators stay in
	// registers across the k loop.
	for i := 0; i < mr; i++ {
		crow := (*[nr]float32)(c[i*ldc : i*ldc+nr])
		for j0 := 0; j0 < nr; j0 += 8 {
			var s0, s1, s2, s3, s4, s5, s6, s7 float32
			ai := i * rs
			for p := 0; p < kc; p++ {
				av := a[ai+p*cs]
				bv := (*[8]float32)(b[p*ldb+j0 : p*ldb+j0+8])
				s0 += av * bv[0]
				s1 += av * bv[1]
				s2 += av * bv[2]
				s3 += av * bv[3]
				s4 += av * bv[4]
				s5 += av * bv[5]
				s6 += av * bv[6]
				s7 += av * bv[7]
			}
			acc := [8]float32{s0, s1, s2, s3, s4, s5, s6, s7}
			dst := (*[8]float32)(crow[j0 : j0+8])
			if beta == 0 {
				for j := range dst {
					dst[j] = alpha * acc[j]
				}
			} else {
				for j := range dst {
					dst[j] = alpha*acc[j] + beta*dst[j]
				}
			}
		}
	}
}

// packA packs the mb x kb block of op(A) starting at (ic, pc) into ap as
// consecutive 6-row slivers; within a sliver, the 6 values of each k step are
// contiguous. Rows beyond mb are zero-filled.
func packA(transA bool, mb, kb int, a []float32, lda, ic, pc int, ap []float32) {
	if transA {
		// op(A)[i][p] = a[p*lda + i]: each k step holds a contiguous run
		// of rows, which is spread over the slivers.
		full := mb / mr * mr
		if useAsm && full > 0 {
			base := pc*lda + ic
			_ = a[base+(kb-1)*lda+full-1]
			_ = ap[full*kb-1]
			packA6T(kb, full/mr, &a[base], lda, &ap[0])
		}
		for p := 0; p < kb; p++ {
			base := (pc+p)*lda + ic
			row := a[base : base+mb]
			for ir := 0; !useAsm && ir < full; ir += mr {
				*(*[mr]float32)(ap[ir*kb+p*mr : ir*kb+p*mr+mr]) = *(*[mr]float32)(row[ir : ir+mr])
			}
			if full < mb {
				d := ap[full*kb+p*mr : full*kb+p*mr+mr]
				n := copy(d, row[full:])
				clear(d[n:])
			}
		}
		return
	}
	// op(A)[i][p] = a[i*lda + p]: each row is contiguous in p.
	for ir := 0; ir < mb; ir += mr {
		rows := min(mr, mb-ir)
		dst := ap[ir*kb : ir*kb+mr*kb]
		if rows < mr {
			clear(dst)
			for i := 0; i < rows; i++ {
				base := (ic+ir+i)*lda + pc
				src := a[base : base+kb]
				for p, v := range src {
					dst[p*mr+i] = v
				}
			}
			continue
		}
		base := (ic+ir)*lda + pc
		r0 := a[base : base+kb]
		r1 := a[base+lda : base+lda+kb]
		r2 := a[base+2*lda : base+2*lda+kb]
		r3 := a[base+3*lda : base+3*lda+kb]
		r4 := a[base+4*lda : base+4*lda+kb]
		r5 := a[base+5*lda : base+5*lda+kb]
		for p := range r0 {
			d := (*[mr]float32)(dst[p*mr : p*mr+mr])
			d[0] = r0[p]
			d[1] = r1[p]
			d[2] = r2[p]
			d[3] = r3[p]
			d[4] = r4[p]
			d[5] = r5[p]
		}
	}
}

// packB packs the kb x nb panel of op(B) starting at (pc, jc) into bp as
// consecutive 16-column slivers; within a sliver, the 16 values of each k step
// are contiguous. Columns beyond nb are zero-filled.
func packB(transB bool, kb, nb int, b []float32, ldb, pc, jc int, bp []float32) {
	for jr := 0; jr < nb; jr += nr {
		cols := min(nr, nb-jr)
		dst := bp[jr*kb : jr*kb+nr*kb]
		if !transB {
			// op(B)[p][j] = b[p*ldb + j]: each k step is a contiguous run of columns.
			if cols == nr && useAsm {
				base := pc*ldb + jc + jr
				_ = b[base+(kb-1)*ldb+nr-1]
				packB16N(kb, &b[base], ldb, &dst[0])
				continue
			}
			if cols == nr {
				for p := 0; p < kb; p++ {
					base := (pc+p)*ldb + jc + jr
					*(*[nr]float32)(dst[p*nr : p*nr+nr]) = *(*[nr]float32)(b[base : base+nr])
				}
				continue
			}
			clear(dst)
			for p := 0; p < kb; p++ {
				base := (pc+p)*ldb + jc + jr
				copy(dst[p*nr:p*nr+cols], b[base:base+cols])
			}
			continue
		}
		// op(B)[p][j] = b[j*ldb + p]: each column is contiguous in p.
		if cols < nr {
			clear(dst)
			for j := 0; j < cols; j++ {
				base := (jc+jr+j)*ldb + pc
				src := b[base : base+kb]
				for p, v := range src {
					dst[p*nr+j] = v
				}
			}
			continue
		}
		p0 := 0
		if useAsm && kb >= 8 {
			p0 = kb &^ 7
			base := (jc+jr)*ldb + pc
			_ = b[base+(nr-1)*ldb+p0-1]
			packB16T(p0, &b[base], ldb, &dst[0])
			if p0 == kb {
				continue
			}
		}
		// Full sliver: transpose 8 columns at a time so that each k step
		// writes 8 contiguous values.
		for j := 0; j < nr; j += 8 {
			base := (jc+jr+j)*ldb + pc
			r0 := b[base+p0 : base+kb]
			r1 := b[base+ldb+p0 : base+ldb+kb]
			r2 := b[base+2*ldb+p0 : base+2*ldb+kb]
			r3 := b[base+3*ldb+p0 : base+3*ldb+kb]
			r4 := b[base+4*ldb+p0 : base+4*ldb+kb]
			r5 := b[base+5*ldb+p0 : base+5*ldb+kb]
			r6 := b[base+6*ldb+p0 : base+6*ldb+kb]
			r7 := b[base+7*ldb+p0 : base+7*ldb+kb]
			for p := range r0 {
				o := (p0+p)*nr + j
				d := (*[8]float32)(dst[o : o+8])
				d[0] = r0[p]
				d[1] = r1[p]
				d[2] = r2[p]
				d[3] = r3[p]
				d[4] = r4[p]
				d[5] = r5[p]
				d[6] = r6[p]
				d[7] = r7[p]
			}
		}
	}
}
