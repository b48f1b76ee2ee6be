package layers

import (
	"fmt"

	"github.com/alibi-go/alibi/layers/internal/flash"
)

// KernelBias is an additive position bias applied inside the tiled
// attention kernels, one row of keys at a time, so that no (T, T) bias is
// ever built. A BiasScheme returns one for a call's geometry.
//
// Add adds the bias of head h for the query at absolute position pos to the
// scores of keys j0..j0+len(row)-1, all of which are <= pos (the kernels
// never ask for masked keys). It is called concurrently from several
// goroutines and must not modify the receiver.
type KernelBias[T float] interface {
	Add(h, pos, j0 int, row []T)
}

// TrainableBias is a KernelBias with trainable entries. The backward kernel
// passes it dS, the gradient of the loss with respect to the biased scores,
// which is also the gradient with respect to the bias entries that were
// added to them.
//
// GradLen is the size of one gradient accumulator (for example the number
// of entries of a bias table). Accumulate adds the gradient ds of the
// entries that Add(h, pos, j0, row) used, row by row, into acc; it must
// touch only acc and is called concurrently on distinct accumulators.
type TrainableBias[T float] interface {
	KernelBias[T]
	GradLen() int
	Accumulate(acc []T, h, pos, j0 int, ds []T)
}

// fullBias is a materialised bias tensor of shape (heads, qLen, kLen), heads
// being the number of attention heads or 1 (one matrix shared by all heads),
// as built by AlibiBias or CausalMask: query row i stands at absolute
// position offset+i and key column j at position j. It serves as the
// reference ("materialised") path and as a bias whose every entry is
// trainable: its gradient has the tensor's shape, and a shared matrix
// receives the sum over heads. Only entries of visible keys (j <= offset+i)
// are read or receive a gradient.
type fullBias[T float] struct {
	data                      []T
	heads, qLen, kLen, offset int
}

// newFullBias wraps data, which must have heads*qLen*kLen elements. Every
// sequence of a kernel call using it must have this offset.
func newFullBias[T float](data []T, heads, qLen, kLen, offset int) fullBias[T] {
	if heads < 1 || qLen < 0 || offset < 0 || kLen < offset+qLen || len(data) != heads*qLen*kLen {
		panic(fmt.Sprintf("layers: bias of %d elements is not (%d, %d, %d) with offset %d <= kLen-qLen",
			len(data), heads, qLen, kLen, offset))
	}
	return fullBias[T]{data: data, heads: heads, qLen: qLen, kLen: kLen, offset: offset}
}

// index returns the position of the entry (h, query pos, key j0) in data.
func (b fullBias[T]) index(h, pos, j0 int) int {
	if b.heads == 1 {
		h = 0
	}
	return (h*b.qLen+pos-b.offset)*b.kLen + j0
}

func (b fullBias[T]) Add(h, pos, j0 int, row []T) {
	i := b.index(h, pos, j0)
	flash.AddTo(row, b.data[i:i+len(row)])
}

func (b fullBias[T]) GradLen() int { return len(b.data) }

func (b fullBias[T]) Accumulate(acc []T, h, pos, j0 int, ds []T) {
	i := b.index(h, pos, j0)
	flash.AddTo(acc[i:i+len(ds)], ds)
}
