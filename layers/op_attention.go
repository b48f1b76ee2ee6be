package layers

import (
	"fmt"
	"math"

	"github.com/alibi-go/alibi/layers/internal/vmath"
	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Attention is multi-head scaled dot-product attention with an additive bias,
// as one fused op:
//
//	out_h = softmax(Q_h K_h^T / sqrt(d_head) + bias_h) V_h
//
// qkv is (batch*T, 3*D): the queries, keys and values side by side, head h
// taking columns h*d_head..(h+1)*d_head of each block; the output is
// (batch*T, D) with the heads concatenated. bias is (H, T, T) (ALiBi: one
// matrix per head) or (1, T, T) (a mask shared by all heads); it is a
// constant input: the op never differentiates it.
func Attention(qkv, bias *G.Node, heads int) (*G.Node, error) {
	if heads < 1 {
		return nil, fmt.Errorf("attention: heads must be >= 1, got %d", heads)
	}
	if qkv.Dims() != 2 || bias.Dims() != 3 {
		return nil, fmt.Errorf("attention: want qkv of rank 2 and bias of rank 3, got shapes %v and %v", qkv.Shape(), bias.Shape())
	}
	op := &attentionOp{heads: heads}
	op.opBase = opBase{
		key:   fmt.Sprintf("AlibiAttention{heads=%d}", heads),
		arity: 2,
		typ:   hm.NewFnType(tt(2, tvA), tt(3, tvA), tt(2, tvA)),
	}
	return G.ApplyOp(op, qkv, bias)
}

// attentionOp is the fused forward op. When a gradient is requested
// (SymDiff), it keeps the attention probabilities of the last forward pass
// for the backward op, in a buffer reused from step to step.
type attentionOp struct {
	opBase
	heads     int
	keepProbs bool
	probs     any // []float32 or []float64, batch*heads*T*T
	scratch   any // per-worker score buffers when probs are not kept
}

// attnDims are the sizes of one attention call.
type attnDims struct {
	batch, t, heads, dHead, d, biasHeads int
	scale                                float64
}

func (o *attentionOp) dims(qkv, bias tensor.Shape) (attnDims, error) {
	if len(qkv) != 2 || len(bias) != 3 {
		return attnDims{}, fmt.Errorf("attention: want qkv (N, 3D) and bias (H, T, T), got %v and %v", qkv, bias)
	}
	n, w := qkv[0], qkv[1]
	hb, t := bias[0], bias[1]
	switch {
	case bias[2] != t:
		return attnDims{}, fmt.Errorf("attention: bias must be square per head, got %v", bias)
	case t < 1 || n%t != 0:
		return attnDims{}, fmt.Errorf("attention: %d rows are not a whole number of length-%d sequences", n, t)
	case w%3 != 0 || (w/3)%o.heads != 0:
		return attnDims{}, fmt.Errorf("attention: qkv width %d is not 3 x heads(%d) x d_head", w, o.heads)
	case hb != 1 && hb != o.heads:
		return attnDims{}, fmt.Errorf("attention: bias has %d heads, want 1 or %d", hb, o.heads)
	}
	d := w / 3
	return attnDims{batch: n / t, t: t, heads: o.heads, dHead: d / o.heads, d: d, biasHeads: hb,
		scale: 1 / math.Sqrt(float64(d/o.heads))}, nil
}

func (o *attentionOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	q, err := shapeOf(o.key, in, 0)
	if err != nil {
		return nil, err
	}
	b, err := shapeOf(o.key, in, 1)
	if err != nil {
		return nil, err
	}
	dm, err := o.dims(q, b)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{q[0], dm.d}, nil
}

func (o *attentionOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	qkv, err := dense(o.key, vals[0])
	if err != nil {
		return nil, err
	}
	bias, err := dense(o.key, vals[1])
	if err != nil {
		return nil, err
	}
	dm, err := o.dims(qkv.Shape(), bias.Shape())
	if err != nil {
		return nil, err
	}
	out := o.output(qkv.Dtype(), qkv.Shape()[0], dm.d)
	switch q := qkv.Data().(type) {
	case []float32:
		o.probs = attnForward(dm, q, bias.Data().([]float32), out.Data().([]float32), o.keptProbs32(dm), &o.scratch)
	case []float64:
		o.probs = attnForward(dm, q, bias.Data().([]float64), out.Data().([]float64), o.keptProbs64(dm), &o.scratch)
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, qkv.Dtype())
	}
	return out, nil
}

