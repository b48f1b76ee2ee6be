package layerstest

import (
	"fmt"

	"github.com/alibi-go/alibi/layers/internal/vmath"
	"github.com/alibi-go/alibi/layers/position"
	"gorgonia.org/tensor"
)

// FullBias is a materialised bias tensor of shape (heads, qLen, kLen), heads
// being the number of attention heads or 1 (one matrix shared by all heads),
// as built by AlibiBias or CausalMask: query row i stands at absolute
// position offset+i and key column j at position j. It serves as the
// reference ("materialised") path and as a bias whose every entry is
// trainable: its gradient has the tensor's shape, and a shared matrix
// receives the sum over heads. Only entries of visible keys (j <= offset+i)
// are read or receive a gradient.
type FullBias[T position.Float] struct {
	data                      []T
	heads, qLen, kLen, offset int
}

// NewFullBias wraps data, which must have heads*qLen*kLen elements. Every
// sequence of a kernel call using it must have this offset.
func NewFullBias[T position.Float](data []T, heads, qLen, kLen, offset int) FullBias[T] {
	if heads < 1 || qLen < 0 || offset < 0 || kLen < offset+qLen || len(data) != heads*qLen*kLen {
		panic(fmt.Sprintf("layerstest: bias of %d elements is not (%d, %d, %d) with offset %d <= kLen-qLen",
			len(data), heads, qLen, kLen, offset))
	}
	return FullBias[T]{data: data, heads: heads, qLen: qLen, kLen: kLen, offset: offset}
}

// index returns the position of the entry (h, query pos, key j0) in data.
func (b FullBias[T]) index(h, pos, j0 int) int {
	if b.heads == 1 {
		h = 0
	}
	return (h*b.qLen+pos-b.offset)*b.kLen + j0
}

// Data returns the bias entries, in place: changing them changes the bias.
func (b FullBias[T]) Data() []T { return b.data }

// Add implements position.KernelBias.
func (b FullBias[T]) Add(h, pos, j0 int, row []T) {
	i := b.index(h, pos, j0)
	vmath.AddTo(row, b.data[i:i+len(row)])
}

// GradLen implements position.TrainableBias: one entry per bias entry.
func (b FullBias[T]) GradLen() int { return len(b.data) }

// Accumulate implements position.TrainableBias.
func (b FullBias[T]) Accumulate(acc []T, h, pos, j0 int, ds []T) {
	i := b.index(h, pos, j0)
	vmath.AddTo(acc[i:i+len(ds)], ds)
}

// FullBiasScheme is a materialised bias: its parameter is the whole
// (heads or 1, T, T) tensor of biases for a call of T queries at offset 0,
// as AlibiBias or CausalMask build it (one matrix shared by every head when
// its first dimension is 1). Only the entries of visible keys (j <= i) are
// used. It is the reference against which the schemes that compute their
// bias inside the kernel are tested, and a bias whose every entry can be
// learned: its gradient has the tensor's shape, summed over the batch (and
// over heads for a shared matrix). It costs memory quadratic in T.
type FullBiasScheme struct{}

// Name implements position.BiasScheme.
func (FullBiasScheme) Name() string { return "full" }

// CheckParams implements position.BiasScheme: (heads or 1, qLen, qLen), and no
// key/value cache, whose keys the tensor does not cover.
func (FullBiasScheme) CheckParams(p tensor.Shape, call position.BiasCall) error {
	heads, qLen := call.Heads, call.QueryLen
	if call.Cached {
		return fmt.Errorf("a full (T, T) bias cannot be used with a key/value cache")
	}
	if len(p) != 3 || (p[0] != 1 && p[0] != heads) || p[1] != qLen || p[2] != qLen {
		return fmt.Errorf("a full bias has shape %v, want (%d or 1, %d, %d)", p, heads, qLen, qLen)
	}
	return nil
}

// Trainable implements position.BiasScheme: every entry is learned.
func (FullBiasScheme) Trainable() bool { return true }

// Bias32 implements position.BiasScheme: the tensor itself, for kLen queries and keys.
func (FullBiasScheme) Bias32(p []float32, _, kLen int) position.KernelBias[float32] {
	return NewFullBias(p, len(p)/(kLen*kLen), kLen, kLen, 0)
}

// Bias64 implements position.BiasScheme: the tensor itself, for kLen queries and keys.
func (FullBiasScheme) Bias64(p []float64, _, kLen int) position.KernelBias[float64] {
	return NewFullBias(p, len(p)/(kLen*kLen), kLen, kLen, 0)
}

// ParamGrad32 implements position.BiasScheme: the gradient has the tensor's layout.
func (FullBiasScheme) ParamGrad32(_, biasGrad, out []float32) { copy(out, biasGrad) }

// ParamGrad64 implements position.BiasScheme: the gradient has the tensor's layout.
func (FullBiasScheme) ParamGrad64(_, biasGrad, out []float64) { copy(out, biasGrad) }
