package layers

import (
	"fmt"
	"math"

	"github.com/alibi-go/alibi/layers/internal/vmath"
	"github.com/alibi-go/alibi/layers/parallel"
)

// Tiled ("flash") causal attention. For one sequence and head, with queries
// Q (qLen x dHead) at absolute positions offset..offset+qLen-1 and keys K,
// values V (kLen = offset+qLen rows) at positions 0..kLen-1,
//
//	S = scale Q K^T + B,  P = softmax(S) over the keys j <= pos of each row,
//	O = P V,  lse_i = log sum_j exp(S_ij),
//
// computed a (query tile, key tile) block at a time with an online softmax,
// so that memory stays linear in the length: no (T, T) array exists, only
// per-worker scratch of one tile. Key tiles entirely above the diagonal are
// skipped. In a tile that crosses the diagonal, gemm computes the whole
// block, but each row's bias, maximum and exponentials cover only its
// visible keys (plus, in the exponential, at most 7 keys set to -Inf to fill
// the last vector); the other probabilities are exactly 0. No mask value is
// added and no bias of an invisible key is read.

// flashSeq locates one sequence's matrices for the tiled kernels. The qLen
// query rows are at absolute positions offset..offset+qLen-1; k and v have
// kLen = offset+qLen rows at positions 0..kLen-1 (a key/value cache followed
// by the new tokens); o receives qLen output rows. ld* are row strides in
// elements; head h uses columns h*dHead..(h+1)*dHead-1 of every row of q
// and o, and of k and v unless hk and hv are set: then the heads of k (v)
// are stored one after the other, head h's rows starting at h*hk (h*hv).
type flashSeq[T float] struct {
	q, k, v, o         []T
	ldq, ldk, ldv, ldo int
	offset             int
	hk, hv             int
}

// kAt is the index in k of the first element of head h of key j.
func (s *flashSeq[T]) kAt(j, h, dHead int) int {
	if s.hk == 0 {
		return j*s.ldk + h*dHead
	}
	return h*s.hk + j*s.ldk
}

// vAt is the index in v of the first element of head h of value j.
func (s *flashSeq[T]) vAt(j, h, dHead int) int {
	if s.hv == 0 {
		return j*s.ldv + h*dHead
	}
	return h*s.hv + j*s.ldv
}

// flashGradSeq holds one sequence's gradients for flashBackward: do (qLen
// rows) is the gradient of the output; dq (qLen rows), dk and dv (kLen rows
// each) receive the gradients of the inputs. ld* are row strides in
// elements; head h uses columns h*dHead..(h+1)*dHead-1.
type flashGradSeq[T float] struct {
	do, dq, dk, dv         []T
	lddo, lddq, lddk, lddv int
}

// flashPackedSeqs returns the views of batch sequences of t tokens in the
// Attention op's layout: qkv is (batch*t, 3d) with each row's query, key and
// value side by side, out is (batch*t, d), and queries start at offset 0.
func flashPackedSeqs[T float](qkv, out []T, batch, t, d int) []flashSeq[T] {
	seqs := make([]flashSeq[T], batch)
	for b := range seqs {
		q := qkv[b*t*3*d:]
		seqs[b] = flashSeq[T]{q: q, k: q[d:], v: q[2*d:], o: out[b*t*d:], ldq: 3 * d, ldk: 3 * d, ldv: 3 * d, ldo: d}
	}
	return seqs
}

// flashPackedGrads returns the gradient views matching flashPackedSeqs:
// dout is (batch*t, d) and dqkv (batch*t, 3d).
func flashPackedGrads[T float](dout, dqkv []T, batch, t, d int) []flashGradSeq[T] {
	grads := make([]flashGradSeq[T], batch)
	for b := range grads {
		dq := dqkv[b*t*3*d:]
		grads[b] = flashGradSeq[T]{do: dout[b*t*d:], dq: dq, dk: dq[d:], dv: dq[2*d:], lddo: d, lddq: 3 * d, lddk: 3 * d, lddv: 3 * d}
	}
	return grads
}

