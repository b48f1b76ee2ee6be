package layers

import (
	"fmt"
	"hash"
	"hash/fnv"
	"io"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// opBase carries the bookkeeping every custom op shares. key must spell out
// every parameter of the op: Gorgonia merges nodes whose ops hash alike.
type opBase struct {
	key   string
	arity int
	typ   hm.Type
	out   *tensor.Dense   // the output buffer, reused from run to run
	pool  *Buffers        // if set, where out comes from (see PooledOp)
	ins   []*tensor.Dense // the inputs of the current run (denseAll)
}

func (o opBase) Arity() int            { return o.arity }
func (o opBase) Type() hm.Type         { return o.typ }
func (o opBase) ReturnsPtr() bool      { return false }
func (o opBase) CallsExtern() bool     { return false }
func (o opBase) OverwritesInput() int  { return -1 }
func (o opBase) WriteHash(h hash.Hash) { io.WriteString(h, o.key) }
func (o opBase) String() string        { return o.key }
func (o opBase) Hashcode() uint32      { h := fnv.New32a(); o.WriteHash(h); return h.Sum32() }
func (o opBase) checkArity(n int) error {
	if n != o.arity {
		return fmt.Errorf("%s: got %d inputs, want %d", o.key, n, o.arity)
	}
	return nil
}

// output returns the op's output tensor: allocated on the first run and
// reused by every later run of the same shape, so a training step allocates
// nothing. Its contents are stale; every kernel overwrites all of it. A
// graph's values are therefore valid until its next run. An op that uses
// Buffers borrows its output from them instead, and only the values that
// are never released stay valid after the run.
func (o *opBase) output(dt tensor.Dtype, shape ...int) *tensor.Dense {
	if o.pool != nil {
		if o.out != nil && (o.out.Dtype() != dt || !o.out.Shape().Eq(tensor.Shape(shape))) {
			o.ReleaseOutput()
		}
		if o.out == nil {
			o.out = o.pool.get(dt, shape...)
		}
		return o.out
	}
	if o.out == nil || o.out.Dtype() != dt || !o.out.Shape().Eq(tensor.Shape(shape)) {
		o.out = newLike(dt, shape...)
	}
	return o.out
}

// tt is a tensor type of the given rank over element type a.
func tt(dims int, of hm.Type) G.TensorType { return G.TensorType{Dims: dims, Of: of} }

var (
	tvA    = hm.TypeVariable('a')
	intVec = tt(1, tensor.Int)
)

// shapeOf returns input i of InferShape as a shape.
func shapeOf(op string, in []G.DimSizer, i int) (tensor.Shape, error) {
	if i >= len(in) {
		return nil, fmt.Errorf("%s: missing input %d", op, i)
	}
	s, ok := in[i].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("%s: input %d has no static shape", op, i)
	}
	return s, nil
}

// sameShape returns a copy of input i's shape: InferShape of an op whose
// output has the shape of that input.
func sameShape(op string, in []G.DimSizer, i int) (tensor.Shape, error) {
	s, err := shapeOf(op, in, i)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}
