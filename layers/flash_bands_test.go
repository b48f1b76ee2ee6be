package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/alibi-go/alibi/layers/internal/flash"
	"github.com/alibi-go/alibi/layers/position"
)

// Both passes cut the blocks of query rows that cross the diagonal into
// bands and leave out the keys no row of a band sees; that must give the
// bits of computing the blocks whole (flash.Opts.WholeBlocks): outputs,
// log-sum-exps, statistics, dQ, dK, dV, a trainable bias's gradient and the
// prefix-sum bias's gradient, for query tiles higher than a band (the
// default 64 and others), key tiles that cut the diagonal, and queries
// after a cache.
func TestFlashBandsSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(91, 92))
	for _, tc := range []struct {
		fc   flashCase
		opts []flash.Opts
	}{
		{flashCase{nSeq: 2, qLen: 128, heads: 4, dHead: 32}, []flash.Opts{{}, {BlockQ: 100, BlockK: 48}}},
		{flashCase{nSeq: 1, qLen: 300, heads: 2, dHead: 16}, []flash.Opts{{}, {BlockQ: 96, BlockK: 70}, {BlockQ: 128, BlockK: 512}}},
		// Two key tiles and more heads than workers: a worker's scratch
		// holds an earlier head's probabilities of a whole tile where a
		// band of more than gemm.KBlock keys must set the keys it does not
		// see to zero (keySpan).
		{flashCase{nSeq: 2, qLen: 600, heads: 3, dHead: 8}, []flash.Opts{{}}},
		{flashCase{nSeq: 2, qLen: 77, offset: 40, heads: 2, dHead: 8}, []flash.Opts{{}, {BlockQ: 70, BlockK: 50}}},
	} {
		for _, kind := range []biasKind{alibiSlopes, maskFull, noSlopes} {
			for _, opt := range tc.opts {
				name := fmt.Sprintf("%+v %v %s", tc.fc, kind, tileName(opt))
				p := newFlashProblem[float32](rng, tc.fc, false)
				var dc []float32
				if kind == noSlopes { // the prefix-sum bias alone
					dc = make([]float32, len(withGate(rng, p)))
				}
				g := newGradients(rng, p)
				var got [2][][]float32
				var stats [2][]float64
				for k, whole := range []bool{false, true} {
					got[k], stats[k] = bandsPasses(p, g, kernelBias[float32](kind, tc.fc), dc, opt, whole)
				}
				for i := range got[0] {
					if j := firstBitDifference(got[0][i], got[1][i]); j >= 0 {
						t.Errorf("%s: result %d, element %d: %g in bands, %g whole", name, i, j, got[0][i][j], got[1][i][j])
					}
				}
				for j := range stats[0] {
					if math.Float64bits(stats[0][j]) != math.Float64bits(stats[1][j]) {
						t.Errorf("%s: statistic %d: %g in bands, %g whole", name, j, stats[0][j], stats[1][j])
					}
				}
			}
		}
	}
}

// bandsPasses runs Forward (with statistics) and Backward on p and g, with
// the bias's gradient when it has one and the prefix-sum bias's gradient
// into dc when not nil, and returns copies of every float32 result and the
// statistics (distance, entropy and far mass of each head).
func bandsPasses(p *flashProblem[float32], g *dGradients[float32], bias position.KernelBias[float32], dc []float32, opt flash.Opts, whole bool) ([][]float32, []float64) {
	fc := p.fc
	opt.WholeBlocks = whole
	opt.Stats = flash.NewStats(fc.heads, 0)
	lse := make([]float32, fc.lseLen())
	flash.Forward(p.seqs, fc.qLen, fc.heads, fc.dHead, float32(fc.scale()), bias, lse, opt)
	stats := slices.Concat(opt.Stats.Distance, opt.Stats.Entropy, opt.Stats.FarMass)
	opt.Stats = nil
	var biasGrad []float32
	if tb, ok := bias.(position.TrainableBias[float32]); ok {
		biasGrad = make([]float32, tb.GradLen())
	}
	if dc != nil {
		ld := fc.heads + 1
		for s := range g.grads {
			g.grads[s].DC, g.grads[s].LdDC = dc[s*fc.kLen()*ld:], ld
		}
	}
	flash.Backward(p.seqs, g.grads, fc.qLen, fc.heads, fc.dHead, float32(fc.scale()), bias, lse, biasGrad, opt)
	return [][]float32{slices.Clone(p.o), lse, slices.Clone(g.dq), slices.Clone(g.dkv), biasGrad, slices.Clone(dc)}, stats
}

// The forward pass without statistics takes a band's rows in two passes
// (the bias and maxima of all of them, then their exponentials); with
// statistics it takes them one at a time, adding the bias and then taking
// the maximum. Both must give the same bits, outputs and log-sum-exps, for
// every kind of bias (a distance bias adds its maximum as it goes, a full
// one and the prefix-sum bias do not), several key tiles per row (the
// running maximum grows and the output is rescaled) and queries after a
// cache.
func TestFlashForwardBandOrderSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(93, 94))
	for _, tc := range []struct {
		fc   flashCase
		opts []flash.Opts
	}{
		{flashCase{nSeq: 2, qLen: 128, heads: 4, dHead: 32}, []flash.Opts{{}, {BlockQ: 100, BlockK: 48}}},
		{flashCase{nSeq: 1, qLen: 300, heads: 2, dHead: 16}, []flash.Opts{{}, {BlockQ: 96, BlockK: 70}, {BlockQ: 7, BlockK: 13}}},
		{flashCase{nSeq: 2, qLen: 77, offset: 40, heads: 2, dHead: 8}, []flash.Opts{{}, {BlockQ: 70, BlockK: 50}}},
	} {
		type biasCase struct {
			kind biasKind
			gate bool // the prefix-sum bias on top of the kind's
		}
		var biases []biasCase
		for kind := alibiSlopes; kind <= maskFull; kind++ {
			biases = append(biases, biasCase{kind, false})
		}
		biases = append(biases, biasCase{alibiSlopes, true})
		for _, bc := range biases {
			for _, opt := range tc.opts {
				name := fmt.Sprintf("%+v %v gate=%v %s", tc.fc, bc.kind, bc.gate, tileName(opt))
				p := newFlashProblem[float32](rng, tc.fc, false)
				if bc.gate {
					withGate(rng, p)
				}
				bias := kernelBias[float32](bc.kind, tc.fc)
				var got [2][][]float32
				for k, stats := range []bool{false, true} {
					o := opt
					if stats {
						o.Stats = flash.NewStats(tc.fc.heads, 0)
					}
					lse := make([]float32, tc.fc.lseLen())
					flash.Forward(p.seqs, tc.fc.qLen, tc.fc.heads, tc.fc.dHead, float32(tc.fc.scale()), bias, lse, o)
					got[k] = [][]float32{slices.Clone(p.o), lse}
				}
				for i := range got[0] {
					if j := firstBitDifference(got[0][i], got[1][i]); j >= 0 {
						t.Errorf("%s: result %d, element %d: %g without statistics, %g with", name, i, j, got[0][i][j], got[1][i][j])
					}
				}
			}
		}
	}
}