// flashOpts tunes a kernel call. Zero values choose automatically.
type flashOpts struct {
	// blockQ and blockK override the query and key tile sizes (see
	// flashTiles); tests use them to cross many tile boundaries at small
	// lengths.
	blockQ, blockK int
	// scratch, when not nil, keeps the per-worker buffers between calls
	// (*scratch holds a *flashScratch[T]); nil allocates them per call.
	// Calls sharing a scratch must not run concurrently.
	scratch *any
}

// Tile sizes, chosen by measurement on a 2-core Zen 3 (4 heads of 32,
// float32): forward and backward speed is flat for key tiles of 256 to 2048
// and query tiles of 64 to 128, and drops with smaller ones.
const (
	flashBlockQ       = 64   // query rows per tile
	flashBlockK       = 512  // keys per tile
	flashDecodeBlockK = 2048 // keys per tile when there are few queries
	flashDecodeRows   = 4    // "few queries": at most this many
)

// flashTiles returns the query and key tile sizes for qLen queries against
// at most kLen keys. Up to flashBlockK keys fit in one key tile, so every
// row's softmax is computed at once as in the materialised kernel (no
// rescaling); a handful of queries (generation with a cache) take larger key
// tiles, since their score tiles are only a few rows high.
func flashTiles(qLen, kLen int, opt flashOpts) (bq, bk int) {
	bq = flashBlockQ
	if opt.blockQ > 0 {
		bq = opt.blockQ
	}
	switch {
	case opt.blockK > 0:
		bk = opt.blockK
	case qLen <= flashDecodeRows:
		bk = flashDecodeBlockK
	default:
		bk = flashBlockK
	}
	return max(1, min(bq, qLen)), max(1, min(bk, kLen))
}

// flashScratch holds the per-worker buffers of the kernels and the
// accumulators of a learned bias's gradient. Buffers grow as needed and are
// reused.
type flashScratch[T float] struct {
	work []*flashWork[T]
	accs [][]T
}

// flashWork is one worker's scratch: score and probability-gradient tiles,
// the running row maxima and sums of the forward pass, and the row terms
// D_i = dO_i . O_i of the backward pass.
type flashWork[T float] struct {
	s, dp, m, d []T
	l           []float64
}

// flashScratchFrom returns the scratch kept in *cache (or a new one when
// cache is nil), with one flashWork per worker.
func flashScratchFrom[T float](cache *any) *flashScratch[T] {
	var fs *flashScratch[T]
	if cache != nil {
		fs, _ = (*cache).(*flashScratch[T])
	}
	if fs == nil {
		fs = &flashScratch[T]{}
		if cache != nil {
			*cache = fs
		}
	}
	if w := workers(); len(fs.work) != w {
		fs.work = make([]*flashWork[T], w)
		for i := range fs.work {
			fs.work[i] = &flashWork[T]{}
		}
	}
	return fs
}

// resize returns s with length n, reusing its storage when large enough.
func resize[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	return s[:n]
}

// maxKLen returns the largest number of keys of any sequence.
func maxKLen[T float](seqs []flashSeq[T], qLen int) int {
	k := 0
	for _, s := range seqs {
		k = max(k, s.offset+qLen)
	}
	return k
}

// flashForward computes causal attention O = softmax(scale Q K^T + bias) V
// for every sequence of seqs and every head, with bias nil for none, and
// stores in lse[(s*heads+h)*qLen+i] the log-sum-exp of the biased scores of
// query row i of sequence s and head h (len(lse) >= len(seqs)*heads*qLen),
// which flashBackward needs; lse may be nil when no backward pass follows
// (evaluation, generation). A row whose exponentials all vanish (possible
// only with a -Inf bias) gets O = 0 and lse = +Inf.
//
// A unit of work is (sequence, head, query tile); units run in parallel over
// the workers. Each walks the key tiles up to its last query's position
// with an online softmax: per row, the running maximum m and sum l of
// exp(S - m), and the output accumulated in o itself, rescaled by
// exp(m_old - m_new) whenever the maximum grows; at the end O = o / l and
// lse = m + log l.
func flashForward[T float](seqs []flashSeq[T], qLen, heads, dHead int, scale T, bias KernelBias[T], lse []T, opt flashOpts) {
	if len(seqs) == 0 || qLen == 0 {
		return
	}
	if n := len(seqs) * heads * qLen; lse != nil && len(lse) < n {
		panic(fmt.Sprintf("layers: flashForward needs %d lse entries, got %d", n, len(lse)))
	}
	bq, bk := flashTiles(qLen, maxKLen(seqs, qLen), opt)
	qTiles := ceilDiv(qLen, bq)
	fs := flashScratchFrom[T](opt.scratch)
	for _, w := range fs.work {
		w.s, w.m, w.l = resize(w.s, bq*bk), resize(w.m, bq), resize(w.l, bq)
	}
	call := flashForwardCall[T]{seqs: seqs, qLen: qLen, heads: heads, dHead: dHead, qTiles: qTiles, bq: bq, bk: bk,
		scale: scale, bias: bias, lse: lse, work: fs.work}
	units := len(seqs) * heads * qTiles
	if flashForwardWork(seqs, qLen, heads, dHead) < flashSerialWork {
		call.units(0, 0, units) // on the calling goroutine, without a closure to allocate
		return
	}
	shared := call
	parallelWorkers(units, 1, func(wk, _, lo, hi int) { shared.units(wk, lo, hi) })
}

