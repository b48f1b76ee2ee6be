package layers

import (
	"github.com/alibi-go/alibi/layers/position"
)

// DrawnPositions are the positions of the rows of every sequence of a
// training graph when they are not 0..T-1: randomized positional encodings
// (position.DrawPositions) train each step on a sorted draw of distinct
// positions from [0, M). P has one entry per row of a sequence, sorted and
// distinct, the same for every sequence of the batch; the graph's owner
// sets it before each run. Rope and the attention's position bias read it
// (package model fills the sinusoidal rows from it).
type DrawnPositions struct{ P []int }

// end is one past the largest position.
func (d *DrawnPositions) end() int { return d.P[len(d.P)-1] + 1 }

// drawnBias is a kernel bias at drawn positions: the bias of the query in
// row i and the key in row j is the scheme's at positions P[i] and P[j]
// (P[j] <= P[i] for j <= i, since P is sorted), one key at a time.
type drawnBias[T float] struct {
	inner position.KernelBias[T]
	p     []int
}

func (b drawnBias[T]) Add(h, pos, j0 int, row []T) {
	pi := b.p[pos]
	for k := range row {
		var one [1]T
		b.inner.Add(h, pi, b.p[j0+k], one[:])
		row[k] += one[0]
	}
}

// drawnTrainable is drawnBias for a trainable scheme: its gradient
// accumulates into the entries the drawn positions used.
type drawnTrainable[T float] struct {
	drawnBias[T]
	tb position.TrainableBias[T]
}

func (b drawnTrainable[T]) GradLen() int { return b.tb.GradLen() }

func (b drawnTrainable[T]) Accumulate(acc []T, h, pos, j0 int, ds []T) {
	pi := b.p[pos]
	for k := range ds {
		b.tb.Accumulate(acc, h, pi, b.p[j0+k], ds[k:k+1])
	}
}

// atDrawn returns the kernel bias kb (made for keys up to the largest drawn
// position) at the drawn positions p.
func atDrawn[T float](kb position.KernelBias[T], p []int) position.KernelBias[T] {
	d := drawnBias[T]{inner: kb, p: p}
	if tb, ok := kb.(position.TrainableBias[T]); ok {
		return drawnTrainable[T]{drawnBias: d, tb: tb}
	}
	return d
}
