package layers

import "math/rand/v2"

// KerplePosition is the scheme "kerple" (Chi et al., NeurIPS 2022):
// KerpleScheme's bias from each layer's own (2, heads) parameters, stored
// as "layers.<l>.attn.kerple", initialised by KerpleInit and kept positive
// by KerpleScheme.Project after every optimizer step.
type KerplePosition struct{ NoPosition }

// kerplePart is the name of a layer's KERPLE parameters within the layer.
const kerplePart = "attn.kerple"

// Name implements PositionScheme.
func (KerplePosition) Name() string { return "kerple" }

// LayerParams implements PositionScheme: r1 and r2, without weight decay.
func (KerplePosition) LayerParams(shape ModelShape) []ParamSpec {
	h := shape.Heads
	return []ParamSpec{{Name: kerplePart, Shape: []int{2, h},
		Init:    func(rng *rand.Rand) []float32 { return KerpleInit(rng, h) },
		Project: KerpleScheme{}.Project}}
}

// AttentionBias implements PositionScheme: KerpleScheme on the layer's
// parameters.
func (KerplePosition) AttentionBias(ModelShape) (BiasScheme, string) {
	return KerpleScheme{}, kerplePart
}
