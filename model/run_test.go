package model

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/alibi-go/alibi/layers/position"
)

// CheckpointStep reads back the step CheckpointPath writes, and nothing
// from other names.
func TestCheckpointStep(t *testing.T) {
	for _, step := range []int{0, 7, 755, 123456789} {
		if got, ok := CheckpointStep(CheckpointPath("runs/x", step)); !ok || got != step {
			t.Errorf("CheckpointStep(CheckpointPath(%d)) = %d, %v", step, got, ok)
		}
	}
	for _, name := range []string{"step-.safetensors", "step-12.json", "final.safetensors", "step--3.safetensors", "step-x1.safetensors"} {
		if n, ok := CheckpointStep(name); ok {
			t.Errorf("CheckpointStep(%q) = %d, true", name, n)
		}
	}
}

// TrainingStep reads a training checkpoint's step and its run's steps, and
// says when a checkpoint has none.
func TestTrainingStep(t *testing.T) {
	c := &Checkpoint{Meta: map[string]string{MetaStep: "755", MetaRunConfig: `{"name":"r","train":{"batch":4,"steps":800}}`}}
	if step, steps, ok := c.TrainingStep(); step != 755 || steps != 800 || !ok {
		t.Errorf("TrainingStep = %d, %d, %v; want 755, 800, true", step, steps, ok)
	}
	c.Meta[MetaRunConfig] = "not json"
	if step, steps, ok := c.TrainingStep(); step != 755 || steps != 0 || !ok {
		t.Errorf("with an unreadable config: %d, %d, %v; want 755, 0, true", step, steps, ok)
	}
	if _, _, ok := (&Checkpoint{Meta: map[string]string{}}).TrainingStep(); ok {
		t.Error("a checkpoint without training state has a step")
	}
}

// FinishedStep is the summary's step, false without a summary, and an
// error for one that does not parse.
func TestFinishedStep(t *testing.T) {
	dir := t.TempDir()
	if step, ok, err := FinishedStep(dir); step != 0 || ok || err != nil {
		t.Errorf("no summary: %d, %v, %v", step, ok, err)
	}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, SummaryFile), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"steps": 800, "tokens": 1}`)
	if step, ok, err := FinishedStep(dir); step != 800 || !ok || err != nil {
		t.Errorf("summary of 800 steps: %d, %v, %v", step, ok, err)
	}
	write(`{"steps": `)
	if _, _, err := FinishedStep(dir); err == nil {
		t.Error("a truncated summary was read")
	}
}

// A checkpoint of a scheme this program has not registered is an
// *UnknownSchemeError, and LatestCheckpoint stops at it instead of trying
// the older checkpoints of the run, which have the same scheme.
func TestUnknownSchemeCheckpoint(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, CheckpointDir), 0o777); err != nil {
		t.Fatal(err)
	}
	m, err := New(Config{Vocab: 256, DModel: 16, NLayers: 1, NHeads: 2, DFF: 32, Pos: PosNone, TrainLen: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := NewCheckpoint(m)
	c.Config.Pos = "private"
	for _, s := range []int{1, 2} {
		if err := SaveCheckpoint(CheckpointPath(dir, s), c); err != nil {
			t.Fatal(err)
		}
	}
	skipped := 0
	_, _, err = LatestCheckpoint(dir, func(error) { skipped++ })
	var us *UnknownSchemeError
	if !errors.As(err, &us) || us.Scheme != "private" || !errors.Is(err, position.ErrUnknownScheme) || skipped != 0 {
		t.Errorf("LatestCheckpoint: %v, %d skipped; want an *UnknownSchemeError for \"private\" and none skipped", err, skipped)
	}
}
