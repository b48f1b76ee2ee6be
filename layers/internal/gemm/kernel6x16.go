package gemm

// macroKernel6x16 is macroKernel for 6x16 tiles, with the AVX2 kernel if asm
// is set and the portable one otherwise.
func macroKernel6x16(asm bool, mb, nb, kb int, alpha float32, asrc aSource, bp []float32, beta float32, c []float32, ldc int, edgeA []float32) {
	const mr, nr = 6, 16
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

// kernelGeneric is the portable micro-kernel for one 6x16 tile (see
// kernel6x16L): c[0:6 rows, 0:16] = alpha*A*B + beta*c, where A(i, p) is
// a[i*rs + p*cs] and B(p, j) is b[p*ldb + j]. When beta == 0 c is not read.
func kernelGeneric(kc int, a []float32, rs, cs int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32) {
	const mr, nr = 6, 16
	// One row and 8 columns at a time, so that the 8 accumulators stay in
	// registers across the k loop.
	for i := 0; i < mr; i++ {
		crow := (*[nr]float32)(c[i*ldc : i*ldc+nr])
		for j0 := 0; j0 < nr; j0 += 8 {
			store8((*[8]float32)(crow[j0:j0+8]), dot8(kc, a, i*rs, cs, b, ldb, j0), alpha, beta)
		}
	}
}

// dot8 returns the 8 sums over p < kc of a[off+p*cs]·b[p*ldb+j0+x], x < 8,
// each accumulated in p order in its own float32: the portable kernels'
// arithmetic, one function so that they round alike.
func dot8(kc int, a []float32, off, cs int, b []float32, ldb, j0 int) [8]float32 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for p := 0; p < kc; p++ {
		av := a[off+p*cs]
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
	return [8]float32{s0, s1, s2, s3, s4, s5, s6, s7}
}

// store8 sets dst = alpha·acc + beta·dst, not reading dst when beta is 0.
func store8(dst *[8]float32, acc [8]float32, alpha, beta float32) {
	if beta == 0 {
		for j := range dst {
			dst[j] = alpha * acc[j]
		}
		return
	}
	for j := range dst {
		dst[j] = alpha*acc[j] + beta*dst[j]
	}
}

// packA6 is packA for 6-row slivers, with the AVX2 routines if asm is set.
func packA6(asm, transA bool, mb, kb int, a []float32, lda, ic, pc int, ap []float32) {
	const mr = 6
	if transA {
		// op(A)[i][p] = a[p*lda + i]: each k step holds a contiguous run
		// of rows, which is spread over the slivers.
		full := mb / mr * mr
		if asm && full > 0 {
			base := pc*lda + ic
			_ = a[base+(kb-1)*lda+full-1]
			_ = ap[full*kb-1]
			packA6T(kb, full/mr, &a[base], lda, &ap[0])
		}
		for p := 0; p < kb; p++ {
			base := (pc+p)*lda + ic
			row := a[base : base+mb]
			for ir := 0; !asm && ir < full; ir += mr {
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

// packB16 is packB for 16-column slivers, with the AVX2 routines if asm is
// set.
func packB16(asm, transB bool, kb, nb int, b []float32, ldb, pc, jc int, bp []float32) {
	const nr = 16
	for jr := 0; jr < nb; jr += nr {
		cols := min(nr, nb-jr)
		dst := bp[jr*kb : jr*kb+nr*kb]
		if !transB {
			// op(B)[p][j] = b[p*ldb + j]: each k step is a contiguous run of columns.
			if cols == nr && asm {
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
		if asm && kb >= 8 {
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
