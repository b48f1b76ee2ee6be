package model

import (
	"github.com/alibi-go/alibi/layers/layerstest"
	"github.com/alibi-go/alibi/layers/position"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/alibi-go/alibi/layers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The model graph (custom ops) against the same model composed in the test
// from plain Gorgonia ops in float32, over the same weights: logits, loss and
// the gradient of every parameter. Only GELU is the custom op on both sides
// (Gorgonia has no erf; layers checks GELU against math.Erf). The composed
// graph avoids the ops the project notes list as wrong (SoftMax, LogSoftMax,
// LogSumExp, InverseSqrt).
func TestModelMatchesComposed(t *testing.T) {
	for _, pos := range []string{PosALiBi, PosSinusoidal, PosNone} {
		t.Run(pos, func(t *testing.T) {
			cfg := Config{Vocab: 256, DModel: 32, NLayers: 2, NHeads: 4, DFF: 64, Pos: pos, TrainLen: 16, Seed: 1}
			const batch = 2
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			perturbWeights(m.Weights, rand.New(rand.NewPCG(41, 42)))
			rng := rand.New(rand.NewPCG(43, 44))
			n := batch * cfg.TrainLen
			ids, targets := randomTokens(rng, n, cfg.Vocab), randomTokens(rng, n, cfg.Vocab)
			ids[3], ids[20] = ids[1], ids[1] // repeated ids within and across sequences
			targets[5] = targets[2]

			gr, err := m.NewGraph(batch, cfg.TrainLen, true)
			if err != nil {
				t.Fatal(err)
			}
			defer gr.Close()
			// Two runs: the second reuses every op's buffers and must repeat the first.
			var logits []float32
			var loss float64
			var grads [][]float32
			for run := 0; run < 2; run++ {
				if err := gr.Execute(ids, targets); err != nil {
					t.Fatal(err)
				}
				l := append([]float32(nil), gr.LogitsData()...)
				var gs [][]float32
				for i := range gr.Grads {
					gs = append(gs, append([]float32(nil), gr.GradData(i)...))
				}
				if run == 1 && (!reflect.DeepEqual(l, logits) || gr.LossValue() != loss || !reflect.DeepEqual(gs, grads)) {
					t.Fatal("a second run of the model graph gave different logits, loss or gradients")
				}
				logits, loss, grads = l, gr.LossValue(), gs
			}

			ref := newComposedModel(t, m, batch, cfg.TrainLen, ids, targets)

			// Logits and loss: |a-b| <= 4e-6 (1 + |b|) (float32 rounding of
			// two different summation orders; measured up to 1.6e-6).
			var worstLogit, logitBound float64 // max |diff|, and max |diff| / bound
			for i, want := range ref.logits {
				d := math.Abs(float64(logits[i] - want))
				if !(d <= 4e-6*(1+math.Abs(float64(want)))) {
					t.Fatalf("logit %d: model %.7g, composed %.7g", i, logits[i], want)
				}
				worstLogit = max(worstLogit, d)
				logitBound = max(logitBound, d/(4e-6*(1+math.Abs(float64(want)))))
			}
			dLoss := math.Abs(loss - float64(ref.loss))
			if !(dLoss <= 4e-6*(1+math.Abs(float64(ref.loss)))) {
				t.Fatalf("loss: model %.7g, composed %.7g", loss, ref.loss)
			}

			// Gradients: |a-b| <= 2e-6 max|grad of that parameter| (measured
			// up to 7e-7).
			var worstGrad, worstAbs float64
			worstName := ""
			for i, name := range m.Weights.Names {
				got, want := grads[i], ref.grads[i]
				if len(got) != len(want) {
					t.Fatalf("%s: %d gradient values, composed %d", name, len(got), len(want))
				}
				var scale float64
				for _, v := range want {
					scale = max(scale, math.Abs(float64(v)))
				}
				if scale == 0 {
					t.Fatalf("%s: the composed gradient is identically zero", name)
				}
				var worst float64
				for j := range got {
					d := math.Abs(float64(got[j] - want[j]))
					if !(d <= 2e-6*scale) {
						t.Errorf("%s element %d: model gradient %.7g, composed %.7g (max |grad| %.3g)", name, j, got[j], want[j], scale)
						break
					}
					worst = max(worst, d/scale)
					worstAbs = max(worstAbs, d)
				}
				if worst > worstGrad {
					worstGrad, worstName = worst, name
				}
			}
			t.Logf("loss %.6f, |diff| %.3g; logits max |diff| %.3g (%.2g of the bound); gradients max |diff| %.3g, max |diff|/max|grad| %.3g (%s)",
				loss, dLoss, worstLogit, logitBound, worstAbs, worstGrad, worstName)
		})
	}
}

// perturbWeights replaces the initial weights (zero biases, unit gains, tiny
// projections) by random ones of useful size, so that every bias and gain
// matters and attention is far from uniform.
func perturbWeights(w *Weights, rng *rand.Rand) {
	for _, name := range w.Names {
		t := w.Tensors[name]
		v := t.Data().([]float32)
		switch {
		case name == nameTokEmb:
			continue // N(0, 1/sqrt(d)), times sqrt(d) on input
		case t.Dims() == 2: // (in, out) matrices
			sd := 1 / math.Sqrt(float64(t.Shape()[0]))
			for i := range v {
				v[i] = float32(rng.NormFloat64() * sd)
			}
		case len(name) > 7 && name[len(name)-7:] == ".weight": // LayerNorm gains
			for i := range v {
				v[i] = float32(1 + 0.2*rng.NormFloat64())
			}
		default: // biases and LayerNorm shifts
			for i := range v {
				v[i] = float32(0.1 * rng.NormFloat64())
			}
		}
	}
}

// composedModel is the reference model's results.
type composedModel struct {
	logits []float32
	loss   float32
	grads  [][]float32 // in Weights.Names order
}

// newComposedModel builds and runs the model from plain Gorgonia ops on
// copies of m's weights (named "ref:"+name: unique, not hash-consed with
// anything else) and returns its logits, loss and gradients.
func newComposedModel(t *testing.T, m *Model, batch, length int, ids, targets []int) composedModel {
	t.Helper()
	cfg := m.Config
	d, v, n := cfg.DModel, cfg.Vocab, batch*length
	g := G.NewGraph()
	must := func(x *G.Node, err error) *G.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	input := func(tt *tensor.Dense, name string) *G.Node {
		return G.NewTensor(g, tt.Dtype(), tt.Dims(), G.WithShape(tt.Shape()...), G.WithValue(tt), G.WithName(name))
	}
	param := map[string]*G.Node{}
	var params G.Nodes
	for _, name := range m.Weights.Names {
		p := input(m.Weights.Tensors[name].Clone().(*tensor.Dense), "ref:"+name)
		param[name] = p
		params = append(params, p)
	}
	p := func(l int, part string) *G.Node { return param[layerName(l, part)] }

	// Embedding as one-hot(ids) x table, scaled by sqrt(d).
	oneHot := make([]float32, n*v)
	for i, id := range ids {
		oneHot[i*v+id] = 1
	}
	x := must(G.Mul(input(tensor.New(tensor.WithShape(n, v), tensor.WithBacking(oneHot)), "ref:onehot"), param[nameTokEmb]))
	x = must(G.HadamardProd(x, G.NewConstant(float32(math.Sqrt(float64(d))), G.WithName("ref:sqrt_d"))))
	if cfg.Pos == PosSinusoidal {
		table := input(position.SinusoidalTable(length, d), "ref:sinusoidal")
		x3 := must(G.Reshape(x, tensor.Shape{batch, length, d}))
		t3 := must(G.Reshape(table, tensor.Shape{1, length, d}))
		x = must(G.Reshape(must(G.BroadcastAdd(t3, x3, []byte{0}, nil)), tensor.Shape{n, d}))
	}
	var bias *tensor.Dense
	if cfg.Pos == PosALiBi {
		bias = position.AlibiBias(position.AlibiSlopes(cfg.NHeads), length, length, 0, true)
	} else {
		bias = position.CausalMask(length, length, 0)
	}
	biasNode := input(bias, "ref:bias")

	for l := 0; l < cfg.NLayers; l++ {
		h := must(layerstest.ComposedLayerNorm(x, p(l, "ln1.weight"), p(l, "ln1.bias"), layers.LayerNormEps))
		h = must(layerstest.ComposedLinear(h, p(l, "attn.qkv.weight"), p(l, "attn.qkv.bias")))
		h = must(layerstest.ComposedAttention(h, biasNode, cfg.NHeads))
		h = must(layerstest.ComposedLinear(h, p(l, "attn.out.weight"), p(l, "attn.out.bias")))
		x = must(G.Add(x, h))
		h = must(layerstest.ComposedLayerNorm(x, p(l, "ln2.weight"), p(l, "ln2.bias"), layers.LayerNormEps))
		h = must(layerstest.ComposedLinear(h, p(l, "mlp.fc1.weight"), p(l, "mlp.fc1.bias")))
		h = must(layers.GELU(h))
		h = must(layerstest.ComposedLinear(h, p(l, "mlp.fc2.weight"), p(l, "mlp.fc2.bias")))
		x = must(G.Add(x, h))
	}
	h := must(layerstest.ComposedLayerNorm(x, param[nameLNfW], param[nameLNfB], layers.LayerNormEps))
	logits := must(G.Mul(h, param[nameHead]))

	// Mean cross-entropy: hand-made log-softmax, flattened to (N*V, 1),
	// targets picked by ByIndices on axis 0 at i*V + target_i.
	flat := make([]int, n)
	for i, tg := range targets {
		flat[i] = i*v + tg
	}
	lp := must(layerstest.ComposedLogSoftmaxRows(logits))
	picked := must(G.ByIndices(must(G.Reshape(lp, tensor.Shape{n * v, 1})), input(tensor.New(tensor.WithShape(n), tensor.WithBacking(flat)), "ref:flat_targets"), 0))
	loss := must(G.Neg(must(G.Mean(picked))))
	grads, err := G.Grad(loss, params...)
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	for i, name := range m.Weights.Names {
		if !reflect.DeepEqual(params[i].Value().Data(), m.Weights.Tensors[name].Data()) {
			t.Fatalf("the composed graph overwrote its copy of %s", name)
		}
	}
	res := composedModel{
		logits: append([]float32(nil), logits.Value().Data().([]float32)...),
		loss:   loss.Value().Data().(float32),
	}
	for _, gn := range grads {
		res.grads = append(res.grads, append([]float32(nil), gn.Value().Data().([]float32)...))
	}
	return res
}
