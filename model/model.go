package model

import (
	"fmt"
	"math"

	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/layers/position"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Model is a configured model with its weights. Position buffers (the ALiBi
// slopes, the sinusoidal table of the last length used) are non-trainable
// and shared by every graph built from the model.
type Model struct {
	Config  Config
	Weights *Weights
	// PositionBuffer is the position scheme's constant buffer
	// (position.Scheme Buffer): the ALiBi slopes, nil for the other
	// built-in schemes. It is saved in checkpoints. The attention kernels
	// compute the bias from it; no (T, T) bias is ever built.
	PositionBuffer []float32

	scheme     position.Scheme
	bufferName string                            // the name of PositionBuffer
	makeTable  func(length, d int) *tensor.Dense // the scheme's embedding table, or nil
	table      *tensor.Dense                     // embedding table for tableLen
	tableLen   int
	decodeRows []float32 // embedding table rows for decoding, grown as needed

	// dropped: DroPE has dropped the rotation (Config.DropeStep): the
	// model's graphs rotate nothing.
	dropped bool

	// ext is the evaluation-time extension graphs apply (see Extend), nil
	// for none, at extFactor (0: each graph's length over the training
	// length).
	ext       position.Extension
	extFactor float64

	// Precision is the arithmetic of the linear layers' products in the
	// graphs built after it is set (layers.Precision): FP32 by default, or
	// BF16 for mixed precision. It is a setting of a run, not of the
	// weights: checkpoints are float32 either way and do not record it.
	Precision layers.Precision
}

// New validates cfg and returns a model with freshly initialised weights.
func New(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return FromWeights(cfg, InitWeights(cfg))
}

// FromWeights returns a model using the given weights, which must match cfg.
func FromWeights(cfg Config, w *Weights) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := w.checkShapes(cfg); err != nil {
		return nil, err
	}
	s := cfg.mustScheme()
	m := &Model{Config: cfg, Weights: w, scheme: s, makeTable: s.EmbeddingTable()}
	m.bufferName, m.PositionBuffer = s.Buffer(cfg.shape())
	return m, nil
}

// Scheme is the model's position scheme.
func (m *Model) Scheme() position.Scheme { return m.scheme }

// positionBias returns layer l's attention bias scheme and its parameters'
// node, or nil for the schemes whose attention has no bias (sinusoidal,
// none and rope). The scheme names its parameters: its buffer (ALiBi's
// slopes), a constant node that reads m.PositionBuffer in place (never
// differentiated or updated), made once per graph in *buffer; a shared
// weight (T5's table, one node for every layer); or the layer's own
// (KERPLE's and FIRE's).
//
// Under a SlopeExtension (see Extend) the buffer node reads the extension's
// copy of the buffer for a graph of length tokens (decode: a decoding
// graph); PositionBuffer itself never changes.
func (m *Model) positionBias(g *G.ExprGraph, l int, param map[string]*G.Node, buffer **G.Node, length int, decode bool) (position.BiasScheme, *G.Node, error) {
	bias, name := m.scheme.AttentionBias(m.Config.shape())
	if bias == nil {
		return nil, nil, nil
	}
	if m.PositionBuffer != nil && name == m.bufferName {
		if *buffer == nil {
			t, err := m.bufferTensor(length, decode)
			if err != nil {
				return nil, nil, err
			}
			*buffer = layers.ConstantInput(g, t, name)
		}
		return bias, *buffer, nil
	}
	if n, ok := param[layerName(l, name)]; ok && m.Weights.IsPosition(layerName(l, name)) {
		return bias, n, nil
	}
	if n, ok := param[name]; ok && m.Weights.IsPosition(name) {
		return bias, n, nil
	}
	return nil, nil, fmt.Errorf("position scheme %s: its attention bias reads %q, which is neither its buffer nor one of its parameters", m.scheme.Name(), name)
}

// Project moves every position parameter that an optimizer step took out of
// its domain back into it (KERPLE's and FIRE's; see position.ParamSpec). The
// training loop calls it after every step.
func (m *Model) Project() { m.Weights.project() }

// embeddingTable returns the scheme's table for length positions, or nil.
func (m *Model) embeddingTable(length int) *tensor.Dense {
	if m.makeTable == nil {
		return nil
	}
	if m.table == nil || m.tableLen != length {
		m.table = m.makeTable(length, m.Config.DModel)
		m.tableLen = length
	}
	return m.table
}

