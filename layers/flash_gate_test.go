package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/alibi-go/alibi/layers/internal/flash"
	"github.com/alibi-go/alibi/layers/layerstest"
	"github.com/alibi-go/alibi/layers/position"
	"gorgonia.org/tensor"
)

// withGate gives every sequence of p a prefix-sum bias: C (kLen rows of
// heads, stride heads+1 with a NaN pad) the running sum of random log
// forget gates in (-1, 0), as the Forgetting Transformer's would be.
func withGate[T float](rng *rand.Rand, p *flashProblem[T]) []T {
	fc, ld := p.fc, p.fc.heads+1
	c := make([]T, fc.nSeq*fc.kLen()*ld)
	for s := range p.seqs {
		cs := c[s*fc.kLen()*ld:]
		for h := 0; h < fc.heads; h++ {
			var sum float64
			for j := 0; j < fc.kLen(); j++ {
				sum -= rng.Float64()
				cs[j*ld+h] = T(sum)
			}
		}
		for j := 0; j < fc.kLen(); j++ {
			cs[j*ld+fc.heads] = T(math.NaN())
		}
		p.seqs[s].C, p.seqs[s].LdC = cs, ld
	}
	return c
}

// gateReference is sequence s's bias C_i - C_j as a materialised (heads,
// qLen, kLen) matrix, masked above the diagonal.
func gateReference[T float](p *flashProblem[T], s int) *tensor.Dense {
	fc := p.fc
	sq := p.seqs[s]
	mask := position.CausalMask(fc.qLen, fc.kLen(), fc.offset).Data().([]float32)
	out := make([]float32, fc.heads*fc.qLen*fc.kLen())
	for h := 0; h < fc.heads; h++ {
		for i := 0; i < fc.qLen; i++ {
			pos := fc.offset + i
			for j := 0; j < fc.kLen(); j++ {
				v := mask[i*fc.kLen()+j]
				if j <= pos {
					v += float32(float64(sq.C[pos*sq.LdC+h]) - float64(sq.C[j*sq.LdC+h]))
				}
				out[(h*fc.qLen+i)*fc.kLen()+j] = v
			}
		}
	}
	return tensor.New(tensor.WithShape(fc.heads, fc.qLen, fc.kLen()), tensor.WithBacking(out))
}

// The prefix-sum bias inside the tiled kernel equals the materialised bias
// C_i - C_j added to the scores, alone and with ALiBi's, for queries at
// offset 0 and after a cache, across tiles.
func TestFlashGateMatchesMaterialised(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	var w worstErr
	for _, fc := range []flashCase{
		{nSeq: 2, qLen: 37, heads: 3, dHead: 8},
		{nSeq: 2, qLen: 9, offset: 50, heads: 2, dHead: 4},
		{nSeq: 1, qLen: 130, heads: 4, dHead: 16},
	} {
		for _, opt := range flashTestTiles {
			p := newFlashProblem[float32](rng, fc, false)
			withGate(rng, p)
			lse := make([]float32, fc.lseLen())
			flash.Forward(p.seqs, fc.qLen, fc.heads, fc.dHead, float32(fc.scale()), nil, lse, opt)
			wantO, wantL := refAttention(p.seqs, fc.qLen, fc.heads, fc.dHead, fc.scale(), func(s int) *tensor.Dense { return gateReference(p, s) })
			got, kept := p.output()
			name := fmt.Sprintf("%+v %s", fc, tileName(opt))
			eo, el := layerstest.RelErr(convertTo[float32](got), wantO), layerstest.RelErr(lse, wantL)
			w.see(name, max(eo, el))
			if !kept || eo > 2e-5 || el > 2e-5 {
				t.Errorf("%s: output error %.3g, lse error %.3g (padding kept: %v)", name, eo, el, kept)
			}
		}
	}
	w.log(t, "error")
}

// dQ, dK, dV and dC of the prefix-sum bias equal central finite differences
// of the float64 forward pass, with ALiBi's bias too, at offset 0 and after
// a cache, across tiles.
func TestFlashGateFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(83, 84))
	var w worstErr
	for _, fc := range []flashCase{
		{nSeq: 2, qLen: 7, heads: 2, dHead: 3},
		{nSeq: 2, qLen: 4, offset: 3, heads: 2, dHead: 3},
	} {
		for _, kind := range []biasKind{noSlopes, alibiSlopes} {
			for _, opt := range []flash.Opts{{}, {BlockQ: 2, BlockK: 3}} {
				name := fmt.Sprintf("%+v %v %s", fc, kind, tileName(opt))
				t.Run(name, func(t *testing.T) {
					p := newFlashProblem[float64](rng, fc, false)
					c := withGate(rng, p)
					g := newGradients(rng, p)
					ld := fc.heads + 1
					dc := make([]float64, len(c))
					for s := range g.grads {
						g.grads[s].DC, g.grads[s].LdDC = dc[s*fc.kLen()*ld:], ld
					}
					bias := kernelBias[float64](kind, fc)
					lse := make([]float64, fc.lseLen())
					flash.Forward(p.seqs, fc.qLen, fc.heads, fc.dHead, fc.scale(), bias, lse, opt)
					flash.Backward(p.seqs, g.grads, fc.qLen, fc.heads, fc.dHead, fc.scale(), bias, lse, nil, opt)
					loss := func() float64 { return flashLoss(p, g, bias, opt) }
					d := fc.d()
					checkFiniteDiff(t, name+" dQ", p.q, g.dq, d+flashPad, d, loss, &w)
					checkFiniteDiff(t, name+" dK dV", p.kv, g.dkv, 2*d+flashPad, 2*d, loss, &w)
					checkFiniteDiff(t, name+" dC", c, dc, ld, fc.heads, loss, &w)
				})
			}
		}
	}
	w.log(t, "finite-difference error (in units of the tolerance)")
}