func (o *attentionOp) keptProbs32(dm attnDims) []float32 {
	if !o.keepProbs {
		return nil
	}
	n := dm.batch * dm.heads * dm.t * dm.t
	if p, ok := o.probs.([]float32); ok && len(p) == n {
		return p
	}
	return make([]float32, n)
}

func (o *attentionOp) keptProbs64(dm attnDims) []float64 {
	if !o.keepProbs {
		return nil
	}
	n := dm.batch * dm.heads * dm.t * dm.t
	if p, ok := o.probs.([]float64); ok && len(p) == n {
		return p
	}
	return make([]float64, n)
}

// DiffWRT: the gradient flows to qkv only, never to the bias.
func (o *attentionOp) DiffWRT(n int) []bool { return []bool{true, false} }

// SymDiff returns the gradient of qkv and switches the op to keeping its
// probabilities for the backward pass. The bias gets no gradient node.
func (o *attentionOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	o.keepProbs = true
	b := &attentionGradOp{fwd: o}
	b.opBase = opBase{
		key:   fmt.Sprintf("AlibiAttentionGrad{heads=%d}", o.heads),
		arity: 3,
		typ:   hm.NewFnType(tt(2, tvA), tt(2, tvA), tt(2, tvA), tt(2, tvA)),
	}
	// The forward output is an input of the backward op only to order the
	// two: the probabilities must come from this step's forward pass.
	dqkv, err := G.ApplyOp(b, inputs[0], output, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dqkv, nil}, nil
}

// attnForward runs every (batch, head) unit in parallel. probs, when not nil,
// receives the attention probabilities; it is returned (nil when not kept).
// Otherwise each worker computes its units in its own scratch buffer.
func attnForward[T float](dm attnDims, qkv, bias, out, probs []T, cache *any) []T {
	units := dm.batch * dm.heads
	tt := dm.t * dm.t
	var scratch [][]T
	if probs == nil {
		scratch = workerScratch[T](cache, tt)
	}
	parallelWorkers(units, 1, func(wk, _, lo, hi int) {
		for u := lo; u < hi; u++ {
			b, h := u/dm.heads, u%dm.heads
			var p []T
			if probs == nil {
				p = scratch[wk]
			} else {
				p = probs[u*tt : (u+1)*tt]
			}
			q, k, v := dm.qkvOffsets(b, h)
			w := 3 * dm.d
			gemm(false, true, dm.t, dm.t, dm.dHead, T(dm.scale), qkv[q:], w, qkv[k:], w, 0, p, dm.t)
			hb := h
			if dm.biasHeads == 1 {
				hb = 0
			}
			softmaxRowsBiased(p, bias[hb*tt:(hb+1)*tt], dm.t)
			gemm(false, false, dm.t, dm.dHead, dm.t, 1, p, dm.t, qkv[v:], w, 0, out[b*dm.t*dm.d+h*dm.dHead:], dm.d)
		}
	})
	return probs
}

// qkvOffsets returns where head h of sequence b starts in the qkv matrix.
func (dm attnDims) qkvOffsets(b, h int) (q, k, v int) {
	row := b * dm.t * 3 * dm.d
	q = row + h*dm.dHead
	return q, q + dm.d, q + 2*dm.d
}

// softmaxRowsBiased replaces each row of s (n x n) by softmax(s + bias),
// subtracting the row's own maximum first so that large penalties and the
// -1e9 mask never overflow.
func softmaxRowsBiased[T float](s, bias []T, n int) {
	if s32, ok := any(s).([]float32); ok {
		softmaxRowsBiased32(s32, any(bias).([]float32), n)
		return
	}
	for i := 0; i < n; i++ {
		row, brow := s[i*n:(i+1)*n], bias[i*n:(i+1)*n]
		mx := T(math.Inf(-1))
		for j := range row {
			row[j] += brow[j]
			if row[j] > mx {
				mx = row[j]
			}
		}
		var sum float64
		for j, x := range row {
			e := math.Exp(float64(x - mx))
			row[j] = T(e)
			sum += e
		}
		inv := T(1 / sum)
		for j := range row {
			row[j] *= inv
		}
	}
}

