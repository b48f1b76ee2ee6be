package model

import (
	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/layers/position"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
)

func tinyConfig(pos string) Config {
	return Config{Vocab: 256, DModel: 32, NLayers: 2, NHeads: 4, DFF: 64, Pos: pos, TrainLen: 16, Seed: 1}
}

func TestConfigValidate(t *testing.T) {
	ok := tinyConfig(PosALiBi)
	tests := []struct {
		name   string
		mutate func(*Config)
		field  string // "" = valid
	}{
		{"valid", func(*Config) {}, ""},
		{"d_model not divisible", func(c *Config) { c.DModel = 30 }, "divisible"},
		{"zero layers", func(c *Config) { c.NLayers = 0 }, "n_layers"},
		{"negative d_ff", func(c *Config) { c.DFF = -1 }, "d_ff"},
		{"zero vocab", func(c *Config) { c.Vocab = 0 }, "vocab"},
		{"zero heads", func(c *Config) { c.NHeads = 0 }, "n_heads"},
		{"zero train_len", func(c *Config) { c.TrainLen = 0 }, "train_len"},
		{"unknown pos", func(c *Config) { c.Pos = "xpos" }, "model.pos"},
		{"sinusoidal", func(c *Config) { c.Pos = PosSinusoidal }, ""},
		{"none", func(c *Config) { c.Pos = PosNone }, ""},
		{"rope", func(c *Config) { c.Pos = PosRoPE }, ""},
		{"rope with an odd head width", func(c *Config) { c.Pos, c.DModel, c.NHeads = PosRoPE, 12, 4 }, "must be even"},
		{"t5", func(c *Config) { c.Pos = PosT5 }, ""},
		{"kerple", func(c *Config) { c.Pos = PosKerple }, ""},
		{"fire", func(c *Config) { c.Pos = PosFire }, ""},
	}
	for _, tc := range tests {
		c := ok
		tc.mutate(&c)
		err := c.Validate()
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.name, err)
		case tc.field != "" && (err == nil || !strings.Contains(err.Error(), tc.field)):
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.field)
		}
	}
}

func randomTokens(rng *rand.Rand, n, vocab int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = rng.IntN(vocab)
	}
	return ids
}

// A fresh model with the reference's initialisation predicts nearly uniform
// bytes: the first loss is close to ln 256.
func TestInitialLoss(t *testing.T) {
	m, err := New(tinyConfig(PosALiBi))
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.NewGraph(4, 16, true)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	if err := g.Execute(randomTokens(rng, 64, 256), randomTokens(rng, 64, 256)); err != nil {
		t.Fatal(err)
	}
	if l := g.LossValue(); math.Abs(l-math.Log(256)) > 0.05 {
		t.Fatalf("initial loss %g, want about %g", l, math.Log(256))
	}
	if len(g.Grads) != len(m.Weights.Names) {
		t.Fatalf("%d gradients for %d weights", len(g.Grads), len(m.Weights.Names))
	}
}

// The same weights in a graph of length 2L give, for the first L positions,
// the logits of a graph of length L on those tokens: a causal prefix never
// sees later tokens, and ALiBi and sinusoidal positions do not depend on the
// graph's length.
func TestPrefixLogitsMatchAcrossLengths(t *testing.T) {
	for _, pos := range []string{PosALiBi, PosSinusoidal, PosNone} {
		t.Run(pos, func(t *testing.T) {
			m, err := New(tinyConfig(pos))
			if err != nil {
				t.Fatal(err)
			}
			const L = 16
			rng := rand.New(rand.NewPCG(3, 4))
			long := randomTokens(rng, 2*L, 256)
			logits := func(ids []int) []float32 {
				g, err := m.NewGraph(1, len(ids), false)
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				if err := g.Execute(ids, nil); err != nil {
					t.Fatal(err)
				}
				return append([]float32(nil), g.LogitsData()...)
			}
			a, b := logits(long[:L]), logits(long)
			for i := range a {
				if d := math.Abs(float64(a[i] - b[i])); d > 1e-5 {
					t.Fatalf("logit %d: length L %g, length 2L %g", i, a[i], b[i])
				}
			}
		})
	}
}