// flashForwardCall holds what the units of work of a flashForward call
// share.
type flashForwardCall[T float] struct {
	seqs                               []flashSeq[T]
	qLen, heads, dHead, qTiles, bq, bk int
	scale                              T
	bias                               KernelBias[T]
	lse                                []T
	work                               []*flashWork[T]
}

// units runs units lo..hi-1, (sequence, head, query tile) in row-major
// order, with worker wk's scratch.
func (c *flashForwardCall[T]) units(wk, lo, hi int) {
	perSeq := c.heads * c.qTiles
	for u := lo; u < hi; u++ {
		s, h, qt := u/perSeq, u%perSeq/c.qTiles, u%c.qTiles
		i0 := qt * c.bq
		t := flashHead[T]{seq: c.seqs[s], h: h, dHead: c.dHead, scale: c.scale, bias: c.bias}
		if c.lse != nil {
			t.lse = c.lse[(s*c.heads+h)*c.qLen:][:c.qLen]
		}
		t.forward(i0, min(c.qLen, i0+c.bq), c.bk, c.work[wk])
	}
}

// flashSerialWork is the number of multiply-adds below which flashForward
// runs on the calling goroutine: waking another core costs more than it
// saves on smaller calls (measured with model's BenchmarkDecode on a
// loaded machine: one generated token of the tiny model is 256 multiply-adds
// per layer and key, so up to 4K of context runs on one core).
var flashSerialWork = 1 << 20

// flashForwardWork is the number of multiply-adds of a flashForward call,
// the scores and the output of every visible (query, key) pair, with
// causal masking ignored.
func flashForwardWork[T float](seqs []flashSeq[T], qLen, heads, dHead int) int {
	n := 0
	for _, s := range seqs {
		n += qLen * (s.offset + qLen)
	}
	return 2 * n * heads * dHead
}

// flashHead is one (sequence, head) of a kernel call: the data the tile
// loops of both passes share.
type flashHead[T float] struct {
	seq   flashSeq[T]
	h     int
	dHead int
	scale T
	bias  KernelBias[T]
	lse   []T // the head's qLen log-sum-exp values
}

// col is the first column of the head in every row.
func (t *flashHead[T]) col() int { return t.h * t.dHead }

// scores sets s (nr x kn, row stride ld) to scale Q K^T for query rows
// i0..i0+nr-1 and keys j0..j0+kn-1.
func (t *flashHead[T]) scores(s []T, ld, i0, nr, j0, kn int) {
	c, sq := t.col(), t.seq
	gemm(false, true, nr, kn, t.dHead, t.scale, sq.q[i0*sq.ldq+c:], sq.ldq, sq.k[sq.kAt(j0, t.h, t.dHead):], sq.ldk, 0, s, ld)
}

// addPV adds P V to output rows i0..i0+nr-1, P being nr x kn (row stride
// ld) and V the values of keys j0..j0+kn-1.
func (t *flashHead[T]) addPV(p []T, ld, i0, nr, j0, kn int) {
	c, sq := t.col(), t.seq
	gemm(false, false, nr, t.dHead, kn, 1, p, ld, sq.v[sq.vAt(j0, t.h, t.dHead):], sq.ldv, 1, sq.o[i0*sq.ldo+c:], sq.ldo)
}

