package eval

import (
	"fmt"
	"path/filepath"

	"github.com/alibi-go/alibi/model"
)

// Weights says which weights made a result: the checkpoint file, the
// training step it was saved at, the steps of its run, and whether the run
// finished. Reports carry it beside every run's results.
type Weights struct {
	Checkpoint string `json:"checkpoint"` // the file loaded, as opened
	// Step is the training step the checkpoint was saved at, and Steps the
	// steps its run was started (or last resumed) for; both 0 for a
	// checkpoint without training state (model.NewCheckpoint's).
	Step  int `json:"step,omitempty"`
	Steps int `json:"steps,omitempty"`
	// Finished says that the checkpoint's run finished: it did every step
	// and wrote its summary, with no checkpoint after the one it finished
	// at. The run's final model is then the checkpoint of step Steps.
	Finished bool `json:"finished"`
	// InProgress says that another process was writing the run when it was
	// read (the commands check the run's lock).
	InProgress bool `json:"in_progress,omitempty"`
}

// Final reports whether the weights are the final model of a finished run
// that no process is writing.
func (w Weights) Final() bool { return w.Finished && w.Step == w.Steps && !w.InProgress }

// Status says how far the weights' run had got, for labels: "step 800 of
// 800, finished", "unfinished at step 755 of 800", "in progress at step 755
// of 800", "earlier checkpoint, step 400 of 800" (of a finished run),
// "step 800 of 800" for the last step of a run not known to have finished
// (a file outside its run directory), or "" for a checkpoint without
// training state.
func (w Weights) Status() string {
	if w.Step == 0 && w.Steps == 0 {
		return ""
	}
	of := fmt.Sprintf("step %d", w.Step)
	if w.Steps > 0 {
		of += fmt.Sprintf(" of %d", w.Steps)
	}
	switch {
	case w.InProgress:
		return "in progress at " + of
	case w.Final():
		return of + ", finished"
	case w.Finished:
		return "earlier checkpoint, " + of
	case w.Step == w.Steps:
		return of // trained to the end; a checkpoint outside its run, or one whose final evaluation did not finish
	}
	return "unfinished at " + of
}

// Describe is one line naming the weights: the checkpoint file and its
// Status, "runs/tiny/checkpoints/step-00000800.safetensors (step 800 of
// 800, finished)".
func (w Weights) Describe() string {
	if s := w.Status(); s != "" {
		return fmt.Sprintf("%s (%s)", w.Checkpoint, s)
	}
	return w.Checkpoint
}

// runState is what a run directory says of its end: the step it finished
// at (its summary's), whether it finished, and its newest checkpoint file's
// step. A run finished when it has a summary and no checkpoint newer than
// the step the summary names (it may have been resumed for more steps
// since).
type runState struct {
	finished    bool
	finalStep   int
	finalPath   string
	checkpoints []string
}

// readRunState reads dir's summary and checkpoint files.
func readRunState(dir string) (runState, error) {
	var s runState
	var err error
	if s.checkpoints, err = model.Checkpoints(dir); err != nil {
		return s, err
	}
	step, ok, err := model.FinishedStep(dir)
	if err != nil || !ok {
		return s, err
	}
	for _, c := range s.checkpoints {
		if n, ok := model.CheckpointStep(c); ok && n > step {
			return s, nil // resumed for more steps after finishing
		}
	}
	s.finished, s.finalStep, s.finalPath = true, step, model.CheckpointPath(dir, step)
	return s, nil
}

// weightsOf returns the Weights of checkpoint c, loaded from path, in the
// run whose state is s.
func weightsOf(c *model.Checkpoint, path string, s runState) Weights {
	w := Weights{Checkpoint: path, Finished: s.finished}
	w.Step, w.Steps, _ = c.TrainingStep()
	if s.finished && w.Steps == 0 {
		w.Steps = s.finalStep
	}
	return w
}

// runOf returns the run directory of a checkpoint file: the folder that
// holds its model.CheckpointDir, or "" if the file is not in one.
func runOf(path string) string {
	dir := filepath.Dir(path)
	if filepath.Base(dir) != model.CheckpointDir {
		return ""
	}
	return filepath.Dir(dir)
}

// FinalCheckpointError is OpenRun's error for a run that finished but whose
// final checkpoint cannot be loaded: scoring the newest checkpoint that
// loads would report an older model as the run's. Good names that one
// ("" if none loads), to be opened on purpose with OpenCheckpoint.
type FinalCheckpointError struct {
	Run       string // the run directory
	FinalStep int    // the step the run finished at
	Final     string // the final checkpoint's path
	Err       error  // why it cannot be loaded
	Good      string // the newest checkpoint that loads, or ""
	GoodStep  int    // Good's training step
}

func (e *FinalCheckpointError) Error() string {
	s := fmt.Sprintf("run %s finished at step %d but its final checkpoint cannot be read (%v)", e.Run, e.FinalStep, e.Err)
	if e.Good == "" {
		return s + "; no older checkpoint of it loads either"
	}
	return fmt.Sprintf("%s; the newest good checkpoint is %s (step %d)", s, e.Good, e.GoodStep)
}

// Unwrap returns the error of loading the final checkpoint.
func (e *FinalCheckpointError) Unwrap() error { return e.Err }