// attentionGradOp computes d(qkv) from the kept probabilities and d(out).
type attentionGradOp struct {
	opBase
	fwd     *attentionOp
	scratch any // per-worker dS buffers
}

func (o *attentionGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return shapeOf(o.key, in, 0)
}

func (o *attentionGradOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	qkv, err := dense(o.key, vals[0])
	if err != nil {
		return nil, err
	}
	dout, err := dense(o.key, vals[2])
	if err != nil {
		return nil, err
	}
	n, w := qkv.Shape()[0], qkv.Shape()[1]
	dq := o.output(qkv.Dtype(), n, w)
	switch q := qkv.Data().(type) {
	case []float32:
		p, ok := o.fwd.probs.([]float32)
		dm, err := o.dimsFrom(n, w, len(p), ok)
		if err != nil {
			return nil, err
		}
		attnBackward(dm, q, p, dout.Data().([]float32), dq.Data().([]float32), workerScratch[float32](&o.scratch, dm.t*dm.t))
	case []float64:
		p, ok := o.fwd.probs.([]float64)
		dm, err := o.dimsFrom(n, w, len(p), ok)
		if err != nil {
			return nil, err
		}
		attnBackward(dm, q, p, dout.Data().([]float64), dq.Data().([]float64), workerScratch[float64](&o.scratch, dm.t*dm.t))
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, qkv.Dtype())
	}
	return dq, nil
}

// dimsFrom recovers the call's sizes from the kept probabilities, whose
// length is batch*heads*T*T with batch*T = n.
func (o *attentionGradOp) dimsFrom(n, w, probs int, ok bool) (attnDims, error) {
	h := o.fwd.heads
	if !ok || probs == 0 || probs%(h*n) != 0 {
		return attnDims{}, fmt.Errorf("%s: no attention probabilities kept from the forward pass", o.key)
	}
	t := probs / (h * n)
	d := w / 3
	return attnDims{batch: n / t, t: t, heads: h, dHead: d / h, d: d, scale: 1 / math.Sqrt(float64(d/h))}, nil
}

// attnBackward: with P the probabilities and dO the output gradient of one
// (batch, head) unit,
//
//	dV = P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(P*dP)),
//	dQ = scale dS K,  dK = scale dS^T Q.
func attnBackward[T float](dm attnDims, qkv, probs, dout, dqkv []T, scratch [][]T) {
	tt := dm.t * dm.t
	w := 3 * dm.d
	parallelWorkers(dm.batch*dm.heads, 1, func(wk, _, lo, hi int) {
		ds := scratch[wk]
		for u := lo; u < hi; u++ {
			b, h := u/dm.heads, u%dm.heads
			p := probs[u*tt : (u+1)*tt]
			q, k, v := dm.qkvOffsets(b, h)
			do := dout[b*dm.t*dm.d+h*dm.dHead:]
			gemm(true, false, dm.t, dm.dHead, dm.t, 1, p, dm.t, do, dm.d, 0, dqkv[v:], w)
			gemm(false, true, dm.t, dm.t, dm.dHead, 1, do, dm.d, qkv[v:], w, 0, ds, dm.t)
			for i := 0; i < dm.t; i++ {
				pr, dr := p[i*dm.t:(i+1)*dm.t], ds[i*dm.t:(i+1)*dm.t]
				var dot T
				for j := range pr {
					dot += pr[j] * dr[j]
				}
				for j := range pr {
					dr[j] = pr[j] * (dr[j] - dot)
				}
			}
			gemm(false, false, dm.t, dm.dHead, dm.t, T(dm.scale), ds, dm.t, qkv[k:], w, 0, dqkv[q:], w)
			gemm(true, false, dm.t, dm.dHead, dm.t, T(dm.scale), ds, dm.t, qkv[q:], w, 0, dqkv[k:], w)
		}
	})
}

// softmaxRowsBiased32 is softmaxRowsBiased in float32 arithmetic with the
// vmath kernels.
func softmaxRowsBiased32(s, bias []float32, n int) {
	for i := 0; i < n; i++ {
		row := s[i*n : (i+1)*n]
		mx := vmath.AddMax(row, bias[i*n:(i+1)*n])
		vmath.Scale(row, 1/vmath.ExpSubSum(row, mx))
	}
}
