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
	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model/osutil"
)

// recallFile is a run's <task>.json: the evaluation of a retrieval task and
// the settings it was made with, so that a later experiment with the same
// settings reuses it.
type recallFile struct {
	// Lengths are the experiment's that hold an episode: those of at least
	// MinLength tokens.
	Lengths   []int             `json:"lengths"`
	MinLength int               `json:"min_length"`
	Episodes  int               `json:"episodes"`
	Result    eval.RecallResult `json:"result"`
	Weights   *eval.Weights     `json:"weights"`
}

// readRecall returns a run's evaluation of task if it has one made with the
// experiment's settings (its lengths of them that hold an episode), by
// weights that made reuses.
func readRecall(dir, task string, lengths []int, o options, made madeBy) (*eval.RecallResult, error) {
	path := filepath.Join(dir, task+".json")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f recallFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	lengths = slices.DeleteFunc(slices.Clone(lengths), func(l int) bool { return l < f.MinLength })
	if !slices.Equal(f.Lengths, lengths) || f.Episodes != o.recallEpisodes || !made.reuses(f.Weights) {
		return nil, nil // other settings or weights: evaluate again
	}
	return &f.Result, nil
}

// recallMin is the shortest episode of task in the tokens of tok.
func recallMin(task string, tok data.Tokenizer) int {
	gen, err := data.NewRecall(task, []uint32{0}, tok, 0)
	if err != nil {
		return 0
	}
	return gen.MinLength()
}

// recallRun scores a run on a retrieval task at the experiment's lengths
// that hold an episode, unless it already has this evaluation, and saves it
// in <task>.json.
func recallRun(r *eval.Trained, dir, task string, lengths []int, o options, made madeBy, stderr io.Writer, terminal bool) error {
	if have, err := readRecall(dir, task, lengths, o, made); err != nil || have != nil {
		return err
	}
	minLen := recallMin(task, r.Tokenizer)
	all := lengths
	lengths = slices.DeleteFunc(slices.Clone(lengths), func(l int) bool { return l < minLen })
	if len(lengths) == 0 {
		return fmt.Errorf("%s: no evaluation length holds an episode (%d tokens at least)", task, minLen)
	}
	if len(lengths) < len(all) {
		fmt.Fprintf(stderr, "%s %s: the lengths below %d tokens hold no episode: scored at %v only\n", dir, task, minLen, lengths)
	}
	filler, err := r.TrainingTokens(cli.CorpusProgress(stderr, terminal))
	if err != nil {
		return err
	}
	res, err := eval.Recall(r.Model, filler, eval.RecallOptions{Task: task, Lengths: lengths, Episodes: o.recallEpisodes, Seed: 1, Tokenizer: r.Tokenizer})
	if err != nil {
		return fmt.Errorf("%s: %w", task, err)
	}
	res.Run = dir
	fmt.Fprintf(stderr, "%s %s: effective context %d (accuracy up to L %.2f), %.1fs\n", dir, task, res.EffectiveContext, res.ShortAccuracy, res.WallSeconds)
	b, err := json.MarshalIndent(recallFile{Lengths: lengths, MinLength: minLen, Episodes: o.recallEpisodes, Result: res, Weights: made.final}, "", "  ")
	if err != nil {
		return err
	}
	return osutil.WriteFileAtomic(filepath.Join(dir, task+".json"), append(b, '\n'))
}