// visible returns how many keys from j0 on the query at position pos sees,
// at most kn.
func visible(pos, j0, kn int) int { return min(kn, pos-j0+1) }

// forward computes output rows i0..i1-1 of the head and their lse. It walks
// the key tiles from the diagonal back to key 0: with ALiBi the nearest
// keys carry the smallest penalties, so the running maximum is usually found
// in the first tile and later tiles need no rescaling.
func (t *flashHead[T]) forward(i0, i1, bk int, w *flashWork[T]) {
	sq, c := t.seq, t.col()
	m, l := w.m[:i1-i0], w.l[:i1-i0]
	for i := i0; i < i1; i++ {
		m[i-i0], l[i-i0] = T(math.Inf(-1)), 0
		clear(sq.o[i*sq.ldo+c:][:t.dHead])
	}
	last := sq.offset + i1 - 1 // position of the last query
	for j0 := last / bk * bk; j0 >= 0; j0 -= bk {
		kn := min(bk, last-j0+1)
		r0 := max(i0, j0-sq.offset) // first row that sees key j0
		nr := i1 - r0
		s := w.s[:nr*bk]
		t.scores(s, bk, r0, nr, j0, kn)
		for r := 0; r < nr; r++ {
			i := r0 + r
			pos := sq.offset + i
			row := s[r*bk : r*bk+kn]
			alpha := t.softmaxStep(row, visible(pos, j0, kn), pos, j0, &m[i-i0], &l[i-i0])
			if alpha != 1 {
				scaleRow(sq.o[i*sq.ldo+c:][:t.dHead], alpha)
			}
		}
		t.addPV(s, bk, r0, nr, j0, kn)
	}
	for i := i0; i < i1; i++ {
		o := sq.o[i*sq.ldo+c:][:t.dHead]
		mi, li := m[i-i0], l[i-i0]
		if li > 0 {
			scaleRow(o, T(1/li))
		} else {
			clear(o)
		}
		if t.lse != nil {
			t.lse[i] = rowLSE(mi, li)
		}
	}
}

// rowLSE returns m + log(l), the log-sum-exp of a row from its maximum m
// and sum l of exp(S - m), or +Inf when l = 0 (nothing has weight).
func rowLSE[T float](m T, l float64) T {
	if l > 0 {
		return T(float64(m) + math.Log(l))
	}
	return T(math.Inf(1))
}

