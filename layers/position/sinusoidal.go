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

// EvalBytes implements Scheme: the sum of embeddings and table
// (a float32 per token and dimension) and the (length, dModel) table.
func (SinusoidalPosition) EvalBytes(shape ModelShape, batch, length int) int64 {
	n, d := int64(batch)*int64(length), int64(shape.DModel)
	return n*4*d + int64(length)*4*d
}
