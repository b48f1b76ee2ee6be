package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/alibi-go/alibi/model"
)

// checkFresh refuses a fresh run in a directory that already holds a run:
// its checkpoints would be pruned or shadowed by the new run's, and its
// summary would describe the wrong run.
func checkFresh(dir string) error {
	cs, err := model.Checkpoints(dir)
	if err != nil {
		return fmt.Errorf("run directory %s: %w", dir, err)
	}
	if len(cs) > 0 {
		return fmt.Errorf("%s %w (newest checkpoint %s)", dir, ErrRunExists, filepath.Base(cs[len(cs)-1]))
	}
	if _, err := os.Stat(filepath.Join(dir, model.SummaryFile)); err == nil {
		return fmt.Errorf("%s %w (it has a summary.json)", dir, ErrRunExists)
	}
	return nil
}

// checkFinished returns ErrFinished when the run, resumed at step, has
// already done the steps asked for and written the summary of that step.
// A run that reached its last step but has no summary of it (it stopped
// during the final evaluation) is not finished.
func checkFinished(dir string, step, steps int) error {
	if step < steps {
		return nil
	}
	s, err := ReadSummary(dir)
	if err != nil || s.Steps != step {
		return nil
	}
	return fmt.Errorf("%s %w at step %d (asked for %d steps): nothing to do", dir, ErrFinished, step, steps)
}

// RunConfig returns the config of the run in dir as it was started (or last
// resumed), so that a resume continues that run whatever config file or
// flags it was started with: the config its newest loadable checkpoint
// stores, or, for a run stopped before its first checkpoint, its
// config.yaml. Out is set to dir. A directory without a run gives an error
// wrapping fs.ErrNotExist.
func RunConfig(dir string) (Config, error) {
	var cfg Config
	c, path, err := model.LatestCheckpoint(dir, nil)
	if err == nil {
		if cfg, err = checkpointConfig(c); err != nil {
			return Config{}, fmt.Errorf("%s: %w", path, err)
		}
	} else {
		cs, lerr := model.Checkpoints(dir)
		if lerr == nil && len(cs) > 0 {
			return Config{}, fmt.Errorf("run %s: %w", dir, err) // checkpoints, none loadable
		}
		if cfg, err = LoadConfig(filepath.Join(dir, "config.yaml")); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return Config{}, noRunError(dir)
			}
			return Config{}, err
		}
	}
	cfg.Out = dir
	return cfg, nil
}

// noRunError says that a directory holds no run; it matches fs.ErrNotExist.
type noRunError string

func (dir noRunError) Error() string {
	return fmt.Sprintf("no run in %s (no checkpoint, no config.yaml)", string(dir))
}

func (noRunError) Unwrap() error { return fs.ErrNotExist }

// ReadSummary reads a run directory's summary.json (an error wrapping
// fs.ErrNotExist if the run has not finished).
func ReadSummary(dir string) (*Summary, error) {
	b, err := os.ReadFile(filepath.Join(dir, model.SummaryFile))
	if err != nil {
		return nil, err
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, model.SummaryFile), err)
	}
	return &s, nil
}
