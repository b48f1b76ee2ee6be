package flash

import (
	"fmt"
	"math"

	"github.com/alibi-go/alibi/layers/internal/vmath"
	"github.com/alibi-go/alibi/layers/parallel"
)

// Stick-breaking attention (Tan et al., ICLR 2025): no softmax and no
// position encoding. With z_ij = scale q_i . k_j for the keys j < i (the
// query's own key excluded, as the reference's default), each key takes
// beta_ij = sigmoid(z_ij) of what the nearer keys left:
//
//	A_ij = beta_ij prod_{j<k<i} (1 - beta_ik),   O_i = sum_j A_ij v_j + R_i b,
//
// where R_i = 1 - sum_j A_ij = prod_{j<i} (1 - beta_ij) is what the keys
// leave and b (one vector of dHead per head) the value it takes, as the
// reference model adds its per-head bias times the remainder. In log space,
// with softplus(z) = ln(1 + e^z) and ln sigmoid(z) = z - softplus(z),
//
//	ln A_ij = z_ij - sum_{k=j}^{i-1} softplus(z_ik),   ln R_i = -sum_{k<i} softplus(z_ik),
//
// so each row walks its keys from the nearest to the farthest, keeping one
// running sum: the kernels below do that a tile of keys at a time, from the
// diagonal down, with no (T, T) array. The query at position 0 sees no key:
// its output is b.
//
// Backward, with g_i the output's gradient, P_ij = A_ij (g_i . v_j) and
// D_i = g_i . O_i:
//
//	dz_ik = P_ik - sigmoid(z_ik) (D_i - sum_{k<j<i} P_ij),
//
// (the sum over the keys j <= k of P_ij, plus R_i g_i . b, is D_i less the
// keys nearer than k), again one running sum per row from the nearest key.

// sbTile is the number of keys, and of queries, of one tile of the
// stick-breaking kernels.
const sbTile = 64

// softplusSigmoid returns softplus(z) = ln(1 + e^z) and sigmoid(z), from one
// exponential, without overflow.
func softplusSigmoid(z float64) (sp, sig float64) {
	e := math.Exp(-math.Abs(z))
	sp = math.Log1p(e)
	if z > 0 {
		return sp + z, 1 / (1 + e)
	}
	return sp, e / (1 + e)
}

// SBForward computes stick-breaking attention (see above) for every
// sequence of seqs and head: O = A V + R b, b being rem[h*dHead:(h+1)*dHead]
// for head h. The queries at positions Offset+i see the keys at positions
// before theirs. Units of work, (sequence, head, query tile), write rows of
// their own and run in parallel, so the bits do not depend on the cores.
//
// stats, when not nil, gains the statistics of the rows (see Stats) with
// p_j = A_ij, the weights as they are: the remainder's share is on no key,
// so it adds no distance and no entropy, and the shares on the keys sum to
// 1 - R_i. A row without
// keys (the query at position 0) counts as no query.
func SBForward[T float](seqs []Seq[T], qLen, heads, dHead int, scale T, rem []T, stats *Stats) {
	if len(seqs) == 0 || qLen == 0 {
		return
	}
	if len(rem) < heads*dHead {
		panic(fmt.Sprintf("flash: SBForward needs %d remainder values, got %d", heads*dHead, len(rem)))
	}
	qTiles := ceilDiv(qLen, sbTile)
	units := len(seqs) * heads * qTiles
	workers := min(parallel.Workers(), units)
	if forwardWork(seqs, qLen, heads, dHead) < SerialWork {
		workers = 1
	}
	bufs := make([]sbBuffers[T], workers)
	var parts []partial
	if stats != nil {
		parts = make([]partial, units)
	}
	run := func(wk, u int) {
		s, h, qt := u/(heads*qTiles), u/qTiles%heads, u%qTiles
		i0 := qt * sbTile
		t := sbHead[T]{seq: &seqs[s], h: h, dHead: dHead, scale: scale}
		if parts != nil {
			t.part, t.far = &parts[u], stats.Far
		}
		t.forward(i0, min(qLen, i0+sbTile), rem[h*dHead:(h+1)*dHead], &bufs[wk])
	}
	if workers == 1 {
		for u := range units {
			run(0, u)
		}
	} else {
		parallel.RunShares(workers, units, run)
	}
	for u, p := range parts { // in unit order, whichever worker ran it
		stats.add(u/qTiles%heads, p)
	}
}