// Graph is one compiled forward (and, for training, backward) pass over a
// batch of sequences of a fixed length. Every graph runs its ops directly
// in order (training graphs too: their gradient ops are ops like any
// other), which leaves the nodes' own Value unset. Read the results of the
// last Execute with the accessors, which work on every graph: LogitsData
// and LossValue on any graph, GradData on training graphs (it returns nil
// on the others).
type Graph struct {
	Batch, Len int
	// Scored > 0 (NewScoringGraph): the logits are those of the last Scored
	// rows of each sequence only.
	Scored int
	Expr   *G.ExprGraph // the Gorgonia graph
	Logits *G.Node      // (Batch*Len, Vocab), or (Batch*Scored, Vocab)
	// Loss is the mean cross-entropy node, in nats, of a training graph;
	// nil in a graph without gradients, whose LossValue computes the same
	// loss from the logits.
	Loss   *G.Node
	Params []*G.Node // in Weights.Names order
	Grads  []*G.Node // d Loss / d Params, for training graphs

	ids, targets []int   // backing of the input nodes, rewritten by Execute
	run          *runner // runs the graph; nil once closed
	// ran says that the last Execute succeeded; scored, that it had
	// targets, which LossValue scores.
	ran, scored bool

	// For decoding graphs: the cache the graph's attention reads and
	// extends, and the backing of the sinusoidal rows of the new tokens.
	cache *Cache
	pe    []float32
	m     *Model
	// drawn, in a training graph with randomized positions, holds the
	// positions the next Execute trains at (SetPositions).
	drawn *layers.DrawnPositions
}

// SetPositions sets the positions of the rows of every sequence for the
// next runs of a training graph with randomized positions
// (Config.RandomPositions): len = Len, sorted, distinct and below
// RandomPositions, as position.DrawPositions draws them.
func (gr *Graph) SetPositions(p []int) error {
	if gr.drawn == nil {
		return fmt.Errorf("graph run: positions are drawn only in training graphs of a model with random_positions")
	}
	if len(p) != gr.Len || len(p) == 0 || p[0] < 0 || p[len(p)-1] >= gr.m.Config.RandomPositions {
		return fmt.Errorf("graph run: %d positions, want %d from 0 to %d", len(p), gr.Len, gr.m.Config.RandomPositions-1)
	}
	for i := 1; i < len(p); i++ {
		if p[i] <= p[i-1] {
			return fmt.Errorf("graph run: positions not sorted and distinct at %d: %d after %d", i, p[i], p[i-1])
		}
	}
	copy(gr.drawn.P, p)
	if gr.pe != nil { // the sinusoidal rows of every sequence
		d := gr.m.Config.DModel
		table := gr.m.decodeTable(p[len(p)-1] + 1)
		for r := range gr.Len * gr.Batch {
			at := p[r%gr.Len]
			copy(gr.pe[r*d:(r+1)*d], table[at*d:(at+1)*d])
		}
	}
	return nil
}

// DropPositions drops the rotation of a DroPE model (Config.DropeStep):
// graphs built afterwards rotate nothing. The training loop calls it at
// the step; a checkpoint records it.
func (m *Model) DropPositions() { m.dropped = true }

// PositionsDropped reports whether DroPE has dropped the model's rotation.
func (m *Model) PositionsDropped() bool { return m.dropped }

// rotary reports whether the model's graphs rotate queries and keys.
func (m *Model) rotary() bool { return m.scheme.Rotary() && !m.dropped }

// NewGraph builds the graph for batch sequences of the given length. With
// train, it also computes the loss against targets and the gradients of
// every weight.
//
// Without train, a graph of more rows than the vocabulary has tokens, whose
// first layer's input is the token's embedding alone (every scheme but the
// sinusoidal one), reads that layer's queries, keys and values from a
// table of the vocabulary computed once per Execute instead of projecting
// every row: the same values, bit for bit.
func (m *Model) NewGraph(batch, length int, train bool) (*Graph, error) {
	return m.build(batch, length, buildOpts{train: train})
}

