package layers

import (
	"fmt"

	"github.com/alibi-go/alibi/layers/internal/gemm"
	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Linear returns x W + b for x (N, in), W (in, out) and b (out), as one op
// whose product runs on every core; b may be nil.
func Linear(x, w, b *G.Node) (*G.Node, error) { return LinearIn(FP32, x, w, b) }

// LinearIn is Linear with its products (the forward one and the two of the
// backward pass) in precision p: with BF16, float32 x, W and dy are rounded
// to bfloat16 and the products accumulate in float32 (see Precision); the
// bias, the output and the gradients stay float32.
func LinearIn(p Precision, x, w, b *G.Node) (*G.Node, error) {
	if x.Dims() != 2 || w.Dims() != 2 || (b != nil && b.Dims() != 1) {
		return nil, fmt.Errorf("linear: want x (N, in), W (in, out), b (out), got %v and %v", x.Shape(), w.Shape())
	}
	if x.Shape()[1] != w.Shape()[0] || (b != nil && b.Shape()[0] != w.Shape()[1]) {
		return nil, fmt.Errorf("linear: x %v, W %v and b do not fit together", x.Shape(), w.Shape())
	}
	in := G.Nodes{x, w}
	typ := hm.NewFnType(tt(2, tvA), tt(2, tvA), tt(2, tvA))
	if b != nil {
		in = append(in, b)
		typ = hm.NewFnType(tt(2, tvA), tt(2, tvA), tt(1, tvA), tt(2, tvA))
	}
	if err := p.valid(); err != nil {
		return nil, err
	}
	op := &linearOp{opBase: opBase{key: fmt.Sprintf("Linear{bias=%v, %v}", b != nil, p), arity: len(in), typ: typ}, prec: p}
	y, err := G.ApplyOp(op, in...)
	if err != nil {
		return nil, fmt.Errorf("linear %v x %v: %w", x.Shape(), w.Shape(), err)
	}
	return y, nil
}

type linearOp struct {
	opBase
	prec Precision
}

func (o *linearOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	x, err := shapeOf(o.key, in, 0)
	if err != nil {
		return nil, err
	}
	w, err := shapeOf(o.key, in, 1)
	if err != nil {
		return nil, err
	}
	if len(x) != 2 || len(w) != 2 || x[1] != w[0] {
		return nil, fmt.Errorf("%s: cannot multiply %v by %v", o.key, x, w)
	}
	return tensor.Shape{x[0], w[1]}, nil
}

func (o *linearOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	ts, err := o.denseAll(vals)
	if err != nil {
		return nil, err
	}
	n, k, m := ts[0].Shape()[0], ts[0].Shape()[1], ts[1].Shape()[1]
	out := o.output(ts[0].Dtype(), n, m)
	switch ts[0].Dtype() {
	case tensor.Float32:
		x := elems[float32](ts[0])
		linearForward(o.prec, x, elems[float32](ts[1]), biasData[float32](ts), elems[float32](out), n, k, m, nil)
	case tensor.Float64:
		x := elems[float64](ts[0])
		linearForward(FP32, x, elems[float64](ts[1]), biasData[float64](ts), elems[float64](out), n, k, m, nil)
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, ts[0].Dtype())
	}
	return out, nil
}

func biasData[T float](ts []*tensor.Dense) []T {
	if len(ts) < 3 {
		return nil
	}
	return elems[T](ts[2])
}

// linearForward sets y = x w (+ b): the bias is copied into every row first
// and the product added on top (in bf16 the kernel adds it as it stores,
// with the same bits). then (nil for none) runs on finished blocks of y
// (gemm.SgemmThen).
func linearForward[T float](p Precision, x, w, b, y []T, n, k, m int, then gemm.Epilogue) {
	if b != nil && gemmBiasIn(p, n, m, k, x, w, b, y, then) {
		return
	}
	beta := T(0)
	if b != nil {
		beta = 1
		if serial(n, 64) {
			copyRows(y, b, m, 0, n)
		} else {
			parallelChunks(n, 64, func(_, lo, hi int) { copyRows(y, b, m, lo, hi) })
		}
	}
	gemmIn(p, false, false, n, m, k, 1, x, k, w, m, beta, y, m, then)
}

// copyRows copies src into rows lo..hi-1 of dst, whose rows have d
// elements.
func copyRows[T float](dst, src []T, d, lo, hi int) {
	for r := lo; r < hi; r++ {
		copy(dst[r*d:(r+1)*d], src)
	}
}

