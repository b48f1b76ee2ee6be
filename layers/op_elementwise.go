package layers

import (
	"fmt"
	"github.com/alibi-go/alibi/layers/internal/flash"
	"math"

	"github.com/alibi-go/alibi/layers/internal/vmath"
	"github.com/alibi-go/alibi/layers/parallel"
	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GELU is the exact Gaussian error linear unit, x * Phi(x) =
// 0.5 x (1 + erf(x / sqrt 2)), as PyTorch's default (not the tanh form).
func GELU(x *G.Node) (*G.Node, error) {
	op := &geluOp{opBase{key: "GELU{exact}", arity: 1, typ: hm.NewFnType(tvA, tvA)}}
	return G.ApplyOp(op, x)
}

type geluOp struct{ opBase }

func (o *geluOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return sameShape(o.key, in, 0)
}

func (o *geluOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	x, err := dense(o.key, vals[0])
	if err != nil {
		return nil, err
	}
	out := o.output(x.Dtype(), x.Shape()...)
	switch x.Dtype() {
	case tensor.Float32:
		xs := elems[float32](x)
		gelu32(xs, elems[float32](out))
	case tensor.Float64:
		xs := elems[float64](x)
		mapParallel(xs, elems[float64](out), gelu)
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, x.Dtype())
	}
	return out, nil
}

func (o *geluOp) DiffWRT(int) []bool { return []bool{true} }

func (o *geluOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	b := &geluGradOp{opBase{key: "GELUGrad{exact}", arity: 2, typ: hm.NewFnType(tvA, tvA, tvA)}}
	n, err := G.ApplyOp(b, in[0], grad)
	return G.Nodes{n}, err
}

func gelu(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

// geluDeriv is Phi(x) + x*phi(x).
func geluDeriv(x float64) float64 {
	return 0.5*(1+math.Erf(x/math.Sqrt2)) + x*math.Exp(-0.5*x*x)/math.Sqrt(2*math.Pi)
}

// mapParallel sets out[i] = f(x[i]) in float64 arithmetic.
func mapParallel[T float](x, out []T, f func(float64) float64) {
	parallelChunks(len(x), 4096, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = T(f(float64(x[i])))
		}
	})
}

// gelu32 and geluBackward32 are the float32 kernels (vmath: AVX2 where the
// CPU has it), over fixed chunks in parallel.
func gelu32(x, out []float32) {
	if serial(len(x), 4096) {
		vmath.GELU(out, x)
		return
	}
	parallelChunks(len(x), 4096, func(_, lo, hi int) { vmath.GELU(out[lo:hi], x[lo:hi]) })
}

func geluBackward32(x, dy, out []float32) {
	parallelChunks(len(x), 4096, func(_, lo, hi int) { vmath.GELUGrad(out[lo:hi], x[lo:hi], dy[lo:hi]) })
}

type geluGradOp struct{ opBase }

func (o *geluGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return sameShape(o.key, in, 0)
}

func (o *geluGradOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	x, err := dense(o.key, vals[0])
	if err != nil {
		return nil, err
	}
	dy, err := dense(o.key, vals[1])
	if err != nil {
		return nil, err
	}
	out := o.output(x.Dtype(), x.Shape()...)
	switch x.Dtype() {
	case tensor.Float32:
		xs := elems[float32](x)
		geluBackward32(xs, elems[float32](dy), elems[float32](out))
	case tensor.Float64:
		xs := elems[float64](x)
		geluBackward(xs, elems[float64](dy), elems[float64](out))
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, x.Dtype())
	}
	return out, nil
}

func geluBackward[T float](x, dy, out []T) {
	parallelChunks(len(x), 4096, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = T(geluDeriv(float64(x[i]))) * dy[i]
		}
	})
}

