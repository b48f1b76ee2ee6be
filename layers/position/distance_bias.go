package position

import "github.com/alibi-go/alibi/layers/internal/vmath"

// distanceBias is a bias that depends on the head and on the distance
// d = pos - j from the query back to the key only. tables[h][t] is the bias
// of distance len-1-t (a nil table is no bias): the keys of a row, whose
// distances fall by one per key, read a contiguous slice, so adding a row's
// biases is one vector addition. Its gradient has the tables' layout.
type distanceBias[T float] struct {
	tables [][]T
}

// first returns the index in head h's table of the bias of key j0 for the
// query at pos (the row's first key is the farthest), and whether the head
// has a table.
func (b distanceBias[T]) first(h, pos, j0 int) (int, bool) {
	r := b.tables[h]
	return len(r) - 1 - (pos - j0), r != nil
}

func (b distanceBias[T]) Add(h, pos, j0 int, row []T) {
	if t, ok := b.first(h, pos, j0); ok {
		vmath.AddTo(row, b.tables[h][t:t+len(row)])
	}
}

// AddMax is Add that returns the maximum of the biased row (flash.MaxBias).
func (b distanceBias[T]) AddMax(h, pos, j0 int, row []T) T {
	t, ok := b.first(h, pos, j0)
	if !ok {
		return vmath.MaxOf(row)
	}
	return vmath.AddToMax(row, b.tables[h][t:t+len(row)])
}

// AddExpShift is Add on row[:n] followed by row[i] = exp(row[i] - shift)
// over the whole row, in one pass for float32 (flash.ExpBias).
func (b distanceBias[T]) AddExpShift(h, pos, j0 int, row []T, n int, shift T) {
	var bias []T
	if t, ok := b.first(h, pos, j0); ok {
		bias = b.tables[h][t : t+n]
	}
	vmath.ExpAddSubOf(row, bias, shift)
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
	t, ok := b.first(h, pos, j0)
	if !ok {
		return
	}
	n := len(acc) / len(b.tables)
	vmath.AddTo(acc[h*n+t:h*n+t+len(ds)], ds)
}
