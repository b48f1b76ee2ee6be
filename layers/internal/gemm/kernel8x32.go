package gemm

import "unsafe"

// The AVX-512 path: 8x32 tiles (kernel8x32). Partial tiles need no scratch
// tile: the kernel stores only the valid rows of the last tile of a column
// and only the columns selected by a mask, and packed B is zero-padded.

// colMask returns the kernel8x32 column mask of the first cols (1..32)
// columns.
func colMask(cols int) uint32 { return uint32(uint64(1)<<cols - 1) }

// macroKernel8x32 is macroKernel for the AVX-512 path. With a bias (nb
// elements; nil for none), C = alpha*op(A)*op(B) + bias in place of beta*C.
func macroKernel8x32(mb, nb, kb int, alpha float32, asrc *aSource, bsrc bSource, beta float32, bias, c []float32, ldc int, edgeA, edgeB []float32) {
	chooseBroadcasts()
	const mr, nr = 8, 32
	full := mb / mr * mr // rows covered by full A slivers
	rem := mb - full
	nsl := ceilDiv(mb, mr)
	// Rows stored in the last tile of a column.
	last := mr
	if rem != 0 {
		last = rem
	}
	var aAll, aFull, aRem []float32
	var rs, cs, asl int
	if asrc.packed {
		// Every sliver, the partial one included, is packed and padded.
		aAll = asrc.a[:nsl*mr*kb]
	} else {
		rs, cs, asl = asrc.rs, asrc.cs, mr*asrc.rs
		if full > 0 {
			aFull = asrc.a[asrc.base : asrc.base+(full/mr-1)*asl+(mr-1)*rs+(kb-1)*cs+1]
		}
		if rem != 0 {
			// Rows past mb may lie outside a, so pack the partial
			// sliver, zero-padded.
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
	for jr := 0; jr < nb; jr += nr {
		cols := min(nr, nb-jr)
		mask := colMask(cols)
		var bs []float32 // the B sliver: kb rows of nr values, row stride ldb
		ldb := nr
		switch {
		case bsrc.packed:
			bs = bsrc.b[jr*kb : jr*kb+nr*kb]
		case cols == nr:
			base := bsrc.base + jr
			bs, ldb = bsrc.b[base:base+(kb-1)*bsrc.ld+nr], bsrc.ld
		default:
			// Columns past nb may lie outside b: pack the partial
			// sliver, zero-padded.
			bs = edgeB[:nr*kb]
			_ = bsrc.b[bsrc.base+jr+(kb-1)*bsrc.ld+cols-1]
			packB32N(kb, &bsrc.b[bsrc.base+jr], bsrc.ld, &bs[0], mask)
		}
		// The elements of C written: rows [0, mb), columns [jr, jr+cols).
		ct := c[jr : (mb-1)*ldc+jr+cols]
		var bp *float32 // the sliver's columns of the bias
		if bias != nil {
			bp = &bias[jr : jr+cols][0]
		}
		if asrc.packed {
			kernel8x32(nsl, kb, &aAll[0], 1, mr, mr*kb, &bs[0], ldb, &ct[0], ldc, alpha, beta, last, mask, bp, asrc.prefetch(&bs[0], nsl, kb))
			continue
		}
		if full > 0 {
			kernel8x32(full/mr, kb, &aFull[0], rs, cs, asl, &bs[0], ldb, &ct[0], ldc, alpha, beta, mr, mask, bp, uintptr(unsafe.Pointer(&bs[0])))
		}
		if rem != 0 {
			kernel8x32(1, kb, &aRem[0], 1, mr, 0, &bs[0], ldb, &ct[full*ldc], ldc, alpha, beta, rem, mask, bp, uintptr(unsafe.Pointer(&bs[0])))
		}
	}
}

// packA8 is packA for the AVX-512 path (8-row slivers).
func packA8(transA bool, mb, kb int, a []float32, lda, ic, pc int, ap []float32) {
	const mr = 8
	full := mb / mr * mr
	if transA {
		// op(A)[i][p] = a[p*lda + i]: each k step holds a contiguous run
		// of rows, which is spread over the slivers.
		if full > 0 {
			base := pc*lda + ic
			_ = a[base+(kb-1)*lda+full-1]
			_ = ap[full*kb-1]
			packA8T(kb, full/mr, &a[base], lda, &ap[0])
		}
		if full < mb {
			dst := ap[full*kb : full*kb+mr*kb]
			for p := 0; p < kb; p++ {
				base := (pc+p)*lda + ic + full
				d := dst[p*mr : p*mr+mr]
				clear(d[copy(d, a[base:base+mb-full]):])
			}
		}
		return
	}
	// op(A)[i][p] = a[i*lda + p]: each row is contiguous in p, so a full
	// sliver is the transpose of 8 rows.
	kb8 := kb &^ 7
	for ir := 0; ir < full; ir += mr {
		base := (ic+ir)*lda + pc
		dst := ap[ir*kb : ir*kb+mr*kb]
		if kb8 > 0 {
			_ = a[base+(mr-1)*lda+kb8-1]
			transpose8(kb8, &a[base], lda, &dst[0], mr)
		}
		for i := 0; i < mr; i++ {
			row := a[base+i*lda+kb8 : base+i*lda+kb]
			for p, v := range row {
				dst[(kb8+p)*mr+i] = v
			}
		}
	}
	if full < mb {
		dst := ap[full*kb : full*kb+mr*kb]
		clear(dst)
		for i := 0; i < mb-full; i++ {
			base := (ic+full+i)*lda + pc
			for p, v := range a[base : base+kb] {
				dst[p*mr+i] = v
			}
		}
	}
}

// copyColumns sets dst[p*nr+j+jj] = b[base+jj*ldb+p] for jj < ncols and
// p0 <= p < p1: columns of transposed B packed one value at a time (the k
// steps past the transposes' multiple of 8, and a last group of fewer
// than 8 columns).
func copyColumns(dst []float32, nr, j int, b []float32, base, ldb, ncols, p0, p1 int) {
	for jj := 0; jj < ncols; jj++ {
		col := b[base+jj*ldb+p0 : base+jj*ldb+p1]
		for p, v := range col {
			dst[(p0+p)*nr+j+jj] = v
		}
	}
}

// packB32 is packB for the AVX-512 path (32-column slivers). With sums
// (nb elements, B not transposed; nil for none) it also sets them to the
// column sums of the panel's kb rows (first) or adds those to them (see
// packB32NSum).
func packB32(transB bool, kb, nb int, b []float32, ldb, pc, jc int, bp, sums []float32, first bool) {
	const nr = 32
	add := 1
	if first {
		add = 0
	}
	for jr := 0; jr < nb; jr += nr {
		cols := min(nr, nb-jr)
		dst := bp[jr*kb : jr*kb+nr*kb]
		if !transB {
			// op(B)[p][j] = b[p*ldb + j]: each k step is a contiguous
			// run of columns, copied with masked loads.
			base := pc*ldb + jc + jr
			_ = b[base+(kb-1)*ldb+cols-1]
			if sums != nil {
				_ = sums[jr+cols-1]
				packB32NSum(kb, &b[base], ldb, &dst[0], colMask(cols), &sums[jr], add)
				continue
			}
			packB32N(kb, &b[base], ldb, &dst[0], colMask(cols))
			continue
		}
		// op(B)[p][j] = b[j*ldb + p]: each column is contiguous in p.
		// Groups of 16 full columns are transposed 8 k steps at a time
		// into whole lines of the sliver, a last group of 8 with 8x8
		// transposes.
		if cols < nr {
			clear(dst)
		}
		kb8 := kb &^ 7
		for j := 0; j < cols; j += 8 {
			base := (jc+jr+j)*ldb + pc
			if j+16 <= cols {
				if kb8 > 0 {
					_ = b[base+15*ldb+kb8-1]
					transpose16(kb8, &b[base], ldb, &dst[j], nr)
				}
				copyColumns(dst, nr, j, b, base, ldb, 16, kb8, kb)
				j += 8
				continue
			}
			if j+8 > cols {
				copyColumns(dst, nr, j, b, base, ldb, cols-j, 0, kb)
				break
			}
			if kb8 > 0 {
				_ = b[base+7*ldb+kb8-1]
				transpose8(kb8, &b[base], ldb, &dst[j], nr)
			}
			copyColumns(dst, nr, j, b, base, ldb, 8, kb8, kb)
		}
	}
}
