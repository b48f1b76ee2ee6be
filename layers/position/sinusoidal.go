package position

import "gorgonia.org/tensor"

// SinusoidalPosition is the scheme "sinusoidal" (Vaswani et al. 2017): the
// table SinusoidalTable added to the token embeddings; attention has the
// causal mask alone.
type SinusoidalPosition struct{ NoPosition }

// Name implements Scheme.
func (SinusoidalPosition) Name() string { return "sinusoidal" }

// EmbeddingTable implements Scheme: SinusoidalTable.
func (SinusoidalPosition) EmbeddingTable() func(length, dModel int) *tensor.Dense {
	return SinusoidalTable
}

// EvalBytes implements Scheme: the (length, dModel) table.
func (SinusoidalPosition) EvalBytes(shape ModelShape, _, length int) int64 {
	return int64(length) * 4 * int64(shape.DModel)
}
