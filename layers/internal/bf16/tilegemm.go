package bf16

import (
	"unsafe"

	"github.com/alibi-go/alibi/layers/internal/gemm"
	"github.com/alibi-go/alibi/layers/parallel"
)

// The tile product: Gemm on AMX's tiles. C is computed in blocks of 32 x
// 32 (four 16 x 16 accumulator tiles, two A tiles of 16 rows, two B tiles
// of 16 columns), each block from zero over k in steps of 32 (one
// TDPBF16PS per tile and step, TileDot's arithmetic, k padded with zeros),
// and the block's sums s then go into C as alpha*s + beta*C, or alpha*s +
// bias, as the other kernels store theirs. The factors are converted
// once: op(A) to bfloat16 rows (zeros past k), a strip of 32 rows at a
// time or, when A is stored transposed, all of it; op(B) to panels of 32
// columns, each kp rows of 32 pair words (word (p, j) holds B(2p, j) and
// B(2p+1, j)), contiguous, so that a block reads its B panel as one
// stream. One assembly call runs a strip of 32 rows against every panel.

// A block of C on the tile unit: blockRows x blockCols.
const (
	blockRows = 2 * TileRows
	blockCols = 2 * TileCols
	kStep     = 2 * TilePairs // k steps of one TDPBF16PS
)

// stripFunc computes one strip of C (rows rows, n columns, row stride
// ldc) from a (32 rows of bfloat16, row stride lda, k steps contiguous)
// and the B panels (b, panel words apart, kb*16 rows of 32 pair words
// each): for each block of 32 columns, the sums s from zero over kb steps
// of 32 in TileDot's arithmetic, then C = alpha*s + bias (bias not nil),
// alpha*s (beta zero) or alpha*s + beta*C, each product and the sum
// rounded, as kernelGo stores.
type stripFunc func(c []float32, ldc int, a []uint16, lda int, b []uint32, panel, kb, n, rows int, alpha, beta float32, bias []float32)

// stripGo is stripFunc on TileDot: the Go definition of the instructions.
func stripGo(c []float32, ldc int, a []uint16, lda int, b []uint32, panel, kb, n, rows int, alpha, beta float32, bias []float32) {
	var sums [blockRows * blockCols]float32
	for j0 := 0; j0 < n; j0 += blockCols {
		clear(sums[:])
		p := b[j0/blockCols*panel:]
		bh := unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(p))), 2*len(p))
		for q := range kb {
			for ti := range 2 {
				for tj := range 2 {
					TileDot(TileRows, TileCols, TilePairs, sums[ti*TileRows*blockCols+tj*TileCols:], blockCols,
						a[ti*TileRows*lda+q*kStep:], lda, bh[2*(q*TilePairs*blockCols+tj*TileCols):], 2*blockCols)
				}
			}
		}
		cols := min(blockCols, n-j0)
		for i := range rows {
			row := c[i*ldc+j0 : i*ldc+j0+cols]
			for j := range row {
				t := float32(alpha * sums[i*blockCols+j])
				switch {
				case bias != nil:
					row[j] = t + bias[j0+j]
				case beta == 0:
					row[j] = t
				default:
					row[j] = t + float32(beta*row[j])
				}
			}
		}
	}
}

// tileGemm is product on the tile arithmetic, strip running each strip
// of 32 rows of C, with up to threads goroutines. beta is 1
// when bias is not nil. then (nil for none) gets each finished chunk of
// rows.
func tileGemm(strip stripFunc, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, bias, c []float32, ldc int, threads int, then gemm.Epilogue) {
	threads = max(1, threads)
	kb := (k + kStep - 1) / kStep
	kp := kb * TilePairs
	aStride := padStride(kb*kStep, 2) // bfloat16 per row of op(A)
	blocks := (n + blockCols - 1) / blockCols
	panel := kp * blockCols
	strips := (m + blockRows - 1) / blockRows
	if 2*float64(m)*float64(n)*float64(k) < minParallelFlops {
		threads = 1
	}
	bp := words.get(blocks * panel)
	defer words.put(bp)
	packPairs(transB, n, k, kp, b, ldb, bp, blockCols, panel, threads)
	var aAll []uint16 // op(A) converted whole, when transposed
	if transA {
		aAll = converted.get(strips * blockRows * aStride)
		defer converted.put(aAll)
		packTransposed(m, k, kb, a, lda, aAll, aStride, threads)
	}
	per := max(1, (strips+threads*chunksPerThread-1)/(threads*chunksPerThread))
	chunks := (strips + per - 1) / per
	parallel.RunShares(min(threads, chunks), chunks, func(_, ch int) {
		var ap []uint16
		if !transA {
			ap = converted.get(blockRows * aStride)
			defer converted.put(ap)
		}
		lo, hi := ch*per*blockRows, min(m, (ch+1)*per*blockRows)
		for i0 := lo; i0 < hi; i0 += blockRows {
			rows := min(blockRows, m-i0)
			if transA {
				ap = aAll[i0*aStride : (i0+blockRows)*aStride]
			} else {
				packRows(i0, rows, k, a, lda, ap, aStride)
			}
			strip(c[i0*ldc:], ldc, ap, aStride, bp, panel, kb, n, rows, alpha, beta, bias)
		}
		if then != nil {
			then(lo, hi, 0, n)
		}
	})
}

// padStride is n elements of size bytes, plus one 64-byte line when the
// rows would be a multiple of 2 KiB apart: the 16 rows a tile load reads
// would then share a few sets of the level-1 cache.
func padStride(n, size int) int {
	if n*size%2048 == 0 {
		return n + 64/size
	}
	return n
}

