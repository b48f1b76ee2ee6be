package layers

import (
	"math"
	"math/rand/v2"
)

// T5Position is the scheme "t5" (Raffel et al.): T5Scheme's bias with the
// default settings, from one learned (T5Buckets, heads) table that every
// layer shares, stored as "pos.t5.weight".
type T5Position struct{ NoPosition }

// t5TableName is the name of T5's table in weights and checkpoints.
const t5TableName = "pos.t5.weight"

// Name implements PositionScheme.
func (T5Position) Name() string { return "t5" }

// SharedParams implements PositionScheme: the table, initialised
// N(0, d_model^-1/2) as Hugging Face's T5 initialises it, without weight
// decay (which would pull it toward the position-free model).
func (T5Position) SharedParams(shape ModelShape) []ParamSpec {
	std := 1 / math.Sqrt(float64(shape.DModel))
	n := T5Buckets * shape.Heads
	return []ParamSpec{{Name: t5TableName, Shape: []int{T5Buckets, shape.Heads}, Init: func(rng *rand.Rand) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * std)
		}
		return v
	}}}
}

// AttentionBias implements PositionScheme: T5Scheme on the shared table.
func (T5Position) AttentionBias(ModelShape) (BiasScheme, string) { return T5Scheme{}, t5TableName }
