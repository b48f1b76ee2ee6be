package position

import "fmt"

// RopePosition is the scheme "rope" (Su et al., RoFormer): attention
// rotates its queries and keys by their positions (Rope); no embeddings
// and no bias.
type RopePosition struct{ NoPosition }

// Name implements Scheme.
func (RopePosition) Name() string { return "rope" }

// Validate implements Scheme: the head width must be even, as Rope
// rotates pairs of dimensions.
func (RopePosition) Validate(shape ModelShape) error {
	if shape.DHead()%2 != 0 {
		return fmt.Errorf("rotates pairs of dimensions: d_model/n_heads (%d) must be even", shape.DHead())
	}
	return nil
}

// Rotary implements Scheme: yes.
func (RopePosition) Rotary() bool { return true }

// EvalBytes implements Scheme: the table of cosines and sines that the
// layers of a graph share, two float64 per position and frequency (d_head/2
// of them).
func (RopePosition) EvalBytes(shape ModelShape, _, length int) int64 {
	return int64(length) * int64(shape.DHead()/2) * 16
}
