package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model/osutil"
)

// attentionFile is a run's attention.json: its attention statistics at
// each length, with the token budget they were measured on.
type attentionFile struct {
	MaxTokens int `json:"max_tokens"`
	// Weights are the weights measured (nil in files of an older version).
	Weights *eval.Weights          `json:"weights,omitempty"`
	Results []eval.AttentionResult `json:"results"`
}

// readAttention returns the attention statistics a run has for this
// experiment's token budget, by length, if made reuses them, and the
// weights that made them (nil: not named, or none reused).
func readAttention(dir string, o options, made madeBy) (map[int]eval.AttentionResult, *eval.Weights, error) {
	have := map[int]eval.AttentionResult{}
	b, err := os.ReadFile(filepath.Join(dir, "attention.json"))
	if errors.Is(err, os.ErrNotExist) {
		return have, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var f attentionFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, "attention.json"), err)
	}
	if f.MaxTokens != o.maxTokens || !made.reuses(f.Weights) {
		return have, nil, nil
	}
	for _, r := range f.Results {
		have[r.Len] = r
	}
	return have, f.Weights, nil
}

// attentionRun measures a run's attention statistics at every length it
// lacks, saving attention.json after each.
func attentionRun(r *eval.Trained, val []uint32, dir string, lengths []int, o options, made madeBy, stderr io.Writer, terminal bool) error {
	have, _, err := readAttention(dir, o, made)
	if err != nil {
		return err
	}
	for _, l := range lengths {
		if _, ok := have[l]; ok {
			continue
		}
		debug.FreeOSMemory()
		res, err := eval.AttentionStats(r.Model, val, o.evalOptions(l, stderr, terminal))
		if err != nil {
			return fmt.Errorf("attention statistics at length %d: %w", l, err)
		}
		fmt.Fprintf(stderr, "%s attention statistics at %d: %d queries past L, %.1fs\n", dir, l, res.Queries, res.WallSeconds)
		have[l] = res
		f := attentionFile{MaxTokens: o.maxTokens, Weights: made.final}
		for _, x := range lengths {
			if r, ok := have[x]; ok {
				f.Results = append(f.Results, r)
			}
		}
		b, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return err
		}
		if err := osutil.WriteFileAtomic(filepath.Join(dir, "attention.json"), append(b, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// attentionResults returns a run's statistics at every length of the
// experiment, or an error naming the first it lacks.
func attentionResults(c cell, o options, made madeBy) (eval.AttentionRun, error) {
	have, weights, err := readAttention(c.cfg.Out, o, made)
	if err != nil {
		return eval.AttentionRun{}, err
	}
	ar := eval.AttentionRun{Run: c.cfg.Out, Pos: c.cfg.Model.Label(), TrainLen: c.cfg.Model.TrainLen, Weights: weights}
	for _, l := range o.lengths(c.cfg) {
		res, ok := have[l]
		if !ok {
			return eval.AttentionRun{}, fmt.Errorf("no attention statistics at length %d", l)
		}
		ar.Results = append(ar.Results, res)
	}
	return ar, nil
}
