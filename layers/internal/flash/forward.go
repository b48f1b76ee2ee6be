package flash

import (
	"fmt"
	"math"

	fastgemm "github.com/alibi-go/alibi/layers/internal/gemm"
	"github.com/alibi-go/alibi/layers/internal/vmath"
	"github.com/alibi-go/alibi/layers/parallel"
)

// Forward computes causal attention O = softmax(scale Q K^T + bias) V
// for every sequence of seqs and every head, with bias nil for none, and
// stores in lse[(s*heads+h)*qLen+i] the log-sum-exp of the biased scores of
// query row i of sequence s and head h (len(lse) >= len(seqs)*heads*qLen),
// which Backward needs; lse may be nil when no backward pass follows
// (evaluation, generation). A row whose exponentials all vanish (possible
// only with a -Inf bias) gets O = 0 and lse = +Inf.
//
// A unit of work is (sequence, head, query tile); units run in parallel over
// the workers. Each walks the key tiles up to its last query's position
// with an online softmax: per row, the running maximum m and sum l of
// exp(S - m), and the output accumulated in o itself, rescaled by
// exp(m_old - m_new) whenever the maximum grows; at the end O = o / l and
// lse = m + log l.
func Forward[T float](seqs []Seq[T], qLen, heads, dHead int, scale T, bias Bias[T], lse []T, opt Opts) {
	if len(seqs) == 0 || qLen == 0 {
		return
	}
	if n := len(seqs) * heads * qLen; lse != nil && len(lse) < n {
		panic(fmt.Sprintf("flash: Forward needs %d lse entries, got %d", n, len(lse)))
	}
	bq, bk := Tiles(qLen, MaxKLen(seqs, qLen), opt)
	qTiles := ceilDiv(qLen, bq)
	fs := scratchFrom[T](opt.Scratch)
	for _, w := range fs.work {
		w.s, w.m, w.l, w.logs = resize(w.s, bq*scoreStride(bk)), resize(w.m, bq), resize(w.l, bq), resize(w.logs, bq)
		w.rowMax, w.rowLen = resize(w.rowMax, bq), resize(w.rowLen, bq)
		w.keys.of = nil // no head's keys held from an earlier call
		if opt.Stats != nil {
			w.sc, w.ex, w.rs = resize(w.sc, bk), resize(w.ex, bk), resize(w.rs, bq)
		}
	}
	call := forwardCall[T]{seqs: seqs, qLen: qLen, heads: heads, dHead: dHead, qTiles: qTiles, bq: bq, bk: bk,
		scale: scale, bias: bias, lse: lse, whole: opt.WholeBlocks, work: fs.work}
	units := len(seqs) * heads * qTiles
	if opt.Stats != nil {
		fs.parts = resize(fs.parts, units)
		clear(fs.parts)
		call.parts, call.far = fs.parts, opt.Stats.Far
	}
	if forwardWork(seqs, qLen, heads, dHead) < SerialWork {
		call.units(0, 0, units) // on the calling goroutine, without a closure to allocate
	} else {
		// One unit a task: the units write rows of their own, so how they
		// are handed out does not change the bits, and the worker that
		// finishes first ends the call taking single units, not chunks of
		// a sixteenth of it (parallel.Chunks).
		shared := call
		parallel.RunShares(min(parallel.Workers(), units), units, func(wk, u int) { shared.units(wk, u, u+1) })
	}
	for _, w := range fs.work {
		w.keys = keyTiles[T]{} // drop the tiles: K changes before the next call
	}
	for u, p := range call.parts { // in unit order, whichever worker ran it
		opt.Stats.add(u%(heads*qTiles)/qTiles, p)
	}
}

// forwardCall holds what the units of work of a Forward call
// share.
type forwardCall[T float] struct {
	seqs                               []Seq[T]
	qLen, heads, dHead, qTiles, bq, bk int
	scale                              T
	bias                               Bias[T]
	lse                                []T
	parts                              []partial // Opts.Stats: each unit's statistics, else nil
	far                                int       // Opts.Stats.Far
	whole                              bool      // Opts.WholeBlocks
	work                               []*workerBuffers[T]
}

