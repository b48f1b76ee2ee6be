package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model/osutil"
	"github.com/alibi-go/alibi/train"
)

// lenses reports whether the experiment runs any context lens.
func (o options) lenses() bool {
	return o.distances != nil || o.sliding() || o.attention || o.recall != nil
}

// sliding reports whether the stride sweep has a sliding stride.
func (o options) sliding() bool { return len(o.strides) > 1 }

// contextReport is what the context lenses measured, for every run: the
// JSON of context.json, beside report.json.
type contextReport struct {
	// Strides holds every run's perplexity at every length under every
	// stride of the sweep.
	Strides eval.Report        `json:"strides"`
	Passkey eval.PasskeyReport `json:"passkey"`
	// Attention holds every run's attention statistics at every length.
	Attention eval.AttentionReport `json:"attention"`
	// Recall holds every run's scores on the retrieval tasks (--recall).
	Recall eval.RecallReport `json:"recall,omitempty"`
}

// strideResults returns a run's results at every length under every stride
// of the experiment, or an error naming the first one it lacks.
func strideResults(c cell, o options, made madeBy) (eval.RunReport, error) {
	have, weights, err := readEvaluations(c.cfg.Out, o, made)
	if err != nil {
		return eval.RunReport{}, err
	}
	rr := eval.RunReport{Run: c.cfg.Out, Pos: c.cfg.Model.Label(), TrainLen: c.cfg.Model.TrainLen, Weights: weights}
	for _, l := range o.lengths(c.cfg) {
		seen := map[int]bool{}
		for _, spec := range o.strides {
			st := spec.Stride(l)
			res, ok := have[evalKey{l, st}]
			if !ok {
				return eval.RunReport{}, fmt.Errorf("not evaluated at length %d with stride %s", l, spec)
			}
			if !seen[st] { // 1/k of a short length can be 1tok
				seen[st] = true
				rr.Results = append(rr.Results, res)
			}
		}
	}
	return rr, nil
}

// write saves context.json and context.png in dir; the figure is drawn from
// what the JSON holds.
func (c contextReport) write(dir string) error {
	compact := c
	compact.Strides = c.Strides.Compact() // the full arrays stay in each run's eval.json
	b, err := json.MarshalIndent(compact, "", "  ")
	if err != nil {
		return err
	}
	if err := osutil.WriteFileAtomic(filepath.Join(dir, "context.json"), append(b, '\n')); err != nil {
		return err
	}
	if len(compact.Strides.Runs) == 0 && len(compact.Passkey.Runs) == 0 && len(compact.Attention.Runs) == 0 {
		return nil // the retrieval tasks alone: their tables are in report.md
	}
	// Drawn from what context.json holds, so that --redraw draws it again.
	return eval.ContextPlot(filepath.Join(dir, "context.png"), compact.Strides, compact.Passkey, compact.Attention)
}

// markdown writes the lenses' sections of the report.
func (c contextReport) markdown(b *strings.Builder, cfg train.Config, o options) {
	b.WriteString("## Does the model use the context?\n\n![stride sweep, passkey accuracy vs distance](context.png)\n\n")
	if len(c.Strides.Runs) > 0 {
		scored := "the whole validation split"
		if o.maxTokens > 0 {
			scored = fmt.Sprintf("the first %d tokens (or all, if fewer) of the validation split", o.maxTokens)
		}
		fmt.Fprintf(b, "### Stride sweep\n\nPerplexity per byte over %s, at each length with non-overlapping windows and with sliding windows "+
			"of each stride (%s). Non-overlapping windows give the early tokens of every window little context; with a sliding stride S every "+
			"token after the first window is predicted from at least len-S+1 tokens (stride 1: exactly the len tokens before it), so a scheme that uses a longer context "+
			"gets better as the length grows, and one that only survives it stays flat.\n\n", scored, o.strideList)
		c.Strides.SweepMarkdown(b)
		b.WriteString("\nScored tokens per second of each sliding evaluation (and its wall time): a window that scores S tokens runs its last layer " +
			"and the head on those S rows alone, the other layers on every row. Timings are those of the run, on whatever else the machine was doing.\n\n")
		c.Strides.SweepSpeedMarkdown(b)
		b.WriteString("\n")
	}
	if len(c.Attention.Runs) > 0 {
		b.WriteString("### Attention past L\n\nPer layer, the share of attention on keys at distance >= L (never seen in training), averaged over the heads " +
			"and over the queries at positions >= L, at each length (in brackets: the largest share of any head). Per head, with the mean " +
			"attended distance and the entropy, in context.json.\n\n")
		c.Attention.LayerMarkdown(b)
		b.WriteString("\n")
	}
	if len(c.Passkey.Runs) > 0 {
		lag := c.Passkey.Runs[0].Lag() // one config, so one tokenizer
		fmt.Fprintf(b, "### Retrieval at a distance (passkey)\n\n%d episodes per distance, the key at depths %v cycling, filler from each run's training split. "+
			"The distance D counts the tokens from the end of the key statement to the answer; the nearest copy of each digit lies D+%d tokens "+
			"before the position that predicts it, so from D = %d on, copying the key needs attention at distances training never showed (L = %d). "+
			"The effective context length is the largest distance whose accuracy is at least half the run's own accuracy at distances up to L/2 = %d.\n\n",
			o.episodes, eval.DefaultPasskeyDepths, lag, cfg.Model.TrainLen-lag, cfg.Model.TrainLen, cfg.Model.TrainLen/2)
		c.Passkey.Markdown(b)
		b.WriteString("\n")
	}
	if len(c.Recall.Runs) > 0 {
		fmt.Fprintf(b, "### Recall among many keys (%s)\n\n%d episodes per task and length, filler from each run's training split. "+
			"mqar: key-value pairs, then keys asked again (up to %d per episode); multikey: %d needles of different keys in the filler, one asked for. "+
			"An answer is right when every one of its tokens is the model's most probable given the tokens before it. "+
			"The effective context is the longest length whose accuracy is at least half the run's own accuracy up to L = %d.\n\n",
			strings.Join(o.recall, ", "), o.recallEpisodes, data.MQARQueries, data.MultiKeyNeedles, cfg.Model.TrainLen)
		c.Recall.Markdown(b)
		b.WriteString("\n")
	}
}