// NewScoringGraph builds a graph without gradients over batch sequences of
// the given length whose logits are those of the last scored rows of each
// sequence only, (Batch*Scored, Vocab): the same values as NewGraph's
// logits of those rows. Every layer but the last runs on every row (their
// outputs are the last layer's keys and values); the last layer's queries,
// its MLP, the final LayerNorm and the output head run on the scored rows
// alone. A sliding-window evaluation that scores one token per window thus
// spends one row, not length rows, in the last layer and the head.
func (m *Model) NewScoringGraph(batch, length, scored int) (*Graph, error) {
	if scored < 1 || scored > length {
		return nil, fmt.Errorf("graph: %d scored rows of sequences of %d", scored, length)
	}
	return m.build(batch, length, buildOpts{scored: scored})
}

// NewStatsGraph builds a graph without gradients, like NewGraph, whose
// attention ops also collect statistics of their attention rows (see
// layers.AttentionStats): one per layer, counting the queries at positions
// >= far inside each sequence, added to on every Execute.
func (m *Model) NewStatsGraph(batch, length, far int) (*Graph, []*layers.AttentionStats, error) {
	stats := make([]*layers.AttentionStats, m.Config.NLayers)
	for l := range stats {
		stats[l] = layers.NewAttentionStats(m.Config.NHeads, far)
	}
	g, err := m.build(batch, length, buildOpts{stats: stats})
	if err != nil {
		return nil, nil, err
	}
	return g, stats, nil
}

// buildOpts are the variants of a graph that build makes.
type buildOpts struct {
	train bool // with the loss and the gradients
	// cache makes a decoding graph: length new tokens of each of batch
	// sequences, at their positions in the cache.
	cache *Cache
	// stats (one per layer) makes the attention ops collect their
	// statistics.
	stats []*layers.AttentionStats
	// scored > 0 runs the last layer's queries and everything after them
	// on the last scored rows of each sequence only.
	scored int
}

// build builds a graph of batch sequences of length tokens.
func (m *Model) build(batch, length int, opt buildOpts) (*Graph, error) {
	train, cache := opt.train, opt.cache
	if batch < 1 || length < 1 {
		return nil, fmt.Errorf("graph: batch (%d) and length (%d) must be positive", batch, length)
	}
	if train && m.ext != nil {
		return nil, fmt.Errorf("graph: extension %s is for evaluation and generation, not training", m.ext.Name())
	}
	cfg := m.Config
	n := batch * length
	gr := &Graph{Batch: batch, Len: length, Scored: opt.scored, Expr: G.NewGraph(), ids: make([]int, n), targets: make([]int, n), cache: cache, m: m}
	g := gr.Expr
	param := make(map[string]*G.Node, len(m.Weights.Names))
	for _, name := range m.Weights.Names {
		t := m.Weights.Tensors[name]
		node := G.NewTensor(g, G.Float32, t.Dims(), G.WithShape(t.Shape()...), G.WithName(name), G.WithValue(t))
		param[name] = node
		gr.Params = append(gr.Params, node)
	}
	ids := G.NewTensor(g, tensor.Int, 1, G.WithShape(n), G.WithName("ids"),
		G.WithValue(tensor.New(tensor.WithShape(n), tensor.WithBacking(gr.ids))))

	// Token embeddings, scaled by sqrt(d), plus positions for sinusoidal.
	x, err := layers.ScaledEmbedding(param[nameTokEmb], ids, math.Sqrt(float64(cfg.DModel)))
	if err != nil {
		return nil, err
	}
	if train && cfg.RandomPositions > 0 {
		gr.drawn = &layers.DrawnPositions{P: make([]int, length)}
		for i := range gr.drawn.P {
			gr.drawn.P[i] = i // until SetPositions
		}
	}
	if m.makeTable != nil {
		if cache == nil && gr.drawn == nil {
			// Every sequence starts at 0: one table, added periodically.
			pe := layers.ConstantInput(g, m.embeddingTable(length), m.scheme.Name()+"_table")
			x, err = layers.AddRows(x, pe)
		} else {
			// Each row's own positions, filled in by Execute (a cache) or
			// SetPositions (drawn positions).
			gr.pe = make([]float32, n*cfg.DModel)
			if gr.drawn != nil {
				table := m.embeddingTable(length).Data().([]float32)
				for r := range batch {
					copy(gr.pe[r*length*cfg.DModel:], table)
				}
			}
			pe := layers.ConstantInput(g, tensor.New(tensor.WithShape(n, cfg.DModel), tensor.WithBacking(gr.pe)), m.scheme.Name()+"_rows")
			x, err = layers.Add(x, pe)
		}
		if err != nil {
			return nil, err
		}
	}
	lb := layerBuild{g: g, param: param, ids: ids, length: length, n: n, train: train, opt: opt, drawn: gr.drawn}
	if m.rotary() {
		if lb.rope, err = m.ropeScaling(length, cache != nil); err != nil {
			return nil, err
		}
		lb.rope = lb.rope.Shared() // one table of angles for every layer
	}
	for l := 0; l < cfg.NLayers; l++ {
		p := func(part string) *G.Node { return param[layerName(l, part)] }
		h, err := m.attention(&lb, l, x)
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", l, err)
		}
		last := l == cfg.NLayers-1 && opt.scored > 0
		if last { // from here on, the scored rows alone
			if x, err = layers.LastRows(x, length, opt.scored); err != nil {
				return nil, err
			}
		}
		if x, err = layers.Add(x, h); err != nil {
			return nil, err
		}
		if h, err = layers.LayerNorm(x, p("ln2.weight"), p("ln2.bias")); err != nil {
			return nil, err
		}
		mlp := layers.MLP{W1: p("mlp.fc1.weight"), B1: p("mlp.fc1.bias"), W2: p("mlp.fc2.weight"), B2: p("mlp.fc2.bias"), Precision: m.Precision}
		if h, err = mlp.Forward(h); err != nil {
			return nil, fmt.Errorf("layer %d: %w", l, err)
		}
		if x, err = layers.Add(x, h); err != nil {
			return nil, err
		}
	}
	h, err := layers.LayerNorm(x, param[nameLNfW], param[nameLNfB])
	if err != nil {
		return nil, err
	}
	if gr.Logits, err = layers.LinearIn(m.Precision, h, param[nameHead], nil); err != nil {
		return nil, err
	}
	if train {
		tg := G.NewTensor(g, tensor.Int, 1, G.WithShape(n), G.WithName("targets"),
			G.WithValue(tensor.New(tensor.WithShape(n), tensor.WithBacking(gr.targets))))
		if gr.Loss, err = layers.CrossEntropy(gr.Logits, tg); err != nil {
			return nil, err
		}
		if gr.Grads, err = G.Grad(gr.Loss, gr.Params...); err != nil {
			return nil, fmt.Errorf("gradients: %w", err)
		}
	}
	keep := G.Nodes{gr.Logits}
	if train {
		keep = append(append(keep, gr.Loss), gr.Grads...)
	}
	if gr.run, err = newRunner(g, keep...); err != nil {
		return nil, err
	}
	return gr, nil
}