// units runs units lo..hi-1, (sequence, head, query tile) in row-major
// order, with worker wk's scratch.
func (c *forwardCall[T]) units(wk, lo, hi int) {
	perSeq := c.heads * c.qTiles
	for u := lo; u < hi; u++ {
		s, h, qt := u/perSeq, u%perSeq/c.qTiles, u%c.qTiles
		i0 := qt * c.bq
		t := head[T]{seq: c.seqs[s], h: h, dHead: c.dHead, scale: c.scale, bias: c.bias, whole: c.whole}
		if t.seq.C == nil {
			t.maxBias, _ = c.bias.(MaxBias[T])
		}
		if c.parts != nil {
			t.part, t.far = &c.parts[u], c.far
		}
		if c.lse != nil {
			t.lse = c.lse[(s*c.heads+h)*c.qLen:][:c.qLen]
		}
		t.forward(i0, min(c.qLen, i0+c.bq), c.bk, c.seqs[s].Offset+c.qLen, c.work[wk])
	}
}

// SerialWork is the number of multiply-adds below which Forward
// runs on the calling goroutine: waking another core costs more than it
// saves on smaller calls (measured with model's BenchmarkDecode on a
// loaded machine: one generated token of the tiny model is 256 multiply-adds
// per layer and key, so up to 4K of context runs on one core).
var SerialWork = 1 << 20

// forwardWork is the number of multiply-adds of a Forward call,
// the scores and the output of every visible (query, key) pair, with
// causal masking ignored.
func forwardWork[T float](seqs []Seq[T], qLen, heads, dHead int) int {
	n := 0
	for _, s := range seqs {
		n += qLen * (s.Offset + qLen)
	}
	return 2 * n * heads * dHead
}

// head is one (sequence, head) of a kernel call: the data the tile
// loops of both passes share.
type head[T float] struct {
	seq   Seq[T]
	h     int
	dHead int
	scale T
	bias  Bias[T]
	// maxBias is bias when it is a MaxBias and the sequence has no
	// prefix-sum bias (which is added after it), else nil.
	maxBias MaxBias[T]
	// expBias, in the backward pass, is bias when it is an ExpBias and
	// the sequence has no prefix-sum bias, else nil.
	expBias ExpBias[T]
	lse     []T // the head's qLen log-sum-exp values
	// part, when not nil, collects the forward pass's statistics (see
	// Stats) of the unit at hand, with threshold far.
	part *partial
	far  int
	// whole computes blocks that cross the diagonal whole (Opts.WholeBlocks).
	whole bool
}

// col is the first column of the head in every row.
func (t *head[T]) col() int { return t.h * t.dHead }

// scores sets s (nr x kn, row stride ld) to scale Q K^T for query rows
// i0..i0+nr-1 and keys j0..j0+kn-1 of the key tile of kAll keys from j0
// (tiles of bk keys), in a block of kBlock >= kn keys (the rows are a band
// of it: see band). The keys' transpose is packed once for every query
// tile of the head that sees them (keyTiles), except for a few rows, whose
// product reads the keys in place (generation: see gemm's small-M path).
func (t *head[T]) scores(s []T, ld, i0, nr, j0, kn, kBlock, bk, kAll int, w *workerBuffers[T]) {
	c, sq := t.col(), t.seq
	q := sq.Q[i0*sq.LdQ+c:]
	if nr <= DecodeRows {
		Gemm(false, true, nr, kn, t.dHead, t.scale, q, sq.LdQ, sq.K[sq.KAt(j0, t.h, t.dHead):], sq.LdK, 0, s, ld)
		return
	}
	kt := w.keys.tile(sq.K[sq.KAt(0, t.h, t.dHead):], sq.LdK, j0, bk, kBlock, kAll, t.dHead)
	gemmT(nr, kn, t.scale, q, sq.LdQ, kt, 0, s, ld)
}

