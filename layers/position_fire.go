package layers

import "math/rand/v2"

// FirePosition is the scheme "fire" (Li et al., ICLR 2024): FireScheme's
// bias, with its threshold in units of the training length, from each
// layer's own parameters, stored as "layers.<l>.attn.fire", initialised by
// FireScheme.Init and kept in their domain by FireScheme.Project after
// every optimizer step.
type FirePosition struct{ NoPosition }

// firePart is the name of a layer's FIRE parameters within the layer.
const firePart = "attn.fire"

// Name implements PositionScheme.
func (FirePosition) Name() string { return "fire" }

// bias is FIRE with its threshold in units of the training length.
func (FirePosition) bias(shape ModelShape) FireScheme { return FireScheme{L0: shape.TrainLen} }

// LayerParams implements PositionScheme: one flat tensor of
// FireParamLen(heads) values, without weight decay.
func (p FirePosition) LayerParams(shape ModelShape) []ParamSpec {
	s, h := p.bias(shape), shape.Heads
	return []ParamSpec{{Name: firePart, Shape: []int{FireParamLen(h)},
		Init:    func(rng *rand.Rand) []float32 { return s.Init(rng, h, shape.TrainLen) },
		Project: s.Project}}
}

// AttentionBias implements PositionScheme: FireScheme on the layer's
// parameters.
func (p FirePosition) AttentionBias(shape ModelShape) (BiasScheme, string) {
	return p.bias(shape), firePart
}
