package layers

import (
	"fmt"

	"github.com/alibi-go/alibi/layers/internal/gemm"
	"github.com/alibi-go/alibi/layers/internal/vmath"
	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The MLP block as one op, y = GELU(x W1 + b1) W2 + b2, so that GELU and
// its derivative run inside the products instead of in passes of their
// own over the hidden activations (N x F, the largest tensors of a layer):
//
//   - forward: each block of a = x W1 + b1 is turned into h = GELU(a) by
//     the goroutine that computed it, right after its last k block, while
//     it is still in that core's cache (gemm.SgemmThen); when a gradient
//     will be asked for, also into GELU'(a), written over a, which shares
//     GELU's exponential and division (vmath.GELUAndGrad);
//   - backward: da = GELU'(a) ⊙ (dy W2^T) is computed the same way, the
//     kept derivative multiplied into each finished block of the product
//     dy W2^T, so dh = dy W2^T is never stored. dW2 = h^T dy and db2 come
//     from the kept h and dy; dx, dW1 and db1 are the first layer's usual
//     gradients (linearGrads) of da.
//
// Every element is computed by the same kernels, in the same order, as by
// the composed Linear, GELU, Linear ops. The fusion is used in float32 when
// F is a multiple of 8, so that every GELU element goes through the vector
// kernel (which leaves the last len%8 elements of a call to portable code
// that differs in the last bits); otherwise, and in float64, GELU runs
// after the product, as one call. The results then have the bits of the
// composed ops wherever those ops' parallel chunks were multiples of 8 long
// (every shape of the project's configs); elsewhere a few elements at the
// chunk ends, which the composed ops left to the portable code, can differ
// in the last bits. Once a gradient is asked for, the op keeps GELU'(a)
// (a itself where GELU runs after the product) and h for the backward
// pass in buffers reused from step to step; without one it
// computes h in place of a, in one buffer taken from the graph's Buffers
// when it has them.

// mlpNode applies the fused block (biases required; see MLP.Forward).
func mlpNode(p Precision, x, w1, b1, w2, b2 *G.Node) (*G.Node, error) {
	if x.Dims() != 2 || w1.Dims() != 2 || b1.Dims() != 1 || w2.Dims() != 2 || b2.Dims() != 1 {
		return nil, fmt.Errorf("mlp: want x (N, D), W1 (D, F), b1 (F), W2 (F, E), b2 (E), got %v, %v, %v, %v, %v",
			x.Shape(), w1.Shape(), b1.Shape(), w2.Shape(), b2.Shape())
	}
	d, f, e := w1.Shape()[0], w1.Shape()[1], w2.Shape()[1]
	if x.Shape()[1] != d || b1.Shape()[0] != f || w2.Shape()[0] != f || b2.Shape()[0] != e {
		return nil, fmt.Errorf("mlp: x %v, W1 %v, b1 %v, W2 %v and b2 %v do not fit together",
			x.Shape(), w1.Shape(), b1.Shape(), w2.Shape(), b2.Shape())
	}
	if err := p.valid(); err != nil {
		return nil, err
	}
	op := &mlpOp{prec: p}
	op.opBase = opBase{key: fmt.Sprintf("MLP{gelu, %v}", p), arity: 5,
		typ: hm.NewFnType(tt(2, tvA), tt(2, tvA), tt(1, tvA), tt(2, tvA), tt(1, tvA), tt(2, tvA))}
	y, err := G.ApplyOp(op, x, w1, b1, w2, b2)
	if err != nil {
		return nil, fmt.Errorf("mlp %v x %v x %v: %w", x.Shape(), w1.Shape(), w2.Shape(), err)
	}
	return y, nil
}

// mlpOp is the forward op: inputs x, W1, b1, W2, b2.
type mlpOp struct {
	opBase
	prec Precision
	// keep is set by SymDiff: the forward pass then keeps pre (a = x W1 +
	// b1, or GELU'(a) with deriv) and hid (h = GELU(a)), []float32 or
	// []float64 of N*F, for the backward ops. Without it, hid is the
	// scratch that holds a and then h when the graph has no Buffers.
	keep     bool
	pre, hid any
	// deriv says that the last forward pass left GELU'(a) in pre instead
	// of a (float32 with the fused GELU): the backward pass then multiplies
	// by it instead of computing it (see geluDerivThen).
	deriv bool
}

func (o *mlpOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	x, err := shapeOf(o.key, in, 0)
	if err != nil {
		return nil, err
	}
	w2, err := shapeOf(o.key, in, 3)
	if err != nil {
		return nil, err
	}
	if len(x) != 2 || len(w2) != 2 {
		return nil, fmt.Errorf("%s: want x and W2 matrices, got %v and %v", o.key, x, w2)
	}
	return tensor.Shape{x[0], w2[1]}, nil
}

func (o *mlpOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	ts, err := o.denseAll(vals)
	if err != nil {
		return nil, err
	}
	n, e := ts[0].Shape()[0], ts[3].Shape()[1]
	dt := ts[0].Dtype()
	out := o.output(dt, n, e)
	switch dt {
	case tensor.Float32:
		mlpForward[float32](o, ts, elems[float32](out))
	case tensor.Float64:
		mlpForward[float64](o, ts, elems[float64](out))
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, dt)
	}
	return out, nil
}

