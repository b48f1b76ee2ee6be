package position

import "gorgonia.org/tensor"

// NoPosition is the scheme "none" (NoPE): no position information, the
// causal mask alone. It has no parameters, adds no table, rotates nothing
// and adds no bias. Embedded in another scheme's type, it answers "none"
// to every question that scheme does not override.
type NoPosition struct{}

// Name implements Scheme.
func (NoPosition) Name() string { return "none" }

// Validate implements Scheme: any shape will do.
func (NoPosition) Validate(ModelShape) error { return nil }

// SharedParams implements Scheme: none.
func (NoPosition) SharedParams(ModelShape) []ParamSpec { return nil }

// LayerParams implements Scheme: none.
func (NoPosition) LayerParams(ModelShape) []ParamSpec { return nil }

// Buffer implements Scheme: none.
func (NoPosition) Buffer(ModelShape) (string, []float32) { return "", nil }

// EmbeddingTable implements Scheme: none.
func (NoPosition) EmbeddingTable() func(length, dModel int) *tensor.Dense { return nil }

// Rotary implements Scheme: no rotation.
func (NoPosition) Rotary() bool { return false }

// AttentionBias implements Scheme: no bias.
func (NoPosition) AttentionBias(ModelShape) (BiasScheme, string) { return nil, "" }

// EvalBytes implements Scheme: nothing.
func (NoPosition) EvalBytes(ModelShape, int, int) int64 { return 0 }
