package train_test

import (
	"context"
	"fmt"
	"github.com/alibi-go/alibi/layers/position"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/train"
	"gorgonia.org/tensor"
)

// constantBias is a position scheme defined only in this test, through the
// public API: every layer's attention adds a constant per head, read from a
// buffer that the checkpoint stores as "buffers.constant_bias". The
// constants are zeros, so a model with it must train, score and generate
// exactly as one with the scheme "none".
type constantBias struct{ position.NoPosition }

func (constantBias) Name() string { return "constant" }

func (constantBias) Buffer(s position.ModelShape) (string, []float32) {
	return "constant_bias", make([]float32, s.Heads)
}

func (constantBias) AttentionBias(position.ModelShape) (position.BiasScheme, string) {
	return constantKernel{}, "constant_bias"
}

// constantKernel is the bias inside the attention kernel: head h adds
// params[h] to every score.
type constantKernel struct{}

func (constantKernel) Name() string    { return "constant" }
func (constantKernel) Trainable() bool { return false }

func (constantKernel) CheckParams(p tensor.Shape, call position.BiasCall) error {
	if len(p) != 1 || p[0] != call.Heads {
		return fmt.Errorf("constant bias of shape %v, want (%d)", p, call.Heads)
	}
	return nil
}

// biases counts the kernel biases made, to show that the kernel asked.
var biases atomic.Int64

func (constantKernel) Bias32(p []float32, _, _ int) position.KernelBias[float32] {
	biases.Add(1)
	return perHead[float32](append([]float32(nil), p...))
}

func (constantKernel) Bias64(p []float64, _, _ int) position.KernelBias[float64] {
	biases.Add(1)
	return perHead[float64](append([]float64(nil), p...))
}

func (constantKernel) ParamGrad32(_, _, _ []float32) {}
func (constantKernel) ParamGrad64(_, _, _ []float64) {}

// perHead is the kernel bias: a copy of the constants, one per head.
type perHead[T position.Float] []T

func (b perHead[T]) Add(h, _, _ int, row []T) {
	for i := range row {
		row[i] += b[h]
	}
}

var registerConstant = sync.OnceValue(func() error { return position.Register(constantBias{}) })

// A scheme registered from outside the module's packages trains, is
// checkpointed, scores and generates through the public API, and gives what
// the equivalent built-in scheme gives, bit for bit.
func TestRegisteredSchemeTrainsScoresAndGenerates(t *testing.T) {
	if err := registerConstant(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(model.Schemes(), ","), "constant") {
		t.Fatalf("model.Schemes() = %v, without the registered scheme", model.Schemes())
	}
	corpus := filepath.Join(t.TempDir(), "corpus.txt")
	if err := os.WriteFile(corpus, []byte(strings.Repeat("the cat sat on the mat. the dog sat on the log. ", 60)), 0o644); err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		sum  *train.Summary
		ppl  float64
		text string
	}
	run := func(pos string) outcome {
		cfg := train.Defaults()
		cfg.Name, cfg.Out = "micro", t.TempDir()
		cfg.Model = model.Config{Vocab: 256, DModel: 16, NLayers: 1, NHeads: 2, DFF: 32, Pos: pos, TrainLen: 16, Seed: 3}
		cfg.Train.Batch, cfg.Train.Steps, cfg.Train.LR, cfg.Train.MinLR, cfg.Train.Warmup = 4, 10, 1e-2, 1e-3, 5
		cfg.Train.LogEvery, cfg.Train.EvalEvery, cfg.Train.EvalTokens = 5, 10, 512
		cfg.Train.CheckpointEvery, cfg.Train.KeepCheckpoints = 10, 1
		cfg.Data.Corpus = corpus
		sum, err := train.Train(context.Background(), cfg, train.Options{})
		if err != nil {
			t.Fatalf("%s: train: %v", pos, err)
		}
		c, err := model.LoadCheckpoint(sum.Checkpoint)
		if err != nil {
			t.Fatalf("%s: %v", pos, err)
		}
		m, err := c.Model()
		if err != nil {
			t.Fatalf("%s: %v", pos, err)
		}
		r, err := eval.Perplexity(m, data.ByteTokenizer{}.Encode([]byte(strings.Repeat("the dog sat on the mat. ", 8))), eval.Options{Len: 16})
		if err != nil {
			t.Fatalf("%s: perplexity: %v", pos, err)
		}
		gen, _, err := m.Generate([][]byte{[]byte("the cat")}, model.GenerateOptions{Tokens: 40, Sampling: model.Greedy}, nil)
		if err != nil {
			t.Fatalf("%s: generate: %v", pos, err)
		}
		if pos == "constant" && len(c.PositionBuffer) != cfg.Model.NHeads {
			t.Errorf("the checkpoint holds %v as the scheme's buffer, want %d zeros", c.PositionBuffer, cfg.Model.NHeads)
		}
		return outcome{sum, r.PPL, string(gen[0].Text)}
	}
	got := run("constant")
	if biases.Load() == 0 {
		t.Fatal("the attention kernel never asked the registered scheme for its bias")
	}
	want := run(model.PosNone)
	if got.sum.Pos != "constant" || math.IsNaN(got.ppl) || got.ppl <= 1 {
		t.Fatalf("constant scheme: summary pos %q, perplexity %g", got.sum.Pos, got.ppl)
	}
	if math.Float64bits(got.sum.ValPPL) != math.Float64bits(want.sum.ValPPL) || math.Float64bits(got.ppl) != math.Float64bits(want.ppl) {
		t.Errorf("validation perplexity %v and %v, want those of none: %v and %v", got.sum.ValPPL, got.ppl, want.sum.ValPPL, want.ppl)
	}
	if got.text != want.text {
		t.Errorf("generated %q, want that of none: %q", got.text, want.text)
	}
}
