package layers

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"
)

// BiasScheme is a position scheme that biases attention scores: it turns
// the scheme's parameters (a small tensor, the value of the attention op's
// second input) into the bias that the attention kernel adds to the scores,
// tile by tile, without ever building a (T, T) array. The parameters are a
// constant buffer (the ALiBi slopes) or trainable weights, whose gradient
// the attention op then returns.
//
// The schemes of this package: AlibiScheme (constant slopes), the learned
// T5Scheme, KerpleScheme and FireScheme, and FullBiasScheme (a materialised
// (T, T) bias, the reference the others are tested against). Rotary
// positions change the queries and keys instead (Rope).
type BiasScheme interface {
	// Name identifies the scheme and its settings; it is part of the
	// attention op's hash.
	Name() string
	// checkParams reports whether params fits a call with this many heads
	// and queries per sequence.
	checkParams(params tensor.Shape, heads, qLen int) error
	// tile returns the kernel bias (a tileBias[float32] or tileBias[float64],
	// following params, a []float32 or []float64) for keys up to kLen. cache
	// is the op's, to keep what can be reused from call to call.
	tile(params any, heads, kLen int, cache *any) any
	// trainable reports whether the parameters receive a gradient.
	trainable() bool
	// paramGrad turns biasGrad, the gradient of the tile's entries (of
	// length gradLen of the tile, which is then a learnedBias), into the
	// gradient of the parameters, written to out.
	paramGrad(params, biasGrad, out any)
}

// AlibiScheme is the ALiBi bias of Press et al.: head h adds -m_h*(i-j) to
// the score of the query at position i on key j. Its parameters are the
// slopes m_h (a (heads) tensor from AlibiSlopes), a constant buffer: they get
// no gradient. The kernel reads the biases from one table per head, built
// by AlibiBias, so the formula has exactly one implementation.
type AlibiScheme struct{}

// Name implements BiasScheme.
func (AlibiScheme) Name() string { return "alibi" }

func (AlibiScheme) checkParams(p tensor.Shape, heads, _ int) error {
	if len(p) != 1 || p[0] != heads {
		return fmt.Errorf("ALiBi slopes have shape %v, want (%d)", p, heads)
	}
	return nil
}

func (AlibiScheme) trainable() bool       { return false }
func (AlibiScheme) paramGrad(_, _, _ any) {}
func (s AlibiScheme) tile(params any, heads, kLen int, cache *any) any {
	switch p := params.(type) {
	case []float32:
		return alibiTables[float32](p, kLen, cache)
	case []float64:
		s32 := make([]float32, len(p))
		for i, v := range p {
			s32[i] = float32(v)
		}
		return alibiTables[float64](s32, kLen, cache)
	}
	panic(fmt.Sprintf("layers: ALiBi slopes of type %T", params))
}

// alibiTables returns the distance tables of the slopes for at least kLen
// keys: row h is the last query row of AlibiBias(slopes, 1, n, n-1, true),
// the biases of distances n-1 down to 0. The tables are kept in *cache and
// reused while the slopes stay and the length suffices; they grow by
// doubling, so that generating token after token rebuilds them a
// logarithmic number of times, not once per token.
func alibiTables[T float](slopes []float32, kLen int, cache *any) distanceBias[T] {
	if c, ok := (*cache).(*alibiCache[T]); ok && c.n >= kLen && slices.Equal(c.slopes, slopes) {
		return c.bias
	}
	n := kLen
	if c, ok := (*cache).(*alibiCache[T]); ok && slices.Equal(c.slopes, slopes) {
		n = max(kLen, 2*c.n)
	}
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
	c := &alibiCache[T]{slopes: slices.Clone(slopes), n: n, bias: distanceBias[T]{tables: tables}}
	*cache = c
	return c.bias
}

// alibiCache is what AlibiScheme keeps between calls.
type alibiCache[T float] struct {
	slopes []float32
	n      int
	bias   distanceBias[T]
}

// distanceBias is a bias that depends on the head and on the distance
// d = pos - j from the query back to the key only. tables[h][t] is the bias
// of distance len-1-t (a nil table is no bias): the keys of a row, whose
// distances fall by one per key, read a contiguous slice, so adding a row's
// biases is one vector addition. Its gradient has the tables' layout.
type distanceBias[T float] struct {
	tables [][]T
}

func (b distanceBias[T]) add(h, pos, j0 int, row []T) {
	r := b.tables[h]
	if r == nil {
		return
	}
	t := len(r) - 1 - (pos - j0) // the row's first key is the farthest
	addTo(row, r[t:t+len(row)])
}

// gradLen is heads x table length; a head without a table has no entries
// but keeps its place.
func (b distanceBias[T]) gradLen() int {
	n := 0
	for _, r := range b.tables {
		n = max(n, len(r))
	}
	return len(b.tables) * n
}

func (b distanceBias[T]) accumulate(acc []T, h, pos, j0 int, ds []T) {
	r := b.tables[h]
	if r == nil {
		return
	}
	n := len(acc) / len(b.tables)
	t := len(r) - 1 - (pos - j0)
	addTo(acc[h*n+t:h*n+t+len(ds)], ds)
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

func (FullBiasScheme) checkParams(p tensor.Shape, heads, qLen int) error {
	if len(p) != 3 || (p[0] != 1 && p[0] != heads) || p[1] != qLen || p[2] != qLen {
		return fmt.Errorf("a full bias has shape %v, want (%d or 1, %d, %d)", p, heads, qLen, qLen)
	}
	return nil
}

func (FullBiasScheme) trainable() bool { return true }

func (FullBiasScheme) tile(params any, heads, kLen int, _ *any) any {
	switch p := params.(type) {
	case []float32:
		return newFullBias(p, len(p)/(kLen*kLen), kLen, kLen, 0)
	case []float64:
		return newFullBias(p, len(p)/(kLen*kLen), kLen, kLen, 0)
	}
	panic(fmt.Sprintf("layers: full bias of type %T", params))
}

func (FullBiasScheme) paramGrad(_, biasGrad, out any) {
	switch g := biasGrad.(type) {
	case []float32:
		copy(out.([]float32), g)
	case []float64:
		copy(out.([]float64), g)
	}
}
