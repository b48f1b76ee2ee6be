// Package layers holds the Gorgonia building blocks of a decoder-only
// transformer: linear, embedding, LayerNorm, GELU MLP, multi-head attention,
// cross-entropy, and the position schemes.
//
// The position math lives here, once: AlibiSlopes gives the per-head slopes of
// Press et al. (ICLR 2022), AlibiBias the additive (heads, query, key) bias
// with its causal mask, CausalMask the mask alone, SinusoidalTable the
// sin/cos table, Rope the rotary embedding, and the BiasSchemes (ALiBi, T5,
// KERPLE, FIRE) the biases that attention adds to its scores. Every layer
// function takes and returns *gorgonia.Node values, so weights live outside
// any graph and one set of weights serves graphs of any length.
//
// Attention is one op on tiled ("flash") kernels: the bias is computed
// inside the kernel from the scheme's parameters and the absolute positions
// (with an offset for a key/value cache, KVCache), so no (T, T) array
// exists at any length. The heavy operations (attention, LayerNorm, GELU,
// cross-entropy, bias add) are custom Gorgonia ops with hand-written,
// parallel forward and backward kernels; each is checked against finite
// differences in the tests.
package layers
