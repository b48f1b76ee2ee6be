package layers

import (
	"fmt"
	"math"

	"github.com/alibi-go/alibi/layers/internal/vmath"
	"github.com/alibi-go/alibi/layers/parallel"
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
	op := &layerNormOp{opBase: opBase{key: "LayerNorm{eps=1e-5}", arity: 3, typ: hm.NewFnType(tt(2, tvA), tt(1, tvA), tt(1, tvA), tt(2, tvA))}}
	return G.ApplyOp(op, x, gamma, beta)
}

// layerNormOp is the forward op. When a gradient is requested (SymDiff) it
// keeps each row's mean and 1/std from the last forward run, and its backward
// op computes all three gradients in one pass.
type layerNormOp struct {
	opBase
	keep  bool
	stats []float64 // mean and rstd of each row, when kept
	// dGamma and dBeta are filled by the x-gradient op and handed out by the
	// gamma and beta gradient ops.
	dGamma, dBeta []float64
}

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
	ts, err := o.denseAll(vals)
	if err != nil {
		return nil, err
	}
	rows, d := ts[0].Shape()[0], ts[0].Shape()[1]
	var stats []float64
	if o.keep {
		if len(o.stats) != 2*rows {
			o.stats = make([]float64, 2*rows)
		}
		stats = o.stats
	}
	out := o.output(ts[0].Dtype(), ts[0].Shape()...)
	switch ts[0].Dtype() {
	case tensor.Float32:
		x := elems[float32](ts[0])
		lnForward(x, elems[float32](ts[1]), elems[float32](ts[2]), elems[float32](out), d, stats)
	case tensor.Float64:
		x := elems[float64](ts[0])
		lnForward(x, elems[float64](ts[1]), elems[float64](ts[2]), elems[float64](out), d, stats)
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, ts[0].Dtype())
	}
	return out, nil
}

func (o *layerNormOp) DiffWRT(int) []bool { return []bool{true, true, true} }

