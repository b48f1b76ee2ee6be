package layers

import (
	"fmt"
	"github.com/alibi-go/alibi/layers/internal/flash"

	"gorgonia.org/tensor"
)

// AlibiScheme is the ALiBi bias of Press et al.: head h adds -m_h*(i-j) to
// the score of the query at position i on key j. Its parameters are the
// slopes m_h (a (heads) tensor from AlibiSlopes), a constant buffer: they get
// no gradient. The kernel reads the biases from one table per head, built
// by AlibiBias, so the formula has exactly one implementation.
type AlibiScheme struct{}

// Name implements BiasScheme.
func (AlibiScheme) Name() string { return "alibi" }

// CheckParams implements BiasScheme: the slopes are a (heads) tensor.
func (AlibiScheme) CheckParams(p tensor.Shape, call BiasCall) error {
	if len(p) != 1 || p[0] != call.Heads {
		return fmt.Errorf("ALiBi slopes have shape %v, want (%d)", p, call.Heads)
	}
	return nil
}

// Trainable implements BiasScheme: the slopes are constant.
func (AlibiScheme) Trainable() bool { return false }

// ParamGrad32 implements BiasScheme; the slopes have no gradient.
func (AlibiScheme) ParamGrad32(_, _, _ []float32) {}

// ParamGrad64 implements BiasScheme; the slopes have no gradient.
func (AlibiScheme) ParamGrad64(_, _, _ []float64) {}

// Bias32 implements BiasScheme: the distance tables of the slopes.
func (AlibiScheme) Bias32(slopes []float32, _, kLen int) KernelBias[float32] {
	return alibiTables[float32](slopes, kLen)
}

// Bias64 implements BiasScheme: the distance tables of the slopes, which
// are rounded to float32 first, as the tables are made by AlibiBias.
func (AlibiScheme) Bias64(slopes []float64, _, kLen int) KernelBias[float64] {
	s32 := make([]float32, len(slopes))
	for i, v := range slopes {
		s32[i] = float32(v)
	}
	return alibiTables[float64](s32, kLen)
}

// alibiTables returns the distance tables of the slopes for kLen keys: row
// h is the last query row of AlibiBias(slopes, 1, n, n-1, true), the biases
// of distances n-1 down to 0, so the formula has one implementation.
func alibiTables[T float](slopes []float32, n int) distanceBias[T] {
	b := elems[float32](AlibiBias(slopes, 1, n, n-1, true))
	tables := make([][]T, len(slopes))
	for h, m := range slopes {
		if m == 0 {
			continue // no bias: the plain causal mask
		}
		tables[h] = make([]T, n)
		for t, v := range b[h*n : (h+1)*n] {
			tables[h][t] = T(v)
		}
	}
	return distanceBias[T]{tables: tables}
}

// distanceBias is a bias that depends on the head and on the distance
// d = pos - j from the query back to the key only. tables[h][t] is the bias
// of distance len-1-t (a nil table is no bias): the keys of a row, whose
// distances fall by one per key, read a contiguous slice, so adding a row's
// biases is one vector addition. Its gradient has the tables' layout.
type distanceBias[T float] struct {
	tables [][]T
}

func (b distanceBias[T]) Add(h, pos, j0 int, row []T) {
	r := b.tables[h]
	if r == nil {
		return
	}
	t := len(r) - 1 - (pos - j0) // the row's first key is the farthest
	flash.AddTo(row, r[t:t+len(row)])
}

// gradLen is heads x table length; a head without a table has no entries
// but keeps its place.
func (b distanceBias[T]) GradLen() int {
	n := 0
	for _, r := range b.tables {
		n = max(n, len(r))
	}
	return len(b.tables) * n
}

func (b distanceBias[T]) Accumulate(acc []T, h, pos, j0 int, ds []T) {
	r := b.tables[h]
	if r == nil {
		return
	}
	n := len(acc) / len(b.tables)
	t := len(r) - 1 - (pos - j0)
	flash.AddTo(acc[h*n+t:h*n+t+len(ds)], ds)
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

// Name implements BiasScheme.
func (FullBiasScheme) Name() string { return "full" }

// CheckParams implements BiasScheme: (heads or 1, qLen, qLen), and no
// key/value cache, whose keys the tensor does not cover.
func (FullBiasScheme) CheckParams(p tensor.Shape, call BiasCall) error {
	heads, qLen := call.Heads, call.QueryLen
	if call.Cached {
		return fmt.Errorf("a full (T, T) bias cannot be used with a key/value cache")
	}
	if len(p) != 3 || (p[0] != 1 && p[0] != heads) || p[1] != qLen || p[2] != qLen {
		return fmt.Errorf("a full bias has shape %v, want (%d or 1, %d, %d)", p, heads, qLen, qLen)
	}
	return nil
}

// Trainable implements BiasScheme: every entry is learned.
func (FullBiasScheme) Trainable() bool { return true }

// Bias32 implements BiasScheme: the tensor itself, for kLen queries and keys.
func (FullBiasScheme) Bias32(p []float32, _, kLen int) KernelBias[float32] {
	return newFullBias(p, len(p)/(kLen*kLen), kLen, kLen, 0)
}

// Bias64 implements BiasScheme: the tensor itself, for kLen queries and keys.
func (FullBiasScheme) Bias64(p []float64, _, kLen int) KernelBias[float64] {
	return newFullBias(p, len(p)/(kLen*kLen), kLen, kLen, 0)
}

// ParamGrad32 implements BiasScheme: the gradient has the tensor's layout.
func (FullBiasScheme) ParamGrad32(_, biasGrad, out []float32) { copy(out, biasGrad) }

// ParamGrad64 implements BiasScheme: the gradient has the tensor's layout.
func (FullBiasScheme) ParamGrad64(_, biasGrad, out []float64) { copy(out, biasGrad) }
