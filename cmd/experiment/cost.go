package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/alibi-go/alibi/cmd/internal/cli"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model/osutil"
	"github.com/alibi-go/alibi/train"
)

// costDir is where round k of a run's cost measurement trains:
// <out>/cost/<the run's place in out>/round<k>.
func costDir(o options, c cell, k int) string {
	rel, err := filepath.Rel(o.out, c.cfg.Out)
	if err != nil {
		rel = filepath.Base(c.cfg.Out)
	}
	return filepath.Join(o.out, "cost", rel, fmt.Sprintf("round%d", k))
}

// costConfig is a run's config for one cost round: costSteps steps from
// scratch, no periodic validation or checkpoint before the end, and a
// final evaluation of one batch's tokens, so that the round is the
// training step's cost.
func costConfig(o options, c cell, k int) train.Config {
	cfg := c.cfg
	cfg.Out = costDir(o, c, k)
	cfg.Train.Steps = o.costSteps
	cfg.Train.EvalEvery, cfg.Train.CheckpointEvery, cfg.Train.KeepCheckpoints = o.costSteps, o.costSteps, 1
	cfg.Train.FinalEvalTokens = cfg.Train.Batch * cfg.Model.TrainLen
	return cfg
}

// measureCost trains every run of the grid for --cost-steps steps,
// --cost-rounds times, round by round so that each round passes through
// every run before the next begins (a round already finished is reused),
// then writes the cost report.
func measureCost(ctx context.Context, o options, cells []cell, stdout, stderr io.Writer) int {
	if !o.reportOnly {
		terminal := cli.IsTerminal(stderr)
		for k := 1; k <= o.costRounds; k++ {
			for _, c := range cells {
				cfg := costConfig(o, c, k)
				if s, err := train.ReadSummary(cfg.Out); err == nil && s.Steps == cfg.Train.Steps {
					fmt.Fprintf(stderr, "%s: reusing round %d\n", cfg.Out, k)
					continue
				}
				debug.FreeOSMemory() // so that each round's peak is its own
				fmt.Fprintf(stderr, "%s: cost round %d of %d, %d steps\n", c.label, k, o.costRounds, o.costSteps)
				_, err := train.Train(ctx, cfg, train.Options{Resume: true, Log: stderr, Terminal: terminal,
					CorpusProgress: cli.CorpusProgress(stderr, terminal)})
				if errors.Is(err, train.ErrInterrupted) {
					fmt.Fprintf(stderr, "experiment: %v\nrun the same command again to continue\n", err)
					return 130
				}
				if err != nil {
					fmt.Fprintf(stderr, "experiment: %s: %v\n", cfg.Out, err)
					return 1
				}
			}
		}
	}
	rep := eval.CostReport{Processor: osutil.Processor(), Steps: o.costSteps, Rounds: o.costRounds}
	for _, c := range cells {
		label := c.label
		if c.group != "" {
			label = c.group
		}
		row := eval.CostRow{Label: label, TrainLen: c.cfg.Model.TrainLen, Batch: c.cfg.Train.Batch}
		for k := 1; k <= o.costRounds; k++ {
			dir := costDir(o, c, k)
			s, err := train.ReadSummary(dir)
			if err != nil || s.Steps != o.costSteps {
				fmt.Fprintf(stderr, "experiment: %s has not finished its %d steps, so no cost report was written; run without --report-only to train it\n", dir, o.costSteps)
				return 1
			}
			row.Params = s.Params
			row.TokensPerSecond = append(row.TokensPerSecond, s.TokensPerSecond)
			row.PeakRSSBytes = append(row.PeakRSSBytes, s.PeakRSSBytes)
		}
		rep.Rows = append(rep.Rows, row)
	}
	var md, js bytes.Buffer
	fmt.Fprintf(&md, "# Training cost: %s\n\n", strings.Join(o.schemes(), ", "))
	if err := rep.Markdown(&md); err != nil {
		fmt.Fprintf(stderr, "experiment: %v\n", err)
		return 1
	}
	fmt.Fprintf(&md, "\n## Reproduce\n\n```sh\n%s\n```\n", reproduce(o))
	if err := rep.WriteJSON(&js); err != nil {
		fmt.Fprintf(stderr, "experiment: %v\n", err)
		return 1
	}
	for _, w := range []struct {
		name string
		data []byte
	}{{"cost.json", js.Bytes()}, {"cost.md", md.Bytes()}} {
		if err := osutil.WriteFileAtomic(filepath.Join(o.out, w.name), w.data); err != nil {
			fmt.Fprintf(stderr, "experiment: %v\n", err)
			return 1
		}
	}
	fmt.Fprint(stdout, md.String())
	return 0
}
