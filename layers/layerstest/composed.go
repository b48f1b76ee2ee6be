package layerstest

import (
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The composed references: the layers of the model built from Gorgonia's
// own ops (Mul, BroadcastAdd, Mean, Exp, Slice, Concat...), whose gradients
// Gorgonia derives. The custom ops of package layers (in float64) and the
// whole model (in float32) are tested against them. Their constants take
// the dtype of their input, so one reference serves both.

// ComposedLinear is x W (+ b broadcast over the rows; b may be nil).
func ComposedLinear(x, w, b *G.Node) (*G.Node, error) {
	y, err := G.Mul(x, w)
	if err != nil || b == nil {
		return y, err
	}
	return G.BroadcastAdd(y, b, nil, []byte{0})
}

// ComposedLayerNorm normalises the rows of x, (x - mean) / sqrt(biased
// variance + eps) * gamma + beta, with Mean, BroadcastSub, Square, Sqrt and
// Inverse (not InverseSqrt, whose gradient is wrong).
func ComposedLayerNorm(x, gamma, beta *G.Node, eps float64) (*G.Node, error) {
	mean, err := G.Mean(x, 1)
	if err != nil {
		return nil, err
	}
	xc, err := G.BroadcastSub(x, mean, nil, []byte{1})
	if err != nil {
		return nil, err
	}
	sq, err := G.Square(xc)
	if err != nil {
		return nil, err
	}
	v, err := G.Mean(sq, 1)
	if err != nil {
		return nil, err
	}
	if v, err = G.Add(v, constantLike(x, eps, "composed:ln_eps")); err != nil {
		return nil, err
	}
	std, err := G.Sqrt(v)
	if err != nil {
		return nil, err
	}
	rstd, err := G.Inverse(std)
	if err != nil {
		return nil, err
	}
	xhat, err := G.BroadcastHadamardProd(xc, rstd, nil, []byte{1})
	if err != nil {
		return nil, err
	}
	y, err := G.BroadcastHadamardProd(xhat, gamma, nil, []byte{0})
	if err != nil {
		return nil, err
	}
	return G.BroadcastAdd(y, beta, nil, []byte{0})
}

// shiftedRows returns x - rowmax(x), its exponential and the row sums of
// the exponential. The row maximum is differentiated too; its gradient is
// zero in exact arithmetic.
func shiftedRows(x *G.Node) (xs, e, s *G.Node, err error) {
	mx, err := G.Max(x, 1)
	if err != nil {
		return nil, nil, nil, err
	}
	if xs, err = G.BroadcastSub(x, mx, nil, []byte{1}); err != nil {
		return nil, nil, nil, err
	}
	if e, err = G.Exp(xs); err != nil {
		return nil, nil, nil, err
	}
	s, err = G.Sum(e, 1)
	return xs, e, s, err
}

// ComposedSoftmaxRows is exp(x - rowmax) / rowsum for a 2-D x.
func ComposedSoftmaxRows(x *G.Node) (*G.Node, error) {
	_, e, s, err := shiftedRows(x)
	if err != nil {
		return nil, err
	}
	return G.BroadcastHadamardDiv(e, s, nil, []byte{1})
}

// ComposedLogSoftmaxRows is (x - rowmax) - log(sum exp(x - rowmax)).
func ComposedLogSoftmaxRows(x *G.Node) (*G.Node, error) {
	xs, _, s, err := shiftedRows(x)
	if err != nil {
		return nil, err
	}
	lse, err := G.Log(s)
	if err != nil {
		return nil, err
	}
	return G.BroadcastSub(xs, lse, nil, []byte{1})
}

// ComposedAttention slices Q, K and V of every (sequence, head) out of qkv
// (N, 3D), computes softmax(Q K^T / sqrt(dh) + bias_h) V with Mul and
// ComposedSoftmaxRows, and concatenates heads (columns) and sequences
// (rows). bias is (heads or 1, T, T), T the sequence length: a
// materialised bias with its causal mask (position.AlibiBias,
// position.CausalMask), one matrix shared by all heads when its first
// dimension is 1.
func ComposedAttention(qkv, bias *G.Node, heads int) (*G.Node, error) {
	n, w := qkv.Shape()[0], qkv.Shape()[1]
	hb, tl := bias.Shape()[0], bias.Shape()[1]
	d := w / 3
	dh := d / heads
	scale := constantLike(qkv, 1/math.Sqrt(float64(dh)), "composed:attn_scale")
	var seqs G.Nodes
	for b := 0; b < n/tl; b++ {
		rows := G.S(b*tl, (b+1)*tl)
		var outs G.Nodes
		for h := 0; h < heads; h++ {
			cols := func(block int) tensor.Slice { return G.S(block*d+h*dh, block*d+(h+1)*dh) }
			q, err := G.Slice(qkv, rows, cols(0))
			if err != nil {
				return nil, err
			}
			k, err := G.Slice(qkv, rows, cols(1))
			if err != nil {
				return nil, err
			}
			v, err := G.Slice(qkv, rows, cols(2))
			if err != nil {
				return nil, err
			}
			kt, err := G.Transpose(k)
			if err != nil {
				return nil, err
			}
			s, err := G.Mul(q, kt)
			if err != nil {
				return nil, err
			}
			if s, err = G.HadamardProd(s, scale); err != nil {
				return nil, err
			}
			bm, err := G.Slice(bias, G.S(min(h, hb-1))) // (T, T)
			if err != nil {
				return nil, err
			}
			if s, err = G.Add(s, bm); err != nil {
				return nil, err
			}
			p, err := ComposedSoftmaxRows(s)
			if err != nil {
				return nil, err
			}
			o, err := G.Mul(p, v)
			if err != nil {
				return nil, err
			}
			outs = append(outs, o)
		}
		seq, err := G.Concat(1, outs...)
		if err != nil {
			return nil, err
		}
		seqs = append(seqs, seq)
	}
	return G.Concat(0, seqs...)
}

// constantLike is the constant v in x's dtype (float32 or float64).
func constantLike(x *G.Node, v float64, name string) *G.Node {
	if x.Dtype() == tensor.Float32 {
		return G.NewConstant(float32(v), G.WithName(name))
	}
	return G.NewConstant(v, G.WithName(name))
}