// layerBuild is what building one layer's attention needs of its graph.
type layerBuild struct {
	g      *G.ExprGraph
	param  map[string]*G.Node
	ids    *G.Node
	length int // tokens per sequence
	n      int // rows: batch*length
	train  bool
	opt    buildOpts
	rope   layers.RopeScaling // the rotation, under an extension
	buffer *G.Node            // the position buffer's node, made once
	drawn  *layers.DrawnPositions
}

// attention builds layer l's attention block on the residual stream x:
// LayerNorm, the forget gate (FoX), the queries, keys and values (or, in
// the first layer of a graph that folds it, their table of the
// vocabulary), any rotation and log-length scaling, the attention kernel
// with its position bias, and the output projection.
func (m *Model) attention(lb *layerBuild, l int, x *G.Node) (*G.Node, error) {
	cfg, cache := m.Config, lb.opt.cache
	p := func(part string) *G.Node { return lb.param[layerName(l, part)] }
	attn := layers.MultiHeadAttention{Heads: cfg.NHeads, Rotary: m.rotary(), RopeScaling: lb.rope, Drawn: lb.drawn,
		WQKV: p("attn.qkv.weight"), BQKV: p("attn.qkv.bias"), WOut: p("attn.out.weight"), BOut: p("attn.out.bias"), Precision: m.Precision}
	if cfg.logLength() {
		attn.LogitScale = p(nameLogitScale)
	}
	scheme, biasParams, err := m.positionBias(lb.g, l, lb.param, &lb.buffer, lb.length, cache != nil)
	if err != nil {
		return nil, err
	}
	attnCfg := layers.AttentionConfig{QueryLen: lb.length, PositionBias: scheme, Drawn: lb.drawn}
	if cache != nil {
		attnCfg.Cache = cache.layers[l]
	}
	if lb.opt.stats != nil {
		attnCfg.Stats = lb.opt.stats[l]
	}
	if l == cfg.NLayers-1 && lb.opt.scored > 0 {
		attnCfg.Scored = lb.opt.scored
	}
	fold := l == 0 && m.foldsFirstLayer(lb.n, lb.train)
	var h *G.Node
	if !fold {
		if h, err = layers.LayerNorm(x, p("ln1.weight"), p("ln1.bias")); err != nil {
			return nil, err
		}
	}
	if gated, ok := m.scheme.(position.GatedScheme); ok {
		// The Forgetting Transformer's gate: logits from the attention's
		// input, their running sums the kernel's bias.
		w, b := gated.ForgetGate()
		// In float32 whatever the precision: the gate's running sums are a
		// position bias, and bfloat16 errors in the logits would add up
		// along the sequence (the product is a small one).
		logits, err := layers.Linear(h, p(w), p(b))
		if err != nil {
			return nil, fmt.Errorf("forget gate: %w", err)
		}
		if attnCfg.Gate, err = layers.ForgetGate(logits, cfg.NHeads, lb.length, attnCfg.Cache); err != nil {
			return nil, err
		}
	}
	if polar, ok := m.scheme.(position.PolarScheme); ok {
		attn.Phase = p(polar.Phase())
	}
	if sb, ok := m.scheme.(position.StickBreakingScheme); ok {
		attnCfg.StickBreaking = p(sb.Remainder())
	}
	if fold {
		qkv, err := m.firstLayerQKV(lb.g, lb.param, lb.ids)
		if err != nil {
			return nil, err
		}
		return attn.FromQKV(qkv, biasParams, attnCfg)
	}
	return attn.Forward(h, biasParams, attnCfg)
}

