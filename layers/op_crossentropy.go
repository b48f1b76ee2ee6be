package layers

import (
	"fmt"
	"math"

	"github.com/alibi-go/alibi/layers/internal/vmath"
	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// CrossEntropy is the mean negative log-likelihood, in nats, of integer
// targets (N) under the rows of logits (N, V): mean_i -log softmax(logits_i)[t_i].
// targets must be an Int tensor node; it receives no gradient.
func CrossEntropy(logits, targets *G.Node) (*G.Node, error) {
	if logits.Dims() != 2 || targets.Dims() != 1 {
		return nil, fmt.Errorf("cross-entropy: want logits (N, V) and targets (N), got %v and %v", logits.Shape(), targets.Shape())
	}
	op := &crossEntropyOp{opBase{key: "CrossEntropy{mean}", arity: 2, typ: hm.NewFnType(tt(2, tvA), intVec, tvA)}}
	return G.ApplyOp(op, logits, targets)
}

type crossEntropyOp struct{ opBase }

func (o *crossEntropyOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	l, err := shapeOf(o.key, in, 0)
	if err != nil {
		return nil, err
	}
	t, err := shapeOf(o.key, in, 1)
	if err != nil {
		return nil, err
	}
	if len(l) != 2 || t.TotalSize() != l[0] {
		return nil, fmt.Errorf("%s: %d targets for logits %v", o.key, t.TotalSize(), l)
	}
	return tensor.ScalarShape(), nil
}

// xentInputs reads the logits and the checked integer targets.
func xentInputs(key string, vals []G.Value) (*tensor.Dense, []int, error) {
	l, err := dense(key, vals[0])
	if err != nil {
		return nil, nil, err
	}
	ids, err := indices(key, vals[1], "target", l.Shape()[1], "vocabulary of %d")
	if err != nil {
		return nil, nil, err
	}
	return l, ids, nil
}

// indices reads v as an Int tensor of indices, each in [0, n); what names
// one index and where names the range in errors: a format whose one verb
// takes n.
func indices(key string, v G.Value, what string, n int, where string) ([]int, error) {
	t, err := dense(key, v)
	if err != nil {
		return nil, err
	}
	if t.Dtype() != tensor.Int {
		return nil, fmt.Errorf("%s: %ss must be int, got %v", key, what, t.Dtype())
	}
	ids := elems[int](t)
	for i, id := range ids {
		if id < 0 || id >= n {
			return nil, fmt.Errorf("%s: %s %d at position %d is outside the "+where, key, what, id, i, n)
		}
	}
	return ids, nil
}

func (o *crossEntropyOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	l, ids, err := xentInputs(o.key, vals)
	if err != nil {
		return nil, err
	}
	nll := make([]float64, len(ids))
	switch l.Dtype() {
	case tensor.Float32:
		x := elems[float32](l)
		TokenNLL(x, l.Shape()[1], ids, nll)
		return G.NewF32(float32(mean(nll))), nil
	case tensor.Float64:
		x := elems[float64](l)
		TokenNLL(x, l.Shape()[1], ids, nll)
		return G.NewF64(mean(nll)), nil
	}
	return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, l.Dtype())
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func (o *crossEntropyOp) DiffWRT(int) []bool { return []bool{true, false} }

func (o *crossEntropyOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	b := &crossEntropyGradOp{opBase{key: "CrossEntropyGrad{mean}", arity: 3,
		typ: hm.NewFnType(tt(2, tvA), intVec, tvA, tt(2, tvA))}}
	n, err := G.ApplyOp(b, in[0], in[1], grad)
	return G.Nodes{n, nil}, err
}

// TokenNLL writes, for each row i of logits (len(targets) x v), the negative
// log-likelihood -log softmax(row_i)[targets[i]] in nats, computed stably in
// float64. It is the one implementation of the loss, shared by training and
// evaluation.
func TokenNLL[T float](logits []T, v int, targets []int, out []float64) {
	if l32, ok := any(logits).([]float32); ok {
		tokenNLL32(l32, v, targets, out)
		return
	}
	parallelChunks(len(targets), 64, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			row := logits[i*v : (i+1)*v]
			mx, lse := logSumExp(row)
			out[i] = mx + lse - float64(row[targets[i]])
		}
	})
}

// tokenNLL32 is TokenNLL with the vmath kernels: the exponentials in float32
// (relative error below 5e-7), their sum and the logarithm in float64.
func tokenNLL32(logits []float32, v int, targets []int, out []float64) {
	parallelChunks(len(targets), 64, func(_, lo, hi int) {
		buf := make([]float32, v)
		for i := lo; i < hi; i++ {
			row := logits[i*v : (i+1)*v]
			mx := vmath.Max(row)
			copy(buf, row)
			out[i] = float64(mx) + math.Log(float64(vmath.ExpSubSum(buf, mx))) - float64(row[targets[i]])
		}
	})
}

// logSumExp returns (max, log sum exp(row-max)).
func logSumExp[T float](row []T) (float64, float64) {
	mx := math.Inf(-1)
	for _, x := range row {
		if float64(x) > mx {
			mx = float64(x)
		}
	}
	var s float64
	for _, x := range row {
		s += math.Exp(float64(x) - mx)
	}
	return mx, math.Log(s)
}

// crossEntropyGradOp: d logits = g * (softmax(logits) - onehot(target)) / N.
type crossEntropyGradOp struct{ opBase }

func (o *crossEntropyGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return sameShape(o.key, in, 0)
}

func (o *crossEntropyGradOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	l, ids, err := xentInputs(o.key, vals)
	if err != nil {
		return nil, err
	}
	g, err := scalarValue(vals[2])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.key, err)
	}
	out := o.output(l.Dtype(), l.Shape()...)
	scale := g / float64(len(ids))
	switch l.Dtype() {
	case tensor.Float32:
		x := elems[float32](l)
		xentBackward(x, l.Shape()[1], ids, scale, elems[float32](out))
	case tensor.Float64:
		x := elems[float64](l)
		xentBackward(x, l.Shape()[1], ids, scale, elems[float64](out))
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, l.Dtype())
	}
	return out, nil
}

func xentBackward[T float](logits []T, v int, targets []int, scale float64, out []T) {
	if l32, ok := any(logits).([]float32); ok {
		xentBackward32(l32, v, targets, float32(scale), any(out).([]float32))
		return
	}
	parallelChunks(len(targets), 64, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			row, or := logits[i*v:(i+1)*v], out[i*v:(i+1)*v]
			mx, lse := logSumExp(row)
			for j, x := range row {
				or[j] = T(scale * math.Exp(float64(x)-mx-lse))
			}
			or[targets[i]] -= T(scale)
		}
	})
}

// xentBackward32 is xentBackward with the vmath kernels.
func xentBackward32(logits []float32, v int, targets []int, scale float32, out []float32) {
	parallelChunks(len(targets), 64, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			row, or := logits[i*v:(i+1)*v], out[i*v:(i+1)*v]
			mx := vmath.Max(row)
			copy(or, row)
			vmath.Scale(or, scale/vmath.ExpSubSum(or, mx))
			or[targets[i]] -= scale
		}
	})
}