// addPV adds P V to output rows i0..i0+nr-1, P being nr x kn (row stride
// ld) and V the values of keys j0..j0+kn-1; the first nNew rows are
// overwritten instead (their first key tile).
func (t *head[T]) addPV(p []T, ld, i0, nr, nNew, j0, kn int) {
	c, sq := t.col(), t.seq
	v := sq.V[sq.VAt(j0, t.h, t.dHead):]
	if nNew > 0 {
		Gemm(false, false, nNew, t.dHead, kn, 1, p, ld, v, sq.LdV, 0, sq.O[i0*sq.LdO+c:], sq.LdO)
	}
	if nr > nNew {
		Gemm(false, false, nr-nNew, t.dHead, kn, 1, p[nNew*ld:], ld, v, sq.LdV, 1, sq.O[(i0+nNew)*sq.LdO+c:], sq.LdO)
	}
}

// visible returns how many keys from j0 on the query at position pos sees,
// at most kn.
func visible(pos, j0, kn int) int { return min(kn, pos-j0+1) }

// BandRows is the height of the bands into which both passes cut a block
// of query rows that crosses the diagonal (see band).
const BandRows = 32

// band returns the end e of the band of rows a..e-1 that starts at row a of
// a block of rows ending before i1 on the key tile of kn keys from j0, and
// the keys kb that the band's products cover: those its last row sees.
// Before the first row that sees the whole tile, bands are BandRows high;
// from it on, or when fewer than DecodeRows rows would be left after the
// band, the band runs to i1 with kb = kn. The keys a band leaves out are
// invisible to all its rows: their probabilities and score gradients are
// exactly 0, so leaving them out drops terms 0 * x at the end of each sum
// over keys (P V, dS K) and at the start of each sum over rows (P^T dO,
// dS^T Q), and every element keeps the bits of the whole block's product,
// while most of the block's upper triangle is not computed. The bits stay
// only while each product keeps its path: so the block is whole (e = i1,
// kb = kn) when whole is set (Opts.WholeBlocks, or a forward block some of
// whose rows hold output already), no band is left with at most
// DecodeRows rows, which gemm computes on its small-M path, and the sums
// over keys span keySpan(kb, kn) keys, not kb.
func (t *head[T]) band(a, i1, j0, kn int, whole bool) (e, kb int) {
	if whole || t.whole || visible(t.seq.Offset+a, j0, kn) == kn {
		return i1, kn
	}
	if e = a + BandRows; e >= i1-DecodeRows {
		e = i1
	}
	return e, visible(t.seq.Offset+e-1, j0, kn)
}

// keySpan returns how many keys a band's products that sum over the keys
// (P V, dQ = dS K) cover, for a band that sees kb keys of a block of kn:
// kb, unless kn > gemm.KBlock, where such a sum is cut into k blocks at
// points that depend on its length; it then spans the whole block's kn
// keys, as the whole block's product does, and the band's probabilities of
// keys kb..kn-1 must be zeros (clearKeys). The products of the other sums
// (the scores, dP = dO V^T, dV and dK, which sum over dHead or over rows)
// still cover only the band's kb keys.
func keySpan(kb, kn int) int {
	if kn > fastgemm.KBlock {
		return kn
	}
	return kb
}

// clearKeys sets entries kb..kp-1 of the nr rows of s (row stride ld) to 0:
// the keys of keySpan(kb, kn) = kp that a band does not see. (The scratch
// may hold an earlier block's probabilities there.)
func clearKeys[T float](s []T, ld, nr, kb, kp int) {
	if kp <= kb {
		return
	}
	for r := range nr {
		clear(s[r*ld+kb : r*ld+kp])
	}
}