// BenchmarkForwardBackwardTiny runs the forward and backward pass of the
// tiny model (batch 16 x 128 tokens), after one untimed pass, and reports
// tokens/s. It leaves out gradient clipping and the optimizer;
// train.BenchmarkTrainStepTiny has the whole step.
func BenchmarkForwardBackwardTiny(b *testing.B) {
	cfg := Config{Vocab: 256, DModel: 128, NLayers: 4, NHeads: 4, DFF: 512, Pos: PosALiBi, TrainLen: 128, Seed: 1}
	m, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	const batch = 16
	g, err := m.NewGraph(batch, cfg.TrainLen, true)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	ids, tg := randomTokens(rng, batch*cfg.TrainLen, 256), randomTokens(rng, batch*cfg.TrainLen, 256)
	// One untimed pass first: it allocates the graph's buffers.
	if err := g.Execute(ids, tg); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := g.Execute(ids, tg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch*cfg.TrainLen)/b.Elapsed().Seconds(), "tokens/s")
}

// A graph without gradients gives the logits of a training graph bit for
// bit, for every position scheme (both run op by op, on the runner, but the
// graphs differ); and it runs again with new ids, and after the weights
// changed in place (as training changes them). With more rows than the
// vocabulary has tokens, the graph without gradients reads its first
// layer's queries, keys and values from a table of the vocabulary
// (foldsFirstLayer; every scheme without an embedding table): the same
// bits.
func TestInferenceEqualsTraining(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, pos := range Schemes() {
		for _, shape := range [][2]int{{2, 20}, {3, 100}} {
			batch, length := shape[0], shape[1]
			m := decodeModel(t, pos)
			if shape[0] == 3 {
				m.Precision = layers.BF16 // bfloat16 products: the same ops in both graphs
			}
			folded := m.foldsFirstLayer(batch*length, false)
			_, gated := m.Scheme().(position.GatedScheme)
			if want := batch*length > 256 && pos != PosSinusoidal && !gated; folded != want {
				t.Fatalf("%s %dx%d: foldsFirstLayer %v, want %v", pos, batch, length, folded, want)
			}
			infer, err := m.NewGraph(batch, length, false)
			if err != nil {
				t.Fatal(err)
			}
			train, err := m.NewGraph(batch, length, true)
			if err != nil {
				t.Fatal(err)
			}
			for run := 0; run < 3; run++ {
				if run == 2 {
					perturbWeights(m.Weights, rng)
					m.Project()
				}
				n := batch * length
				ids, tg := randomTokens(rng, n, 256), randomTokens(rng, n, 256)
				if err := infer.Execute(ids, nil); err != nil {
					t.Fatal(err)
				}
				if err := train.Execute(ids, tg); err != nil {
					t.Fatal(err)
				}
				got, want := infer.LogitsData(), train.LogitsData()
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s %dx%d %v (first layer folded: %v) run %d: logit %d = %v without gradients, %v in the training graph",
							pos, batch, length, m.Precision, folded, run, i, got[i], want[i])
					}
				}
			}
			infer.Close()
			train.Close()
		}
	}
}

// A training graph on the runner, whose ops borrow their outputs from a
// pool and give them back after their last reader, gives Gorgonia's tape
// machine's loss, logits and every weight's gradient bit for bit, for every
// position scheme, on two batches in a row (the second reusing the
// buffers of the first).
func TestTrainingRunnerEqualsTapeMachine(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, pos := range Schemes() {
		m := decodeModel(t, pos)
		const batch, length = 2, 24
		gr, err := m.NewGraph(batch, length, true)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := m.NewGraph(batch, length, true) // run by the tape machine below
		if err != nil {
			t.Fatal(err)
		}
		vm := G.NewTapeMachine(ref.Expr, G.WithEngine(layers.Engine()))
		for run := 0; run < 2; run++ {
			n := batch * length
			ids, tg := randomTokens(rng, n, 256), randomTokens(rng, n, 256)
			if err := gr.Execute(ids, tg); err != nil {
				t.Fatal(err)
			}
			copy(ref.ids, ids)
			copy(ref.targets, tg)
			vm.Reset()
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			if got, want := float32(gr.LossValue()), ref.Loss.Value().Data().(float32); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("%s run %d: loss %v on the runner, %v on the tape machine", pos, run, got, want)
			}
			same := func(what string, got, want []float32) {
				t.Helper()
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s run %d: %s[%d] = %v on the runner, %v on the tape machine", pos, run, what, i, got[i], want[i])
					}
				}
			}
			same("logits", gr.LogitsData(), ref.Logits.Value().Data().([]float32))
			for i, name := range m.Weights.Names {
				same("gradient of "+name, gr.GradData(i), ref.Grads[i].Value().Data().([]float32))
			}
		}
		vm.Close()
		ref.Close()
		gr.Close()
	}
}
