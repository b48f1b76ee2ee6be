package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
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
		{"unknown pos flag", []string{"--config", cfg("ok.yaml", good), "--pos", "xpos"}, "model.pos"},
		{"zero steps", []string{"--config", cfg("ok2.yaml", good), "--steps", "0"}, "--steps"},
		{"train_len longer than corpus", []string{"--config", cfg("long.yaml", strings.NewReplacer("train_len: 16", "train_len: 4000", "eval_tokens: 256", "eval_tokens: 4000").Replace(good))}, "its training split of 900 tokens is shorter than one window"},
		{"train_len longer than the validation split", []string{"--config", cfg("longval.yaml", strings.Replace(good, "train_len: 16", "train_len: 128", 1))}, "its validation split of 100 tokens is shorter than one window of train_len 128 + 1"},
		{"eval_tokens shorter than train_len", []string{"--config", cfg("evaltok.yaml", strings.Replace(good, "eval_tokens: 256", "eval_tokens: 8", 1))}, "train.eval_tokens (8) must be at least model.train_len (16)"},
		{"missing corpus", []string{"--config", cfg("nocorpus.yaml", strings.Replace(good, corpus, filepath.Join(dir, "missing.txt"), 1))}, "missing.txt"},
		{"empty corpus", []string{"--config", cfg("empty.yaml", strings.Replace(good, corpus, writeFile(t, dir, "empty.txt", ""), 1))}, "empty"},
		{"stray argument", []string{"--config", cfg("ok3.yaml", good), "extra"}, "unexpected argument"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := command(append(tc.args, "--out", filepath.Join(dir, "run-"+strings.ReplaceAll(tc.name, " ", "-"))), &out, &errb)
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
	if code := command([]string{"--config", path, "--out", out, "--steps", "4", "--pos", "sinusoidal"}, &stdout, &stderr); code != 0 {
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

	t.Run("non-finite loss after a checkpoint", func(t *testing.T) {
		// Checkpoints every 3 steps; step 5's loss is NaN (as a diverging
		// run's would be): the run stops there, and the step-3 checkpoint
		// survives, loads, and is the one the error names.
		// Only the fault-injection build of the command can make a loss
		// NaN on demand, so this case runs it as a subprocess.
		out := filepath.Join(dir, "nan")
		var o, e bytes.Buffer
		cmd := faultTrainCmd(t, []string{faultEnv + "=nan-loss:5"}, "--config", writeFile(t, dir, "nan.yaml", good), "--out", out, "--steps", "40")
		cmd.Stdout, cmd.Stderr = &o, &e
		code := 0
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		kept := filepath.Join(out, "checkpoints", "step-00000003.safetensors")
		if code == 0 || !strings.Contains(e.String(), "step 5: non-finite loss NaN") || !strings.Contains(e.String(), "the last good checkpoint, "+kept+", is kept") {
			t.Fatalf("exit %d, stderr %q", code, e.String())
		}
		cs, _ := filepath.Glob(filepath.Join(out, "checkpoints", "*.safetensors"))
		if len(cs) != 1 || cs[0] != kept {
			t.Fatalf("checkpoints after the bad step: %v, want only %s", cs, kept)
		}
		c, err := model.LoadCheckpoint(kept)
		if err != nil {
			t.Fatalf("the kept checkpoint does not load: %v", err)
		}
		if c.Meta["train.step"] != "3" {
			t.Fatalf("the kept checkpoint is of step %s", c.Meta["train.step"])
		}
	})

	t.Run("run directory not writable", func(t *testing.T) {
		blocker := writeFile(t, dir, "file-not-dir", "x")
		var o, e bytes.Buffer
		code := command([]string{"--config", writeFile(t, dir, "ok.yaml", good), "--out", filepath.Join(blocker, "run")}, &o, &e)
		if code == 0 || !strings.Contains(e.String(), "run directory") || strings.Count(e.String(), "train: ") != 1 {
			t.Fatalf("exit %d, stderr %q", code, e.String())
		}
	})

	t.Run("checkpoint of another model", func(t *testing.T) {
		out := filepath.Join(dir, "other")
		var o, e bytes.Buffer
		if code := command([]string{"--config", writeFile(t, dir, "a.yaml", good), "--out", out, "--steps", "3"}, &o, &e); code != 0 {
			t.Fatalf("first run: %s", e.String())
		}
		e.Reset()
		bigger := writeFile(t, dir, "b.yaml", strings.Replace(good, "d_model: 16", "d_model: 32", 1))
		code := command([]string{"--config", bigger, "--out", out, "--resume"}, &o, &e)
		if code == 0 || !strings.Contains(e.String(), "model.d_model is 16 in the checkpoint but 32 now") {
			t.Fatalf("exit %d, stderr %q", code, e.String())
		}
	})
}

// The run directory: --pos that changes the scheme trains into
// runs/<name>-<pos>, a fresh run over an existing one refuses with one line
// naming both ways out, and resuming a finished run says so in one line and
// exits 0.
func TestRunDirectories(t *testing.T) {
	dir := t.TempDir()
	corpus := writeFile(t, dir, "corpus.txt", strings.Repeat("some text to learn from. ", 40))
	cfg := writeFile(t, dir, "micro.yaml", strings.Replace(microYAML, "CORPUS", corpus, 1))
	t.Chdir(dir)
	var o, e bytes.Buffer
	for _, args := range [][]string{{"--config", cfg}, {"--config", cfg, "--pos", "sinusoidal"}, {"--config", cfg, "--pos", "alibi"}} {
		o.Reset()
		e.Reset()
		code := command(args, &o, &e)
		if len(args) == 4 && args[3] == "alibi" {
			// alibi is the config's own scheme: runs/micro, which exists.
			want := "train: runs/micro already holds a run (newest checkpoint step-00000006.safetensors); continue it with --resume, or train into another directory with --out DIR\n"
			if code != 1 || e.String() != "training "+cfg+" (pos alibi, seed 1, 6 steps) into runs/micro\n"+want {
				t.Fatalf("exit %d, stderr %q", code, e.String())
			}
			continue
		}
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e.String())
		}
	}
	for _, d := range []string{"runs/micro", "runs/micro-sinusoidal"} {
		if _, err := os.Stat(filepath.Join(d, "summary.json")); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	b, _ := os.ReadFile("runs/micro-sinusoidal/config.yaml")
	if !strings.Contains(string(b), "pos: sinusoidal") {
		t.Errorf("runs/micro-sinusoidal/config.yaml: %s", b)
	}
	before, _ := os.ReadFile("runs/micro/summary.json")
	e.Reset()
	if code := command([]string{"--config", cfg, "--resume"}, &o, &e); code != 0 {
		t.Fatalf("resuming a finished run: exit %d, %s", code, e.String())
	}
	if want := "train: runs/micro has already finished at step 6 (asked for 6 steps): nothing to do\n"; !strings.HasSuffix(e.String(), want) {
		t.Fatalf("stderr %q, want it to end with %q", e.String(), want)
	}
	after, _ := os.ReadFile("runs/micro/summary.json")
	if string(before) != string(after) {
		t.Fatal("summary.json changed")
	}
}

func TestHelp(t *testing.T) {
	var o, e bytes.Buffer
	if code := command([]string{"--help"}, &o, &e); code != 0 {
		t.Fatalf("--help exits %d", code)
	}
	if !strings.HasPrefix(e.String(), "train: train a language model") || !strings.Contains(e.String(), "example: go run ./cmd/train --config configs/tiny.yaml") || !strings.Contains(e.String(), "-resume") {
		t.Fatalf("usage:\n%s", e.String())
	}
}
