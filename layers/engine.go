package layers

import "gorgonia.org/tensor"

// Engine returns the tensor engine to give Gorgonia's tape machine
// (gorgonia.WithEngine), if a graph of this package's ops runs on one (the
// model package runs its graphs op by op instead, with NewAddOp for these
// sums), and that this package's op outputs carry: tensor's
// standard engine with one change. Add of two float32 tensors of one shape,
// into a given result (WithReuse) or into the first operand (UseUnsafe),
// runs on every core. Gorgonia's backward pass sums the gradients of a node
// that several ops read (the residual stream reads each layer's input twice)
// with tensor.Add, in values the tape machine allocates; on the standard
// engine that is one loop on one core while the other waits. tensor.Add
// takes the first operand's engine. The sums are the same float32
// additions, element by element, so results do not change; any other call
// is the standard engine's.
func Engine() tensor.Engine { return engine }

// gradEngine is the engine Engine describes.
type gradEngine struct{ tensor.StdEng }

// engine is the one gradEngine: it has no state.
var engine = &gradEngine{}

// Add is tensor.StdEng's Add, on every core in the cases above.
func (e *gradEngine) Add(a, b tensor.Tensor, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	if out := addInPlace(a, b, opts); out != nil {
		return out, nil
	}
	return e.StdEng.Add(a, b, opts...)
}

// addInPlace computes a + b into the reuse tensor, or into a when unsafe,
// and returns the result; it returns nil, having done nothing, for any
// other case: other types or shapes, views, increments, or a new result.
func addInPlace(a, b tensor.Tensor, opts []tensor.FuncOpt) *tensor.Dense {
	fo := tensor.ParseFuncOpts(opts...)
	reuse, incr, safe := fo.Reuse(), fo.Incr(), fo.Safe()
	ad, okA := a.(*tensor.Dense)
	bd, okB := b.(*tensor.Dense)
	if !okA || !okB || incr != nil || !plainF32(ad) || !plainF32(bd) || !ad.Shape().Eq(bd.Shape()) {
		return nil
	}
	out := ad
	switch {
	case reuse != nil:
		rd, ok := reuse.(*tensor.Dense)
		if !ok || !plainF32(rd) || !rd.Shape().Eq(ad.Shape()) {
			return nil
		}
		out = rd
	case safe:
		return nil
	}
	addVec(ad.Float32s(), bd.Float32s(), out.Float32s())
	return out
}

// plainF32 reports whether t is a float32 tensor whose elements are its
// data in order (not a view, not masked).
func plainF32(t *tensor.Dense) bool {
	return t.Dtype() == tensor.Float32 && !t.RequiresIterator() && !t.IsMasked() && len(t.Float32s()) == t.Shape().TotalSize()
}
