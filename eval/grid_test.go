package eval

import (
	"fmt"
	"strings"
	"testing"
)

func TestCostRowMedian(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		want float64
	}{{nil, 0}, {[]float64{5}, 5}, {[]float64{9, 1, 5}, 5}, {[]float64{4, 1, 3, 10}, 3.5}} {
		if got := (CostRow{TokensPerSecond: c.v}).MedianTokensPerSecond(); got != c.want {
			t.Errorf("median of %v = %v, want %v", c.v, got, c.want)
		}
	}
}

// In a grid, time to perplexity compares the groups at the window lengths
// whose validations two groups share, not at each one's own L.
func TestGridReachAtSharedLength(t *testing.T) {
	runs := []TrainedRun{
		{Pos: "alibi", Group: "alibi L=8", Seed: 1, TrainLen: 8, Validation: []ValPoint{
			{1, 100, 10, 9, 8}, {1, 100, 11, 8, 16}, {2, 200, 20, 3, 8}, {2, 200, 21, 2, 16}}},
		{Pos: "sinusoidal", Group: "sinusoidal L=16", Seed: 1, TrainLen: 16, Validation: []ValPoint{
			{1, 100, 15, 16, 16}, {2, 200, 30, 4, 16}}},
	}
	c := Compare(runs)
	if got := c.valLengths(); len(got) != 1 || got[0] != 16 {
		t.Fatalf("valLengths = %v, want [16]", got)
	}
	var b strings.Builder
	if err := c.GridMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	// The target at 16 is 4 (the highest last perplexity there); alibi L=8
	// reaches it at f = ln(8/4)/ln(8/2) = 1/2 of the way from step 1 to 2.
	for _, want := range []string{"Time to perplexity 4.000 at length 16", "| alibi L=8 | 2.000 | 150 | 16.0 |", "| sinusoidal L=16 | 4.000 | 200 | 30.0 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("grid report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "at length 8") {
		t.Errorf("a length only one group validated at has a table:\n%s", md)
	}
	var m strings.Builder
	c.Markdown(&m)
	if strings.Contains(m.String(), "Time to perplexity") {
		t.Errorf("the grid's comparison table mixes lengths in a time-to-perplexity table:\n%s", m.String())
	}
}

// The sweep table: a column per multiple of L (fractional ones too), the
// best length and how far past L it is; "to the end" when the longest
// length is the best.
func TestGridSweepTable(t *testing.T) {
	run := func(pos string, l int, ppl ...float64) TrainedRun {
		r := TrainedRun{Pos: pos, Group: fmt.Sprintf("%s L=%d", pos, l), Seed: 1, TrainLen: l}
		for i, m := range []float64{1, 1.125, 2} {
			r.Results = append(r.Results, Result{Len: int(m * float64(l)), PPL: ppl[i]})
		}
		return r
	}
	c := Compare([]TrainedRun{
		run("alibi", 8, 5, 4.9, 4.8), run("alibi", 16, 4.5, 4.4, 4.3),
		run("sinusoidal", 8, 5, 4.95, 9), run("sinusoidal", 16, 4.5, 6, 9),
	})
	var b strings.Builder
	if err := c.GridMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| L | 1L | 1.125L | 2L | best length | improves past L (tokens) |",
		"| 8 | 5.000 | 4.900 | 4.800 | 16 (2L) | to the end (≥ 8) |",
		"| 16 | 4.500 | 4.400 | 4.300 | 32 (2L) | to the end (≥ 16) |",
		"| 8 | 5.000 | 4.950 | 9.000 | 9 (1.125L) | 1 |",
		"| 16 | 4.500 | 6.000 | 9.000 | 16 (1L) | 0 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("grid report lacks %q:\n%s", want, b.String())
		}
	}
}

// The table by evaluation length puts runs of different L side by side at
// one length in tokens, with the seeds' lowest and highest.
func TestGridByLength(t *testing.T) {
	run := func(pos string, l int, seed uint64, ppl ...float64) TrainedRun {
		r := TrainedRun{Pos: pos, Group: fmt.Sprintf("%s L=%d", pos, l), Seed: seed, TrainLen: l}
		for i, m := range []int{1, 2} {
			r.Results = append(r.Results, Result{Len: m * l, PPL: ppl[i]})
		}
		return r
	}
	c := Compare([]TrainedRun{
		run("alibi", 8, 1, 5, 4), run("alibi", 8, 2, 6, 5),
		run("sinusoidal", 16, 1, 4.5, 9), run("sinusoidal", 16, 2, 4.25, 8),
	})
	var b strings.Builder
	if err := c.GridMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"(mean of 2 seeds, lowest–highest seed in brackets)",
		"| run | L | 8 | 16 | 32 |",
		"| alibi L=8 | 8 | 5.500 (5.000–6.000) | 4.500 (4.000–5.000) | – |",
		"| sinusoidal L=16 | 16 | – | 4.375 (4.250–4.500) | 8.500 (8.000–9.000) |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("grid report lacks %q:\n%s", want, b.String())
		}
	}
}
