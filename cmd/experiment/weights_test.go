package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/train"
)

// comparison reads a report.json.
func comparison(t *testing.T, out string) eval.Comparison {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c eval.Comparison
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// The report names the checkpoint every run was scored from, in its JSON
// and its Markdown. A run continued for more steps is evaluated again: its
// saved evaluations are of the older weights. Its new results are those of
// its final checkpoint, scored here on their own.
func TestExperimentNamesWeights(t *testing.T) {
	cfg, out := setup(t)
	args := []string{"--config", cfg, "--pos", "alibi", "--out", out, "--mults", "1,2", "--max-tokens", "100"}
	var o, e bytes.Buffer
	if code := command(args, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	dir := filepath.Join(out, "alibi")
	want := eval.Weights{Checkpoint: model.CheckpointPath(dir, 4), Step: 4, Steps: 4, Finished: true}
	first := comparison(t, out)
	if w := first.Runs[0].Weights; w == nil || *w != want {
		t.Fatalf("report weights %+v, want %+v", w, want)
	}
	if s := "Every run finished its 4 steps and is scored from its final checkpoint, checkpoints/step-00000004.safetensors in its directory."; !strings.Contains(o.String(), s) {
		t.Errorf("report.md lacks %q:\n%s", s, o.String())
	}

	o.Reset()
	e.Reset()
	if code := command(append(args, "--steps", "6"), &o, &e); code != 0 {
		t.Fatalf("--steps 6: exit %d: %s", code, e.String())
	}
	second := comparison(t, out)
	want = eval.Weights{Checkpoint: model.CheckpointPath(dir, 6), Step: 6, Steps: 6, Finished: true}
	if w := second.Runs[0].Weights; w == nil || *w != want {
		t.Fatalf("report weights after --steps 6: %+v, want %+v", w, want)
	}
	r, err := eval.OpenRun(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	val, err := r.ValidationTokens(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range []int{8, 16} {
		res, err := eval.Perplexity(r.Model, val, eval.Options{Len: l, MaxTokens: 100})
		if err != nil {
			t.Fatal(err)
		}
		if got := second.Runs[0].Results[i]; got.Len != l || got.PPL != res.PPL || got.PPL == first.Runs[0].Results[i].PPL {
			t.Errorf("length %d: the report has %v (before --steps 6: %v), the final checkpoint scores %v", l, got.PPL, first.Runs[0].Results[i].PPL, res.PPL)
		}
	}
}

// A finished run whose final checkpoint cannot be read is not scored from
// an older one: one line names it, the newest good one, and the command
// that trains the last steps again; after it, the experiment gives the
// report it gave before the file was damaged, to the bit.
func TestExperimentCorruptFinalCheckpoint(t *testing.T) {
	cfg, out := setup(t)
	args := []string{"--config", cfg, "--pos", "alibi", "--out", out, "--mults", "1,2", "--max-tokens", "100", "--no-timings"}
	var o, e bytes.Buffer
	if code := command(args, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	before := o.String()
	dir := filepath.Join(out, "alibi")
	final := model.CheckpointPath(dir, 4)
	b, err := os.ReadFile(final)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(final, b, 0o644); err != nil {
		t.Fatal(err)
	}
	o.Reset()
	e.Reset()
	code := command(args, &o, &e)
	msg := e.String()
	for _, s := range []string{"finished at step 4 but its final checkpoint cannot be read", "the newest good checkpoint is " + model.CheckpointPath(dir, 2), "go run ./cmd/train --resume --out " + dir} {
		if !strings.Contains(msg, s) {
			t.Errorf("stderr %q lacks %q", msg, s)
		}
	}
	if code != 1 || o.Len() > 0 || strings.Count(msg, "\n") != 2 { // the reuse line, then the error
		t.Errorf("exit %d, stdout %q, stderr %q", code, o.String(), msg)
	}
	// What the line says to do: resume the run (the newest checkpoint that
	// loads), which trains steps 3 and 4 again.
	runCfg, err := train.RunConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if _, err := train.Train(context.Background(), runCfg, train.Options{Resume: true, Log: &log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "resuming from "+model.CheckpointPath(dir, 2)+" (step 2), the newest checkpoint that loads") {
		t.Errorf("the resume does not say it fell back:\n%s", log.String())
	}
	// Scored again from the checkpoint written again, the report is the
	// same.
	if err := os.Remove(filepath.Join(dir, "eval.json")); err != nil {
		t.Fatal(err)
	}
	o.Reset()
	e.Reset()
	if code := command(args, &o, &e); code != 0 || o.String() != before {
		t.Errorf("after the resume: exit %d, report\n%s\nwant\n%s\n%s", code, o.String(), before, e.String())
	}
}

// --report-only names how far a run that has not finished got.
func TestReportOnlyNamesUnfinishedStep(t *testing.T) {
	cfg, out := setup(t)
	args := []string{"--config", cfg, "--pos", "alibi", "--out", out, "--mults", "1", "--max-tokens", "100"}
	var o, e bytes.Buffer
	if code := command(args, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	dir := filepath.Join(out, "alibi")
	for _, f := range []string{model.CheckpointPath(dir, 4), filepath.Join(dir, model.SummaryFile)} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	o.Reset()
	e.Reset()
	code := command(append(args, "--report-only"), &o, &e)
	if want := "1 not finished: " + dir + " (unfinished at step 2 of 4)\n"; code != 1 || !strings.HasSuffix(e.String(), want) {
		t.Errorf("exit %d, stderr %q; want it to end with %q", code, e.String(), want)
	}
}