// forward computes output rows i0..i1-1 of the head and their lse. It walks
// the key tiles from the diagonal back to key 0: with ALiBi the nearest
// keys carry the smallest penalties, so the running maximum is usually found
// in the first tile and later tiles need no rescaling. A row's output is
// not cleared first: the product of the first key tile the row sees
// overwrites it (the sums are those of adding to zero, which is exact).
func (t *head[T]) forward(i0, i1, bk, kLen int, w *workerBuffers[T]) {
	sq, c := t.seq, t.col()
	m, l := w.m[:i1-i0], w.l[:i1-i0]
	for i := i0; i < i1; i++ {
		m[i-i0], l[i-i0] = T(math.Inf(-1)), 0
	}
	seen := i1            // rows seen..i1-1 hold output already
	ld := scoreStride(bk) // the score tile's row stride
	if t.part != nil {
		clear(w.rs[:i1-i0])
	}
	last := sq.Offset + i1 - 1 // position of the last query
	for j0 := last / bk * bk; j0 >= 0; j0 -= bk {
		kn := min(bk, last-j0+1)
		r0 := max(i0, j0-sq.Offset) // first row that sees key j0
		// A band of rows at a time (see band).
		for a := r0; a < i1; {
			e, kb := t.band(a, i1, j0, kn, seen < i1)
			s := w.s[(a-r0)*ld : (i1-r0)*ld]
			t.scores(s, ld, a, e-a, j0, kb, kn, bk, min(bk, kLen-j0), w)
			if t.part == nil {
				t.softmaxBand(s, ld, a, e, i0, seen, j0, kb, m, l, w)
			} else {
				for i := a; i < e; i++ {
					pos := sq.Offset + i
					row := s[(i-a)*ld:][:kb]
					alpha := t.softmaxStepStats(row, visible(pos, j0, kb), pos, j0, &m[i-i0], &l[i-i0], &w.rs[i-i0], w)
					if alpha != 1 && i >= seen {
						scaleRow(sq.O[i*sq.LdO+c:][:t.dHead], alpha)
					}
				}
			}
			kp := keySpan(kb, kn)
			clearKeys(s, ld, e-a, kb, kp)
			t.addPV(s, ld, a, e-a, min(e, max(a, seen))-a, j0, kp) // the band's rows before seen are new
			a = e
		}
		seen = r0
	}
	for i := i0; i < i1; i++ {
		o := sq.O[i*sq.LdO+c:][:t.dHead]
		mi, li := m[i-i0], l[i-i0]
		if li > 0 {
			scaleRow(o, T(1/li))
		} else {
			clear(o)
		}
		if t.part != nil {
			w.rs[i-i0].finish(t.part, t.far, sq.Offset+i, float64(mi), li)
		}
	}
	if t.lse != nil {
		rowsLSE(t.lse[i0:i1], m, l, w.logs)
	}
}

// rowsLSE sets lse[r] = m[r] + log(l[r]), the log-sum-exp of row r from its
// maximum m[r] and sum l[r] of exp(S - m[r]), or +Inf where l[r] = 0
// (nothing has weight). The rows' logarithms are taken together, in logs
// (vmath.Log64, the bits of math.Log).
func rowsLSE[T float](lse, m []T, l, logs []float64) {
	logs = logs[:len(l)]
	vmath.Log64(logs, l)
	for r, lr := range l {
		if lr > 0 {
			lse[r] = T(float64(m[r]) + logs[r])
		} else {
			lse[r] = T(math.Inf(1))
		}
	}
}

// addBias adds the position bias and the sequence's prefix-sum bias (if
// any) of the query at position pos to the scores of keys j0..j0+len(row)-1.
func (t *head[T]) addBias(row []T, pos, j0 int) {
	if t.bias != nil {
		t.bias.Add(t.h, pos, j0, row)
	}
	if t.seq.C != nil {
		t.seq.gate(t.h, pos, j0, row)
	}
}

