package layers

import (
	"fmt"
	"github.com/alibi-go/alibi/layers/internal/flash"
	"github.com/alibi-go/alibi/layers/position"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// AttentionConfig describes one attention op.
type AttentionConfig struct {
	Heads int
	// QueryLen is the number of rows of each sequence in qkv: the sequence
	// length, or, with a Cache, the number of new tokens per sequence.
	QueryLen int
	// PositionBias is the position scheme that biases the scores (nil: the causal
	// mask alone, as for sinusoidal and position-free models); its
	// parameters are the op's second input.
	PositionBias position.BiasScheme
	// Cache, when not nil, makes the op incremental: the new rows' keys and
	// values are stored after those of the earlier tokens, and the queries,
	// standing at their absolute positions, attend to all of them.
	Cache *KVCache
	// Scored > 0 makes only the last Scored of each sequence's QueryLen rows
	// queries (a graph without gradients that scores only those rows): they
	// attend, at their positions, to every key of their sequence, and the
	// output has Scored rows per sequence. 0: every row is a query.
	Scored int
	// Stats, when not nil, collects the statistics of every forward pass's
	// attention rows, per head (see AttentionStats): the op adds to it on
	// each run.
	Stats *AttentionStats
	// Gate, when not nil, is the Forgetting Transformer's data-dependent
	// bias: a (batch*QueryLen, Heads) node of prefix sums c (ForgetGate),
	// of which the kernel adds c_i - c_j to the score of query i on key j,
	// with no (T, T) array. It is the op's last input; its gradient flows
	// back through it. With a Cache, the cache keeps the sums of the earlier
	// tokens.
	Gate *G.Node
	// StickBreaking, when not nil, replaces the softmax by stick-breaking
	// attention (Tan et al., ICLR 2025): each key j < i takes
	// sigmoid(q_i . k_j / sqrt(d_head)) of the weight the keys nearer to
	// the query left, and what they all leave goes to this (Heads, d_head)
	// node's vector of the head (see flash.SBForward, which also says what
	// the statistics are then). It takes no position bias or gate; it is
	// the op's last input, and its gradient flows back through it.
	StickBreaking *G.Node
	// Drawn, when not nil, places the rows of every sequence at its drawn
	// positions for the position bias (randomized positional encodings, in
	// training graphs only).
	Drawn *DrawnPositions
}

// AttentionStats are per-head statistics of attention distributions,
// accumulated inside the tiled kernel from its online softmax, with no
// (T, T) array: for the queries at positions >= Far, the sums of the mean
// attended distance sum_j p_ij (i - j), of the entropy -sum_j p_ij ln p_ij
// (nats) and of the share of attention on keys at distance >= Far, and the
// number of such queries; divide by Queries for the means. NewAttentionStats
// makes one. The float32 kernel's statistics agree with a materialised
// float64 softmax to about 1e-6 (the kernel's exponentials).
type AttentionStats = flash.Stats

// NewAttentionStats returns empty statistics for heads heads, counting the
// queries at positions >= far (far = the training length L: the queries past
// L, and the share of their attention on distances never seen in training).
func NewAttentionStats(heads, far int) *AttentionStats { return flash.NewStats(heads, far) }

// Attention is causal multi-head scaled dot-product attention with a
// position bias computed inside the kernel:
//
//	out_h = softmax(Q_h K_h^T / sqrt(d_head) + B_h) V_h,
//
// over the keys at or before each query. qkv is (batch*QueryLen, 3D): the
// queries, keys and values side by side, head h taking columns
// h*d_head..(h+1)*d_head-1 of each block; the output is (batch*QueryLen, D)
// (batch*Scored with cfg.Scored),
// heads concatenated. params holds the bias scheme's parameters (nil when
// cfg.PositionBias is nil). The tiled kernels never build a (T, T) array: memory
// grows linearly with the length.
//
// The gradient flows to qkv, and to params when the scheme is trainable;
// a constant buffer such as the ALiBi slopes gets none.
func Attention(qkv, params *G.Node, cfg AttentionConfig) (*G.Node, error) {
	if cfg.Heads < 1 || cfg.QueryLen < 1 {
		return nil, fmt.Errorf("attention: heads (%d) and query length (%d) must be positive", cfg.Heads, cfg.QueryLen)
	}
	if qkv.Dims() != 2 {
		return nil, fmt.Errorf("attention: want qkv of rank 2, got shape %v", qkv.Shape())
	}
	if (cfg.PositionBias == nil) != (params == nil) {
		return nil, fmt.Errorf("attention: a bias scheme needs its parameters and parameters need a scheme")
	}
	op := &attentionOp{cfg: cfg}
	key := fmt.Sprintf("Attention{heads=%d, q=%d", cfg.Heads, cfg.QueryLen)
	inputs := G.Nodes{qkv}
	types := []hm.Type{tt(2, tvA)}
	if cfg.PositionBias != nil {
		if err := cfg.PositionBias.CheckParams(params.Shape(), position.BiasCall{Heads: cfg.Heads, QueryLen: cfg.QueryLen, Cached: cfg.Cache != nil || cfg.Scored > 0}); err != nil {
			return nil, fmt.Errorf("attention: %w", err)
		}
		key += ", bias=" + cfg.PositionBias.Name()
		inputs = append(inputs, params)
		types = append(types, tt(params.Dims(), tvA))
	}
	if cfg.Gate != nil {
		if gs := cfg.Gate.Shape(); len(gs) != 2 || gs[1] != cfg.Heads || gs[0] != qkv.Shape()[0] {
			return nil, fmt.Errorf("attention: a gate of shape %v for qkv of %d rows and %d heads", gs, qkv.Shape()[0], cfg.Heads)
		}
		key += ", gate"
		inputs = append(inputs, cfg.Gate)
		types = append(types, tt(2, tvA))
	}
	if sb := cfg.StickBreaking; sb != nil {
		if cfg.PositionBias != nil || cfg.Gate != nil {
			return nil, fmt.Errorf("attention: stick-breaking attention takes no position bias or forget gate")
		}
		if d := qkv.Shape()[1] / 3; sb.Dims() != 2 || sb.Shape()[0] != cfg.Heads || sb.Shape()[0]*sb.Shape()[1] != d {
			return nil, fmt.Errorf("attention: stick-breaking remainder of shape %v for %d heads of width %d", sb.Shape(), cfg.Heads, d/cfg.Heads)
		}
		key += ", stick-breaking"
		inputs = append(inputs, sb)
		types = append(types, tt(2, tvA))
	}
	if cfg.Drawn != nil {
		if cfg.Cache != nil || cfg.Scored > 0 || len(cfg.Drawn.P) != cfg.QueryLen {
			return nil, fmt.Errorf("attention: drawn positions are for training graphs, one per row of the %d", cfg.QueryLen)
		}
		key += fmt.Sprintf(", drawn=%p", cfg.Drawn)
	}
	if cfg.Cache != nil {
		key += fmt.Sprintf(", cache=%p", cfg.Cache)
	}
	if cfg.Scored < 0 || cfg.Scored > cfg.QueryLen {
		return nil, fmt.Errorf("attention: %d scored rows of %d; want 0..%d", cfg.Scored, cfg.QueryLen, cfg.QueryLen)
	}
	if cfg.Scored > 0 {
		key += fmt.Sprintf(", scored=%d", cfg.Scored)
	}
	if cfg.Stats != nil {
		if len(cfg.Stats.Queries) != cfg.Heads {
			return nil, fmt.Errorf("attention: statistics for %d heads, the op has %d", len(cfg.Stats.Queries), cfg.Heads)
		}
		key += fmt.Sprintf(", stats=%p", cfg.Stats)
	}
	op.opBase = opBase{key: key + "}", arity: len(inputs), typ: hm.NewFnType(append(types, tt(2, tvA))...)}
	return G.ApplyOp(op, inputs...)
}

// attentionOp is the forward op. Once a gradient is asked for (SymDiff), it
// keeps each row's log-sum-exp for the backward pass, in buffers reused
// from step to step.
type attentionOp struct {
	opBase
	cfg     AttentionConfig
	keepLSE bool
	lse     any               // []float32 or []float64: batch*heads*QueryLen
	scratch any               // the kernels' per-worker buffers
	bias32  biasMemo[float32] // the kernel bias of the last call
	bias64  biasMemo[float64]
	dParams *tensor.Dense
	dGate   *tensor.Dense // the gate's gradient, from the backward pass
	dRem    *tensor.Dense // the stick-breaking remainder's gradient, from the backward pass
}

// geometry returns the batch size and model width of qkv's shape.
func (o *attentionOp) geometry(qkv tensor.Shape) (batch, d int, err error) {
	if len(qkv) != 2 || qkv[0]%o.cfg.QueryLen != 0 || qkv[1]%3 != 0 || (qkv[1]/3)%o.cfg.Heads != 0 {
		return 0, 0, fmt.Errorf("attention: qkv of shape %v is not batch x %d rows of 3 x %d heads x d_head", qkv, o.cfg.QueryLen, o.cfg.Heads)
	}
	return qkv[0] / o.cfg.QueryLen, qkv[1] / 3, nil
}

func (o *attentionOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	q, err := shapeOf(o.key, in, 0)
	if err != nil {
		return nil, err
	}
	batch, d, err := o.geometry(q)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{batch * o.queries(), d}, nil
}

// queries is the number of query rows per sequence.
func (o *attentionOp) queries() int {
	if o.cfg.Scored > 0 {
		return o.cfg.Scored
	}
	return o.cfg.QueryLen
}

// attnCall gathers what both passes need: the inputs as dense tensors and
// the geometry.
type attnCall struct {
	qkv, params, gate, rem *tensor.Dense
	batch, d               int
}

func (o *attentionOp) inputs(vals []G.Value) (attnCall, error) {
	var c attnCall
	if err := o.checkArity(len(vals)); err != nil {
		return c, err
	}
	ds, err := o.denseAll(vals)
	if err != nil {
		return c, err
	}
	c.qkv = ds[0]
	if o.cfg.PositionBias != nil {
		c.params = ds[1]
	}
	if o.cfg.Gate != nil {
		c.gate = ds[len(ds)-1]
	}
	if o.cfg.StickBreaking != nil {
		c.rem = ds[len(ds)-1]
	}
	c.batch, c.d, err = o.geometry(c.qkv.Shape())
	return c, err
}

// scale is 1/sqrt(d_head).
func (o *attentionOp) scale(d int) float64 { return 1 / math.Sqrt(float64(d/o.cfg.Heads)) }

func (o *attentionOp) Do(vals ...G.Value) (G.Value, error) {
	c, err := o.inputs(vals)
	if err != nil {
		return nil, err
	}
	out := o.output(c.qkv.Dtype(), c.batch*o.queries(), c.d)
	switch c.qkv.Dtype() {
	case tensor.Float32:
		q := elems[float32](c.qkv)
		err = attnForwardOp(o, c, q, elems[float32](out))
	case tensor.Float64:
		q := elems[float64](c.qkv)
		err = attnForwardOp(o, c, q, elems[float64](out))
	default:
		err = fmt.Errorf("%s: unsupported dtype %v", o.key, c.qkv.Dtype())
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// attnSeqs returns the kernel's sequence views: the packed rows of each
// sequence, or the new rows against the cache.
func attnSeqs[T float](o *attentionOp, c attnCall, qkv, out []T) ([]flash.Seq[T], error) {
	if o.cfg.Cache == nil {
		var seqs []flash.Seq[T]
		if o.cfg.Scored > 0 {
			seqs = flash.LastRowSeqs(qkv, out, c.batch, o.cfg.QueryLen, o.cfg.Scored, c.d)
		} else {
			seqs = flash.PackedSeqs(qkv, out, c.batch, o.cfg.QueryLen, c.d)
		}
		if c.gate != nil {
			gate := c.gate.Data().([]T)
			for b := range seqs {
				seqs[b].C, seqs[b].LdC = gate[b*o.cfg.QueryLen*o.cfg.Heads:], o.cfg.Heads
			}
		}
		return seqs, nil
	}
	q32, ok := any(qkv).([]float32)
	if !ok {
		return nil, fmt.Errorf("%s: a key/value cache holds float32 only", o.key)
	}
	if len(o.cfg.Cache.pos.active) != c.batch || o.cfg.Cache.d != c.d || o.cfg.Cache.heads != o.cfg.Heads {
		return nil, fmt.Errorf("%s: %d sequences of width %d in %d heads are selected in the cache, the input has %d of width %d",
			o.key, len(o.cfg.Cache.pos.active), o.cfg.Cache.d, o.cfg.Cache.heads, c.batch, c.d)
	}
	var gate []float32
	if c.gate != nil {
		gate = c.gate.Data().([]float32)
	}
	seqs, err := o.cfg.Cache.store(q32, gate, any(out).([]float32), o.cfg.QueryLen, o.cfg.Scored)
	return any(seqs).([]flash.Seq[T]), err
}

// attnBias returns the scheme's bias for keys up to kLen, or nil.
func attnBias[T float](o *attentionOp, c attnCall, kLen int) position.KernelBias[T] {
	if o.cfg.PositionBias == nil {
		return nil
	}
	if d := o.cfg.Drawn; d != nil {
		return atDrawn(biasMemoOf[T](o).bias(o.cfg.PositionBias, c.params.Data().([]T), o.cfg.Heads, d.end()), d.P)
	}
	return biasMemoOf[T](o).bias(o.cfg.PositionBias, c.params.Data().([]T), o.cfg.Heads, kLen)
}

// biasMemoOf returns the op's memo of kernel biases in element type T.
func biasMemoOf[T float](o *attentionOp) *biasMemo[T] {
	if m, ok := any(&o.bias32).(*biasMemo[T]); ok {
		return m
	}
	return any(&o.bias64).(*biasMemo[T])
}

func attnForwardOp[T float](o *attentionOp, c attnCall, qkv, out []T) error {
	seqs, err := attnSeqs(o, c, qkv, out)
	if err != nil {
		return err
	}
	if c.rem != nil {
		flash.SBForward(seqs, o.queries(), o.cfg.Heads, c.d/o.cfg.Heads, T(o.scale(c.d)), c.rem.Data().([]T), o.cfg.Stats)
		return nil
	}
	var lse []T
	if o.keepLSE {
		lse, _ = o.lse.([]T)
		lse = resize(lse, c.batch*o.cfg.Heads*o.cfg.QueryLen)
		o.lse = lse
	}
	flash.Forward(seqs, o.queries(), o.cfg.Heads, c.d/o.cfg.Heads, T(o.scale(c.d)),
		attnBias[T](o, c, flash.MaxKLen(seqs, o.queries())), lse, flash.Opts{Scratch: &o.scratch, Stats: o.cfg.Stats})
	return nil
}

// DiffWRT: qkv always; the parameters when the scheme is trainable; the
// gate.
func (o *attentionOp) DiffWRT(n int) []bool {
	wrt := []bool{true}
	if o.cfg.PositionBias != nil {
		wrt = append(wrt, o.cfg.PositionBias.Trainable())
	}
	if o.cfg.Gate != nil {
		wrt = append(wrt, true)
	}
	if o.cfg.StickBreaking != nil {
		wrt = append(wrt, true)
	}
	return wrt
}

// SymDiff returns the gradient of qkv (and of a trainable scheme's
// parameters) and switches the op to keeping what the backward pass needs.
func (o *attentionOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if o.cfg.Cache != nil || o.cfg.Scored > 0 {
		return nil, fmt.Errorf("%s: no gradient through a key/value cache or scored rows", o.key)
	}
	o.keepLSE = true
	b := &attentionGradOp{fwd: o}
	types := []hm.Type{tt(2, tvA), tt(2, tvA), tt(2, tvA)}
	// The backward op reads the forward's inputs (qkv, parameters, gate)
	// after the output and its gradient.
	in := G.Nodes{inputs[0], output, grad}
	for _, x := range inputs[1:] {
		types = append(types, tt(x.Dims(), tvA))
		in = append(in, x)
	}
	b.opBase = opBase{key: "AttentionGrad" + o.key[len("Attention"):], arity: len(in), typ: hm.NewFnType(append(types, tt(2, tvA))...)}
	// The forward output is an input only to order the two: the lse must
	// come from this step's forward pass.
	dqkv, err := G.ApplyOp(b, in...)
	if err != nil {
		return nil, err
	}
	grads := G.Nodes{dqkv}
	if o.cfg.PositionBias != nil {
		var dp *G.Node
		if o.cfg.PositionBias.Trainable() {
			p := &attentionParamGradOp{fwd: o, gate: false}
			p.opBase = opBase{key: "AttentionParamGrad" + o.key[len("Attention"):], arity: 2,
				typ: hm.NewFnType(tt(inputs[1].Dims(), tvA), tt(2, tvA), tt(inputs[1].Dims(), tvA))}
			if dp, err = G.ApplyOp(p, inputs[1], dqkv); err != nil {
				return nil, err
			}
		}
		grads = append(grads, dp)
	}
	if o.cfg.Gate != nil {
		gate := inputs[len(inputs)-1]
		p := &attentionParamGradOp{fwd: o, gate: true}
		p.opBase = opBase{key: "AttentionGateGrad" + o.key[len("Attention"):], arity: 2,
			typ: hm.NewFnType(tt(2, tvA), tt(2, tvA), tt(2, tvA))}
		dg, err := G.ApplyOp(p, gate, dqkv)
		if err != nil {
			return nil, err
		}
		grads = append(grads, dg)
	}
	if sb := o.cfg.StickBreaking; sb != nil {
		p := &attentionParamGradOp{fwd: o, rem: true}
		p.opBase = opBase{key: "AttentionRemainderGrad" + o.key[len("Attention"):], arity: 2,
			typ: hm.NewFnType(tt(2, tvA), tt(2, tvA), tt(2, tvA))}
		dr, err := G.ApplyOp(p, inputs[len(inputs)-1], dqkv)
		if err != nil {
			return nil, err
		}
		grads = append(grads, dr)
	}
	return grads, nil
}

// attentionGradOp computes d(qkv) from the saved lse, the forward output
// and d(out); for a trainable scheme it also computes the parameters'
// gradient, which attentionParamGradOp hands to the graph.
type attentionGradOp struct {
	opBase
	fwd      *attentionOp
	biasGrad any
}

func (o *attentionGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return shapeOf(o.key, in, 0)
}

func (o *attentionGradOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	ds, err := o.denseAll(vals)
	if err != nil {
		return nil, err
	}
	c := attnCall{qkv: ds[0]}
	if o.fwd.cfg.PositionBias != nil {
		c.params = ds[3]
	}
	if o.fwd.cfg.Gate != nil {
		c.gate = ds[len(ds)-1]
	}
	if o.fwd.cfg.StickBreaking != nil {
		c.rem = ds[len(ds)-1]
	}
	if c.batch, c.d, err = o.fwd.geometry(c.qkv.Shape()); err != nil {
		return nil, err
	}
	dqkv := o.output(c.qkv.Dtype(), c.qkv.Shape()...)
	switch c.qkv.Dtype() {
	case tensor.Float32:
		q := elems[float32](c.qkv)
		err = attnBackwardOp(o, c, q, elems[float32](ds[1]), elems[float32](ds[2]), elems[float32](dqkv))
	case tensor.Float64:
		q := elems[float64](c.qkv)
		err = attnBackwardOp(o, c, q, elems[float64](ds[1]), elems[float64](ds[2]), elems[float64](dqkv))
	default:
		err = fmt.Errorf("%s: unsupported dtype %v", o.key, c.qkv.Dtype())
	}
	if err != nil {
		return nil, err
	}
	return dqkv, nil
}

func attnBackwardOp[T float](o *attentionGradOp, c attnCall, qkv, out, dout, dqkv []T) error {
	f := o.fwd
	if c.rem != nil {
		return sbBackward(f, c, qkv, out, dout, dqkv)
	}
	lse, ok := f.lse.([]T)
	if !ok || len(lse) != c.batch*f.cfg.Heads*f.cfg.QueryLen {
		return fmt.Errorf("%s: no log-sum-exp kept from the forward pass", o.key)
	}
	t := f.cfg.QueryLen
	seqs := flash.PackedSeqs(qkv, out, c.batch, t, c.d)
	grads := flash.PackedGrads(dout, dqkv, c.batch, t, c.d)
	if c.gate != nil {
		if f.dGate == nil || !f.dGate.Shape().Eq(c.gate.Shape()) || f.dGate.Dtype() != c.gate.Dtype() {
			f.dGate = newLike(c.gate.Dtype(), c.gate.Shape()...)
		}
		gate, dGate, h := c.gate.Data().([]T), f.dGate.Data().([]T), f.cfg.Heads
		for b := range seqs {
			seqs[b].C, seqs[b].LdC = gate[b*t*h:], h
			grads[b].DC, grads[b].LdDC = dGate[b*t*h:], h
		}
	}
	bias := attnBias[T](f, c, t)
	var biasGrad []T
	if f.cfg.PositionBias != nil && f.cfg.PositionBias.Trainable() {
		biasGrad, _ = o.biasGrad.([]T)
		biasGrad = resize(biasGrad, bias.(position.TrainableBias[T]).GradLen())
		o.biasGrad = biasGrad
	}
	flash.Backward(seqs, grads, t, f.cfg.Heads, c.d/f.cfg.Heads, T(f.scale(c.d)),
		bias, lse, biasGrad, flash.Opts{Scratch: &f.scratch})
	if biasGrad != nil {
		if f.dParams == nil || !f.dParams.Shape().Eq(c.params.Shape()) || f.dParams.Dtype() != c.params.Dtype() {
			f.dParams = newLike(c.params.Dtype(), c.params.Shape()...)
		}
		paramGrad(f.cfg.PositionBias, c.params.Data().([]T), biasGrad, f.dParams.Data().([]T))
	}
	return nil
}

// attentionParamGradOp returns the parameters' gradient (or, with gate,
// the gate's) computed by the backward op, which its second input orders
// before it.
type attentionParamGradOp struct {
	opBase
	fwd  *attentionOp
	gate bool // the gate's gradient
	rem  bool // the stick-breaking remainder's
}

func (o *attentionParamGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return shapeOf(o.key, in, 0)
}

func (o *attentionParamGradOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	d := o.fwd.dParams
	if o.gate {
		d = o.fwd.dGate
	}
	if o.rem {
		d = o.fwd.dRem
	}
	if d == nil {
		return nil, fmt.Errorf("%s: the backward pass has not run", o.key)
	}
	return d, nil
}

// sbBackward is the backward pass of stick-breaking attention: d(qkv), and
// the remainder's gradient, kept for attentionParamGradOp.
func sbBackward[T float](f *attentionOp, c attnCall, qkv, out, dout, dqkv []T) error {
	t := f.cfg.QueryLen
	if f.dRem == nil || !f.dRem.Shape().Eq(c.rem.Shape()) || f.dRem.Dtype() != c.rem.Dtype() {
		f.dRem = newLike(c.rem.Dtype(), c.rem.Shape()...)
	}
	flash.SBBackward(flash.PackedSeqs(qkv, out, c.batch, t, c.d), flash.PackedGrads(dout, dqkv, c.batch, t, c.d),
		t, f.cfg.Heads, c.d/f.cfg.Heads, T(f.scale(c.d)), c.rem.Data().([]T), f.dRem.Data().([]T))
	return nil
}
