package layers

import (
	"gorgonia.org/tensor"
)

// Buffers lends output buffers to the ops of one graph, so that memory
// follows what is live rather than every op the graph has. An op that uses
// Buffers (see PooledOp) takes its output from the pool on each run; the
// runner hands it back (ReleaseOutput) once the last op that reads it has
// run, and a later op of the same element type and size reuses it, the most
// recently returned first (still in the cache). An evaluation graph then
// holds about one layer's buffers, not every layer's: its memory no longer
// grows with the depth. A training graph holds the activations its backward
// pass reads and a few gradients at a time.
//
// A lent buffer keeps whatever its last user wrote: every op of this package
// overwrites all of its output. Buffers is not safe for concurrent use; one
// graph runs its ops one after another.
type Buffers struct {
	free  map[bufKey][]*tensor.Dense
	bytes int64 // of every buffer ever allocated
}

// bufKey is what makes two buffers interchangeable: the element type and
// the number of elements (a buffer is reshaped to its borrower's shape).
type bufKey struct {
	dt tensor.Dtype
	n  int
}

// NewBuffers returns an empty pool.
func NewBuffers() *Buffers { return &Buffers{free: map[bufKey][]*tensor.Dense{}} }

// Bytes is the memory of every buffer the pool has allocated: after a run,
// the most a graph's pooled outputs held at any one time.
func (b *Buffers) Bytes() int64 { return b.bytes }

// get returns a buffer of dt and shape: a free one of the same size,
// reshaped, or a new one.
func (b *Buffers) get(dt tensor.Dtype, shape ...int) *tensor.Dense {
	k := bufKey{dt, tensor.Shape(shape).TotalSize()}
	if list := b.free[k]; len(list) > 0 {
		t := list[len(list)-1]
		b.free[k] = list[:len(list)-1]
		if !t.Shape().Eq(tensor.Shape(shape)) {
			if err := t.Reshape(shape...); err != nil { // same size: cannot fail
				return newLike(dt, shape...)
			}
		}
		return t
	}
	b.bytes += int64(k.n) * int64(dt.Size())
	return newLike(dt, shape...)
}

// put takes a buffer back.
func (b *Buffers) put(t *tensor.Dense) {
	k := bufKey{t.Dtype(), t.Shape().TotalSize()}
	b.free[k] = append(b.free[k], t)
}

// PooledOp is an op whose output buffer can come from Buffers: every op of
// this package. A graph's runner calls UseBuffers on each op before the
// first run, and ReleaseOutput on an op once every reader of its output has
// run in the current run; the op takes a buffer again on its next run. The
// output of an op that is never released (the logits, a training graph's
// loss and weight gradients) stays readable after the run.
type PooledOp interface {
	// UseBuffers makes the op take its output from b on every run.
	UseBuffers(b *Buffers)
	// ReleaseOutput gives the op's output back to its Buffers; its value
	// is not to be read any more in this run.
	ReleaseOutput()
}

// UseBuffers implements PooledOp.
func (o *opBase) UseBuffers(b *Buffers) {
	o.pool = b
	o.out = nil
}

// ReleaseOutput implements PooledOp.
func (o *opBase) ReleaseOutput() {
	if o.pool != nil && o.out != nil {
		o.pool.put(o.out)
		o.out = nil
	}
}

// ScratchOp is a PooledOp that also borrows one scratch buffer of its own
// element type from its Buffers while it runs, after taking its output, and
// gives it back before it returns (the MLP's hidden activations, in a graph
// without gradients). A runner that works out a graph's memory from its
// shapes counts it at that point.
type ScratchOp interface {
	PooledOp
	// ScratchElems is the number of elements of that buffer for inputs of
	// the given shapes, or 0 for none.
	ScratchElems(in ...tensor.Shape) int
}
