package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/alibi-go/alibi/cmd/internal/cli"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model/osutil"
)

// recallTask scores every opened run on a retrieval task (o.Task), with
// filler from each run's training split, episodes in its tokens, at
// o.Lengths (default L, 2L, 4L, 8L and 16L of each run), and writes the
// report.
func recallTask(opened []*eval.Trained, o eval.RecallOptions, jsonPath string, stdout, stderr io.Writer) error {
	var report eval.RecallReport
	terminal := cli.IsTerminal(stderr)
	for _, r := range opened {
		filler, err := r.TrainingTokens(cli.CorpusProgress(stderr, terminal))
		if err != nil {
			return err
		}
		ro := o
		ro.Tokenizer = r.Tokenizer
		if len(ro.Lengths) == 0 {
			for _, m := range []int{1, 2, 4, 8, 16} {
				ro.Lengths = append(ro.Lengths, m*r.Model.Config.TrainLen)
			}
		}
		res, err := eval.Recall(r.Model, filler, ro)
		if err != nil {
			return fmt.Errorf("%s: %w", r.Name, err)
		}
		res.Run = r.Label()
		fmt.Fprintf(stderr, "%s (%s): %s effective context %d tokens (accuracy %.2f up to L), %.1fs\n",
			res.Run, res.Pos, res.Task, res.EffectiveContext, res.ShortAccuracy, res.WallSeconds)
		report.Runs = append(report.Runs, res)
	}
	if err := report.Markdown(stdout); err != nil {
		return err
	}
	if jsonPath != "" {
		b, err := json.MarshalIndent(report, "", "  ")
		if err != nil {
			return err
		}
		if err := osutil.WriteFileAtomic(jsonPath, append(b, '\n')); err != nil {
			return fmt.Errorf("write %s: %w", jsonPath, err)
		}
	}
	return nil
}
