package flash

// Seq locates one sequence's matrices for the tiled kernels. The qLen
// query rows of Q are at absolute positions Offset..Offset+qLen-1; K and V
// have kLen = Offset+qLen rows at positions 0..kLen-1 (a key/value cache
// followed by the new tokens); O receives qLen output rows. Ld* are row
// strides in elements; head h uses columns h*dHead..(h+1)*dHead-1 of every
// row of Q and O, and of K and V unless HK and HV are set: then the heads of
// K (V) are stored one after the other, head h's rows starting at h*HK
// (h*HV).
//
// C, when not nil, holds a data-dependent bias by prefix sums (the
// Forgetting Transformer's cumulative log forget gates): the score of the
// query at position i on the key at position j gets C[i*LdC+h] -
// C[j*LdC+h] added for head h, positions 0..kLen-1 being those of K.
type Seq[T float] struct {
	Q, K, V, O         []T
	LdQ, LdK, LdV, LdO int
	Offset             int
	HK, HV             int
	C                  []T
	LdC                int
}

// gate adds the prefix-sum bias of head h for the query at position pos to
// the scores of keys j0..j0+len(row)-1: C[pos] - C[j].
func (s *Seq[T]) gate(h, pos, j0 int, row []T) {
	ci := s.C[pos*s.LdC+h]
	for j := range row {
		row[j] += ci - s.C[(j0+j)*s.LdC+h]
	}
}

// KAt is the index in K of the first element of head h of key j.
func (s *Seq[T]) KAt(j, h, dHead int) int {
	if s.HK == 0 {
		return j*s.LdK + h*dHead
	}
	return h*s.HK + j*s.LdK
}

// VAt is the index in V of the first element of head h of value j.
func (s *Seq[T]) VAt(j, h, dHead int) int {
	if s.HV == 0 {
		return j*s.LdV + h*dHead
	}
	return h*s.HV + j*s.LdV
}

// GradSeq holds one sequence's gradients for Backward: DO (qLen rows) is
// the gradient of the output; DQ (qLen rows), DK and DV (kLen rows each)
// receive the gradients of the inputs. Ld* are row strides in elements;
// head h uses columns h*dHead..(h+1)*dHead-1.
//
// With a prefix-sum bias (Seq.C), DC (kLen rows of stride LdDC) receives
// its gradient: head column h of every row is overwritten.
type GradSeq[T float] struct {
	DO, DQ, DK, DV         []T
	LdDO, LdDQ, LdDK, LdDV int
	DC                     []T
	LdDC                   int
}

// PackedSeqs returns the views of batch sequences of t tokens in the
// Attention op's layout: qkv is (batch*t, 3d) with each row's query, key and
// value side by side, out is (batch*t, d), and queries start at offset 0.
func PackedSeqs[T float](qkv, out []T, batch, t, d int) []Seq[T] {
	seqs := make([]Seq[T], batch)
	for b := range seqs {
		q := qkv[b*t*3*d:]
		seqs[b] = Seq[T]{Q: q, K: q[d:], V: q[2*d:], O: out[b*t*d:], LdQ: 3 * d, LdK: 3 * d, LdV: 3 * d, LdO: d}
	}
	return seqs
}

// LastRowSeqs returns the views of batch sequences of t tokens in the
// Attention op's layout (as PackedSeqs), of which only the last k rows of
// each are queries, at positions t-k..t-1 against all t keys; out is
// (batch*k, d), the k output rows of each sequence in turn.
func LastRowSeqs[T float](qkv, out []T, batch, t, k, d int) []Seq[T] {
	seqs := make([]Seq[T], batch)
	for b := range seqs {
		kv := qkv[b*t*3*d:]
		seqs[b] = Seq[T]{Q: kv[(t-k)*3*d:], K: kv[d:], V: kv[2*d:], O: out[b*k*d:], LdQ: 3 * d, LdK: 3 * d, LdV: 3 * d, LdO: d, Offset: t - k}
	}
	return seqs
}

// PackedGrads returns the gradient views matching PackedSeqs:
// dout is (batch*t, d) and dqkv (batch*t, 3d).
func PackedGrads[T float](dout, dqkv []T, batch, t, d int) []GradSeq[T] {
	grads := make([]GradSeq[T], batch)
	for b := range grads {
		dq := dqkv[b*t*3*d:]
		grads[b] = GradSeq[T]{DO: dout[b*t*d:], DQ: dq, DK: dq[d:], DV: dq[2*d:], LdDO: d, LdDQ: 3 * d, LdDK: 3 * d, LdDV: 3 * d}
	}
	return grads
}