// softmaxStep turns row (the scores of one query on a key tile, of which the
// first n are visible) into the unnormalised probabilities exp(S - m_new)
// (zero for the invisible keys), where m_new is the new running maximum of
// the row's biased scores; it updates the running maximum *m and sum *l and
// returns the factor exp(m_old - m_new) by which the row's output
// accumulated so far must be rescaled (exactly 1 when the maximum stays).
func (t *flashHead[T]) softmaxStep(row []T, n, pos, j0 int, m *T, l *float64) T {
	if t.bias != nil {
		t.bias.Add(t.h, pos, j0, row[:n])
	}
	vis := row[:padInvisible(row, n)]
	mNew := max(*m, rowMax(vis))
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
	return T(alpha)
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

// flashBackward computes the gradients of causal attention from the output
// gradient, recomputing the probabilities P = exp(scale Q K^T + bias - lse)
// tile by tile from the lse saved by flashForward (FlashAttention-2): with
// D_i = dO_i . O_i,
//
//	dV = P^T dO,  dP = dO V^T,  dS = P * (dP - D),
//	dQ = scale dS K,  dK = scale dS^T Q.
//
// seqs, qLen, heads, dHead, scale and bias must be those of the forward
// call, with o holding its output; grads[s] gives sequence s's output
// gradient and receives its input gradients: the head columns of dq, dk and
// dv are overwritten (other columns are not touched).
//
// When biasGrad is not nil, bias must be a learnedBias and biasGrad (of
// length bias.GradLen()) is overwritten with the gradient of the loss with
// respect to the bias entries, summed over sequences and heads. Each fixed
// chunk of units accumulates into its own buffer and the chunks are added in
// order, so the result is bit-identical from run to run whatever the
// scheduling or number of workers.
//
// A unit of work is (sequence, head): one worker owns its dq, dk and dv.
func flashBackward[T float](seqs []flashSeq[T], grads []flashGradSeq[T], qLen, heads, dHead int, scale T, bias KernelBias[T], lse, biasGrad []T, opt flashOpts) {
	if len(grads) != len(seqs) {
		panic(fmt.Sprintf("layers: flashBackward got %d sequences and %d gradients", len(seqs), len(grads)))
	}
	var lb TrainableBias[T]
	if biasGrad != nil {
		var ok bool
		if lb, ok = bias.(TrainableBias[T]); !ok {
			panic(fmt.Sprintf("layers: flashBackward: bias %T has no gradient", bias))
		}
		if len(biasGrad) != lb.GradLen() {
			panic(fmt.Sprintf("layers: flashBackward: bias gradient has %d elements, want %d", len(biasGrad), lb.GradLen()))
		}
		clear(biasGrad)
	}
	if len(seqs) == 0 || qLen == 0 {
		return
	}
	bq, bk := flashTiles(qLen, maxKLen(seqs, qLen), opt)
	fs := flashScratchFrom[T](opt.scratch)
	for _, w := range fs.work {
		w.s, w.dp, w.d = resize(w.s, bq*bk), resize(w.dp, bq*bk), resize(w.d, qLen)
	}
	units := len(seqs) * heads
	minChunk := 1
	if lb != nil {
		minChunk = ceilDiv(units, biasAccumulators(lb.GradLen()))
		fs.accs = resize(fs.accs, parallel.NumChunks(units, minChunk))
		for c := 1; c < len(fs.accs); c++ {
			fs.accs[c] = resize(fs.accs[c], len(biasGrad))
			clear(fs.accs[c])
		}
	}
	parallelWorkers(units, minChunk, func(wk, chunk, lo, hi int) {
		var acc []T
		if lb != nil {
			acc = biasGrad
			if chunk > 0 {
				acc = fs.accs[chunk]
			}
		}
		for u := lo; u < hi; u++ {
			s, h := u/heads, u%heads
			t := flashHead[T]{seq: seqs[s], h: h, dHead: dHead, scale: scale, bias: bias,
				lse: lse[(s*heads+h)*qLen:][:qLen]}
			t.backward(grads[s], qLen, bq, bk, lb, acc, fs.work[wk])
		}
	})
	if lb != nil {
		for _, acc := range fs.accs[1:] {
			addTo(biasGrad, acc)
		}
	}
}

// biasGradBudget bounds the elements of all bias-gradient accumulators of a
// backward call (16 MiB of float32), beyond the minimum of two.
const biasGradBudget = 1 << 22

// biasAccumulators returns how many chunks (and so accumulators of gradLen
// elements) the backward pass may use: as many as the budget allows, at
// least 2 so that two cores share the work, at most maxChunks. It depends
// only on gradLen, which keeps the summation order fixed.
func biasAccumulators(gradLen int) int {
	return min(parallel.MaxChunks, max(2, biasGradBudget/max(1, gradLen)))
}

// backward computes the gradients of one (sequence, head), walking key
// tiles and, for each, the query tiles that see them.
func (t *flashHead[T]) backward(g flashGradSeq[T], qLen, bq, bk int, lb TrainableBias[T], acc []T, w *flashWork[T]) {
	sq, c, dh := t.seq, t.col(), t.dHead
	kLen := sq.offset + qLen
	for i := 0; i < qLen; i++ {
		clear(g.dq[i*g.lddq+c:][:dh])
		w.d[i] = dot(g.do[i*g.lddo+c:][:dh], sq.o[i*sq.ldo+c:][:dh])
	}
	for j := 0; j < kLen; j++ {
		clear(g.dk[j*g.lddk+c:][:dh])
		clear(g.dv[j*g.lddv+c:][:dh])
	}
	for j0 := 0; j0 < kLen; j0 += bk {
		for i0 := max(0, j0-sq.offset); i0 < qLen; i0 += bq {
			i1 := min(qLen, i0+bq)
			kn := min(bk, kLen-j0, sq.offset+i1-j0) // keys seen by the last row
			t.backwardBlock(g, i0, i1, j0, kn, bk, lb, acc, w)
		}
	}
}

// backwardBlock adds the contributions of query rows i0..i1-1 (all of which
// see key j0) and keys j0..j0+kn-1 to dq, dk, dv and the bias gradient.
func (t *flashHead[T]) backwardBlock(g flashGradSeq[T], i0, i1, j0, kn, ld int, lb TrainableBias[T], acc []T, w *flashWork[T]) {
	sq, c, dh := t.seq, t.col(), t.dHead
	nr := i1 - i0
	p, dp := w.s[:nr*ld], w.dp[:nr*ld]
	t.scores(p, ld, i0, nr, j0, kn)
	for r := 0; r < nr; r++ {
		pos := sq.offset + i0 + r
		row := p[r*ld : r*ld+kn]
		n := visible(pos, j0, kn)
		if t.bias != nil {
			t.bias.Add(t.h, pos, j0, row[:n])
		}
		expShift(row[:padInvisible(row, n)], t.lse[i0+r])
	}
	do := g.do[i0*g.lddo+c:]
	gemm(true, false, kn, dh, nr, 1, p, ld, do, g.lddo, 1, g.dv[j0*g.lddv+c:], g.lddv)
	gemm(false, true, nr, kn, dh, 1, do, g.lddo, sq.v[sq.vAt(j0, t.h, dh):], sq.ldv, 0, dp, ld)
	for r := 0; r < nr; r++ {
		pos := sq.offset + i0 + r
		n := visible(pos, j0, kn)
		ds := p[r*ld : r*ld+n]
		softmaxGrad(ds, dp[r*ld:r*ld+n], w.d[i0+r])
		if lb != nil {
			lb.Accumulate(acc, t.h, pos, j0, ds)
		}
	}
	gemm(false, false, nr, dh, kn, t.scale, p, ld, sq.k[sq.kAt(j0, t.h, dh):], sq.ldk, 1, g.dq[i0*g.lddq+c:], g.lddq)
	gemm(true, false, kn, dh, nr, t.scale, p, ld, sq.q[i0*sq.ldq+c:], sq.ldq, 1, g.dk[j0*g.lddk+c:], g.lddk)
}

// softmaxGrad sets p[j] = p[j] * (dp[j] - d): the gradient of the scores
// from the probabilities p, their gradient dp and d = sum_j p[j]*dp[j].
func softmaxGrad[T float](p, dp []T, d T) {
	dp = dp[:len(p)]
	for j := range p {
		p[j] *= dp[j] - d
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Row kernels: float32 with the vmath kernels, float64 in plain Go.

// addTo sets dst[i] += src[i] (for float32 with vmath.AddMax, whose
// maximum is not needed).
func addTo[T float](dst, src []T) {
	if d, ok := any(dst).([]float32); ok {
		vmath.AddMax(d, any(src).([]float32))
		return
	}
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}

// rowMax returns the maximum of x (-Inf if empty).
func rowMax[T float](x []T) T {
	if x32, ok := any(x).([]float32); ok {
		return T(vmath.Max(x32))
	}
	m := T(math.Inf(-1))
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

// expShiftSum sets x[i] = exp(x[i] - shift) and returns the sum of the
// results (accumulated in float64).
func expShiftSum[T float](x []T, shift T) float64 {
	if x32, ok := any(x).([]float32); ok {
		return float64(vmath.ExpSubSum(x32, float32(shift)))
	}
	var sum float64
	for i, v := range x {
		e := math.Exp(float64(v - shift))
		x[i] = T(e)
		sum += e
	}
	return sum
}

// expShift sets x[i] = exp(x[i] - shift).
func expShift[T float](x []T, shift T) {
	if x32, ok := any(x).([]float32); ok {
		vmath.ExpSubSum(x32, float32(shift))
		return
	}
	for i, v := range x {
		x[i] = T(math.Exp(float64(v - shift)))
	}
}

// scaleRow sets x[i] *= s.
func scaleRow[T float](x []T, s T) {
	if x32, ok := any(x).([]float32); ok {
		vmath.Scale(x32, float32(s))
		return
	}
	for i := range x {
		x[i] *= s
	}
}

// dot returns sum_i a[i]*b[i], with four partial sums so that the
// additions do not wait on each other.
func dot[T float](a, b []T) T {
	b = b[:len(a)]
	var s0, s1, s2, s3 T
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}
