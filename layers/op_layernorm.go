package layers

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// LayerNormEps is the variance epsilon of LayerNorm, as in PyTorch.
const LayerNormEps = 1e-5

// LayerNorm normalises each row of x (N, D) to zero mean and unit variance
// (biased variance, eps LayerNormEps) and applies the per-feature gain gamma
// and shift beta, both of shape (D).
func LayerNorm(x, gamma, beta *G.Node) (*G.Node, error) {
	if x.Dims() != 2 || gamma.Dims() != 1 || beta.Dims() != 1 {
		return nil, fmt.Errorf("layernorm: want x (N, D), gamma (D), beta (D), got %v, %v, %v", x.Shape(), gamma.Shape(), beta.Shape())
	}
	op := &layerNormOp{opBase{key: "LayerNorm{eps=1e-5}", arity: 3, typ: hm.NewFnType(tt(2, tvA), tt(1, tvA), tt(1, tvA), tt(2, tvA))}}
	return G.ApplyOp(op, x, gamma, beta)
}

type layerNormOp struct{ opBase }

func (o *layerNormOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	x, err := shapeOf(o.key, in, 0)
	if err != nil {
		return nil, err
	}
	for i := 1; i < 3; i++ {
		s, err := shapeOf(o.key, in, i)
		if err != nil {
			return nil, err
		}
		if len(x) != 2 || s.TotalSize() != x[1] {
			return nil, fmt.Errorf("%s: parameter %d of shape %v does not match x %v", o.key, i, s, x)
		}
	}
	return x.Clone(), nil
}

func (o *layerNormOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	ts, err := denseAll(o.key, vals)
	if err != nil {
		return nil, err
	}
	out := o.output(ts[0].Dtype(), ts[0].Shape()...)
	switch x := ts[0].Data().(type) {
	case []float32:
		lnForward(x, ts[1].Data().([]float32), ts[2].Data().([]float32), out.Data().([]float32), ts[0].Shape()[1])
	case []float64:
		lnForward(x, ts[1].Data().([]float64), ts[2].Data().([]float64), out.Data().([]float64), ts[0].Shape()[1])
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, ts[0].Dtype())
	}
	return out, nil
}

func (o *layerNormOp) DiffWRT(int) []bool { return []bool{true, true, true} }

// SymDiff: one backward op per input; each recomputes the row statistics,
// which costs far less than storing them.
func (o *layerNormOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	out := make(G.Nodes, 3)
	for i := range out {
		b := &layerNormGradOp{wrt: i}
		shape := tt(1, tvA)
		if i == 0 {
			shape = tt(2, tvA)
		}
		b.opBase = opBase{key: fmt.Sprintf("LayerNormGrad{wrt=%d}", i), arity: 3,
			typ: hm.NewFnType(tt(2, tvA), tt(1, tvA), tt(2, tvA), shape)}
		n, err := G.ApplyOp(b, in[0], in[1], grad)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// rowStats returns the mean and 1/sqrt(var+eps) of one row.
func rowStats[T float](x []T) (mean, rstd float64) {
	for _, v := range x {
		mean += float64(v)
	}
	mean /= float64(len(x))
	var v2 float64
	for _, v := range x {
		d := float64(v) - mean
		v2 += d * d
	}
	return mean, 1 / math.Sqrt(v2/float64(len(x))+LayerNormEps)
}

func lnForward[T float](x, gamma, beta, out []T, d int) {
	parallelChunks(len(x)/d, 64, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			xr, or := x[r*d:(r+1)*d], out[r*d:(r+1)*d]
			mean, rstd := rowStats(xr)
			for j, v := range xr {
				or[j] = T((float64(v)-mean)*rstd)*gamma[j] + beta[j]
			}
		}
	})
}

// layerNormGradOp computes the gradient of x (wrt 0), gamma (1) or beta (2)
// from x, gamma and the output gradient dy.
type layerNormGradOp struct {
	opBase
	wrt int
}

func (o *layerNormGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	x, err := shapeOf(o.key, in, 0)
	if err != nil {
		return nil, err
	}
	if o.wrt == 0 {
		return x.Clone(), nil
	}
	return tensor.Shape{x[1]}, nil
}

func (o *layerNormGradOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	ts, err := denseAll(o.key, vals)
	if err != nil {
		return nil, err
	}
	xs := ts[0].Shape()
	shape := []int{xs[1]}
	if o.wrt == 0 {
		shape = xs
	}
	out := o.output(ts[0].Dtype(), shape...)
	switch x := ts[0].Data().(type) {
	case []float32:
		lnBackward(o.wrt, x, ts[1].Data().([]float32), ts[2].Data().([]float32), out.Data().([]float32), xs[1])
	case []float64:
		lnBackward(o.wrt, x, ts[1].Data().([]float64), ts[2].Data().([]float64), out.Data().([]float64), xs[1])
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, ts[0].Dtype())
	}
	return out, nil
}

// lnBackward with xhat = (x-mean)*rstd and g = dy*gamma:
//
//	dx = rstd * (g - mean(g) - xhat*mean(g*xhat)),
//	dgamma = sum_rows(dy*xhat),  dbeta = sum_rows(dy).
func lnBackward[T float](wrt int, x, gamma, dy, out []T, d int) {
	rows := len(x) / d
	if wrt == 0 {
		parallelChunks(rows, 64, func(_, lo, hi int) {
			for r := lo; r < hi; r++ {
				xr, gr, or := x[r*d:(r+1)*d], dy[r*d:(r+1)*d], out[r*d:(r+1)*d]
				mean, rstd := rowStats(xr)
				var mg, mgx float64
				for j, v := range xr {
					g := float64(gr[j] * gamma[j])
					mg += g
					mgx += g * (float64(v) - mean) * rstd
				}
				mg /= float64(d)
				mgx /= float64(d)
				for j, v := range xr {
					g := float64(gr[j] * gamma[j])
					or[j] = T(rstd * (g - mg - (float64(v)-mean)*rstd*mgx))
				}
			}
		})
		return
	}
	// Column sums: per-chunk partial sums, added in chunk order.
	chunks := numChunks(rows, 64)
	partial := make([]float64, chunks*d)
	parallelChunks(rows, 64, func(c, lo, hi int) {
		acc := partial[c*d : (c+1)*d]
		for r := lo; r < hi; r++ {
			gr := dy[r*d : (r+1)*d]
			if wrt == 2 {
				for j, g := range gr {
					acc[j] += float64(g)
				}
				continue
			}
			xr := x[r*d : (r+1)*d]
			mean, rstd := rowStats(xr)
			for j, g := range gr {
				acc[j] += float64(g) * (float64(xr[j]) - mean) * rstd
			}
		}
	})
	for j := 0; j < d; j++ {
		var s float64
		for c := 0; c < chunks; c++ {
			s += partial[c*d+j]
		}
		out[j] = T(s)
	}
}