// foldsFirstLayer reports whether a graph of n rows reads its first
// layer's queries, keys and values from a table of the vocabulary
// (firstLayerQKV) instead of projecting every row. That needs a first layer
// whose input is a function of the token alone (no embedding table of
// positions added to it), a graph without gradients (the weights' gradients
// flow through the rows), no forget gate (it reads the LayerNorm's rows) and
// more rows than the vocabulary has tokens, so that the table is the smaller
// product.
func (m *Model) foldsFirstLayer(n int, train bool) bool {
	_, gated := m.scheme.(position.GatedScheme) // its gate reads the LayerNorm's rows
	return !train && m.makeTable == nil && !gated && n > m.Config.Vocab
}

// firstLayerQKV returns the first layer's projected queries, keys and values
// of the rows ids, (len(ids), 3D), gathered from the table
// LayerNorm(E·sqrt(d))·WQKV + BQKV of every token of the vocabulary: the
// same ops on the same rows as the projection of the rows themselves, so
// the same values bit for bit (a row's LayerNorm and its products do not
// depend on the rows beside it; tested). The table is recomputed on every
// Execute, so it always follows the current weights.
func (m *Model) firstLayerQKV(g *G.ExprGraph, param map[string]*G.Node, ids *G.Node) (*G.Node, error) {
	v := m.Config.Vocab
	every := make([]int, v)
	for i := range every {
		every[i] = i
	}
	tokens := G.NewTensor(g, tensor.Int, 1, G.WithShape(v), G.WithName("vocabulary"),
		G.WithValue(tensor.New(tensor.WithShape(v), tensor.WithBacking(every))))
	e, err := layers.ScaledEmbedding(param[nameTokEmb], tokens, math.Sqrt(float64(m.Config.DModel)))
	if err != nil {
		return nil, err
	}
	p := func(part string) *G.Node { return param[layerName(0, part)] }
	if e, err = layers.LayerNorm(e, p("ln1.weight"), p("ln1.bias")); err != nil {
		return nil, err
	}
	table, err := layers.LinearIn(m.Precision, e, p("attn.qkv.weight"), p("attn.qkv.bias"))
	if err != nil {
		return nil, fmt.Errorf("first layer's qkv table: %w", err)
	}
	return layers.Embedding(table, ids)
}