func (o *linearOp) DiffWRT(n int) []bool { return allTrue(n) }

// allTrue is a DiffWRT of n inputs, all differentiable.
func allTrue(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

// SymDiff: dx = dy W^T, dW = x^T dy, db = the column sums of dy.
func (o *linearOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	var b *G.Node
	if len(in) == 3 {
		b = in[2]
	}
	return linearGrads(o.prec, in[0], in[1], b, grad)
}

// linearGrads returns the gradients of a linear layer's x, W and b (b may
// be nil: then two nodes) for dy, the gradient of its output.
func linearGrads(p Precision, x, w, b, dy *G.Node) (G.Nodes, error) {
	out := G.Nodes{nil, nil}
	var sums *biasSums
	if b != nil {
		sums = &biasSums{}
	}
	for i, wrt := range []int{0, 1} {
		g := &linearGradOp{wrt: wrt, prec: p}
		if wrt == 1 {
			g.sums = sums
		}
		g.opBase = opBase{key: fmt.Sprintf("LinearGrad{wrt=%d, %v}", wrt, p), arity: 3,
			typ: hm.NewFnType(tt(2, tvA), tt(2, tvA), tt(2, tvA), tt(2, tvA))}
		n, err := G.ApplyOp(g, x, w, dy)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	if b != nil {
		db, err := biasGradOf(dy, out[1], b.Shape(), sums)
		if err != nil {
			return nil, err
		}
		out = append(out, db)
	}
	return out, nil
}

// linearGradOp computes the gradient of x (wrt 0) or W (wrt 1) from x, W
// and dy.
type linearGradOp struct {
	opBase
	wrt  int
	prec Precision
	sums *biasSums // the bias gradient's, for wrt 1 with a bias (else nil)
	ln   *lnAfter  // for wrt 0, the LayerNorm backward to run in its epilogue (else nil)
}

func (o *linearGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return shapeOf(o.key, in, o.wrt)
}

func (o *linearGradOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	ts, err := o.denseAll(vals)
	if err != nil {
		return nil, err
	}
	n, k, m := ts[0].Shape()[0], ts[0].Shape()[1], ts[1].Shape()[1]
	out := o.output(ts[0].Dtype(), ts[o.wrt].Shape()...)
	switch ts[0].Dtype() {
	case tensor.Float32:
		x := elems[float32](ts[0])
		if o.wrt == 1 {
			weightGrad(o.prec, x, elems[float32](ts[2]), elems[float32](out), n, k, m, o.sums)
			break
		}
		if o.ln != nil && o.ln.start(out) {
			linearBackward(o.prec, 0, x, elems[float32](ts[1]), elems[float32](ts[2]), elems[float32](out), n, k, m, o.ln.then)
			o.ln.finish(out)
			break
		}
		linearBackward(o.prec, o.wrt, x, elems[float32](ts[1]), elems[float32](ts[2]), elems[float32](out), n, k, m, nil)
	case tensor.Float64:
		x := elems[float64](ts[0])
		linearBackward(FP32, o.wrt, x, elems[float64](ts[1]), elems[float64](ts[2]), elems[float64](out), n, k, m, nil)
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, ts[0].Dtype())
	}
	return out, nil
}

// weightGrad sets out = x^T dy (x n x k, dy n x m), the weight gradient,
// in precision p; with sums (nil for none) it also hands the bias gradient
// over in sums when the product took dy's column sums as it packed dy
// (float32 in fp32 on the package's kernel), and marks them not taken
// otherwise.
func weightGrad(p Precision, x, dy, out []float32, n, k, m int, sums *biasSums) {
	if sums == nil || p != FP32 {
		if sums != nil {
			sums.ok = false
		}
		linearBackward(p, 1, x, nil, dy, out, n, k, m, nil)
		return
	}
	if len(sums.sums) != m {
		sums.sums = make([]float32, m)
	}
	sums.ok = sgemmSumB(n, k, m, x, dy, out, sums.sums)
}

func linearBackward[T float](p Precision, wrt int, x, w, dy, out []T, n, k, m int, then gemm.Epilogue) {
	if wrt == 0 {
		gemmIn(p, false, true, n, k, m, 1, dy, m, w, m, 0, out, k, then) // dx = dy W^T
		return
	}
	gemmIn(p, true, false, k, m, n, 1, x, k, dy, m, 0, out, m, then) // dW = x^T dy
}