// softmaxBand turns the scores of the rows a..e-1 of a band on the kb keys
// from j0 (at s, row stride ld) into the unnormalised probabilities
// exp(S - m_new), zero for the invisible keys, m_new being a row's new
// running maximum of its biased scores. It updates the rows' running
// maxima m and sums l (the query tile's rows, from i0 on) and rescales by
// exp(m_old - m_new) the output of the rows from seen on, which hold
// output already, when their maximum grows.
//
// It takes the rows in two passes: every row's bias, maximum and padding,
// then every row's exponentials. A row's exponentials wait for its
// maximum, the end of a reduction; a row at a time, they filled the
// processor's queue while they waited, and the next row's bias could not
// start (FlashForward at 128 tokens on an Intel Xeon, family 6 model 207:
// 1.07-1.08x faster in two passes, on one core and on two). The arithmetic
// of each row is the same in either order, and softmaxStepStats, which
// takes one row at a time, gives the same bits
// (TestFlashForwardBandOrderSameBits).
func (t *head[T]) softmaxBand(s []T, ld, a, e, i0, seen, j0, kb int, m []T, l []float64, w *workerBuffers[T]) {
	sq, c := t.seq, t.col()
	rm, padded := w.rowMax[:e-a], w.rowLen[:e-a]
	for i := a; i < e; i++ {
		pos := sq.Offset + i
		row := s[(i-a)*ld:][:kb]
		n := visible(pos, j0, kb)
		if t.maxBias != nil {
			rm[i-a] = t.maxBias.AddMax(t.h, pos, j0, row[:n])
			padded[i-a] = padInvisible(row, n)
			continue
		}
		t.addBias(row[:n], pos, j0)
		padded[i-a] = padInvisible(row, n)
		rm[i-a] = vmath.MaxOf(row[:padded[i-a]])
	}
	for i := a; i < e; i++ {
		alpha := T(softmaxShift(s[(i-a)*ld:][:padded[i-a]], rm[i-a], &m[i-i0], &l[i-i0]))
		if alpha != 1 && i >= seen {
			scaleRow(sq.O[i*sq.LdO+c:][:t.dHead], alpha)
		}
	}
}

// softmaxStepStats is softmaxBand for one row (the scores of one query on a
// key tile, of which the first n are visible) that also adds the row's key
// tile to its statistics rs (see Stats), with w's float64 scratch rows. It
// returns the factor exp(m_old - m_new) by which the row's output
// accumulated so far must be rescaled (exactly 1 when the maximum stays).
func (t *head[T]) softmaxStepStats(row []T, n, pos, j0 int, m *T, l *float64, rs *rowStats, w *workerBuffers[T]) T {
	t.addBias(row[:n], pos, j0)
	sc, ex := w.sc[:n], w.ex[:n]
	for j, v := range row[:n] {
		sc[j] = float64(v)
	}
	alpha := softmaxBiased(row, n, m, l)
	for j, v := range row[:n] {
		ex[j] = float64(v)
	}
	rs.accumulate(sc, ex, alpha, pos, j0, t.far)
	return T(alpha)
}

// softmaxBiased pads row (the first n of its keys visible, their bias
// added), takes its maximum and goes on as softmaxShift; it returns the
// rescaling factor in float64.
func softmaxBiased[T float](row []T, n int, m *T, l *float64) float64 {
	vis := row[:padInvisible(row, n)]
	return softmaxShift(vis, vmath.MaxOf(vis), m, l)
}

// softmaxShift is softmaxBiased once the row has been padded (vis, see
// padInvisible) and its maximum rm taken.
func softmaxShift[T float](vis []T, rm T, m *T, l *float64) float64 {
	mNew := max(*m, rm)
	if math.IsInf(float64(mNew), -1) { // nothing visible has weight yet
		clear(vis)
		return 1
	}
	alpha := 1.0
	if mNew != *m {
		alpha = math.Exp(float64(*m - mNew)) // 0 for the first tile
	}
	*l = *l*alpha + expShiftSum(vis, mNew)
	*m = mNew
	return alpha
}

// padInvisible prepares the invisible keys n..len(row)-1 of a score row for
// the exponential: up to the next multiple of 8 (the vector width of the
// float32 kernels, which leave a slow scalar tail otherwise) it sets them to
// -Inf, whose exponential is exactly 0, and beyond it sets them to 0. It
// returns the padded length, the part to exponentiate. No bias is read for
// the padding.
func padInvisible[T float](row []T, n int) int {
	n8 := min(len(row), (n+7)&^7)
	inf := T(math.Inf(-1))
	for j := n; j < n8; j++ {
		row[j] = inf
	}
	clear(row[n8:])
	return n8
}
