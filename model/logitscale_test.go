package model

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/layers/layerstest"
)

// logLengthModel is decodeModel's model with log-length scaling, its scales
// at their start, 1/ln(train_len).
func logLengthModel(t *testing.T, pos string, layers int) (*Model, *Model) {
	t.Helper()
	cfg := Config{Vocab: 256, DModel: 32, NLayers: layers, NHeads: 4, DFF: 64, Pos: pos, TrainLen: 16, Seed: 5}
	plain, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	perturbWeights(plain.Weights, rand.New(rand.NewPCG(6, 7)))
	plain.Project()
	cfg.LogitScale = LogitScaleLogLength
	scaled, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range plain.Weights.Names { // the same weights, and the scales
		copy(scaled.Weights.Data(name), plain.Weights.Data(name))
	}
	return plain, scaled
}

// With its scales at their start, a one-layer model with log-length
// scaling gives the query that sees train_len keys the logits of the model
// without it (its factor is 1), and the queries before it other logits.
func TestLogLengthAtTrainLen(t *testing.T) {
	for _, pos := range Schemes() {
		plain, scaled := logLengthModel(t, pos, 1)
		if n := len(scaled.Weights.Names) - len(plain.Weights.Names); n != 1 {
			t.Fatalf("%s: log-length adds %d tensors, want 1", pos, n)
		}
		ids := randomTokens(rand.New(rand.NewPCG(1, 2)), 16, 256)
		a, b := fullLogits(t, plain, ids), fullLogits(t, scaled, ids)
		if e := layerstest.RelErr(b[15*256:], toFloat64(a[15*256:])); e > 1e-6 {
			t.Errorf("%s: the row that sees train_len keys differs by %.3g", pos, e)
		}
		if e := layerstest.RelErr(b[3*256:4*256], toFloat64(a[3*256:4*256])); !(e > 1e-4) {
			t.Errorf("%s: the row that sees 4 keys differs by only %.3g", pos, e)
		}
	}
}

// Log-length scaling decodes through the cache as the full pass does, and
// a graph without gradients equals the training graph bit for bit.
func TestLogLengthCachedEqualsFullPass(t *testing.T) {
	ids := randomTokens(rand.New(rand.NewPCG(3, 4)), 90, 256)
	for _, pos := range []string{PosALiBi, PosRoPE, PosNone} {
		_, m := logLengthModel(t, pos, 2)
		cachedEqualsFull(t, m, pos+"+log-length", ids)
		infer, err := m.NewGraph(2, 20, false)
		if err != nil {
			t.Fatal(err)
		}
		train, err := m.NewGraph(2, 20, true)
		if err != nil {
			t.Fatal(err)
		}
		if err := infer.Execute(ids[:40], nil); err != nil {
			t.Fatal(err)
		}
		if err := train.Execute(ids[:40], ids[1:41]); err != nil {
			t.Fatal(err)
		}
		if e := layerstest.RelErr(infer.LogitsData(), toFloat64(train.LogitsData())); e != 0 {
			t.Errorf("%s: the graph without gradients differs from the training graph by %.3g", pos, e)
		}
		infer.Close()
		train.Close()
	}
}

func TestLogitScaleConfig(t *testing.T) {
	c := Config{Vocab: 256, DModel: 32, NLayers: 1, NHeads: 4, DFF: 64, Pos: PosALiBi, TrainLen: 16, LogitScale: "sqrt"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `model.logit_scale: "sqrt" is not none or log-length`) {
		t.Errorf("logit_scale sqrt: %v", err)
	}
	c.LogitScale = LogitScaleNone
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
}
