// Package clitest is what the commands' tests share: a micro model trained
// in a temporary directory, for the commands that read a trained run.
package clitest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/train"
)

// MicroRun trains a micro ALiBi model (d_model 16, one layer, two heads,
// train_len 16, seed 1) on text repeated times, in a temporary directory,
// and returns the run directory and the corpus file. edit, if not nil,
// changes the config (batch, steps, learning rates) before training.
func MicroRun(t testing.TB, text string, times int, edit func(*train.Config)) (dir, corpus string) {
	t.Helper()
	root := t.TempDir()
	corpus = filepath.Join(root, "corpus.txt")
	if err := os.WriteFile(corpus, []byte(strings.Repeat(text, times)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := train.Defaults()
	cfg.Name, cfg.Out = "micro", filepath.Join(root, "run")
	cfg.Model = model.Config{Vocab: 256, DModel: 16, NLayers: 1, NHeads: 2, DFF: 32, Pos: model.PosALiBi, TrainLen: 16, Seed: 1}
	cfg.Data.Corpus = corpus
	if edit != nil {
		edit(&cfg)
	}
	if _, err := train.Train(context.Background(), cfg, train.Options{}); err != nil {
		t.Fatal(err)
	}
	return cfg.Out, corpus
}

// FlipByte corrupts a file by flipping one bit of its middle byte, as a
// damaged disk or a bad copy would: a checkpoint's checksum catches it.
func FlipByte(t testing.TB, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
