package layers

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// LastRows takes the last k of every t rows of x (batch*t, D): the result is
// (batch*k, D), sequence after sequence. A graph that scores only the last
// rows of each sequence uses it to carry the residual stream of those rows
// alone. It has no gradient: it serves graphs without one.
func LastRows(x *G.Node, t, k int) (*G.Node, error) {
	if x.Dims() != 2 || t < 1 || k < 1 || k > t || x.Shape()[0]%t != 0 {
		return nil, fmt.Errorf("lastrows: cannot take the last %d of every %d rows of %v", k, t, x.Shape())
	}
	op := &lastRowsOp{opBase: opBase{key: fmt.Sprintf("LastRows{t=%d, k=%d}", t, k), arity: 1, typ: hm.NewFnType(tt(2, tvA), tt(2, tvA))}, t: t, k: k}
	return G.ApplyOp(op, x)
}

type lastRowsOp struct {
	opBase
	t, k int
}

func (o *lastRowsOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	x, err := shapeOf(o.key, in, 0)
	if err != nil {
		return nil, err
	}
	if len(x) != 2 || x[0]%o.t != 0 {
		return nil, fmt.Errorf("%s: input of shape %v", o.key, x)
	}
	return tensor.Shape{x[0] / o.t * o.k, x[1]}, nil
}

func (o *lastRowsOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	x, err := dense(o.key, vals[0])
	if err != nil {
		return nil, err
	}
	rows, d := x.Shape()[0], x.Shape()[1]
	if rows%o.t != 0 {
		return nil, fmt.Errorf("%s: input of shape %v", o.key, x.Shape())
	}
	out := o.output(x.Dtype(), rows/o.t*o.k, d)
	switch x.Dtype() {
	case tensor.Float32:
		lastRows(elems[float32](x), elems[float32](out), o.t, o.k, d)
	case tensor.Float64:
		lastRows(elems[float64](x), elems[float64](out), o.t, o.k, d)
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, x.Dtype())
	}
	return out, nil
}

func lastRows[T float](x, out []T, t, k, d int) {
	for b := 0; b < len(out)/(k*d); b++ {
		copy(out[b*k*d:(b+1)*k*d], x[(b*t+t-k)*d:(b+1)*t*d])
	}
}

func (o *lastRowsOp) DiffWRT(int) []bool { return []bool{false} }

func (o *lastRowsOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("%s: no gradient (it serves graphs without one)", o.key)
}
