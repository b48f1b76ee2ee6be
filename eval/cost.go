package eval

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// CostReport is the training cost of position schemes on one budget: each
// trained from scratch for Steps steps of Batch x TrainLen tokens, once per
// round, the rounds alternating between the schemes so that a drift in the
// machine's speed reaches all of them alike (the paper's Table 1).
type CostReport struct {
	Processor string    `json:"processor"`
	Steps     int       `json:"steps"`
	Rounds    int       `json:"rounds"`
	Rows      []CostRow `json:"rows"`
}

// CostRow is one scheme's measurements: training tokens/s (from the
// second step on, evaluations left out) and peak resident memory of the
// training, one per round.
type CostRow struct {
	Label           string    `json:"label"` // the scheme, with its L in a grid
	TrainLen        int       `json:"train_len"`
	Batch           int       `json:"batch"`
	Params          int       `json:"params"`
	TokensPerSecond []float64 `json:"tokens_per_second"`
	PeakRSSBytes    []int64   `json:"peak_rss_bytes"`
}

// MedianTokensPerSecond is the median over rounds (the mean of the middle
// two for an even count).
func (r CostRow) MedianTokensPerSecond() float64 {
	v := slices.Clone(r.TokensPerSecond)
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

// PeakRSS is the largest peak over rounds.
func (r CostRow) PeakRSS() int64 { return slices.Max(append([]int64{0}, r.PeakRSSBytes...)) }

// WriteJSON writes the report, indented.
func (c CostReport) WriteJSON(w io.Writer) error { return writeIndented(w, c) }

// Markdown writes the cost table: per scheme the median tokens/s over
// rounds with every round's figure, the median relative to the first
// scheme's, and the peak training memory.
func (c CostReport) Markdown(w io.Writer) error {
	if len(c.Rows) == 0 {
		_, err := io.WriteString(w, "(no runs)\n")
		return err
	}
	var b strings.Builder
	rounds := fmt.Sprintf("%d rounds alternating between the schemes", c.Rounds)
	if c.Rounds == 1 {
		rounds = "one round"
	}
	fmt.Fprintf(&b, "Training cost on %s: each scheme trained from scratch for %d steps, %s; "+
		"tokens/s from the second step on (evaluations and checkpoints left out), median over rounds; peak resident memory of the training, "+
		"the largest over rounds.\n\n", c.Processor, c.Steps, rounds)
	first := c.Rows[0]
	fmt.Fprintf(&b, "| scheme | L | batch | parameters | tokens/s (median) | relative to %s | every round | peak RSS (MiB) |\n|---|---|---|---|---|---|---|---|\n", first.Label)
	for _, r := range c.Rows {
		var rounds []string
		for _, v := range r.TokensPerSecond {
			rounds = append(rounds, fmt.Sprintf("%.0f", v))
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.0f | %.3f | %s | %.0f |\n", r.Label, r.TrainLen, r.Batch, r.Params, r.MedianTokensPerSecond(),
			r.MedianTokensPerSecond()/first.MedianTokensPerSecond(), strings.Join(rounds, ", "), float64(r.PeakRSS())/(1<<20))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
