package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/model"
)

const microYAML = `name: micro
model: {vocab: 256, d_model: 16, n_layers: 1, n_heads: 2, d_ff: 32, pos: alibi, train_len: 16, seed: 1}
data: {corpus: CORPUS, val_frac: 0.1}
train: {batch: 2, steps: 6, lr: 1.0e-3, min_lr: 1.0e-4, warmup: 2, log_every: 2, eval_every: 3, eval_tokens: 256, checkpoint_every: 3, keep_checkpoints: 2}
`

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every bad input gives exit code != 0 and one line on stderr naming the
// problem, and never a panic.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	corpus := writeFile(t, dir, "corpus.txt", strings.Repeat("some text to learn from. ", 40))
	good := strings.Replace(microYAML, "CORPUS", corpus, 1)
	cfg := func(name, text string) string { return writeFile(t, dir, name, text) }
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing config", []string{"--config", filepath.Join(dir, "nope.yaml")}, "no such file"},
		{"malformed yaml", []string{"--config", cfg("bad.yaml", "model: [1, 2\n")}, "yaml"},
		{"unknown key", []string{"--config", cfg("unk.yaml", good+"extra_key: 1\n")}, "extra_key"},
		{"wrong type", []string{"--config", cfg("type.yaml", strings.Replace(good, "d_model: 16", "d_model: big", 1))}, "big"},
		{"d_model not divisible", []string{"--config", cfg("div.yaml", strings.Replace(good, "n_heads: 2", "n_heads: 3", 1))}, "divisible"},
		{"zero size", []string{"--config", cfg("zero.yaml", strings.Replace(good, "n_layers: 1", "n_layers: 0", 1))}, "n_layers"},
		{"unknown pos flag", []string{"--config", cfg("ok.yaml", good), "--pos", "rope"}, "model.pos"},
		{"zero steps", []string{"--config", cfg("ok2.yaml", good), "--steps", "0"}, "--steps"},
		{"train_len longer than corpus", []string{"--config", cfg("long.yaml", strings.Replace(good, "train_len: 16", "train_len: 4000", 1))}, "shorter than one window"},
		{"missing corpus", []string{"--config", cfg("nocorpus.yaml", strings.Replace(good, corpus, filepath.Join(dir, "missing.txt"), 1))}, "missing.txt"},
		{"empty corpus", []string{"--config", cfg("empty.yaml", strings.Replace(good, corpus, writeFile(t, dir, "empty.txt", ""), 1))}, "empty"},
		{"stray argument", []string{"--config", cfg("ok3.yaml", good), "extra"}, "unexpected argument"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(append(tc.args, "--out", filepath.Join(dir, "run-"+strings.ReplaceAll(tc.name, " ", "-"))), &out, &errb)
			msg := errb.String()
			if code == 0 {
				t.Fatalf("exit code 0; stderr %q", msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("stderr %q does not mention %q", msg, tc.want)
			}
			if strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine") {
				t.Fatalf("stderr has a panic trace: %q", msg)
			}
			var lines int
			for _, l := range strings.Split(strings.TrimSpace(msg), "\n") {
				if strings.HasPrefix(l, "train: ") {
					lines++
				}
			}
			if lines != 1 {
				t.Fatalf("want exactly one error line, got %q", msg)
			}
		})
	}
}

func TestTrainsMicroConfig(t *testing.T) {
	dir := t.TempDir()
	corpus := writeFile(t, dir, "corpus.txt", strings.Repeat("some text to learn from. ", 40))
	path := writeFile(t, dir, "micro.yaml", strings.Replace(microYAML, "CORPUS", corpus, 1))
	out := filepath.Join(dir, "run")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--config", path, "--out", out, "--steps", "4", "--pos", "sinusoidal"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, f := range []string{"config.yaml", "metrics.jsonl", "summary.json", "checkpoints/step-00000004.safetensors"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("run directory lacks %s", f)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "config.yaml"))
	if err != nil || !strings.Contains(string(b), "pos: sinusoidal") || !strings.Contains(string(b), "steps: 4") {
		t.Fatalf("resolved config does not record the flags: %s", b)
	}
}

// Faults during a run: a non-finite loss stops with the step named and the
// last good checkpoint kept; a run directory that cannot be created is a
// one-line error; resuming with another model's config names the field.
func TestRunFaults(t *testing.T) {
	dir := t.TempDir()
	corpus := writeFile(t, dir, "corpus.txt", strings.Repeat("some text to learn from. ", 40))
	good := strings.Replace(microYAML, "CORPUS", corpus, 1)

	t.Run("non-finite loss", func(t *testing.T) {
		out := filepath.Join(dir, "nan")
		cfg := writeFile(t, dir, "nan.yaml", strings.Replace(strings.Replace(good, "lr: 1.0e-3", "lr: 1.0e+30", 1), "min_lr: 1.0e-4", "min_lr: 1.0e+29", 1))
		var o, e bytes.Buffer
		code := run([]string{"--config", cfg, "--out", out, "--steps", "40"}, &o, &e)
		if code == 0 || !strings.Contains(e.String(), "non-finite loss") || !strings.Contains(e.String(), "step ") {
			t.Fatalf("exit %d, stderr %q", code, e.String())
		}
		cs, _ := filepath.Glob(filepath.Join(out, "checkpoints", "*.safetensors"))
		for _, c := range cs {
			b, _ := os.ReadFile(c)
			if _, err := model.DecodeCheckpoint(b); err != nil {
				t.Fatalf("a kept checkpoint is bad: %v", err)
			}
		}
	})

	t.Run("run directory not writable", func(t *testing.T) {
		blocker := writeFile(t, dir, "file-not-dir", "x")
		var o, e bytes.Buffer
		code := run([]string{"--config", writeFile(t, dir, "ok.yaml", good), "--out", filepath.Join(blocker, "run")}, &o, &e)
		if code == 0 || !strings.Contains(e.String(), "run directory") || strings.Count(strings.TrimSpace(e.String()), "\n") != 1 {
			t.Fatalf("exit %d, stderr %q", code, e.String())
		}
	})

	t.Run("checkpoint of another model", func(t *testing.T) {
		out := filepath.Join(dir, "other")
		var o, e bytes.Buffer
		if code := run([]string{"--config", writeFile(t, dir, "a.yaml", good), "--out", out, "--steps", "3"}, &o, &e); code != 0 {
			t.Fatalf("first run: %s", e.String())
		}
		e.Reset()
		bigger := writeFile(t, dir, "b.yaml", strings.Replace(good, "d_model: 16", "d_model: 32", 1))
		code := run([]string{"--config", bigger, "--out", out, "--resume"}, &o, &e)
		if code == 0 || !strings.Contains(e.String(), "d_model is 16 in the checkpoint but 32 in the config") {
			t.Fatalf("exit %d, stderr %q", code, e.String())
		}
	})
}
