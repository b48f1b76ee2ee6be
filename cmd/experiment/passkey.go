package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/alibi-go/alibi/cmd/internal/cli"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model/osutil"
)

// passkeyFile is a run's passkey.json: the evaluation and the settings it
// was made with, so that a later experiment with the same settings reuses it.
type passkeyFile struct {
	Distances []int              `json:"distances"`
	Episodes  int                `json:"episodes"`
	Result    eval.PasskeyResult `json:"result"`
}

// passkeyOptions are the experiment's passkey settings.
func (o options) passkeyOptions() eval.PasskeyOptions {
	return eval.PasskeyOptions{Distances: o.distances, Episodes: o.episodes, Seed: 1, MemoryLimit: osutil.AvailableMemory()}
}

// readPasskey returns a run's passkey evaluation if it has one made with
// the experiment's settings, by weights that made reuses.
func readPasskey(dir string, o options, made madeBy) (*eval.PasskeyResult, error) {
	b, err := os.ReadFile(filepath.Join(dir, "passkey.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f passkeyFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "passkey.json"), err)
	}
	if !slices.Equal(f.Distances, o.distances) || f.Episodes != o.episodes || !made.reuses(f.Result.Weights) {
		return nil, nil // other settings or weights: evaluate again
	}
	return &f.Result, nil
}

// passkeyRun evaluates a run on passkey episodes, unless it already has
// this evaluation, and saves it in passkey.json.
func passkeyRun(r *eval.Trained, dir string, o options, made madeBy, stderr io.Writer, terminal bool) error {
	if have, err := readPasskey(dir, o, made); err != nil || have != nil {
		return err
	}
	filler, err := r.TrainingTokens(cli.CorpusProgress(stderr, terminal))
	if err != nil {
		return err
	}
	po := o.passkeyOptions()
	po.Tokenizer = r.Tokenizer
	po.Progress = eval.NewPasskeyProgress(stderr, terminal, nil)
	res, err := eval.Passkey(r.Model, filler, po)
	if err != nil {
		return fmt.Errorf("passkey: %w", err)
	}
	res.Run, res.Weights = dir, made.final
	fmt.Fprintf(stderr, "%s passkey: effective context %d (accuracy up to L/2 %.2f), %.1fs\n", dir, res.EffectiveContext, res.ShortAccuracy, res.WallSeconds)
	b, err := json.MarshalIndent(passkeyFile{Distances: o.distances, Episodes: o.episodes, Result: res}, "", "  ")
	if err != nil {
		return err
	}
	return osutil.WriteFileAtomic(filepath.Join(dir, "passkey.json"), append(b, '\n'))
}
