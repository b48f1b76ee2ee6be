package layers

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MLP is the position-wise feed-forward block: Linear, exact GELU, Linear.
type MLP struct {
	W1, B1 *G.Node // (D, F), (F)
	W2, B2 *G.Node // (F, D), (D)
}

// Forward applies the block to x (N, D).
func (m MLP) Forward(x *G.Node) (*G.Node, error) {
	h, err := Linear(x, m.W1, m.B1)
	if err != nil {
		return nil, err
	}
	if h, err = GELU(h); err != nil {
		return nil, err
	}
	return Linear(h, m.W2, m.B2)
}

// AlibiMultiHeadAttention is causal multi-head self-attention with an
// additive position bias: project x to queries, keys and values with one
// matrix, attend per head with softmax(QK^T/sqrt(d_head) + bias), and project
// the concatenated heads back. The bias is a constant input node built by
// BiasInput from AlibiBias (ALiBi) or CausalMask (sinusoidal, none), so one
// code path serves every position scheme.
type AlibiMultiHeadAttention struct {
	Heads      int
	WQKV, BQKV *G.Node // (D, 3D), (3D)
	WOut, BOut *G.Node // (D, D), (D)
}

// Forward attends over x (batch*T, D) rows, T being the bias's length.
func (a AlibiMultiHeadAttention) Forward(x, bias *G.Node) (*G.Node, error) {
	qkv, err := Linear(x, a.WQKV, a.BQKV)
	if err != nil {
		return nil, fmt.Errorf("attention qkv: %w", err)
	}
	h, err := Attention(qkv, bias, a.Heads)
	if err != nil {
		return nil, err
	}
	return Linear(h, a.WOut, a.BOut)
}

// BiasInput adds t to g as a named, non-trainable input node. The node reads
// t by pointer; as long as it is never passed to Grad or an optimizer it stays
// bit-identical, and one tensor can back nodes in many graphs.
func BiasInput(g *G.ExprGraph, t *tensor.Dense, name string) *G.Node {
	return G.NewTensor(g, t.Dtype(), t.Dims(), G.WithShape(t.Shape()...), G.WithName(name), G.WithValue(t))
}