// SymDiff: the x-gradient op computes all three gradients from the kept
// statistics; the gamma and beta ops take its output as input only to run
// after it, and return what it computed.
func (o *layerNormOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	o.keep = true
	bx := &layerNormGradOp{fwd: o, wrt: 0}
	bx.opBase = opBase{key: "LayerNormGrad{wrt=x}", arity: 3, typ: hm.NewFnType(tt(2, tvA), tt(1, tvA), tt(2, tvA), tt(2, tvA))}
	dx, err := G.ApplyOp(bx, in[0], in[1], grad)
	if err != nil {
		return nil, err
	}
	if lin, ok := grad.Op().(*linearGradOp); ok && lin.wrt == 0 && lin.ln == nil {
		lin.ln = &lnAfter{lin: lin, ln: bx} // the backward in lin's epilogue
		bx.after = lin.ln
	}
	out := G.Nodes{dx, nil, nil}
	for i, name := range []string{"gamma", "beta"} {
		b := &layerNormGradOp{fwd: o, wrt: i + 1}
		b.opBase = opBase{key: "LayerNormGrad{wrt=" + name + "}", arity: 1, typ: hm.NewFnType(tt(2, tvA), tt(1, tvA))}
		if out[i+1], err = G.ApplyOp(b, dx); err != nil {
			return nil, err
		}
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

// lnForward normalises every row; stats, when not nil, receives each row's
// mean and rstd. float32 rows use the vmath kernels: the same arithmetic,
// except that the sums of the statistics are taken in 16 interleaved partial
// sums.
func lnForward[T float](x, gamma, beta, out []T, d int, stats []float64) {
	if rows := len(x) / d; serial(rows, 64) {
		lnRows(x, gamma, beta, out, d, stats, 0, rows)
		return
	}
	parallelChunks(len(x)/d, 64, func(_, lo, hi int) { lnRows(x, gamma, beta, out, d, stats, lo, hi) })
}

// lnRows normalises rows lo..hi-1 (see lnForward).
func lnRows[T float](x, gamma, beta, out []T, d int, stats []float64, lo, hi int) {
	if x32, ok := any(x).([]float32); ok {
		var st []float64
		if stats != nil {
			st = stats[2*lo : 2*hi]
		}
		vmath.LayerNormRows(any(out).([]float32)[lo*d:hi*d], x32[lo*d:hi*d], any(gamma).([]float32), any(beta).([]float32), d, LayerNormEps, st)
		return
	}
	for r := lo; r < hi; r++ {
		xr, or := x[r*d:(r+1)*d], out[r*d:(r+1)*d]
		mean, rstd := rowStats(xr)
		if stats != nil {
			stats[2*r], stats[2*r+1] = mean, rstd
		}
		m, s := T(mean), T(rstd)
		for j, v := range xr {
			or[j] = (v-m)*s*gamma[j] + beta[j]
		}
	}
}

// layerNormGradOp computes the gradient of x (wrt 0), gamma (1) or beta (2).
type layerNormGradOp struct {
	opBase
	fwd   *layerNormOp
	wrt   int
	after *lnAfter // for wrt 0, when the product before it runs its backward (else nil)
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
	ts, err := o.denseAll(vals)
	if err != nil {
		return nil, err
	}
	rows, d := ts[0].Shape()[0], ts[0].Shape()[1]
	if o.wrt != 0 {
		src := o.fwd.dGamma
		if o.wrt == 2 {
			src = o.fwd.dBeta
		}
		if len(src) != d {
			return nil, fmt.Errorf("%s: the x gradient has not run", o.key)
		}
		out := o.output(ts[0].Dtype(), d)
		switch out.Dtype() {
		case tensor.Float32:
			g := elems[float32](out)
			convert(src, g)
		case tensor.Float64:
			g := elems[float64](out)
			copy(g, src)
		}
		return out, nil
	}
	if o.after != nil {
		out, err := o.after.take(ts)
		if err != nil {
			return nil, err
		}
		if out != nil {
			return out, nil
		}
	}
	if len(o.fwd.stats) != 2*rows {
		return nil, fmt.Errorf("%s: no statistics kept from the forward pass", o.key)
	}
	if len(o.fwd.dGamma) != d {
		o.fwd.dGamma, o.fwd.dBeta = make([]float64, d), make([]float64, d)
	}
	out := o.output(ts[0].Dtype(), rows, d)
	switch ts[0].Dtype() {
	case tensor.Float32:
		x := elems[float32](ts[0])
		lnBackward(x, elems[float32](ts[1]), elems[float32](ts[2]), elems[float32](out), d, o.fwd.stats, o.fwd.dGamma, o.fwd.dBeta)
	case tensor.Float64:
		x := elems[float64](ts[0])
		lnBackward(x, elems[float64](ts[1]), elems[float64](ts[2]), elems[float64](out), d, o.fwd.stats, o.fwd.dGamma, o.fwd.dBeta)
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, ts[0].Dtype())
	}
	return out, nil
}

func convert(src []float64, dst []float32) {
	for i, v := range src {
		dst[i] = float32(v)
	}
}

// lnBackward with xhat = (x-mean)*rstd and g = dy*gamma:
//
//	dx = rstd * (g - mean(g) - xhat*mean(g*xhat)),
//	dgamma = sum_rows(dy*xhat),  dbeta = sum_rows(dy),
//
// the column sums as per-chunk partial sums added in chunk order, so the
// result is reproducible. float32 rows use the vmath kernels: the same
// arithmetic, except that the row sums are taken in 16 interleaved partial
// sums. dx may be dy.
func lnBackward[T float](x, gamma, dy, dx []T, d int, stats, dGamma, dBeta []float64) {
	rows := len(x) / d
	partial := make([]float64, 2*parallel.NumChunks(rows, lnChunk)*d)
	parallelChunks(rows, lnChunk, func(c, lo, hi int) { lnGradChunk(x, gamma, dy, dx, d, stats, partial, c, lo, hi) })
	lnGradSums(partial, d, dGamma, dBeta)
}

// lnChunk is the least number of rows of a chunk of the LayerNorm
// backward, whose chunks fix the order of dgamma's and dbeta's sums.
const lnChunk = 64

// lnGradChunk is the LayerNorm backward of rows lo..hi-1, chunk c: it sets
// their dx and adds their terms of dgamma and dbeta, row after row, to the
// chunk's partial sums in partial (2d elements a chunk, zero before).
func lnGradChunk[T float](x, gamma, dy, dx []T, d int, stats, partial []float64, c, lo, hi int) {
	pg, pb := partial[2*c*d:(2*c+1)*d], partial[(2*c+1)*d:(2*c+2)*d]
	if x32, ok := any(x).([]float32); ok {
		g32, dy32, dx32 := any(gamma).([]float32), any(dy).([]float32), any(dx).([]float32)
		vmath.LayerNormGradRows(dx32[lo*d:hi*d], x32[lo*d:hi*d], dy32[lo*d:hi*d], g32, d, stats[2*lo:2*hi], pg, pb)
		return
	}
	for r := lo; r < hi; r++ {
		mean, rstd := stats[2*r], stats[2*r+1]
		xr, gr, or := x[r*d:(r+1)*d], dy[r*d:(r+1)*d], dx[r*d:(r+1)*d]
		var mg, mgx float64
		for j, v := range xr {
			xh := (float64(v) - mean) * rstd
			g := float64(gr[j])
			pg[j] += g * xh
			pb[j] += g
			g *= float64(gamma[j])
			mg += g
			mgx += g * xh
		}
		mg /= float64(d)
		mgx /= float64(d)
		for j, v := range xr {
			xh := (float64(v) - mean) * rstd
			or[j] = T(rstd * (float64(gr[j])*float64(gamma[j]) - mg - xh*mgx))
		}
	}
}

// lnGradSums sets dGamma and dBeta (d elements each) to the sums of the
// chunks' partial sums, in chunk order.
func lnGradSums(partial []float64, d int, dGamma, dBeta []float64) {
	chunks := len(partial) / (2 * d)
	for j := 0; j < d; j++ {
		var sg, sb float64
		for c := 0; c < chunks; c++ {
			sg += partial[2*c*d+j]
			sb += partial[(2*c+1)*d+j]
		}
		dGamma[j], dBeta[j] = sg, sb
	}
}
