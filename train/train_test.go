package train

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"github.com/alibi-go/alibi/layers/position"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/osutil"
)

// microConfig is a model small enough to train in a fraction of a second.
func microConfig(t *testing.T, pos string, steps int) Config {
	t.Helper()
	cfg := Defaults()
	cfg.Name = "micro"
	cfg.Out = t.TempDir()
	cfg.Model = model.Config{Vocab: 256, DModel: 16, NLayers: 1, NHeads: 2, DFF: 32, Pos: pos, TrainLen: 16, Seed: 3}
	cfg.Train.Batch, cfg.Train.Steps, cfg.Train.LR, cfg.Train.MinLR, cfg.Train.Warmup = 4, steps, 1e-2, 1e-3, 5
	cfg.Train.WeightDecay = 0.1
	cfg.Train.LogEvery, cfg.Train.EvalEvery, cfg.Train.EvalTokens = 5, 10, 512
	cfg.Train.CheckpointEvery, cfg.Train.KeepCheckpoints = 10, 2
	// A small, repetitive corpus that a tiny model learns quickly.
	corpus := filepath.Join(t.TempDir(), "corpus.txt")
	text := strings.Repeat("the cat sat on the mat. the dog sat on the log. ", 60)
	if err := os.WriteFile(corpus, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Data.Corpus = corpus
	return cfg
}

func readMetrics(t *testing.T, dir string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestLossFallsOnSmallCorpus(t *testing.T) {
	cfg := microConfig(t, model.PosALiBi, 60)
	sum, err := Train(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ms := readMetrics(t, cfg.Out)
	first := ms[0]["loss"].(float64)
	if !(sum.FinalTrainLoss < first-2) {
		t.Fatalf("loss went from %.3f to %.3f; it should fall by more than 2 nats", first, sum.FinalTrainLoss)
	}
	for _, key := range []string{"step", "loss", "lr", "tokens_per_second", "elapsed_seconds"} {
		if _, ok := ms[0][key]; !ok {
			t.Errorf("metrics line lacks %q: %v", key, ms[0])
		}
	}
	b, err := os.ReadFile(filepath.Join(cfg.Out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"steps", "tokens", "wall_seconds", "tokens_per_second", "final_train_loss", "val_loss", "val_ppl", "peak_rss_bytes"} {
		if _, ok := s[key]; !ok {
			t.Errorf("summary lacks %q", key)
		}
	}
	if s["steps"].(float64) != 60 || s["tokens"].(float64) != 60*4*16 || !(s["tokens_per_second"].(float64) > 0) {
		t.Errorf("summary steps/tokens = %v/%v", s["steps"], s["tokens"])
	}
	if _, err := os.Stat(filepath.Join(cfg.Out, "config.yaml")); err != nil {
		t.Errorf("resolved config: %v", err)
	}
}

// weightsOf reads the final checkpoint's weight bytes.
func weightsOf(t *testing.T, dir string) []byte {
	t.Helper()
	c, _, err := model.LatestCheckpoint(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf []byte
	for _, name := range c.Weights.Names {
		for _, v := range c.Weights.Data(name) {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
	}
	return buf
}

func TestSameSeedSameRun(t *testing.T) {
	a, b := microConfig(t, model.PosALiBi, 20), microConfig(t, model.PosALiBi, 20)
	for _, c := range []Config{a, b} {
		if _, err := Train(context.Background(), c, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(weightsOf(t, a.Out), weightsOf(t, b.Out)) {
		t.Fatal("two runs with the same seed ended with different weights")
	}
	c := microConfig(t, model.PosALiBi, 20)
	c.Model.Seed = 4
	if _, err := Train(context.Background(), c, Options{}); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(weightsOf(t, a.Out), weightsOf(t, c.Out)) {
		t.Fatal("a different seed gave the same weights")
	}
}

// A run stopped early and resumed ends exactly like one left alone:
// same weights, and metrics.jsonl without duplicated or missing lines.
func TestResumeIsExact(t *testing.T) {
	whole := microConfig(t, model.PosALiBi, 20)
	if _, err := Train(context.Background(), whole, Options{}); err != nil {
		t.Fatal(err)
	}
	split := microConfig(t, model.PosALiBi, 20)
	// A cancelled context stops the run after its first step, with a
	// checkpoint; the resumed run does the other 19.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Train(ctx, split, Options{})
	if err == nil || !strings.Contains(err.Error(), "interrupted at step 1") {
		t.Fatalf("cancelled run: %v", err)
	}
	if _, err := Train(context.Background(), split, Options{Resume: true}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(weightsOf(t, whole.Out), weightsOf(t, split.Out)) {
		t.Fatal("resumed run ended with different weights")
	}
	a, b := readMetrics(t, whole.Out), readMetrics(t, split.Out)
	if len(a) != len(b) {
		t.Fatalf("metrics: %d lines uninterrupted, %d resumed", len(a), len(b))
	}
	for i := range a {
		if a[i]["step"] != b[i]["step"] || a[i]["loss"] != b[i]["loss"] {
			t.Fatalf("metrics line %d differs: %v vs %v", i, a[i], b[i])
		}
	}
}

func TestResumeWithoutCheckpointStartsFresh(t *testing.T) {
	cfg := microConfig(t, model.PosNone, 10)
	var log bytes.Buffer
	if _, err := Train(context.Background(), cfg, Options{Resume: true, Log: &log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "starting from the beginning") {
		t.Fatalf("log does not say the run starts fresh:\n%s", log.String())
	}
}

// Training never touches the position buffers: the ALiBi slopes are
// bit-identical after optimizer steps, and their graph node has no gradient.
func TestPositionBuffersUnchangedByTraining(t *testing.T) {
	cfg := microConfig(t, model.PosALiBi, 10)
	d, err := LoadData(cfg, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := newState(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	m := st.model
	slopes := append([]float32(nil), m.PositionBuffer...)
	g, err := m.NewGraph(cfg.Train.Batch, cfg.Model.TrainLen, true)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	found := false
	for _, n := range g.Expr.AllNodes() {
		if n.Name() == "alibi_slopes" {
			found = true
			if _, err := n.Grad(); err == nil {
				t.Fatal("the ALiBi slopes have a gradient")
			}
		}
	}
	if !found {
		t.Fatal("no alibi_slopes node in the graph")
	}
	params := make([][]float32, len(m.Weights.Names))
	grads := make([][]float32, len(params))
	decay := make([]bool, len(params))
	for i, name := range m.Weights.Names {
		params[i] = m.Weights.Data(name)
	}
	x, y := make([]int, cfg.Train.Batch*cfg.Model.TrainLen), make([]int, cfg.Train.Batch*cfg.Model.TrainLen)
	for step := 0; step < 5; step++ {
		st.sampler.Next(x, y)
		if err := g.Execute(x, y); err != nil {
			t.Fatal(err)
		}
		for i := range grads {
			grads[i] = g.GradData(i)
		}
		st.opt.Update(params, grads, decay, 0.01)
	}
	for i := range slopes {
		if math.Float32bits(m.PositionBuffer[i]) != math.Float32bits(slopes[i]) {
			t.Fatalf("slope %d changed from %g to %g", i, slopes[i], m.PositionBuffer[i])
		}
	}
	if len(g.Grads) != len(m.Weights.Names) {
		t.Fatalf("%d gradients for %d weights", len(g.Grads), len(m.Weights.Names))
	}
}

// A run shorter than the warm-up still reports its throughput.
func TestShortRunThroughput(t *testing.T) {
	cfg := microConfig(t, model.PosNone, 2)
	sum, err := Train(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !(sum.TokensPerSecond > 0) {
		t.Fatalf("a 2-step run reports %g tokens/s", sum.TokensPerSecond)
	}
	// The summary names the processor its speed was measured on.
	read, err := ReadSummary(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	if want := osutil.Processor(); read.Processor != want || want == "" {
		t.Fatalf("summary.json names processor %q, want %q", read.Processor, want)
	}
	if want := layers.Kernels(layers.FP32); read.Kernels != want || want == "" {
		t.Fatalf("summary.json names kernels %q, want %q", read.Kernels, want)
	}
}

// The learned schemes' parameters (T5's table, KERPLE's and FIRE's) get
// non-zero gradients, change during training, stay in their domain, get no
// weight decay, and round-trip through a checkpoint; RoPE adds none.
func TestLearnedPositionParameters(t *testing.T) {
	for _, tc := range []struct {
		pos    string
		params []string
	}{
		{model.PosT5, []string{"pos.t5.weight"}},
		{model.PosKerple, []string{"layers.0.attn.kerple"}},
		{model.PosFire, []string{"layers.0.attn.fire"}},
		{model.PosRoPE, nil},
	} {
		t.Run(tc.pos, func(t *testing.T) {
			cfg := microConfig(t, tc.pos, 12)
			d, err := LoadData(cfg, nil, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			st, err := newState(cfg, d)
			if err != nil {
				t.Fatal(err)
			}
			w := st.model.Weights
			var found []string
			for _, name := range w.Names {
				if w.IsPosition(name) {
					found = append(found, name)
				}
			}
			if fmt.Sprint(found) != fmt.Sprint(tc.params) {
				t.Fatalf("position parameters %v, want %v", found, tc.params)
			}
			before := map[string][]float32{}
			for _, name := range found {
				before[name] = append([]float32(nil), w.Data(name)...)
				if w.Decays(name) {
					t.Errorf("%s gets weight decay", name)
				}
			}
			g, err := st.model.NewGraph(cfg.Train.Batch, cfg.Model.TrainLen, true)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			step := newStepper(st.model, st.opt, g)
			x, y := make([]int, cfg.Train.Batch*cfg.Model.TrainLen), make([]int, cfg.Train.Batch*cfg.Model.TrainLen)
			for i := 0; i < 5; i++ {
				st.sampler.Next(x, y)
				if _, _, _, err := step.run(x, y, 1, 0.01, func() bool { return false }); err != nil {
					t.Fatal(err)
				}
				for k, name := range w.Names {
					if w.IsPosition(name) && i == 0 {
						var norm float64
						for _, v := range step.grads[k] {
							norm += float64(v) * float64(v)
						}
						if !(norm > 0) {
							t.Errorf("%s has a zero gradient", name)
						}
					}
				}
			}
			for _, name := range found {
				changed := 0
				for i, v := range w.Data(name) {
					if v != before[name][i] {
						changed++
					}
				}
				if changed == 0 {
					t.Errorf("%s did not change in 5 steps", name)
				}
			}
			if tc.pos == model.PosKerple {
				for _, v := range w.Data("layers.0.attn.kerple") {
					if !(v >= position.KerpleMin) {
						t.Errorf("KERPLE parameter %g left its domain", v)
					}
				}
			}
			// A checkpoint round-trips every parameter bit for bit.
			path := filepath.Join(t.TempDir(), "c.safetensors")
			if err := model.SaveCheckpoint(path, model.NewCheckpoint(st.model)); err != nil {
				t.Fatal(err)
			}
			c, err := model.LoadCheckpoint(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range w.Names {
				a, b := w.Data(name), c.Weights.Data(name)
				for i := range a {
					if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
						t.Fatalf("%s[%d] changed in the checkpoint", name, i)
					}
				}
				if c.Weights.IsPosition(name) != w.IsPosition(name) {
					t.Fatalf("%s: position flag lost in the checkpoint", name)
				}
			}
		})
	}
}
