package layers

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// LogLengthScale multiplies every query of qkv by s_h·ln(n), n the number
// of keys it sees (its position plus one) and s (heads) one learned scale
// per head: log-length scaling of the attention logits (Scalable-Softmax,
// Nakanishi 2025; Qwen's logn attention), which keeps a query's attention
// as sharp over n keys as over the training length's. qkv is laid out as
// Attention takes it, (batch*queryLen, 3D) rows of queries, keys and values;
// the keys and values pass through unchanged. Scaling the query scales its
// scores q·k, and so the logits before any position bias is added.
//
// With pos nil, row t of each sequence stands at position t; with pos
// (decoding with a key/value cache), batch row r's tokens stand at
// pos.Offset(r), pos.Offset(r)+1, ..., read when the op runs.
//
// The gradient of qkv is the same scaling of the output's gradient; that
// of s_h is the sum over rows of ln(n)·(q_h · dq'_h).
func LogLengthScale(qkv, s *G.Node, heads, queryLen int, pos *Positions) (*G.Node, error) {
	if heads < 1 || queryLen < 1 {
		return nil, fmt.Errorf("log-length scale: heads (%d) and query length (%d) must be positive", heads, queryLen)
	}
	sh := qkv.Shape()
	if len(sh) != 2 || sh[0]%queryLen != 0 || sh[1]%3 != 0 || (sh[1]/3)%heads != 0 {
		return nil, fmt.Errorf("log-length scale: qkv of shape %v is not batch x %d rows of 3 x %d heads", sh, queryLen, heads)
	}
	if s.Shape().TotalSize() != heads || s.Dims() != 1 {
		return nil, fmt.Errorf("log-length scale: scales of shape %v, want (%d)", s.Shape(), heads)
	}
	op := &logScaleOp{heads: heads, qLen: queryLen, pos: pos}
	op.opBase = opBase{key: fmt.Sprintf("LogLengthScale{heads=%d, q=%d, pos=%p}", heads, queryLen, pos), arity: 2,
		typ: hm.NewFnType(tt(2, tvA), tt(1, tvA), tt(2, tvA))}
	return G.ApplyOp(op, qkv, s)
}

// logScaleOp is the forward op; applied to the output's gradient, it is
// also the gradient of qkv.
type logScaleOp struct {
	opBase
	heads, qLen int
	pos         *Positions
}

func (o *logScaleOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return sameShape(o.key, in, 0)
}

// logLengths returns ln(n) for every row: n the keys its query sees.
func (o *logScaleOp) logLengths(rows int) ([]float64, error) {
	batch := rows / o.qLen
	if o.pos != nil && len(o.pos.Active()) != batch {
		return nil, fmt.Errorf("%s: %d sequences are selected, the input has %d", o.key, len(o.pos.Active()), batch)
	}
	ln := make([]float64, rows)
	for r := range ln {
		n := r%o.qLen + 1
		if o.pos != nil {
			n += o.pos.Offset(r / o.qLen)
		}
		ln[r] = math.Log(float64(n))
	}
	return ln, nil
}

func (o *logScaleOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	x, err := dense(o.key, vals[0])
	if err != nil {
		return nil, err
	}
	s, err := dense(o.key, vals[1])
	if err != nil {
		return nil, err
	}
	ln, err := o.logLengths(x.Shape()[0])
	if err != nil {
		return nil, err
	}
	out := o.output(x.Dtype(), x.Shape()...)
	switch x.Dtype() {
	case tensor.Float32:
		scaleQueries(elems[float32](x), elems[float32](s), elems[float32](out), ln, o.heads)
	case tensor.Float64:
		scaleQueries(elems[float64](x), elems[float64](s), elems[float64](out), ln, o.heads)
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, x.Dtype())
	}
	return out, nil
}

// scaleQueries writes x into out with each row's query heads multiplied by
// s_h·ln[row].
func scaleQueries[T float](x, s, out []T, ln []float64, heads int) {
	w := len(x) / len(ln) // 3d
	dh := w / 3 / heads
	parallelChunks(len(ln), 64, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			xr, yr := x[r*w:][:w], out[r*w:][:w]
			for h := 0; h < heads; h++ {
				f := T(float64(s[h]) * ln[r])
				for j, v := range xr[h*dh : (h+1)*dh] {
					yr[h*dh+j] = v * f
				}
			}
			copy(yr[heads*dh:], xr[heads*dh:])
		}
	})
}

func (o *logScaleOp) DiffWRT(int) []bool { return []bool{true, true} }

// SymDiff: dqkv is the op applied to the output's gradient; ds comes from
// logScaleGradOp.
func (o *logScaleOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	g := &logScaleOp{heads: o.heads, qLen: o.qLen, pos: o.pos}
	g.opBase = opBase{key: "LogLengthScaleOfGrad" + o.key[len("LogLengthScale"):], arity: 2,
		typ: hm.NewFnType(tt(2, tvA), tt(1, tvA), tt(2, tvA))}
	dx, err := G.ApplyOp(g, grad, in[1])
	if err != nil {
		return nil, err
	}
	b := &logScaleGradOp{fwd: o}
	b.opBase = opBase{key: "LogLengthScaleGrad" + o.key[len("LogLengthScale"):], arity: 2,
		typ: hm.NewFnType(tt(2, tvA), tt(2, tvA), tt(1, tvA))}
	ds, err := G.ApplyOp(b, in[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, ds}, nil
}

// logScaleGradOp computes ds_h = sum over rows of ln(n)·(q_h · dy_h) from
// qkv and the output's gradient dy.
type logScaleGradOp struct {
	opBase
	fwd *logScaleOp
}

func (o *logScaleGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.fwd.heads}, nil
}

func (o *logScaleGradOp) Do(vals ...G.Value) (G.Value, error) {
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
	ln, err := o.fwd.logLengths(x.Shape()[0])
	if err != nil {
		return nil, err
	}
	out := o.output(x.Dtype(), o.fwd.heads)
	switch x.Dtype() {
	case tensor.Float32:
		scaleGrad(elems[float32](x), elems[float32](dy), elems[float32](out), ln)
	case tensor.Float64:
		scaleGrad(elems[float64](x), elems[float64](dy), elems[float64](out), ln)
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, x.Dtype())
	}
	return out, nil
}

// scaleGrad sets ds[h] to the sum over rows of ln[row]·(q_h · dy_h), in
// float64.
func scaleGrad[T float](x, dy, ds []T, ln []float64) {
	heads := len(ds)
	w := len(x) / len(ln)
	dh := w / 3 / heads
	acc := make([]float64, heads)
	for r, l := range ln {
		xr, gr := x[r*w:][:w], dy[r*w:][:w]
		for h := range heads {
			var dot float64
			for j := h * dh; j < (h+1)*dh; j++ {
				dot += float64(xr[j]) * float64(gr[j])
			}
			acc[h] += l * dot
		}
	}
	for h, v := range acc {
		ds[h] = T(v)
	}
}