// SBBackward computes the gradients of stick-breaking attention (see
// above) from the forward pass's inputs and output (seqs, O included) and
// the output's gradient: DQ, DK and DV of every sequence, and dRem
// (heads*dHead), the gradient of rem, overwritten. A unit of work is one
// (sequence, head), which accumulates its keys' gradients over its query
// tiles; dRem is summed over the sequences in order, so the bits do not
// depend on the cores.
func SBBackward[T float](seqs []Seq[T], grads []GradSeq[T], qLen, heads, dHead int, scale T, rem, dRem []T) {
	clear(dRem[:heads*dHead])
	if len(seqs) == 0 || qLen == 0 {
		return
	}
	units := len(seqs) * heads
	parts := make([]T, units*dHead)
	bufs := make([]sbBuffers[T], min(parallel.Workers(), units))
	parallel.RunShares(len(bufs), units, func(wk, u int) {
		s, h := u/heads, u%heads
		t := sbHead[T]{seq: &seqs[s], h: h, dHead: dHead, scale: scale}
		t.backward(&grads[s], qLen, rem[h*dHead:(h+1)*dHead], parts[u*dHead:(u+1)*dHead], &bufs[wk])
	})
	for u := range units {
		h := u % heads
		for c, v := range parts[u*dHead : (u+1)*dHead] {
			dRem[h*dHead+c] += v
		}
	}
}

// sbBuffers is one worker's scratch: two tiles and per-row sums.
type sbBuffers[T float] struct {
	s, g    []T       // sbTile x sbTile: scores, then weights; g . v, then dz
	c, e, d []float64 // per row: sum of softplus, sum of P, D
	sig     []T       // one row's sigmoids
	x32     []float32 // one row's exponentials (float32)
	x64     []float64 // one row's ln(1 + e^-|z|)
}

func (b *sbBuffers[T]) size() {
	b.s, b.g = resize(b.s, sbTile*sbTile), resize(b.g, sbTile*sbTile)
	b.c, b.e, b.d = resize(b.c, sbTile), resize(b.e, sbTile), resize(b.d, sbTile)
	b.sig, b.x32, b.x64 = resize(b.sig, sbTile), resize(b.x32, sbTile), resize(b.x64, sbTile)
}

// weights turns the scores z of one row's keys, row[:n] (the rest of the
// row is set to 0), into their weights, from the nearest key (the last) to
// the farthest, given the sum of softplus of the nearer keys' scores, and
// returns the sum with these keys'. With sig, it also sets sig[k] to
// sigmoid(z_k). float32 takes vmath's exponentials (float32) and
// Log1pUnit, with the running sum in float64; float64 the math package,
// element by element.
func (b *sbBuffers[T]) weights(row []T, n int, sum float64, sig bool) float64 {
	n = max(n, 0)
	clear(row[n:])
	if r32, ok := any(row).([]float32); ok {
		e, l := b.x32[:n], b.x64[:n]
		for k, z := range r32[:n] {
			e[k] = -abs32(z)
		}
		vmath.Exp(e, e)
		for k, x := range e {
			l[k] = vmath.Log1pUnit(float64(x))
		}
		if sig {
			s := any(b.sig).([]float32)
			for k, z := range r32[:n] {
				s[k] = 1 / (1 + e[k])
				if z <= 0 {
					s[k] = e[k] / (1 + e[k])
				}
			}
		}
		for k := n - 1; k >= 0; k-- {
			z := float64(r32[k])
			sum += l[k] + max(z, 0)
			r32[k] = float32(z - sum)
		}
		vmath.Exp(r32[:n], r32[:n])
		return sum
	}
	for k := n - 1; k >= 0; k-- {
		z := float64(row[k])
		sp, sg := softplusSigmoid(z)
		sum += sp
		row[k] = T(math.Exp(z - sum))
		if sig {
			b.sig[k] = T(sg)
		}
	}
	return sum
}