// mlpForward sets y from the inputs ts (x, W1, b1, W2, b2).
func mlpForward[T float](o *mlpOp, ts []*tensor.Dense, y []T) {
	n, d, f, e := ts[0].Shape()[0], ts[0].Shape()[1], ts[1].Shape()[1], ts[3].Shape()[1]
	var pre, hid []T
	switch {
	case o.keep:
		pre, _ = o.pre.([]T)
		hid, _ = o.hid.([]T)
		pre, hid = resize(pre, n*f), resize(hid, n*f)
		o.pre, o.hid = pre, hid
	case o.pool != nil:
		t := o.pool.get(ts[0].Dtype(), n, f)
		defer o.pool.put(t)
		hid = elems[T](t)
		pre = hid
	default:
		hid, _ = o.hid.([]T)
		hid = resize(hid, n*f)
		o.hid, o.pre = hid, nil
		pre = hid
	}
	x, w1, b1 := elems[T](ts[0]), elems[T](ts[1]), elems[T](ts[2])
	w2, b2 := elems[T](ts[3]), elems[T](ts[4])
	then := geluThen(pre, hid, f)
	o.deriv = false
	if o.keep && then != nil { // keep GELU'(a) in place of a for the backward pass
		then, o.deriv = geluDerivThen(pre, hid, f), true
	}
	linearForward(o.prec, x, w1, b1, pre, n, d, f, then)
	if then == nil {
		geluAll(pre, hid)
	}
	linearForward(o.prec, hid, w2, b2, y, n, f, e, nil)
}

// geluThen returns the epilogue that sets h = GELU(a) on each finished
// block of a (rows of f elements; h may be a), or nil where the fusion is
// not used (float64, or f not a multiple of 8: see above).
func geluThen[T float](a, h []T, f int) gemm.Epilogue {
	a32, ok := any(a).([]float32)
	if !ok || f%8 != 0 {
		return nil
	}
	h32 := any(h).([]float32)
	return func(i0, i1, j0, j1 int) {
		for r := i0; r < i1; r++ {
			vmath.GELU(h32[r*f+j0:r*f+j1], a32[r*f+j0:r*f+j1])
		}
	}
}

// geluDerivThen returns the epilogue that sets h = GELU(a) and a =
// GELU'(a) on each finished block of a (rows of f elements), in place of
// geluThen when the backward pass will need the derivative: computed here
// with the exponential and the division GELU takes anyway, while a is in
// the cache, it spares the backward pass both (mulThen); the product of the
// kept derivative and the gradient has the bits of geluGradThen's. a and h
// are float32 and f is a multiple of 8 (where geluThen is not nil).
func geluDerivThen[T float](a, h []T, f int) gemm.Epilogue {
	a32, h32 := any(a).([]float32), any(h).([]float32)
	return func(i0, i1, j0, j1 int) {
		for r := i0; r < i1; r++ {
			row := a32[r*f+j0 : r*f+j1]
			vmath.GELUAndGrad(h32[r*f+j0:r*f+j1], row, row)
		}
	}
}

// mulThen returns the epilogue that multiplies each finished block of g
// (rows of f elements) by d in place: the MLP's backward with GELU'(a)
// kept by the forward pass (geluDerivThen).
func mulThen(d, g []float32, f int) gemm.Epilogue {
	return func(i0, i1, j0, j1 int) {
		for r := i0; r < i1; r++ {
			row := g[r*f+j0 : r*f+j1]
			vmath.Mul(row, row, d[r*f+j0:r*f+j1])
		}
	}
}

// geluAll sets h = GELU(a) over the whole array, on every core.
func geluAll[T float](a, h []T) {
	if a32, ok := any(a).([]float32); ok {
		gelu32(a32, any(h).([]float32))
		return
	}
	mapParallel(a, h, gelu)
}

// geluGradThen returns the epilogue that multiplies each finished block of
// g (rows of f elements) by GELU'(a) in place, or nil where the fusion is
// not used (as geluThen).
func geluGradThen[T float](a, g []T, f int) gemm.Epilogue {
	a32, ok := any(a).([]float32)
	if !ok || f%8 != 0 {
		return nil
	}
	g32 := any(g).([]float32)
	return func(i0, i1, j0, j1 int) {
		for r := i0; r < i1; r++ {
			row := g32[r*f+j0 : r*f+j1]
			vmath.GELUGrad(row, a32[r*f+j0:r*f+j1], row)
		}
	}
}

// ScratchElems implements ScratchOp: N*F, for a and then h, when the op
// keeps nothing for a backward pass.
func (o *mlpOp) ScratchElems(in ...tensor.Shape) int {
	if o.keep || len(in) < 2 || len(in[0]) != 2 || len(in[1]) != 2 {
		return 0
	}
	return in[0][0] * in[1][1]
}

