package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/train"
)

// TestMain lets the test binary act as the experiment command in a
// subprocess, for the sharding test.
func TestMain(m *testing.M) {
	layers.UseFastBLAS() // as main does
	if os.Getenv("ALIBI_EXPERIMENT_MAIN") == "1" {
		os.Exit(command(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

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
	// The report names the corpus exactly: its hash worked out here from
	// the file's bytes.
	corpus := filepath.Join(filepath.Dir(cfg), "corpus.txt")
	text, err := os.ReadFile(corpus)
	if err != nil {
		t.Fatal(err)
	}
	named := fmt.Sprintf("Corpus: %s, %d bytes, SHA-256 %x.", corpus, len(text), sha256.Sum256(text))
	for _, want := range []string{"# Extrapolation: alibi vs sinusoidal", "the first 100 tokens (or all, if fewer) of the validation split", "| 8 |", "| 16 |", "--max-tokens 100", named} {
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
	if code := command(append(args, "--steps", "6", "--eval-every", "1"), &o, &e); code != 0 {
		t.Fatalf("more steps: exit %d, %s", code, e.String())
	}
	var s struct{ Steps int }
	b, _ = os.ReadFile(filepath.Join(out, "alibi", "summary.json"))
	if json.Unmarshal(b, &s); s.Steps != 6 {
		t.Errorf("continued run has %d steps, want 6", s.Steps)
	}
	// --eval-every 1 validated the continued steps, which the config's
	// eval_every of 100 would not have.
	val, err := train.ReadValidation(filepath.Join(out, "alibi"), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	steps := map[int]bool{}
	for _, v := range val {
		steps[v.Step] = true
	}
	if !steps[5] {
		t.Errorf("--eval-every 1: no validation at step 5, got %+v", val)
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
		{[]string{"--config", cfg, "--eval-every", "-1"}, "--eval-every"},
		{[]string{"--config", cfg, "--max-tokens", "-1"}, "--max-tokens"},
		{[]string{"--config", filepath.Join(out, "none.yaml")}, "no such file"},
		{[]string{"--config", cfg, "stray"}, "unexpected argument"},
		{[]string{"--config", cfg, "--seeds", "1,x"}, "--seeds"},
		{[]string{"--config", cfg, "--shard", "3/2"}, "--shard"},
		{[]string{"--config", cfg, "--shard", "1"}, "--shard"},
		{[]string{"--config", cfg, "--report-only"}, "3 of 3 runs are not ready, so no report was written; 3 not finished"},
		// Duplicates would train or evaluate one thing twice and count it twice.
		{[]string{"--config", cfg, "--seeds", "1,1"}, "experiment: --seeds lists 1 twice"},
		{[]string{"--config", cfg, "--seeds", "2,1,02"}, "experiment: --seeds lists 2 twice"},
		{[]string{"--config", cfg, "--pos", "alibi,none, alibi"}, "experiment: --pos lists alibi twice"},
		{[]string{"--config", cfg, "--mults", "1,2,1"}, "experiment: --mults lists 1 twice"},
		{[]string{"--config", cfg, "--no-timings", "--attention-stats"}, "--no-timings applies to the perplexity report only"},
		{[]string{"--config", cfg, "--pos", "alibi,rope", "--extend", "rope:interp"}, "experiment: --extend rope:interp: extension interp applies to alibi runs, not rope; for rope use pi, ntk, dynamic-ntk, yarn"},
		{[]string{"--config", cfg, "--pos", "alibi", "--extend", "rope:pi"}, "experiment: --extend rope:pi: rope is not one of --pos"},
		{[]string{"--config", cfg, "--pos", "rope", "--extend", "yarn"}, `experiment: --extend: "yarn" is not scheme:method`},
		{[]string{"--config", cfg, "--pos", "rope", "--extend", "rope:pi,rope:pi"}, "experiment: --extend lists rope:pi twice"},
		// The validation split has 216 tokens (1080 bytes, val_frac 0.2):
		// refused before anything trains (the one line is the error).
		{[]string{"--config", cfg, "--mults", "1,100"}, "experiment: --mults 100 is too long for the validation split: length 800 needs 801 tokens but the data has 216; the longest length that fits is 215 (--mults up to 26)"},
		// A multiple too large for an int is too long, not a short length
		// after wrapping around (its extension factor would be 1e300).
		{[]string{"--config", cfg, "--pos", "alibi", "--mults", "1,1e300", "--extend", "alibi:interp"}, "experiment: --mults 1e+300 is too long for the validation split"},
		// A length past int32 is said as it is, not clamped to 2147483647.
		{[]string{"--config", cfg, "--mults", "1,1e11"}, "experiment: --mults 1e+11 is too long for the validation split: length 800000000000 needs 800000000001 tokens but the data has 216"},
		{[]string{"--config", cfg, "--mults", "1,1e300"}, "experiment: --mults 1e+300 is too long for the validation split: 8e+300 tokens, past the largest length, and the data has 216 (--mults up to 26)"},
		{[]string{"--config", cfg, "--mults", "1,4", "--max-tokens", "20"}, "experiment: --mults 4 is too long for the validation split: length 32 needs 33 tokens but only the first 21 of the data's 216 are scored (max tokens 20); the longest length that fits is 20 (--mults up to 2)"},
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
	// The usage names every extension --extend accepts, and the
	// +log-length labels --pos accepts.
	for _, want := range []string{"rope:pi", "rope:ntk", "rope:dynamic-ntk", "rope:yarn", "alibi:interp", "alibi+log-length"} {
		if !strings.Contains(e.String(), want) {
			t.Errorf("--help does not name %s", want)
		}
	}
}

// Three shards trained by three processes at once, each its own share of a
// 3 schemes x 2 seeds grid, then --report-only: every run trained exactly
// once, the report has every scheme with the spread of its two seeds, and
// it equals the report of the same grid run in one process.
func TestExperimentShards(t *testing.T) {
	cfg, out := setup(t)
	args := []string{"--config", cfg, "--pos", "alibi,sinusoidal,none", "--seeds", "1,2", "--out", out, "--mults", "1,2", "--max-tokens", "60"}
	var procs []*exec.Cmd
	var logs []*bytes.Buffer
	for k := 1; k <= 3; k++ {
		cmd := exec.Command(os.Args[0], append(args, "--shard", fmt.Sprintf("%d/3", k))...)
		cmd.Env = append(os.Environ(), "ALIBI_EXPERIMENT_MAIN=1")
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs, logs = append(procs, cmd), append(logs, &buf)
	}
	for k, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("shard %d/3: %v\n%s", k+1, err, logs[k])
		}
		if !strings.Contains(logs[k].String(), fmt.Sprintf("shard %d/3 done (2 of 6 runs)", k+1)) {
			t.Errorf("shard %d/3 log:\n%s", k+1, logs[k])
		}
	}
	// Grid order: alibi-1, alibi-2, sinusoidal-1, sinusoidal-2, none-1, none-2;
	// shard k takes indices k-1 and k+2.
	// Seed 1 is the config's own: its runs keep the plain directories.
	owner := map[string]int{"alibi": 1, "alibi-seed2": 2, "sinusoidal": 3, "sinusoidal-seed2": 1, "none": 2, "none-seed2": 3}
	for run, k := range owner {
		if n := strings.Count(logs[k-1].String(), run+": training into"); n != 1 {
			t.Errorf("%s trained %d times by shard %d", run, n, k)
		}
		if _, err := os.Stat(filepath.Join(out, run, "eval.json")); err != nil {
			t.Errorf("%s: %v", run, err)
		}
	}
	var o, e bytes.Buffer
	if code := command(append(args, "--report-only"), &o, &e); code != 0 {
		t.Fatalf("--report-only: exit %d: %s", code, e.String())
	}
	if !strings.Contains(o.String(), "mean of 2 seeds (min–max)") || !strings.Contains(o.String(), "| none |") || !strings.Contains(o.String(), "--seeds 1,2") {
		t.Errorf("report:\n%s", o.String())
	}
	sharded, _ := os.ReadFile(filepath.Join(out, "report.json"))
	var rep struct {
		Schemes []struct {
			Pos     string
			Seeds   []uint64
			Lengths []struct {
				Len  int
				Mean float64 `json:"mean_ppl"`
				Min  float64 `json:"min_ppl"`
				Max  float64 `json:"max_ppl"`
			}
		}
	}
	if err := json.Unmarshal(sharded, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Schemes) != 3 {
		t.Fatalf("schemes %+v", rep.Schemes)
	}
	for _, s := range rep.Schemes {
		if len(s.Seeds) != 2 || len(s.Lengths) != 2 {
			t.Fatalf("%s: %+v", s.Pos, s)
		}
		for _, l := range s.Lengths {
			if !(l.Min <= l.Mean && l.Mean <= l.Max) || l.Min == l.Max {
				t.Errorf("%s at %d: mean %g, range %g-%g (two seeds should differ)", s.Pos, l.Len, l.Mean, l.Min, l.Max)
			}
		}
	}
	// The same grid in one process reuses every run and evaluation and
	// writes the same numbers.
	e.Reset()
	if code := command(args, &o, &e); code != 0 {
		t.Fatalf("one process: exit %d: %s", code, e.String())
	}
	if strings.Contains(e.String(), "training into") || strings.Count(e.String(), "reusing its evaluations") != 6 {
		t.Errorf("one process did not reuse everything:\n%s", e.String())
	}
	again, _ := os.ReadFile(filepath.Join(out, "report.json"))
	if !bytes.Equal(again, sharded) {
		t.Error("the one-process report differs from the sharded one")
	}
	// Without --seeds, the config's seed: the same directories, reused.
	e.Reset()
	if code := command([]string{"--config", cfg, "--pos", "alibi,none", "--out", out, "--mults", "1,2", "--max-tokens", "60", "--report-only"}, &o, &e); code != 0 {
		t.Fatalf("the config's seed alone: exit %d: %s", code, e.String())
	}
}

// With --no-timings, one grid trained in one process and, elsewhere, in
// two shards and a --report-only gives the same report bytes: nothing in
// it depends on the machine, the moment or how the work was split.
func TestNoTimingsSameBytes(t *testing.T) {
	var md, js [2][]byte
	for i := range 2 {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "corpus.txt"), []byte(strings.Repeat("a little text to train on. ", 40)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "micro.yaml"), []byte(strings.Replace(microYAML, "CORPUS", "corpus.txt", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"--config", "micro.yaml", "--pos", "alibi,none", "--seeds", "1,2", "--out", "grid", "--mults", "1,2", "--max-tokens", "60", "--no-timings"}
		runs := [][]string{args}
		if i == 1 {
			runs = [][]string{append(args, "--shard", "2/2"), append(args, "--shard", "1/2"), append(args, "--report-only")}
		}
		for _, a := range runs {
			cmd := exec.Command(os.Args[0], a...)
			cmd.Dir, cmd.Env = dir, append(os.Environ(), "ALIBI_EXPERIMENT_MAIN=1")
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", a, err, b)
			}
		}
		var err error
		if md[i], err = os.ReadFile(filepath.Join(dir, "grid", "report.md")); err != nil {
			t.Fatal(err)
		}
		if js[i], err = os.ReadFile(filepath.Join(dir, "grid", "report.json")); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(md[0], md[1]) {
		t.Errorf("report.md differs:\n%s\n---\n%s", md[0], md[1])
	}
	if !bytes.Equal(js[0], js[1]) {
		t.Error("report.json differs")
	}
	for _, word := range []string{"tokens/s", "wall", "RSS", "Generated"} {
		if bytes.Contains(md[0], []byte(word)) {
			t.Errorf("report.md with --no-timings says %q:\n%s", word, md[0])
		}
	}
	if !bytes.Contains(md[0], []byte("--no-timings")) || !bytes.Contains(md[0], []byte("mean of 2 seeds")) {
		t.Errorf("report.md:\n%s", md[0])
	}
}
