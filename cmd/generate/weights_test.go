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
	dir, _ := clitest.MicroRun(t, "Light is refracted by the prism. ", 40, func(c *train.Config) {
		c.Train.Batch, c.Train.Steps, c.Train.LR, c.Train.MinLR, c.Train.Warmup = 4, 4, 1e-2, 1e-3, 1
		c.Train.CheckpointEvery, c.Train.KeepCheckpoints = 2, 2
	})
	return dir
}

// A finished run whose final checkpoint is corrupt generates nothing: one
// line names it, the newest good one and how to use that on purpose, and
// used so, the JSON names it.
func TestGenerateRefusesCorruptFinalCheckpoint(t *testing.T) {
	dir := twoCheckpointRun(t)
	final, good := model.CheckpointPath(dir, 4), model.CheckpointPath(dir, 2)
	clitest.FlipByte(t, final)
	var out, errb bytes.Buffer
	code := command([]string{"--run", dir, "--prompt", "Light", "--tokens", "8"}, &out, &errb)
	msg := errb.String()
	for _, s := range []string{"finished at step 4 but its final checkpoint cannot be read", final, "the newest good checkpoint is " + good + " (step 2)", "--checkpoint " + good} {
		if !strings.Contains(msg, s) {
			t.Errorf("stderr %q lacks %q", msg, s)
		}
	}
	if code != 1 || out.Len() > 0 || strings.Count(msg, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing, one line", code, out.String(), msg)
	}
	jsonPath := filepath.Join(t.TempDir(), "g.json")
	out.Reset()
	errb.Reset()
	if code := command([]string{"--checkpoint", good, "--prompt", "Light", "--tokens", "8", "--json", jsonPath}, &out, &errb); code != 0 {
		t.Fatalf("--checkpoint %s: exit %d: %s", good, code, errb.String())
	}
	var recs []record
	b, _ := os.ReadFile(jsonPath)
	if err := json.Unmarshal(b, &recs); err != nil || len(recs) != 1 {
		t.Fatalf("json %s: %v", b, err)
	}
	if want := (eval.Weights{Checkpoint: good, Step: 2, Steps: 4, Finished: true}); recs[0].Weights != want {
		t.Errorf("json weights %+v, want %+v", recs[0].Weights, want)
	}
	if s := good + " (earlier checkpoint, step 2 of 4) (alibi):"; !strings.Contains(errb.String(), s) {
		t.Errorf("summary %q lacks %q", errb.String(), s)
	}
}

// A run of a scheme the command does not know gets one line that says so
// and how to use it.
func TestGenerateUnknownScheme(t *testing.T) {
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
	for _, args := range [][]string{{"--run", dir}, {"--checkpoint", cs[0]}} {
		var out, errb bytes.Buffer
		code := command(append(args, "--prompt", "Light"), &out, &errb)
		msg := errb.String()
		if code != 1 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, `position scheme "private", which cmd/generate does not know`) ||
			!strings.Contains(msg, "calls eval.OpenRun") {
			t.Errorf("%v: exit %d, stderr %q", args, code, msg)
		}
	}
}
