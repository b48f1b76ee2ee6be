package layers

// AlibiPosition is the scheme "alibi" (Press et al., ICLR 2022): no
// embeddings, and in every layer the bias AlibiScheme computes inside the
// kernel from the per-head slopes AlibiSlopes, a constant buffer saved in
// checkpoints as "buffers.alibi_slopes".
type AlibiPosition struct{ NoPosition }

// alibiSlopesName is the name of the slopes' buffer.
const alibiSlopesName = "alibi_slopes"

// Name implements PositionScheme.
func (AlibiPosition) Name() string { return "alibi" }

// Buffer implements PositionScheme: the slopes, one per head.
func (AlibiPosition) Buffer(shape ModelShape) (string, []float32) {
	return alibiSlopesName, AlibiSlopes(shape.Heads)
}

// AttentionBias implements PositionScheme: AlibiScheme on the slopes.
func (AlibiPosition) AttentionBias(ModelShape) (BiasScheme, string) {
	return AlibiScheme{}, alibiSlopesName
}

// EvalBytes implements PositionScheme: the distance tables, one float32
// per head and key.
func (AlibiPosition) EvalBytes(shape ModelShape, _, length int) int64 {
	return int64(shape.Heads) * int64(length) * 4
}