func (o *mlpOp) DiffWRT(n int) []bool { return allTrue(n) }

// SymDiff returns the gradients of x, W1, b1, W2 and b2 and switches the
// op to keeping a and h for them.
func (o *mlpOp) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	o.keep = true
	grads := make(G.Nodes, 2)
	sums := &biasSums{}
	for i, part := range []mlpPart{mlpHidden, mlpW2} {
		g := &mlpGradOp{fwd: o, part: part}
		if part == mlpW2 {
			g.sums = sums
		}
		g.opBase = opBase{key: fmt.Sprintf("MLPGrad{%v, %v}", part, o.prec), arity: 3,
			typ: hm.NewFnType(tt(2, tvA), tt(2, tvA), tt(2, tvA), tt(2, tvA))}
		// The output is an input only to order the two: a and h must
		// come from this step's forward pass.
		n, err := G.ApplyOp(g, in[3], output, grad)
		if err != nil {
			return nil, err
		}
		grads[i] = n
	}
	da, dW2 := grads[0], grads[1]
	db2, err := biasGradOf(grad, dW2, in[4].Shape(), sums)
	if err != nil {
		return nil, err
	}
	first, err := linearGrads(o.prec, in[0], in[1], in[2], da)
	if err != nil {
		return nil, err
	}
	return G.Nodes{first[0], first[1], first[2], dW2, db2}, nil
}

// mlpPart is what an mlpGradOp computes.
type mlpPart int

const (
	mlpHidden mlpPart = iota // da = GELU'(a) ⊙ (dy W2^T), N x F
	mlpW2                    // dW2 = h^T dy, F x E
)

func (p mlpPart) String() string {
	if p == mlpHidden {
		return "da"
	}
	return "dW2"
}

// mlpGradOp computes one gradient of the MLP from W2, the forward output
// (for the order only), dy and the kept a or h.
type mlpGradOp struct {
	opBase
	fwd  *mlpOp
	part mlpPart
	sums *biasSums // b2's gradient, for the mlpW2 part (else nil)
}

func (o *mlpGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	w2, err := shapeOf(o.key, in, 0)
	if err != nil {
		return nil, err
	}
	if o.part == mlpW2 {
		return w2.Clone(), nil
	}
	dy, err := shapeOf(o.key, in, 2)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{dy[0], w2[0]}, nil
}

func (o *mlpGradOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	ts, err := o.denseAll(vals)
	if err != nil {
		return nil, err
	}
	n, f := ts[2].Shape()[0], ts[0].Shape()[0]
	shape := []int{n, f}
	if o.part == mlpW2 {
		shape = ts[0].Shape()
	}
	out := o.output(ts[0].Dtype(), shape...)
	switch ts[0].Dtype() {
	case tensor.Float32:
		err = mlpBackward[float32](o, ts, elems[float32](out))
	case tensor.Float64:
		err = mlpBackward[float64](o, ts, elems[float64](out))
	default:
		err = fmt.Errorf("%s: unsupported dtype %v", o.key, ts[0].Dtype())
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// mlpBackward computes the op's part into out from ts (W2, y, dy).
func mlpBackward[T float](o *mlpGradOp, ts []*tensor.Dense, out []T) error {
	w2, dy := elems[T](ts[0]), elems[T](ts[2])
	n, f, e := ts[2].Shape()[0], ts[0].Shape()[0], ts[0].Shape()[1]
	kept := o.fwd.pre
	if o.part == mlpW2 {
		kept = o.fwd.hid
	}
	ah, ok := kept.([]T)
	if !o.fwd.keep || !ok || len(ah) != n*f {
		return fmt.Errorf("%s: no hidden activations kept from the forward pass", o.key)
	}
	p := o.fwd.prec
	if o.part == mlpW2 { // dW2 = h^T dy
		if h32, ok := any(ah).([]float32); ok {
			weightGrad(p, h32, any(dy).([]float32), any(out).([]float32), n, f, e, o.sums)
			return nil
		}
		linearBackward(p, 1, ah, w2, dy, out, n, f, e, nil)
		return nil
	}
	then := geluGradThen(ah, out, f)
	if o.fwd.deriv { // ah holds GELU'(a)
		then = mulThen(any(ah).([]float32), any(out).([]float32), f)
	}
	linearBackward(p, 0, ah, w2, dy, out, n, f, e, then) // da = GELU'(a) ⊙ (dy W2^T)
	if then == nil {
		geluGradAll(ah, out)
	}
	return nil
}

// geluGradAll multiplies g by GELU'(a) in place over the whole array, on
// every core.
func geluGradAll[T float](a, g []T) {
	if a32, ok := any(a).([]float32); ok {
		g32 := any(g).([]float32)
		geluBackward32(a32, g32, g32)
		return
	}
	geluBackward(a, g, g)
}
