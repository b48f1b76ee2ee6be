package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const microYAML = `name: micro
model: {vocab: 256, d_model: 16, n_layers: 1, n_heads: 2, d_ff: 32, pos: alibi, train_len: 8, seed: 1}
data: {corpus: CORPUS, val_frac: 0.2}
train: {batch: 2, steps: 4, lr: 1.0e-3, min_lr: 1.0e-4, warmup: 1, log_every: 2, eval_every: 100, eval_tokens: 64, checkpoint_every: 2, keep_checkpoints: 2}
`

func setup(t *testing.T) (cfg, out string) {
	t.Helper()
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.txt")
	if err := os.WriteFile(corpus, []byte(strings.Repeat("a little text to train on. ", 40)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(dir, "micro.yaml")
	if err := os.WriteFile(cfg, []byte(strings.Replace(microYAML, "CORPUS", corpus, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, filepath.Join(dir, "compare")
}

// Two schemes trained and evaluated into one report; a second call reuses
// both runs (their files stay as they were).
func TestExperiment(t *testing.T) {
	cfg, out := setup(t)
	args := []string{"--config", cfg, "--pos", "alibi,sinusoidal", "--out", out, "--mults", "1,2", "--max-tokens", "100"}
	var o, e bytes.Buffer
	if code := command(args, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	md := o.String()
	for _, want := range []string{"# Extrapolation: alibi vs sinusoidal", "the first 100 tokens of the validation split", "| 8 |", "| 16 |", "--max-tokens 100"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	var rep struct {
		Runs []struct {
			Pos     string `json:"pos"`
			Results []struct {
				Len    int     `json:"len"`
				Tokens int     `json:"tokens"`
				PPL    float64 `json:"ppl"`
			} `json:"results"`
		} `json:"runs"`
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 2 || rep.Runs[0].Pos != "alibi" || rep.Runs[1].Pos != "sinusoidal" {
		t.Fatalf("report runs %+v", rep.Runs)
	}
	for _, r := range rep.Runs {
		if len(r.Results) != 2 || r.Results[0].Len != 8 || r.Results[1].Len != 16 {
			t.Fatalf("%s results %+v", r.Pos, r.Results)
		}
		for _, x := range r.Results {
			if x.Tokens != 100 || !(x.PPL > 1 && x.PPL < 256) {
				t.Errorf("%s at %d: %+v", r.Pos, x.Len, x)
			}
		}
	}
	summary, _ := os.ReadFile(filepath.Join(out, "alibi", "summary.json"))
	e.Reset()
	if code := command(args, &o, &e); code != 0 {
		t.Fatalf("second call: exit %d: %s", code, e.String())
	}
	if !strings.Contains(e.String(), "alibi: reusing the trained run") || !strings.Contains(e.String(), "sinusoidal: reusing the trained run") {
		t.Errorf("second call did not reuse the runs:\n%s", e.String())
	}
	if again, _ := os.ReadFile(filepath.Join(out, "alibi", "summary.json")); !bytes.Equal(again, summary) {
		t.Error("reusing a run changed its summary")
	}
	// Fewer steps than the runs have is refused; more continues them.
	e.Reset()
	if code := command(append(args, "--steps", "2"), &o, &e); code == 0 || !strings.Contains(e.String(), "trained for 4 steps, more than the 2 asked for") {
		t.Errorf("fewer steps: exit %d, %s", code, e.String())
	}
	e.Reset()
	if code := command(append(args, "--steps", "6"), &o, &e); code != 0 {
		t.Fatalf("more steps: exit %d, %s", code, e.String())
	}
	var s struct{ Steps int }
	b, _ = os.ReadFile(filepath.Join(out, "alibi", "summary.json"))
	if json.Unmarshal(b, &s); s.Steps != 6 {
		t.Errorf("continued run has %d steps, want 6", s.Steps)
	}
}

func TestExperimentBadInput(t *testing.T) {
	cfg, out := setup(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", cfg, "--pos", "alibi,rope2"}, "--pos"},
		{[]string{"--config", cfg, "--mults", "1,x"}, "--mults"},
		{[]string{"--config", cfg, "--steps", "-3"}, "--steps"},
		{[]string{"--config", cfg, "--max-tokens", "-1"}, "--max-tokens"},
		{[]string{"--config", filepath.Join(out, "none.yaml")}, "no such file"},
		{[]string{"--config", cfg, "stray"}, "unexpected argument"},
	} {
		var o, e bytes.Buffer
		code := command(append(tc.args, "--out", out), &o, &e)
		if code == 0 || !strings.Contains(e.String(), tc.want) || strings.Count(strings.TrimSpace(e.String()), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line containing %q", tc.args, code, e.String(), tc.want)
		}
	}
	var o, e bytes.Buffer
	if code := command([]string{"--help"}, &o, &e); code != 0 || !strings.HasPrefix(e.String(), "experiment: train one model per position scheme") {
		t.Errorf("--help: exit %d, %q", code, e.String())
	}
}
