package position

import "math/rand/v2"

// StickBreakingScheme is a scheme whose attention is stick-breaking
// attention instead of a softmax (layers.AttentionConfig StickBreaking):
// each layer has a (heads, d_head) parameter, named by Remainder among its
// LayerParams, the value each head's output takes for the weight its keys
// leave.
type StickBreakingScheme interface {
	Scheme
	// Remainder returns the name of the layer parameter of the vectors
	// the remainder takes.
	Remainder() string
}

// StickBreakingPosition is the scheme "stick-breaking": stick-breaking
// attention (Tan, Shen, Yang, Courville and Panda, "Scaling Stick-Breaking
// Attention: An Efficient Implementation and In-depth Study", ICLR 2025,
// arXiv 2410.17980; reference code github.com/shawntan/stickbreaking-attention).
// No position encoding: instead of a softmax, the query at position i gives
// the key at j < i the weight
//
//	A_ij = beta_ij * prod_{j<k<i} (1 - beta_ik),   beta_ij = sigmoid(q_i . k_j / sqrt(d_head)),
//
// so the nearest key takes its share of the whole first and each farther key
// a share of what the nearer ones left: recency is in the weights
// themselves. The weights sum to less than 1; what they leave,
// R_i = prod_{j<i} (1 - beta_ij), multiplies a learned vector b_h of the
// head, as the reference's model adds R_i times a per-head bias:
// o_i = sum_j A_ij v_j + R_i b_h. As in the reference's default, a query
// does not attend to its own key (j < i, so the first token's output is
// b_h). The kernel works in log space (ln A_ij = z_ij - sum_{k=j}^{i-1}
// softplus(z_ik)) a tile of keys at a time from the diagonal down, forward
// and backward, with no (T, T) array (layers/internal/flash). b starts at
// 0 and gets no weight decay.
type StickBreakingPosition struct{ NoPosition }

// Name implements Scheme.
func (StickBreakingPosition) Name() string { return "stick-breaking" }

// stickBreakingRemainder is the layer parameter's name.
const stickBreakingRemainder = "attn.sb.remainder"

// LayerParams implements Scheme: the remainder's vectors.
func (StickBreakingPosition) LayerParams(shape ModelShape) []ParamSpec {
	h, dh := shape.Heads, shape.DHead()
	return []ParamSpec{{Name: stickBreakingRemainder, Shape: []int{h, dh},
		Init: func(*rand.Rand) []float32 { return make([]float32, h*dh) }}}
}

// Remainder implements StickBreakingScheme.
func (StickBreakingPosition) Remainder() string { return stickBreakingRemainder }