// AddRows adds the rows of t (R, D) to x (N, D) periodically: row i of the
// result is x[i] + t[i mod R]. With R = 1 it is a linear layer's bias; with
// R = T it adds a (T, D) position table to every sequence of a batch.
func AddRows(x, t *G.Node) (*G.Node, error) {
	if x.Dims() != 2 || (t.Dims() != 2 && t.Dims() != 1) {
		return nil, fmt.Errorf("addrows: want x (N, D) and t (R, D) or (D), got %v and %v", x.Shape(), t.Shape())
	}
	op := &addRowsOp{opBase{key: "AddRows", arity: 2, typ: hm.NewFnType(tt(2, tvA), tt(t.Dims(), tvA), tt(2, tvA))}}
	return G.ApplyOp(op, x, t)
}

type addRowsOp struct{ opBase }

func (o *addRowsOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	x, err := shapeOf(o.key, in, 0)
	if err != nil {
		return nil, err
	}
	t, err := shapeOf(o.key, in, 1)
	if err != nil {
		return nil, err
	}
	if len(x) != 2 || t.TotalSize() == 0 || t.TotalSize()%x[1] != 0 || x[0]%(t.TotalSize()/x[1]) != 0 {
		return nil, fmt.Errorf("%s: cannot add rows of %v to %v", o.key, t, x)
	}
	return x.Clone(), nil
}

func (o *addRowsOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	x, err := dense(o.key, vals[0])
	if err != nil {
		return nil, err
	}
	t, err := dense(o.key, vals[1])
	if err != nil {
		return nil, err
	}
	out := o.output(x.Dtype(), x.Shape()...)
	d := x.Shape()[1]
	switch x.Dtype() {
	case tensor.Float32:
		xs := elems[float32](x)
		addRows(xs, elems[float32](t), elems[float32](out), d)
	case tensor.Float64:
		xs := elems[float64](x)
		addRows(xs, elems[float64](t), elems[float64](out), d)
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, x.Dtype())
	}
	return out, nil
}

func addRows[T float](x, t, out []T, d int) {
	period := len(t)
	parallelChunks(len(x)/d, 64, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			tr := t[(r*d)%period:]
			for j, v := range x[r*d : (r+1)*d] {
				out[r*d+j] = v + tr[j]
			}
		}
	})
}

func (o *addRowsOp) DiffWRT(int) []bool { return []bool{true, true} }

// SymDiff: x's gradient is dy itself; t's is dy summed over its periods.
func (o *addRowsOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	dt, err := sumRowsOf(grad, in[1].Shape())
	if err != nil {
		return nil, err
	}
	return G.Nodes{grad, dt}, nil
}

// sumRowsOf sums the rows of dy (N, D) periodically into shape (R, D) or (D):
// the gradient of a bias or position table that AddRows added.
func sumRowsOf(dy *G.Node, shape tensor.Shape) (*G.Node, error) {
	op := &sumRowsOp{opBase: opBase{key: fmt.Sprintf("SumRows{%v}", shape), arity: 1,
		typ: hm.NewFnType(tt(2, tvA), tt(len(shape), tvA))}, shape: shape.Clone()}
	return G.ApplyOp(op, dy)
}

// biasGradOf is a linear layer's bias gradient, the column sums of dy (N,
// D) in shape (D), as sumRowsOf; dW is the node of the layer's weight
// gradient, whose op hands over the sums in from when its product took
// them while packing dy (see biasSums). dW is an input only so that it
// runs first.
func biasGradOf(dy, dW *G.Node, shape tensor.Shape, from *biasSums) (*G.Node, error) {
	op := &sumRowsOp{opBase: opBase{key: fmt.Sprintf("BiasGrad{%v}", shape), arity: 2,
		typ: hm.NewFnType(tt(2, tvA), tt(2, tvA), tt(len(shape), tvA))}, shape: shape.Clone(), from: from}
	return G.ApplyOp(op, dy, dW)
}

// biasSums carries the column sums of a linear layer's output gradient dy,
// its bias gradient, from the op of its weight gradient x^T dy, whose
// product sums dy's columns while it packs dy (gemm.SgemmSumB; float32
// and fp32 only), to the op of the bias gradient, which then copies them
// instead of reading dy again. They have the bits that op computes.
type biasSums struct {
	sums []float32
	ok   bool // set by the weight-gradient op of this run
}

