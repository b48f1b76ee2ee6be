// Package layers holds the Gorgonia building blocks of a decoder-only
// transformer: linear, embedding, LayerNorm, GELU MLP, multi-head attention,
// cross-entropy, and the position schemes (ALiBi, sinusoidal, none).
//
// The position math lives here, once: AlibiSlopes gives the per-head slopes of
// Press et al. (ICLR 2022), AlibiBias the additive (heads, query, key) bias
// with its causal mask, CausalMask the mask alone, and SinusoidalTable the
// sin/cos table. Every layer function takes and returns *gorgonia.Node values,
// so weights live outside any graph and one set of weights serves graphs of
// any length.
//
// The heavy operations (attention, LayerNorm, GELU, cross-entropy, bias add)
// are custom Gorgonia ops with hand-written, parallel forward and backward
// kernels; each is checked against finite differences in the tests.
package layers
