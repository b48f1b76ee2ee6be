package flash

import "math"

// Stats asks Forward for statistics of the attention distributions it
// computes, accumulated from the online softmax without materialising any
// probability row. For each head h, over the queries at absolute positions
// pos >= Far whose row has weight:
//
//	Distance[h] += sum_j p_j (pos - j)                 mean attended distance
//	Entropy[h]  += -sum_j p_j ln p_j                    attention entropy, nats
//	FarMass[h]  += sum_{j: pos-j >= Far} p_j            share on keys at distance >= Far
//	Queries[h]  += 1
//
// with p_j the row's probabilities over its visible keys; divide by Queries
// for the means. With Far the training length L, these are the statistics
// of the queries that stand past L, and FarMass is the share of their
// attention on distances never seen in training (training distances are
// 0..L-1). Far = 0 counts every query, and then FarMass is 1.
//
// Per row, besides the running maximum m and sum l of exp(S - m), the kernel
// keeps three float64 sums over the keys seen so far: sum e_j S_j,
// sum e_j (pos - j) and sum over far keys of e_j, with e_j = exp(S_j - m),
// rescaled by exp(m_old - m_new) with l whenever the maximum grows. At the
// row's end, with S the biased scaled scores:
//
//	entropy = m + ln l - (sum e_j S_j) / l,   distance = (sum e_j (pos-j)) / l,
//	far     = (sum_far e_j) / l.
//
// The exponentials are the kernel's own (float32: relative error below
// 5e-7), the sums are in float64; the entropy subtracts two terms of the
// size of the largest score, so its absolute error is about 1e-6 times
// that size plus the exponentials' relative error.
//
// Forward adds to the slices, which must have one entry per head; a Stats
// may collect over many calls. Forward with a nil Stats computes none of
// this and is unchanged.
type Stats struct {
	Far                        int
	Distance, Entropy, FarMass []float64
	Queries                    []int
}

// NewStats returns empty statistics for heads heads with threshold far.
func NewStats(heads, far int) *Stats {
	return &Stats{Far: far, Distance: make([]float64, heads), Entropy: make([]float64, heads),
		FarMass: make([]float64, heads), Queries: make([]int, heads)}
}

// partial holds the statistics of one unit of work of Forward (a
// sequence, head and query tile). Forward adds the units' partials to Stats
// in the units' order, so that the sums do not depend on which worker ran
// which unit: the same bits from run to run.
type partial struct {
	distance, entropy, farMass float64
	queries                    int
}

// add adds the partial statistics p of head h to s.
func (s *Stats) add(h int, p partial) {
	s.Distance[h] += p.distance
	s.Entropy[h] += p.entropy
	s.FarMass[h] += p.farMass
	s.Queries[h] += p.queries
}

// rowStats are one query row's running sums (see Stats).
type rowStats struct{ es, ed, ef float64 }

// accumulate rescales the row's sums by alpha and adds the key tile whose
// scores were scores (before the exponential) and whose exponentials are e,
// for the query at pos and keys j0.. .
func (r *rowStats) accumulate(scores, e []float64, alpha float64, pos, j0, far int) {
	r.es *= alpha
	r.ed *= alpha
	r.ef *= alpha
	for j, x := range e {
		if x == 0 { // a vanished or masked key: no weight (and its score may be -Inf)
			continue
		}
		d := pos - (j0 + j)
		r.es += x * scores[j]
		r.ed += x * float64(d)
		if d >= far {
			r.ef += x
		}
	}
}

// finish adds the row's statistics to p, if the query at pos counts
// (pos >= far) and the row has weight; m and l are its final maximum and
// sum.
func (r *rowStats) finish(p *partial, far, pos int, m, l float64) {
	if pos < far || !(l > 0) {
		return
	}
	p.entropy += m + math.Log(l) - r.es/l
	p.distance += r.ed / l
	p.farMass += r.ef / l
	p.queries++
}
