package layers

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ForgetGate turns forget-gate logits into the prefix sums that the
// Forgetting Transformer's attention adds as a bias (Lin et al., ICLR 2025):
// g is (batch*queryLen, heads), the logit of head h's forget gate
// f_t = sigmoid(g_t) at each row, and the result c (same shape) holds, per
// sequence and head, c_t = sum over u <= t of ln f_u. Attention with
// AttentionConfig.Gate = c adds c_i - c_j = sum over u in (j, i] of ln f_u
// to the score of query i on key j: every token between them (the query's
// own included, the key's not) multiplies the key's weight by its gate,
// ALiBi's linear penalty with a slope that the data sets token by token.
//
// With cache (decoding), each sequence's sums continue from the last one
// the cache holds for it (the cache keeps them, as it keeps the keys).
//
// The gradient of g_u is sigmoid(-g_u) times the sum of c's gradient over
// the rows t >= u of its sequence.
func ForgetGate(g *G.Node, heads, queryLen int, cache *KVCache) (*G.Node, error) {
	s := g.Shape()
	if heads < 1 || queryLen < 1 || len(s) != 2 || s[1] != heads || s[0]%queryLen != 0 {
		return nil, fmt.Errorf("forget gate: logits of shape %v are not batch x %d rows of %d heads", s, queryLen, heads)
	}
	op := &forgetOp{heads: heads, qLen: queryLen, cache: cache}
	op.opBase = opBase{key: fmt.Sprintf("ForgetGate{heads=%d, q=%d, cache=%p}", heads, queryLen, cache), arity: 1,
		typ: hm.NewFnType(tt(2, tvA), tt(2, tvA))}
	return G.ApplyOp(op, g)
}

// forgetOp is the forward op.
type forgetOp struct {
	opBase
	heads, qLen int
	cache       *KVCache
}

func (o *forgetOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return sameShape(o.key, in, 0)
}

// logSigmoid is ln(1/(1+e^-x)), without overflow for any x.
func logSigmoid(x float64) float64 {
	if x >= 0 {
		return -math.Log1p(math.Exp(-x))
	}
	return x - math.Log1p(math.Exp(x))
}

func (o *forgetOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	g, err := dense(o.key, vals[0])
	if err != nil {
		return nil, err
	}
	batch := g.Shape()[0] / o.qLen
	start := make([]float64, batch*o.heads) // each sequence's sum before its rows
	if o.cache != nil {
		if err := o.cache.gateStarts(start, batch); err != nil {
			return nil, fmt.Errorf("%s: %w", o.key, err)
		}
	}
	out := o.output(g.Dtype(), g.Shape()...)
	switch g.Dtype() {
	case tensor.Float32:
		prefixLogSigmoid(elems[float32](g), elems[float32](out), start, o.qLen, o.heads)
	case tensor.Float64:
		prefixLogSigmoid(elems[float64](g), elems[float64](out), start, o.qLen, o.heads)
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, g.Dtype())
	}
	return out, nil
}

// prefixLogSigmoid writes the running sums of ln sigmoid(g) down each
// sequence of qLen rows into c, per head, from start, in float64.
func prefixLogSigmoid[T float](g, c []T, start []float64, qLen, heads int) {
	for b := 0; b < len(g)/(qLen*heads); b++ {
		for h := 0; h < heads; h++ {
			sum := start[b*heads+h]
			for t := 0; t < qLen; t++ {
				i := (b*qLen+t)*heads + h
				sum += logSigmoid(float64(g[i]))
				c[i] = T(sum)
			}
		}
	}
}

func (o *forgetOp) DiffWRT(int) []bool { return []bool{true} }

// SymDiff: forgetGradOp computes dg from g and dc.
func (o *forgetOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	if o.cache != nil {
		return nil, fmt.Errorf("%s: no gradient through a key/value cache", o.key)
	}
	b := &forgetGradOp{fwd: o}
	b.opBase = opBase{key: "ForgetGateGrad" + o.key[len("ForgetGate"):], arity: 2,
		typ: hm.NewFnType(tt(2, tvA), tt(2, tvA), tt(2, tvA))}
	dg, err := G.ApplyOp(b, in[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dg}, nil
}

// forgetGradOp: dg_u = sigmoid(-g_u) * sum_{t >= u} dc_t, per sequence and
// head.
type forgetGradOp struct {
	opBase
	fwd *forgetOp
}

func (o *forgetGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return shapeOf(o.key, in, 0)
}

func (o *forgetGradOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	g, err := dense(o.key, vals[0])
	if err != nil {
		return nil, err
	}
	dc, err := dense(o.key, vals[1])
	if err != nil {
		return nil, err
	}
	out := o.output(g.Dtype(), g.Shape()...)
	switch g.Dtype() {
	case tensor.Float32:
		forgetGrad(elems[float32](g), elems[float32](dc), elems[float32](out), o.fwd.qLen, o.fwd.heads)
	case tensor.Float64:
		forgetGrad(elems[float64](g), elems[float64](dc), elems[float64](out), o.fwd.qLen, o.fwd.heads)
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, g.Dtype())
	}
	return out, nil
}

// forgetGrad writes dg from g and dc: the suffix sums of dc down each
// sequence, times sigmoid(-g), in float64.
func forgetGrad[T float](g, dc, dg []T, qLen, heads int) {
	for b := 0; b < len(g)/(qLen*heads); b++ {
		for h := 0; h < heads; h++ {
			var suffix float64
			for t := qLen - 1; t >= 0; t-- {
				i := (b*qLen+t)*heads + h
				suffix += float64(dc[i])
				dg[i] = T(suffix / (1 + math.Exp(float64(g[i]))))
			}
		}
	}
}
