package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/cmd/internal/clitest"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/train"
)

// twoCheckpointRun trains a micro model for 4 steps with a checkpoint at
// steps 2 and 4.
func twoCheckpointRun(t *testing.T) string {
	dir, _ := clitest.MicroRun(t, "a small corpus for evaluation. ", 50, func(c *train.Config) {
		c.Train.Batch, c.Train.Steps, c.Train.LR, c.Train.MinLR, c.Train.Warmup = 2, 4, 1e-3, 1e-4, 1
		c.Train.CheckpointEvery, c.Train.KeepCheckpoints = 2, 2
	})
	return dir
}

// evalJSON runs the command with --json and returns the report.
func evalJSON(t *testing.T, args ...string) (eval.Report, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.json")
	var out, errb bytes.Buffer
	if code := command(append(args, "--json", path), &out, &errb); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errb.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep eval.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep, out.String()
}

// Every result names its weights: the JSON the checkpoint, its step, the
// run's steps and that it finished; the table a line above it.
func TestEvalNamesWeights(t *testing.T) {
	dir := twoCheckpointRun(t)
	rep, out := evalJSON(t, "--run", dir, "--lens", "16")
	final := model.CheckpointPath(dir, 4)
	want := eval.Weights{Checkpoint: final, Step: 4, Steps: 4, Finished: true}
	if len(rep.Runs) != 1 || rep.Runs[0].Weights == nil || *rep.Runs[0].Weights != want || rep.Runs[0].Run != dir {
		t.Fatalf("report %+v; want run %s with weights %+v", rep.Runs, dir, want)
	}
	if line := "weights: " + final + " (step 4 of 4, finished)\n"; !strings.HasPrefix(out, line) {
		t.Errorf("the table does not start with %q:\n%s", line, out)
	}
}

// A finished run whose final checkpoint is corrupt is refused in one line
// that names it, the newest good one and how to score that on purpose;
// scored so, its report says which checkpoint it is.
func TestEvalRefusesCorruptFinalCheckpoint(t *testing.T) {
	dir := twoCheckpointRun(t)
	final, good := model.CheckpointPath(dir, 4), model.CheckpointPath(dir, 2)
	clitest.FlipByte(t, final)
	var out, errb bytes.Buffer
	code := command([]string{"--run", dir, "--lens", "16"}, &out, &errb)
	msg := errb.String()
	for _, s := range []string{"finished at step 4 but its final checkpoint cannot be read", final, "checksum mismatch", "the newest good checkpoint is " + good + " (step 2)", "--checkpoint " + good} {
		if !strings.Contains(msg, s) {
			t.Errorf("stderr %q lacks %q", msg, s)
		}
	}
	if code != 1 || out.Len() > 0 || strings.Count(msg, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing, one line", code, out.String(), msg)
	}
	rep, table := evalJSON(t, "--checkpoint", good, "--lens", "16")
	want := eval.Weights{Checkpoint: good, Step: 2, Steps: 4, Finished: true}
	label := good + " (earlier checkpoint, step 2 of 4)"
	if w := rep.Runs[0].Weights; w == nil || *w != want || rep.Runs[0].Run != label {
		t.Errorf("run %q, weights %+v; want %q, %+v", rep.Runs[0].Run, w, label, want)
	}
	if !strings.Contains(table, "| alibi ("+label+", L=16) |") {
		t.Errorf("the table does not label the column %q:\n%s", label, table)
	}
}

// A run stopped before its last step, which no process is writing, is
// labelled unfinished, with its step and the run's steps.
func TestEvalLabelsUnfinishedRun(t *testing.T) {
	dir := twoCheckpointRun(t)
	for _, f := range []string{model.CheckpointPath(dir, 4), filepath.Join(dir, model.SummaryFile)} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	rep, out := evalJSON(t, "--run", dir, "--lens", "16")
	label := dir + " (unfinished at step 2 of 4)"
	if rep.Runs[0].Run != label || rep.Runs[0].Weights == nil || rep.Runs[0].Weights.Finished || rep.Runs[0].Weights.Step != 2 {
		t.Errorf("run %q, weights %+v; want %q", rep.Runs[0].Run, rep.Runs[0].Weights, label)
	}
	for _, s := range []string{"| alibi (" + label + ", L=16) |", "weights: " + model.CheckpointPath(dir, 2) + " (unfinished at step 2 of 4)"} {
		if !strings.Contains(out, s) {
			t.Errorf("the report lacks %q:\n%s", s, out)
		}
	}
}

// privateSchemeRun rewrites a trained run's checkpoints as those of a
// position scheme this program has not registered, as a program that
// registered its own scheme would have trained them.
func privateSchemeRun(t *testing.T) string {
	dir := twoCheckpointRun(t)
	cs, err := model.Checkpoints(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range cs {
		c, err := model.LoadCheckpoint(p)
		if err != nil {
			t.Fatal(err)
		}
		c.Config.Pos, c.PositionBuffer = "private", nil
		if err := model.SaveCheckpoint(p, c); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A run of a scheme the command does not know gets one line that says so
// and how to evaluate it, not "none of the checkpoints could be loaded".
func TestEvalUnknownScheme(t *testing.T) {
	dir, unfinished := privateSchemeRun(t), privateSchemeRun(t)
	if err := os.Remove(filepath.Join(unfinished, model.SummaryFile)); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--run", dir}, {"--run", unfinished}, {"--checkpoint", model.CheckpointPath(dir, 4)}} {
		var out, errb bytes.Buffer
		code := command(append(args, "--lens", "16"), &out, &errb)
		msg := errb.String()
		for _, s := range []string{`position scheme "private", which cmd/eval does not know`, "registers the scheme and calls eval.OpenRun"} {
			if !strings.Contains(msg, s) {
				t.Errorf("%v: stderr %q lacks %q", args, msg, s)
			}
		}
		if code != 1 || strings.Count(msg, "\n") != 1 || strings.Contains(msg, "could be loaded") || strings.Contains(msg, "skipping") {
			t.Errorf("%v: exit %d, stderr %q; want 1 and one line", args, code, msg)
		}
	}
}
