package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// CheckpointDir is the folder of a run directory that holds its checkpoints.
const CheckpointDir = "checkpoints"

// SummaryFile is the file a run directory gets when its training has done
// every step and the final evaluation (train.Summary); a run without one
// has not finished.
const SummaryFile = "summary.json"

// Metadata keys a training run stores in its checkpoints so that evaluation
// can rebuild the same validation split.
const (
	MetaCorpus  = "data.corpus"
	MetaValFrac = "data.val_frac"
	// MetaTokenizer is the Hash of the run's tokenizer (data.Tokenizer),
	// whose tokenizer.json the run directory holds (TokenizerFile). A
	// checkpoint without it is a byte-level run's.
	MetaTokenizer = "data.tokenizer"
	// MetaCorpusSHA256 and MetaCorpusBytes are the fingerprint of the
	// corpus the run read: its SHA-256 and its size in bytes.
	MetaCorpusSHA256 = "data.sha256"
	MetaCorpusBytes  = "data.bytes"
)

// TokenizerFile is the file of a run directory that holds the run's
// tokenizer as a Hugging Face tokenizer.json.
const TokenizerFile = "tokenizer.json"

// Metadata keys a training run stores in its checkpoints that say how far
// the run had got: the step the checkpoint was saved at, and the run's
// config as JSON, whose train.steps is the steps the run was started (or
// last resumed) for.
const (
	MetaStep      = "train.step"
	MetaRunConfig = "train.config"
)

// ErrNoCheckpoint is wrapped by LatestCheckpoint's error when a run
// directory holds no checkpoint file at all (as opposed to checkpoints that
// fail to load).
var ErrNoCheckpoint = errors.New("no checkpoint")

// CheckpointPath names the checkpoint of a step; names sort by step.
func CheckpointPath(dir string, step int) string {
	return filepath.Join(dir, CheckpointDir, fmt.Sprintf("step-%08d.safetensors", step))
}

// CheckpointStep returns the step in a checkpoint's file name
// (CheckpointPath), and false for a name of another form.
func CheckpointStep(path string) (int, bool) {
	s, ok := strings.CutPrefix(filepath.Base(path), "step-")
	if !ok {
		return 0, false
	}
	if s, ok = strings.CutSuffix(s, ".safetensors"); !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0
}

// Checkpoints lists a run's checkpoint files, oldest first.
func Checkpoints(dir string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, CheckpointDir, "step-*.safetensors"))
	if err != nil {
		return nil, err
	}
	sort.Strings(matches)
	return matches, nil
}

// LatestCheckpoint loads the newest checkpoint of a run that loads cleanly.
// skipped receives one message per newer file that was corrupt or
// unreadable and therefore passed over. A run without any checkpoint file
// gives an error wrapping ErrNoCheckpoint. A checkpoint of a position scheme
// this program has not registered ends the search with an
// *UnknownSchemeError: the older checkpoints of the run have the same
// scheme.
func LatestCheckpoint(dir string, skipped func(error)) (*Checkpoint, string, error) {
	cs, err := Checkpoints(dir)
	if err != nil {
		return nil, "", err
	}
	if len(cs) == 0 {
		return nil, "", fmt.Errorf("%w in %s", ErrNoCheckpoint, filepath.Join(dir, CheckpointDir))
	}
	for i := len(cs) - 1; i >= 0; i-- {
		c, err := LoadCheckpoint(cs[i])
		if err == nil {
			return c, cs[i], nil
		}
		if errors.As(err, new(*UnknownSchemeError)) {
			return nil, "", err
		}
		if skipped != nil {
			skipped(err)
		}
	}
	return nil, "", fmt.Errorf("none of the %d checkpoints in %s could be loaded", len(cs), filepath.Join(dir, CheckpointDir))
}

// FinishedStep returns the step at which the run in dir finished, as its
// SummaryFile says, and false when it has no summary. A run resumed for
// more steps after finishing keeps its old summary until it finishes again:
// FinishedStep still reports the old step, and the run's newer checkpoints
// say that it went on.
func FinishedStep(dir string) (int, bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	var s struct {
		Steps int `json:"steps"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return 0, false, fmt.Errorf("%s: %w", filepath.Join(dir, SummaryFile), err)
	}
	return s.Steps, true, nil
}

// TrainingStep returns the step a training checkpoint was saved at and the
// steps its run was started (or last resumed) for, from its metadata
// (MetaStep, MetaRunConfig). ok is false for a checkpoint without that
// training state, such as NewCheckpoint's; steps is 0 if the run's config
// does not say.
func (c *Checkpoint) TrainingStep() (step, steps int, ok bool) {
	step, err := strconv.Atoi(c.Meta[MetaStep])
	if err != nil || step < 0 {
		return 0, 0, false
	}
	var cfg struct {
		Train struct {
			Steps int `json:"steps"`
		} `json:"train"`
	}
	if json.Unmarshal([]byte(c.Meta[MetaRunConfig]), &cfg) == nil && cfg.Train.Steps > 0 {
		steps = cfg.Train.Steps
	}
	return step, steps, true
}