// sbStats adds a row's weights a of keys at distances d0, d0-1, ... to its
// statistics (see Stats): sum of a d, of -a ln a, and of a for d >= far.
func sbStats[T float](r *rowStats, a []T, d0, far int) {
	for k, x := range a {
		if x == 0 {
			continue
		}
		ak, d := float64(x), d0-k
		r.es -= ak * math.Log(ak)
		r.ed += ak * float64(d)
		if d >= far {
			r.ef += ak
		}
	}
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

// sbHead is one (sequence, head) of a stick-breaking kernel call.
type sbHead[T float] struct {
	seq   *Seq[T]
	h     int
	dHead int
	scale T
	part  *partial // the forward pass's statistics of the unit, or nil
	far   int      // their threshold
}

// keyEnd returns the end of the keys that query rows up to i1-1 see: the
// last row's position (its own key excluded).
func (t sbHead[T]) keyEnd(i1 int) int { return t.seq.Offset + i1 - 1 }

// forward computes output rows i0..i1-1 of the head.
func (t sbHead[T]) forward(i0, i1 int, b []T, w *sbBuffers[T]) {
	w.size()
	sq, c, nr := t.seq, t.h*t.dHead, i1-i0
	var rs []rowStats
	if t.part != nil {
		rs = make([]rowStats, nr)
	}
	for r := range nr {
		clear(sq.O[(i0+r)*sq.LdO+c:][:t.dHead])
		w.c[r] = 0
	}
	q := sq.Q[i0*sq.LdQ+c:]
	end := t.keyEnd(i1)
	for j0 := (end - 1) / sbTile * sbTile; j0 >= 0 && end > 0; j0 -= sbTile {
		kn := min(sbTile, end-j0)
		Gemm(false, true, nr, kn, t.dHead, t.scale, q, sq.LdQ, sq.K[sq.KAt(j0, t.h, t.dHead):], sq.LdK, 0, w.s, sbTile)
		for r := range nr {
			row := w.s[r*sbTile:][:kn]
			pos := sq.Offset + i0 + r
			vis := min(kn, pos-j0) // keys j < pos
			w.c[r] = w.weights(row, vis, w.c[r], false)
			if rs != nil && pos >= t.far {
				sbStats(&rs[r], row[:max(vis, 0)], pos-j0, t.far)
			}
		}
		Gemm(false, false, nr, t.dHead, kn, 1, w.s, sbTile, sq.V[sq.VAt(j0, t.h, t.dHead):], sq.LdV, 1, sq.O[i0*sq.LdO+c:], sq.LdO)
	}
	for r := range nr {
		rr := T(math.Exp(-w.c[r]))
		o := sq.O[(i0+r)*sq.LdO+c:][:t.dHead]
		for k := range o {
			o[k] += rr * b[k]
		}
		if pos := sq.Offset + i0 + r; rs != nil && pos >= t.far && pos > 0 {
			t.part.entropy += rs[r].es
			t.part.distance += rs[r].ed
			t.part.farMass += rs[r].ef
			t.part.queries++
		}
	}
}

// backward computes the head's gradients: its columns of DQ for every query
// row, of DK and DV for every key, and dRem, its share of the gradient of
// b.
func (t sbHead[T]) backward(g *GradSeq[T], qLen int, b, dRem []T, w *sbBuffers[T]) {
	w.size()
	sq, c := t.seq, t.h*t.dHead
	for j := range sq.Offset + qLen {
		clear(g.DK[j*g.LdDK+c:][:t.dHead])
		clear(g.DV[j*g.LdDV+c:][:t.dHead])
	}
	for i0 := 0; i0 < qLen; i0 += sbTile {
		i1 := min(qLen, i0+sbTile)
		nr := i1 - i0
		for r := range nr {
			clear(g.DQ[(i0+r)*g.LdDQ+c:][:t.dHead])
			w.c[r], w.e[r] = 0, 0
			do, o := g.DO[(i0+r)*g.LdDO+c:][:t.dHead], sq.O[(i0+r)*sq.LdO+c:][:t.dHead]
			d := 0.0
			for k := range do {
				d += float64(do[k]) * float64(o[k])
			}
			w.d[r] = d
		}
		q, do := sq.Q[i0*sq.LdQ+c:], g.DO[i0*g.LdDO+c:]
		end := t.keyEnd(i1)
		for j0 := (end - 1) / sbTile * sbTile; j0 >= 0 && end > 0; j0 -= sbTile {
			kn := min(sbTile, end-j0)
			k, v := sq.K[sq.KAt(j0, t.h, t.dHead):], sq.V[sq.VAt(j0, t.h, t.dHead):]
			Gemm(false, true, nr, kn, t.dHead, t.scale, q, sq.LdQ, k, sq.LdK, 0, w.s, sbTile)
			Gemm(false, true, nr, kn, t.dHead, 1, do, g.LdDO, v, sq.LdV, 0, w.g, sbTile)
			for r := range nr {
				a, gz := w.s[r*sbTile:][:kn], w.g[r*sbTile:][:kn]
				vis := min(kn, sq.Offset+i0+r-j0)
				w.c[r] = w.weights(a, vis, w.c[r], true)
				e, d := w.e[r], w.d[r]
				for k := vis - 1; k >= 0; k-- {
					p := float64(a[k]) * float64(gz[k])
					gz[k] = T(p - float64(w.sig[k])*(d-e))
					e += p
				}
				clear(gz[max(vis, 0):])
				w.e[r] = e
			}
			Gemm(false, false, nr, t.dHead, kn, t.scale, w.g, sbTile, k, sq.LdK, 1, g.DQ[i0*g.LdDQ+c:], g.LdDQ)
			Gemm(true, false, kn, t.dHead, nr, t.scale, w.g, sbTile, q, sq.LdQ, 1, g.DK[j0*g.LdDK+c:], g.LdDK)
			Gemm(true, false, kn, t.dHead, nr, 1, w.s, sbTile, do, g.LdDO, 1, g.DV[j0*g.LdDV+c:], g.LdDV)
		}
		for r := range nr {
			rr := T(math.Exp(-w.c[r]))
			do := g.DO[(i0+r)*g.LdDO+c:][:t.dHead]
			for k := range dRem {
				dRem[k] += rr * do[k]
			}
		}
	}
}