// packRows converts rows [i0, i0+rows) of A (not transposed) to bfloat16
// rows of dst, stride ld, zeros past k and in the rows past the matrix
// (up to 32).
func packRows(i0, rows, k int, a []float32, lda int, dst []uint16, ld int) {
	for r := range rows {
		RoundSlice(dst[r*ld:r*ld+k], a[(i0+r)*lda:(i0+r)*lda+k])
		clear(dst[r*ld+k : (r+1)*ld])
	}
	clear(dst[rows*ld:])
}

// packTransposed converts all of op(A) when A is stored transposed (k x
// m, op(A)(i, p) = a[p*lda + i]) into bfloat16 rows of dst (stride ld, m
// rounded up to 32 rows, zeros past the matrix): first a's rows into pair
// words as packPairs packs B, row-major (word (q, i) holds steps 2q and
// 2q+1 of row i), then each step's 16 rows of words transposed into its
// 64 bytes of every row (gemm.Transpose16), both passes streaming.
func packTransposed(m, k, kb int, a []float32, lda int, dst []uint16, ld int, threads int) {
	kp := kb * TilePairs
	mPad := (m + blockCols - 1) / blockCols * blockCols
	w := words.get(kp * mPad)
	defer words.put(w)
	packPairs(false, m, k, kp, a, lda, w, mPad, blockCols, threads)
	dw := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst)/2)
	parallel.Run(min(threads, kb), func(t int) {
		for q := t; q < kb; q += min(threads, kb) {
			gemm.Transpose16(m, w[q*TilePairs*mPad:], mPad, dw[q*TilePairs:], ld/2)
		}
	})
	clear(dst[m*ld:])
}

// pairWords sets dst[j] = Round(lo[j]) | Round(hi[j])<<16, hi nil for
// zeros.
func pairWords(dst []uint32, lo, hi []float32) {
	n := len(dst)
	done := 0
	if hi != nil && n >= 8 && pairs(dst, lo, hi, 1, n&^7, 0) {
		done = n &^ 7
	}
	for j := done; j < n; j++ {
		w := uint32(Round(lo[j]))
		if hi != nil {
			w |= uint32(Round(hi[j])) << 16
		}
		dst[j] = w
	}
}

// packPairs converts op(B) (k x n) to kp rows of pair words, word (p, j)
// = Round(B(2p, j)) | Round(B(2p+1, j))<<16 at dst[(j/32)*ps + p*ld +
// j%32], zeros past the matrix up to the last panel's 32 columns: panels
// of 32 columns kp*32 words apart with ld 32 and ps kp*32, or rows with ld
// the row stride and ps 32. The rows are shared out among up to threads
// goroutines.
func packPairs(transB bool, n, k, kp int, b []float32, ldb int, dst []uint32, ld, ps int, threads int) {
	per := max(8, (kp+threads-1)/threads)
	per = (per + 7) &^ 7 // whole chunks of 16 steps for along
	parts := (kp + per - 1) / per
	workers := min(threads, parts)
	panels := (n + blockCols - 1) / blockCols
	parallel.Run(workers, func(t int) {
		for part := t; part < parts; part += workers {
			p0, p1 := part*per, min(kp, (part+1)*per)
			if transB {
				pairsAlong(n, k, p0, p1, b, ldb, dst, ld, ps)
				continue
			}
			for p := p0; p < p1; p++ {
				jp0 := 0 // panels packed whole in one call, where the path has it
				if full := n / blockCols; 2*p+1 < k && full > 0 && pairs(dst[p*ld:], b[2*p*ldb:], b[(2*p+1)*ldb:], full, blockCols, ps) {
					jp0 = full
				}
				for jp := jp0; jp < panels; jp++ {
					j0 := jp * blockCols
					row := dst[jp*ps+p*ld : jp*ps+p*ld+blockCols]
					cols := min(blockCols, n-j0)
					if 2*p < k {
						var hi []float32
						if 2*p+1 < k {
							hi = b[(2*p+1)*ldb+j0 : (2*p+1)*ldb+j0+cols]
						}
						pairWords(row[:cols], b[2*p*ldb+j0:2*p*ldb+j0+cols], hi)
						clear(row[cols:])
					} else {
						clear(row)
					}
				}
			}
		}
	})
}

// pairsAlong is packPairs' rows [p0, p1) for transB, op(B)(p, j) =
// b[j*ldb + p]: column j's steps are contiguous, and along converts and
// transposes 8 columns by 16 steps at a time where they are whole.
func pairsAlong(n, k, p0, p1 int, b []float32, ldb int, dst []uint32, ld, ps int) {
	steps := min(2*p1, k) - 2*p0 // steps of op(B) in these rows
	chunks := max(0, steps) / 16
	j8 := 0
	if chunks > 0 {
		for ; j8+8 <= n; j8 += 8 {
			if !along(dst[(j8/blockCols)*ps+p0*ld+j8%blockCols:], b[j8*ldb+2*p0:], ldb, chunks, ld) {
				break
			}
		}
	}
	nPad := (n + blockCols - 1) / blockCols * blockCols
	for p := p0; p < p1; p++ {
		from := 0
		if p < p0+8*chunks {
			from = j8
		}
		for j := from; j < nPad; j++ {
			var w uint32
			if j < n && 2*p < k {
				w = uint32(Round(b[j*ldb+2*p]))
				if 2*p+1 < k {
					w |= uint32(Round(b[j*ldb+2*p+1])) << 16
				}
			}
			dst[(j/blockCols)*ps+p*ld+j%blockCols] = w
		}
	}
}
