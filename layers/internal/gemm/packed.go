package gemm

// PackedB is op(B) of several products packed once: products on the
// calling goroutine that share B and k and differ in A, such as an
// attention head's keys multiplied by each of its query tiles (the scores
// Q K^T of a tile of queries use the keys up to the tile's last query).
// Packing it for each product repeats the same transposed copy; with
// PackedB the products read one copy, and each may use a prefix of its
// columns.
//
// The zero value is ready to use; Pack reuses its storage.
type PackedB struct {
	panel  []float32 // nr-column slivers of k values; nil when not packed
	transB bool
	b      []float32
	ldb    int
	k, n   int
}

// Pack prepares op(B) (k x n, stored as Sgemm's B with transB and ldb) for
// SgemmPackedB. It packs it when the products would pack it anyway and in
// one piece: on the AVX-512 path, B transposed (not-transposed B is read in
// place), k at most one k block and n at most one column panel. Otherwise
// it only remembers B, and SgemmPackedB calls Sgemm. B must not change
// while the PackedB is in use. It panics as Sgemm does on a B too short.
func (p *PackedB) Pack(transB bool, k, n int, b []float32, ldb int) {
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	checkMatrix("B", br, bc, b, ldb)
	p.transB, p.b, p.ldb, p.k, p.n = transB, b, ldb, k, n
	g := geom()
	if g.path != AVX512 || !transB || k == 0 || n == 0 || k > g.kcMax || n > g.ncMax {
		p.panel = nil
		return
	}
	p.panel = grow(p.panel, ceilDiv(n, g.nr)*g.nr*k)
	packB32(true, k, n, b, ldb, 0, 0, p.panel, nil, false)
}

// Reserve makes room in p for a later Pack of k x n with B transposed, so
// that a PackedB packed again with more columns each time (the keys of one
// tile, band by band) takes its storage once instead of at every size. It
// packs nothing.
func (p *PackedB) Reserve(k, n int) {
	g := geom()
	if g.path == AVX512 && k > 0 && n > 0 && k <= g.kcMax && n <= g.ncMax {
		p.panel = grow(p.panel, ceilDiv(n, g.nr)*g.nr*k)
	}
}

// SgemmPackedB computes C = alpha*A*op(B)[:, :n] + beta*C on the calling
// goroutine for A (m x k) not transposed, op(B) prepared by p.Pack and n at
// most its columns: the product and bits of Sgemm(false, transB, m, n, k,
// alpha, a, lda, b, ldb, beta, c, ldc, 1) with p's B. It panics as Sgemm
// does, and if n exceeds p's columns.
func SgemmPackedB(m, n int, alpha float32, a []float32, lda int, p *PackedB, beta float32, c []float32, ldc int) {
	if n > p.n {
		panic("gemm: SgemmPackedB: more columns than were packed")
	}
	k := p.k
	if p.panel == nil || m == 0 || n == 0 || alpha == 0 || useSmallM(false, m) {
		Sgemm(false, p.transB, m, n, k, alpha, a, lda, p.b, p.ldb, beta, c, ldc, 1)
		return
	}
	CheckArgs(false, p.transB, m, n, k, a, lda, p.b, p.ldb, c, ldc)
	gemmSerial(geom(), false, p.transB, m, n, k, alpha, a, lda, p.b, p.ldb, beta, nil, nil, c, ldc, nil, p.panel)
}
