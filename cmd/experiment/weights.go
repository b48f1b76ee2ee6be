package main

import (
	"fmt"
	"path/filepath"

	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/train"
)

// madeBy says which of a run's saved evaluations can be reused: those made
// by its final checkpoint. Every evaluation file names the weights that
// made it (eval.Weights); a run continued for more steps has new final
// weights, and its older evaluations are made again.
type madeBy struct {
	// final are the run's final weights; nil accepts any.
	final *eval.Weights
	// trained says that the run trained in this process: no evaluation
	// saved before is of the model it finished with, whether or not its
	// file names its weights.
	trained bool
}

// reuses reports whether an evaluation file that names the weights w (nil:
// a file written before evaluation files named them) holds results of the
// run's final model: the same checkpoint file name, at the same step.
func (m madeBy) reuses(w *eval.Weights) bool {
	switch {
	case m.trained:
		return false
	case w == nil || m.final == nil:
		return true
	}
	return w.Step == m.final.Step && filepath.Base(w.Checkpoint) == filepath.Base(m.final.Checkpoint)
}

// finalWeights are the weights a finished run's summary names: its final
// checkpoint.
func finalWeights(s *train.Summary) *eval.Weights {
	return &eval.Weights{Checkpoint: s.Checkpoint, Step: s.Steps, Steps: s.Steps, Finished: true}
}

// scoredFrom is the report's sentence naming the checkpoints its runs were
// scored from: one sentence when every run was scored from its final
// checkpoint at the same step, else one line per run; "" when no run's
// evaluations name their weights (files of an older version).
func scoredFrom(runs []eval.TrainedRun) string {
	var named []eval.TrainedRun
	same := true
	for _, r := range runs {
		if r.Weights == nil {
			continue
		}
		named = append(named, r)
		w0, w := named[0].Weights, r.Weights
		same = same && w.Final() && w.Step == w0.Step && filepath.Base(w.Checkpoint) == filepath.Base(w0.Checkpoint)
	}
	switch {
	case len(named) == 0:
		return ""
	case same && len(named) == len(runs):
		w := named[0].Weights
		return fmt.Sprintf("Every run finished its %d steps and is scored from its final checkpoint, %s in its directory.\n\n",
			w.Step, filepath.Join("checkpoints", filepath.Base(w.Checkpoint)))
	}
	s := ""
	for _, r := range named {
		s += fmt.Sprintf("%s is scored from %s (%s).\n\n", r.Run, filepath.Join("checkpoints", filepath.Base(r.Weights.Checkpoint)), r.Weights.Status())
	}
	return s
}