// Execute runs the graph on ids and targets, each Batch*Len tokens,
// row-major by sequence: targets[i] is the token that should follow ids[i].
// A training graph needs targets; a graph without gradients takes nil (then
// LossValue is NaN) or targets to score.
func (gr *Graph) Execute(ids, targets []int) error {
	gr.ran, gr.scored = false, false
	if len(ids) != len(gr.ids) {
		return fmt.Errorf("graph run: %d ids, want %d", len(ids), len(gr.ids))
	}
	if targets != nil && gr.Scored > 0 {
		return fmt.Errorf("graph run: a scoring graph takes no targets: score its logits (layers.TokenNLL)")
	}
	if gr.Loss != nil || targets != nil {
		if len(targets) != len(gr.targets) {
			return fmt.Errorf("graph run: %d targets, want %d", len(targets), len(gr.targets))
		}
		if gr.Loss == nil { // the cross-entropy op checks a training graph's
			for i, t := range targets {
				if t < 0 || t >= gr.m.Config.Vocab {
					return fmt.Errorf("graph run: target %d at position %d is outside the vocabulary of %d", t, i, gr.m.Config.Vocab)
				}
			}
		}
	}
	copy(gr.ids, ids)
	if gr.cache != nil {
		if err := gr.beforeDecode(); err != nil {
			return err
		}
	}
	if targets != nil {
		copy(gr.targets, targets)
	}
	if gr.run == nil {
		return fmt.Errorf("graph run: the graph is closed")
	}
	if err := gr.run.run(); err != nil {
		return fmt.Errorf("graph run: %w", err)
	}
	if gr.cache != nil {
		gr.cache.Positions.Advance(gr.Len)
	}
	gr.ran, gr.scored = true, targets != nil
	return nil
}

// LossValue is the loss of the last Execute: the mean negative
// log-likelihood, in nats, of its targets under its logits (the mean of
// layers.TokenNLL), rounded to float32 as the training graph's Loss node
// holds it. A graph without gradients computes it from its logits when
// asked, and gives the same bits as a training graph on the same ids and
// targets. It is NaN before the first successful Execute and when the last
// one had no targets. To score a whole text in windows, see
// eval.Perplexity.
func (gr *Graph) LossValue() float64 {
	if !gr.ran || !gr.scored {
		return math.NaN()
	}
	if gr.Loss == nil {
		nll := make([]float64, len(gr.targets))
		layers.TokenNLL(gr.LogitsData(), gr.m.Config.Vocab, gr.targets, nll)
		var s float64
		for _, x := range nll {
			s += x
		}
		return float64(float32(s / float64(len(nll))))
	}
	switch v := gr.run.value(gr.Loss).Data().(type) {
	case float32:
		return float64(v)
	case float64:
		return v
	}
	return math.NaN()
}

// LogitsData are the logits of the last Execute, (Batch*Len) x Vocab; nil
// before the first successful Execute.
func (gr *Graph) LogitsData() []float32 {
	if !gr.ran {
		return nil
	}
	return gr.run.value(gr.Logits).Data().([]float32)
}

// GradData returns the gradient of parameter i (Params[i], Weights.Names[i])
// from the last Execute of a training graph; nil for a graph without
// gradients and before the first successful Execute.
func (gr *Graph) GradData(i int) []float32 {
	if !gr.ran || gr.Grads == nil {
		return nil
	}
	return gr.run.value(gr.Grads[i]).Data().([]float32)
}

// Close releases the graph's buffers: the accessors then return nothing
// (nil, or NaN for LossValue) and Execute fails.
func (gr *Graph) Close() error {
	gr.run, gr.ran = nil, false
	return nil
}

// EvalGraphBytes is the memory that an evaluation graph (no gradients) of
// batch sequences of the given length holds once it has run: its ids and
// targets (16 bytes a token), the most its ops' outputs hold at one time
// (they borrow their buffers from a pool and give them back once their last
// reader has run; worked out from the graph's shapes, which it builds but
// does not run) and the position scheme's own buffers (position.Scheme
// EvalBytes). With the outputs reused, that is about one layer's buffers
// and the logits, whatever the depth. The tiled attention's scratch does
// not grow with the length; the model's weights are not included. It is 0
// when the graph cannot be built (then NewGraph says why).
func (m *Model) EvalGraphBytes(batch, length int) int64 {
	g, err := m.build(batch, length, buildOpts{})
	if err != nil {
		return 0
	}
	n := int64(batch) * int64(length)
	return 16*n + g.run.peakBytes() + m.scheme.EvalBytes(m.Config.shape(), batch, length)
}
