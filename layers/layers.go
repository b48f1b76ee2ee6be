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
	// Precision is the arithmetic of the two products (LinearIn).
	Precision Precision
}

// Forward applies the block to x (N, D). With both biases it is one op
// whose GELU and GELU' run inside the products (see op_mlp.go), with the
// bits of the three ops it replaces; without them it composes LinearIn,
// GELU and LinearIn.
func (m MLP) Forward(x *G.Node) (*G.Node, error) {
	if m.B1 != nil && m.B2 != nil {
		return mlpNode(m.Precision, x, m.W1, m.B1, m.W2, m.B2)
	}
	h, err := LinearIn(m.Precision, x, m.W1, m.B1)
	if err != nil {
		return nil, err
	}
	if h, err = GELU(h); err != nil {
		return nil, err
	}
	return LinearIn(m.Precision, h, m.W2, m.B2)
}

// MultiHeadAttention is causal multi-head self-attention with a position
// bias: project x to queries, keys and values with one matrix, attend per
// head with softmax(QK^T/sqrt(d_head) + bias) (see Attention), and project
// the concatenated heads back. The bias comes from the position scheme of
// the call's AttentionConfig (ALiBi from its slopes, or none for the
// sinusoidal and position-free models), computed inside the kernel, so one
// code path serves every scheme.
type MultiHeadAttention struct {
	Heads      int
	WQKV, BQKV *G.Node // (D, 3D), (3D)
	WOut, BOut *G.Node // (D, D), (D)
	// Rotary rotates the queries and keys (Rope) at their absolute
	// positions before attending: the rotary position scheme.
	Rotary bool
	// RopeScaling changes the rotation of a Rotary layer (an
	// evaluation-time extension); its zero value is plain Rope.
	RopeScaling RopeScaling
	// LogitScale, when not nil, holds one learned scale s_h per head
	// (heads): every query is multiplied by s_h·ln(n), n the keys it sees
	// (LogLengthScale), after any rotation.
	LogitScale *G.Node
	// Phase, when not nil, holds PoPE's learned phases (heads, d_head):
	// the queries and keys go through Polar at their absolute positions and
	// the kernel attends over heads of 2 d_head (a Cache then holds rows of
	// 2D), whose outputs PolarHeads takes back.
	Phase *G.Node
	// Drawn, when not nil, rotates the rows of every sequence by their
	// drawn positions instead of 0..T-1 (randomized positional encodings,
	// training only).
	Drawn *DrawnPositions
	// Precision is the arithmetic of the two projections (LinearIn); the
	// attention itself is float32.
	Precision Precision
}

// Forward attends over x (batch*cfg.QueryLen, D) rows; biasParams are the
// parameters of cfg.PositionBias (nil without one). cfg.Heads is the layer's.
func (a MultiHeadAttention) Forward(x, biasParams *G.Node, cfg AttentionConfig) (*G.Node, error) {
	qkv, err := LinearIn(a.Precision, x, a.WQKV, a.BQKV)
	if err != nil {
		return nil, fmt.Errorf("attention qkv: %w", err)
	}
	return a.FromQKV(qkv, biasParams, cfg)
}

// FromQKV is Forward from the rows' projected queries, keys and values
// (batch*cfg.QueryLen, 3D), x·WQKV + BQKV, computed by the caller: a graph
// without gradients whose first layer's input depends on the token alone
// reads them from a table of the vocabulary (see model.NewGraph).
func (a MultiHeadAttention) FromQKV(qkv, biasParams *G.Node, cfg AttentionConfig) (*G.Node, error) {
	var err error
	cfg.Heads = a.Heads
	if a.Rotary {
		var pos *Positions
		if cfg.Cache != nil {
			pos = cfg.Cache.pos
		}
		if qkv, err = ropeCached(qkv, a.Heads, cfg.QueryLen, pos, a.RopeScaling, cfg.Cache, a.Drawn); err != nil {
			return nil, err
		}
	}
	if a.Phase != nil {
		var pos *Positions
		if cfg.Cache != nil {
			pos = cfg.Cache.pos
		}
		if qkv, err = Polar(qkv, a.Phase, a.Heads, cfg.QueryLen, pos); err != nil {
			return nil, err
		}
	}
	if a.LogitScale != nil {
		var pos *Positions
		if cfg.Cache != nil {
			pos = cfg.Cache.pos
		}
		if qkv, err = LogLengthScale(qkv, a.LogitScale, a.Heads, cfg.QueryLen, pos); err != nil {
			return nil, err
		}
	}
	h, err := Attention(qkv, biasParams, cfg)
	if err != nil {
		return nil, err
	}
	if a.Phase != nil {
		if h, err = PolarHeads(h, a.Heads); err != nil {
			return nil, err
		}
	}
	return LinearIn(a.Precision, h, a.WOut, a.BOut)
}

// ConstantInput adds t to g as a named, non-trainable input node. The node reads
// t by pointer; as long as it is never passed to Grad or an optimizer it stays
// bit-identical, and one tensor can back nodes in many graphs.
func ConstantInput(g *G.ExprGraph, t *tensor.Dense, name string) *G.Node {
	return G.NewTensor(g, t.Dtype(), t.Dims(), G.WithShape(t.Shape()...), G.WithName(name), G.WithValue(t))
}
