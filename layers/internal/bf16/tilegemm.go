package bf16

// TileGemm computes C += Â·B̂ on the arithmetic of AMX's tiles: Â (m x k)
// and B̂ (k x n) the bfloat16 Round of the float32 A (row stride lda) and
// B (row stride ldb), C (m x n float32, row stride ldc). C is computed
// tile by tile, 16 x 16, and each tile over k in blocks of 32 steps, one
// TDPBF16PS a block, in order (TileDot's arithmetic: each block's even and
// odd steps summed apart, then added to C). Rows, columns and steps past
// the matrices' edges are zeros in the packed tiles, which leave every sum
// as it is, so a partial tile gives the bits of the whole.
//
// It runs the instruction where the CPU and the kernel grant AMX (HasAMX)
// and TileDot otherwise: the same bits either way.
func TileGemm(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	tileGemm(m, n, k, a, lda, b, ldb, c, ldc, HasAMX())
}

// Sizes of the packed tiles, in words: 16 rows of 32 bfloat16.
const tileWords = TileRows * 2 * TilePairs

// tileGemm is TileGemm on the tile unit (amx) or on TileDot.
func tileGemm(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, amx bool) {
	if m <= 0 || n <= 0 || k <= 0 {
		return
	}
	kb := (k + 2*TilePairs - 1) / (2 * TilePairs) // k blocks of 32 steps
	ap := packTileA(m, k, kb, a, lda)
	bp := packTileB(k, n, kb, b, ldb)
	panel := func(p []uint16, i int) []uint16 { return p[i*kb*tileWords:][:kb*tileWords] }
	var ct [TileRows * TileCols]float32
	for i0 := 0; i0 < m; i0 += TileRows {
		if amx && i0+2*TileRows <= m { // 2 x 2 tiles where they are whole
			j0 := 0
			for ; j0+2*TileCols <= n; j0 += 2 * TileCols {
				tileBlocks2x2AMX(c[i0*ldc+j0:], ldc, panel(ap, i0/TileRows), panel(ap, i0/TileRows+1),
					panel(bp, j0/TileCols), panel(bp, j0/TileCols+1), kb)
			}
			tileRow(i0, 2*TileRows, j0, n, kb, ap, bp, c, ldc, amx, &ct)
			i0 += TileRows
			continue
		}
		tileRow(i0, min(TileRows, m-i0), 0, n, kb, ap, bp, c, ldc, amx, &ct)
	}
}

// tileRow computes rows i0..i0+rows-1 (up to two panels of 16) of C from
// column j0 on, one 16 x 16 tile at a time.
func tileRow(i0, rows, j0, n, kb int, ap, bp []uint16, c []float32, ldc int, amx bool, ct *[TileRows * TileCols]float32) {
	for r0 := i0; r0 < i0+rows; r0 += TileRows {
		tileCols(r0, min(TileRows, i0+rows-r0), j0, n, kb, ap, bp, c, ldc, amx, ct)
	}
}

// tileCols computes the tiles of one panel of rows (r0, rows of them) from
// column j0 on.
func tileCols(i0, rows, j0, n, kb int, ap, bp []uint16, c []float32, ldc int, amx bool, ct *[TileRows * TileCols]float32) {
	aPanel := ap[(i0/TileRows)*kb*tileWords:][:kb*tileWords]
	for ; j0 < n; j0 += TileCols {
		cols := min(TileCols, n-j0)
		bPanel := bp[(j0/TileCols)*kb*tileWords:][:kb*tileWords]
		if amx && rows == TileRows && cols == TileCols { // C read and written in place
			tileBlocksAMXAt(c[i0*ldc+j0:], ldc, aPanel, bPanel, kb)
			continue
		}
		clear(ct[:])
		for r := 0; r < rows; r++ {
			copy(ct[r*TileCols:r*TileCols+cols], c[(i0+r)*ldc+j0:][:cols])
		}
		if amx {
			tileBlocksAMXAt(ct[:], TileCols, aPanel, bPanel, kb)
		} else {
			for q := 0; q < kb; q++ {
				TileDot(TileRows, TileCols, TilePairs, ct[:], TileCols, aPanel[q*tileWords:], 2*TilePairs, bPanel[q*tileWords:], 2*TileCols)
			}
		}
		for r := 0; r < rows; r++ {
			copy(c[(i0+r)*ldc+j0:][:cols], ct[r*TileCols:r*TileCols+cols])
		}
	}
}

// packTileA packs A as the tile unit reads it: for each panel of 16 rows,
// kb tiles of 16 rows of 32 bfloat16 (one k block each), zeros past the
// edges.
func packTileA(m, k, kb int, a []float32, lda int) []uint16 {
	panels := (m + TileRows - 1) / TileRows
	p := make([]uint16, panels*kb*tileWords)
	row := make([]uint16, kb*2*TilePairs) // one row of A rounded, zeros past k
	for i := 0; i < m; i++ {
		panel, r := i/TileRows, i%TileRows
		RoundSlice(row[:k], a[i*lda:i*lda+k])
		for q := 0; q < kb; q++ {
			copy(p[(panel*kb+q)*tileWords+r*2*TilePairs:][:2*TilePairs], row[q*2*TilePairs:])
		}
	}
	return p
}

// packTileB packs B as the tile unit reads it: for each panel of 16
// columns, kb tiles of 16 rows of 16 pairs, pair p of column j holding
// steps 2p and 2p+1 of the block; zeros past the edges.
func packTileB(k, n, kb int, b []float32, ldb int) []uint16 {
	panels := (n + TileCols - 1) / TileCols
	p := make([]uint16, panels*kb*tileWords)
	r0, r1 := make([]uint16, n), make([]uint16, n) // two rows of B rounded
	for t := 0; t < k; t += 2 {
		RoundSlice(r0, b[t*ldb:t*ldb+n])
		if t+1 < k {
			RoundSlice(r1, b[(t+1)*ldb:(t+1)*ldb+n])
		} else {
			clear(r1)
		}
		q, pair := t/(2*TilePairs), (t%(2*TilePairs))/2
		for j0 := 0; j0 < n; j0 += TileCols {
			row := p[((j0/TileCols)*kb+q)*tileWords+pair*2*TileCols:][:2*TileCols]
			for j := j0; j < min(n, j0+TileCols); j++ {
				row[2*(j-j0)], row[2*(j-j0)+1] = r0[j], r1[j]
			}
		}
	}
	return p
}
