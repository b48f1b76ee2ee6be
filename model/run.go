package model

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
)

// CheckpointDir is the folder of a run directory that holds its checkpoints.
const CheckpointDir = "checkpoints"

// Metadata keys a training run stores in its checkpoints so that evaluation
// can rebuild the same validation split.
const (
	MetaCorpus  = "data.corpus"
	MetaValFrac = "data.val_frac"
)

// ErrNoCheckpoint is wrapped by LatestCheckpoint's error when a run
// directory holds no checkpoint file at all (as opposed to checkpoints that
// fail to load).
var ErrNoCheckpoint = errors.New("no checkpoint")

// CheckpointPath names the checkpoint of a step; names sort by step.
func CheckpointPath(dir string, step int) string {
	return filepath.Join(dir, CheckpointDir, fmt.Sprintf("step-%08d.safetensors", step))
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
// gives an error wrapping ErrNoCheckpoint.
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
		if skipped != nil {
			skipped(err)
		}
	}
	return nil, "", fmt.Errorf("none of the %d checkpoints in %s could be loaded", len(cs), filepath.Join(dir, CheckpointDir))
}
