package flash

import (
	"fmt"

	"github.com/alibi-go/alibi/layers/internal/vmath"
	"github.com/alibi-go/alibi/layers/parallel"
)

// Backward computes the gradients of causal attention from the output
// gradient, recomputing the probabilities P = exp(scale Q K^T + bias - lse)
// tile by tile from the lse saved by Forward (FlashAttention-2): with
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
// When biasGrad is not nil, bias must be a TrainableBias and biasGrad (of
// length bias.GradLen()) is overwritten with the gradient of the loss with
// respect to the bias entries, summed over sequences and heads. Each fixed
// chunk of units accumulates into its own buffer and the chunks are added in
// order, so the result is bit-identical from run to run whatever the
// scheduling or number of workers.
//
// A unit of work is (sequence, head): one worker owns its dq, dk and dv.
func Backward[T float](seqs []Seq[T], grads []GradSeq[T], qLen, heads, dHead int, scale T, bias Bias[T], lse, biasGrad []T, opt Opts) {
	if len(grads) != len(seqs) {
		panic(fmt.Sprintf("flash: Backward got %d sequences and %d gradients", len(seqs), len(grads)))
	}
	var lb TrainableBias[T]
	if biasGrad != nil {
		var ok bool
		if lb, ok = bias.(TrainableBias[T]); !ok {
			panic(fmt.Sprintf("flash: Backward: bias %T has no gradient", bias))
		}
		if len(biasGrad) != lb.GradLen() {
			panic(fmt.Sprintf("flash: Backward: bias gradient has %d elements, want %d", len(biasGrad), lb.GradLen()))
		}
		clear(biasGrad)
	}
	if len(seqs) == 0 || qLen == 0 {
		return
	}
	bq, bk := Tiles(qLen, MaxKLen(seqs, qLen), opt)
	fs := scratchFrom[T](opt.Scratch)
	for _, w := range fs.work {
		w.s, w.dp, w.d = resize(w.s, bq*scoreStride(bk)), resize(w.dp, bq*scoreStride(bk)), resize(w.d, qLen)
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
	unit := func(wk, u int, acc []T) {
		s, h := u/heads, u%heads
		t := head[T]{seq: seqs[s], h: h, dHead: dHead, scale: scale, bias: bias,
			lse: lse[(s*heads+h)*qLen:][:qLen], whole: opt.WholeBlocks}
		if t.seq.C == nil {
			t.expBias, _ = bias.(ExpBias[T])
		}
		t.backward(grads[s], qLen, bq, bk, lb, acc, fs.work[wk])
	}
	if lb == nil {
		// One unit a task, as in Forward: without a bias gradient the
		// units share nothing that their order could change.
		parallel.RunShares(min(parallel.Workers(), units), units, func(wk, u int) { unit(wk, u, nil) })
	} else {
		parallel.ChunksOnWorkers(units, minChunk, func(wk, chunk, lo, hi int) {
			acc := biasGrad
			if chunk > 0 {
				acc = fs.accs[chunk]
			}
			for u := lo; u < hi; u++ {
				unit(wk, u, acc)
			}
		})
	}
	for _, w := range fs.work {
		w.kRows = nil // may be a view of this call's keys
	}
	if lb != nil {
		for _, acc := range fs.accs[1:] {
			vmath.AddTo(biasGrad, acc)
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
//
// The gradients are not cleared first: the first key tile's products
// overwrite dq (every query row sees key 0), and in each key tile, each
// query tile's products overwrite the dk and dv rows of the keys that no
// earlier query tile saw. The sums are those of clearing everything first,
// whose additions to zero are exact.
func (t *head[T]) backward(g GradSeq[T], qLen, bq, bk int, lb TrainableBias[T], acc []T, w *workerBuffers[T]) {
	sq, c, dh := t.seq, t.col(), t.dHead
	kLen := sq.Offset + qLen
	vmath.Dot4Rows(w.d[:qLen], g.DO[c:], g.LdDO, sq.O[c:], sq.LdO, dh)
	if g.DC != nil {
		for j := 0; j < kLen; j++ {
			g.DC[j*g.LdDC+t.h] = 0
		}
	}
	for j0 := 0; j0 < kLen; j0 += bk {
		kAll := min(bk, kLen-j0) // keys of the tile seen by the last query tile
		w.kT.pack(dh, kAll, sq.K[sq.KAt(j0, t.h, dh):], sq.LdK)
		w.vT.pack(dh, kAll, sq.V[sq.VAt(j0, t.h, dh):], sq.LdV)
		w.kRows, w.ldKRows = contiguousRows(&w.kc, sq.K[sq.KAt(j0, t.h, dh):], sq.LdK, kAll, dh)
		seen := 0 // keys j0..j0+seen-1 hold gradients already
		for i0 := max(0, j0-sq.Offset); i0 < qLen; i0 += bq {
			i1 := min(qLen, i0+bq)
			kn := min(bk, kLen-j0, sq.Offset+i1-j0) // keys seen by the last row
			t.backwardBlock(g, i0, i1, j0, kn, scoreStride(bk), j0 == 0, seen, lb, acc, w)
			seen = kn
		}
	}
}

// backwardBlock adds the contributions of query rows i0..i1-1 (all of which
// see key j0) and keys j0..j0+kn-1 to dq, dk, dv and the bias gradient;
// newQ makes it overwrite the block's dq rows instead, and it overwrites
// the dk and dv rows of the keys from j0+seen on. A block that crosses the
// diagonal is cut into bands of rows (see band): the products of rows
// cover the keys their band sees, those of keys the rows that see them.
func (t *head[T]) backwardBlock(g GradSeq[T], i0, i1, j0, kn, ld int, newQ bool, seen int, lb TrainableBias[T], acc []T, w *workerBuffers[T]) {
	sq, c, dh := t.seq, t.col(), t.dHead
	p, dp := w.s[:(i1-i0)*ld], w.dp[:(i1-i0)*ld]
	q, ldq := contiguousRows(&w.qc, sq.Q[i0*sq.LdQ+c:], sq.LdQ, i1-i0, dh)
	do, lddo := contiguousRows(&w.doc, g.DO[i0*g.LdDO+c:], g.LdDO, i1-i0, dh)
	for a := i0; a < i1; { // P, band by band
		e, kb := t.band(a, i1, j0, kn, false)
		pa := p[(a-i0)*ld:]
		gemmT(e-a, kb, t.scale, q[(a-i0)*ldq:], ldq, &w.kT, 0, pa, ld) // the scores, as t.scores
		for i := a; i < e; i++ {
			pos := sq.Offset + i
			row := pa[(i-a)*ld:][:kb]
			n := visible(pos, j0, kb)
			if t.expBias != nil {
				t.expBias.AddExpShift(t.h, pos, j0, row[:padInvisible(row, n)], n, t.lse[i])
				continue
			}
			t.addBias(row[:n], pos, j0)
			vmath.ExpSubOf(row[:padInvisible(row, n)], t.lse[i]) // expShiftSum's bits, without the sum
		}
		clearKeys(pa, ld, e-a, kb, keySpan(kb, kn))
		a = e
	}
	t.keysAT(i0, i1, j0, kn, seen, 1, p, ld, do, lddo, g.DV[j0*g.LdDV+c:], g.LdDV) // dV = P^T dO
	betaQ := T(1)
	if newQ {
		betaQ = 0
	}
	for a := i0; a < i1; { // dP = dO V^T, dS and dQ, band by band
		e, kb := t.band(a, i1, j0, kn, false)
		pa, dpa := p[(a-i0)*ld:], dp[(a-i0)*ld:]
		gemmT(e-a, kb, 1, do[(a-i0)*lddo:], lddo, &w.vT, 0, dpa, ld)
		for i := a; i < e; i++ {
			pos := sq.Offset + i
			n := visible(pos, j0, kb)
			ds := pa[(i-a)*ld:][:n]
			softmaxGrad(ds, dpa[(i-a)*ld:][:n], w.d[i])
			if lb != nil {
				lb.Accumulate(acc, t.h, pos, j0, ds)
			}
			if g.DC != nil {
				// The bias C_i - C_j sends -dS_ij to C_j, and dS_ij to C_i
				// summed over the row, which is 0: a softmax row does not
				// change when a constant is added to all of it.
				for j, v := range ds {
					g.DC[(j0+j)*g.LdDC+t.h] -= v
				}
			}
		}
		Gemm(false, false, e-a, dh, keySpan(kb, kn), t.scale, pa, ld, w.kRows, w.ldKRows, betaQ, g.DQ[a*g.LdDQ+c:], g.LdDQ)
		a = e
	}
	t.keysAT(i0, i1, j0, kn, seen, t.scale, p, ld, q, ldq, g.DK[j0*g.LdDK+c:], g.LdDK) // dK = scale dS^T Q
}

// keysAT computes C = alpha A^T B for the kn x dHead matrix C of the keys
// of the block of query rows i0..i1-1 and keys j0..j0+kn-1, A being the
// block's P or dS (row stride lda) and B its rows of dO or Q: the keys of
// each band (see band) from the band's first row on, the rows before it
// seeing none of them. It adds to C's first seen rows and overwrites the
// others (keys no earlier block saw).
func (t *head[T]) keysAT(i0, i1, j0, kn, seen int, alpha T, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	k0 := 0 // keys 0..k0-1 done
	for r := i0; r < i1 && k0 < kn; {
		e, kb := t.band(r, i1, j0, kn, false)
		if kb > k0 {
			keysRowsAT(kb-k0, t.dHead, i1-r, max(0, seen-k0), alpha, a[(r-i0)*lda+k0:], lda, b[(r-i0)*ldb:], ldb, c[k0*ldc:], ldc)
			k0 = kb
		}
		r = e
	}
}

// keysRowsAT computes C = alpha A^T B for the m x n matrix C of keys, A
// being k x m (row stride lda) and B k x n: it adds to C's first seen rows
// and overwrites the others.
func keysRowsAT[T float](m, n, k, seen int, alpha T, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	if seen > 0 {
		Gemm(true, false, min(seen, m), n, k, alpha, a, lda, b, ldb, 1, c, ldc)
	}
	if m > seen {
		Gemm(true, false, m-seen, n, k, alpha, a[seen:], lda, b, ldb, 0, c[seen*ldc:], ldc)
	}
}

// softmaxGrad sets p[j] = p[j] * (dp[j] - d): the gradient of the scores
// from the probabilities p, their gradient dp and d = sum_j p[j]*dp[j].
// float32 runs vmath.SoftmaxGrad, which flushes subnormal results to zero
// (as the float32 products that read them do).
func softmaxGrad[T float](p, dp []T, d T) {
	if p32, ok := any(p).([]float32); ok {
		vmath.SoftmaxGrad(p32, any(dp).([]float32)[:len(p)], float32(d))
		return
	}
	dp = dp[:len(p)]
	for j := range p {
		p[j] *= dp[j] - d
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// contiguousRows returns the n rows of dh elements at src (row stride ld)
// as the backward pass's products read them, with their row stride: src
// itself, unless ld is a multiple of 256 elements, in which case a copy in
// *buf (row stride dh). The products read a head's dh columns of many rows
// (the keys in dQ = dS K, the queries in dK = dS^T Q, the output gradients
// in dV = P^T dO): rows a multiple of 1 KiB apart share a few sets of the L1
// cache (see scoreStride), as in the small model, whose queries, keys and
// values are rows of 768 floats and whose output gradients rows of 256.
// Measured on an Intel Xeon (family 6, model 207), backward pass alone, 31
// alternating pairs each: 4 x 512 tokens in 8 heads of 32, 1.023x faster
// (26 of 31, twice); 1024 tokens, 1.037-1.039x (28 and 29 of 31). Copying
// at every stride is slower: 3.5% at the tiny model's rows of 384 and 128
// floats. The arithmetic is the same.
func contiguousRows[T float](buf *[]T, src []T, ld, n, dh int) ([]T, int) {
	if !fewL1Sets(ld) {
		return src, ld
	}
	*buf = resize(*buf, n*dh)
	for r := range n {
		copy((*buf)[r*dh:(r+1)*dh], src[r*ld:r*ld+dh])
	}
	return *buf, dh
}
