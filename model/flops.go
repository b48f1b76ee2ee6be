package model

// FLOPsPerToken counts the floating-point operations (a multiply-add is 2)
// of the matrix products per token of a sequence of the given length: the
// linear layers, 2 per weight (qkv and output projections, both MLP layers
// and the output head), and causal attention, 4*d per visible key (the
// scores Q K^T and the weighted sum P V; a sequence of length T sees
// (T+1)/2 keys on average). With train, the backward pass adds twice the
// linear layers' count (the gradients of the inputs and of the weights) and
// 3 attention products more (the recomputed scores, dP and dV, dQ and dK:
// 5*2d per key). Elementwise work (LayerNorm, GELU, softmax, AdamW) is not
// counted: it is small and not multiply-add bound.
func (c Config) FLOPsPerToken(length int, train bool) float64 {
	d, f, l := float64(c.DModel), float64(c.DFF), float64(c.NLayers)
	linear := 2 * (l*(4*d*d+2*d*f) + d*float64(c.Vocab))
	keys := float64(length+1) / 2
	attention := l * 4 * d * keys
	if !train {
		return linear + attention
	}
	return 3*linear + attention + l*10*d*keys
}