// sumRowsOp sums the rows of dy (N, D) into shape (R, D) by period R.
type sumRowsOp struct {
	opBase
	shape tensor.Shape
	// from, when not nil, may hold the column sums already (see
	// biasGradOf).
	from *biasSums
	ones []float32 // a row of N ones, for the column sums as a product
	// partial holds sumRows' per-chunk sums between calls, so that a
	// training step does not allocate them anew (16 MB a step for the
	// small config's position table).
	partial []float64
}

func (o *sumRowsOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return o.shape.Clone(), nil }

func (o *sumRowsOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	dy, err := dense(o.key, vals[0])
	if err != nil {
		return nil, err
	}
	out := o.output(dy.Dtype(), o.shape...)
	if f := o.from; f != nil && f.ok && dy.Dtype() == tensor.Float32 && len(f.sums) == out.Shape().TotalSize() {
		copy(elems[float32](out), f.sums)
		return out, nil
	}
	switch dy.Dtype() {
	case tensor.Float32:
		g, d := elems[float32](dy), dy.Shape()[1]
		if o.shape.TotalSize() == d {
			// Column sums (a linear layer's bias gradient) are the product
			// 1^T dy of a row of ones: one row, which the product's small-M
			// path computes with vector multiply-adds, reading dy in place,
			// in a fixed order.
			rows := len(g) / d
			if len(o.ones) != rows {
				o.ones = make([]float32, rows)
				for i := range o.ones {
					o.ones[i] = 1
				}
			}
			columnSums(o.ones, g, elems[float32](out), rows, d)
			break
		}
		sumRows(g, elems[float32](out), d, &o.partial)
	case tensor.Float64:
		g := elems[float64](dy)
		sumRows(g, elems[float64](out), dy.Shape()[1], &o.partial)
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, dy.Dtype())
	}
	return out, nil
}

// columnSums sets out to the column sums of g (rows x d) as the product
// 1^T g with ones, a row of rows ones. Large ones are split by columns over
// the cores: each column is still summed over the rows in the same order,
// by the same small-M kernel (whose k blocks do not depend on the number of
// columns), so the bits are those of one call. Without the split, one core
// summed the tiny model's 2048 x 512 gradient while the other waited.
func columnSums(ones, g, out []float32, rows, d int) {
	parts := min(workers(), d/64)
	if parts <= 1 || rows*d < 1<<16 {
		flash.Gemm(false, false, 1, d, rows, 1, ones, rows, g, d, 0, out, d)
		return
	}
	per := (d/parts + 15) &^ 15
	parallel.Run(parts, func(w int) {
		lo := w * per
		hi := min(d, lo+per)
		if lo < hi {
			flash.Gemm(false, false, 1, hi-lo, rows, 1, ones, rows, g[lo:], d, 0, out[lo:hi], d)
		}
	})
}

// sumRows adds row r of dy into row r mod R of out, with per-chunk partial
// sums combined in chunk order so the result is reproducible. The partial
// sums live in *scratch, grown as needed and kept for the next call.
func sumRows[T float](dy, out []T, d int, scratch *[]float64) {
	period := len(out)
	rows := len(dy) / d
	if period >= len(dy)/4 { // few rows per period: no reduction worth splitting
		clear(out)
		for i, g := range dy {
			out[i%period] += g
		}
		return
	}
	chunks := parallel.NumChunks(rows, 64)
	if cap(*scratch) < chunks*period {
		*scratch = make([]float64, chunks*period)
	}
	partial := (*scratch)[:chunks*period]
	clear(partial)
	parallelChunks(rows, 64, func(c, lo, hi int) {
		acc := partial[c*period : (c+1)*period]
		for r := lo; r < hi; r++ {
			off := (r * d) % period
			for j, g := range dy[r*d : (r+1)*d] {
				acc[off+j] += float64(g)
			}
		}
	})
	for i := range out {
		var s float64
		for c := 0; c < chunks; c++ {
			s += partial[c*period+i]
		}
		out[i] = T(s)
	}
}
