package eval

import (
	"math"
	"strings"
	"testing"
)

// ImprovesPast on constructed losses by position whose lowest point is
// known.
func TestImprovesPast(t *testing.T) {
	const l = 64 // smoothing width w = 8
	vee := func(bottom, n int) []float64 {
		loss := make([]float64, n)
		for p := range loss {
			loss[p] = 1 + 0.01*math.Abs(float64(p-bottom))
		}
		return loss
	}
	falling := make([]float64, 256)
	for p := range falling {
		falling[p] = 2 - 0.001*float64(p)
	}
	withGap := vee(100, 256)
	for p := 90; p < 95; p++ {
		withGap[p] = math.NaN() // positions no window scored
	}
	for _, c := range []struct {
		name        string
		loss        []float64
		past        int
		stillFallin bool
	}{
		{"lowest 40 past the last training position", vee(63+40, 256), 40, false},
		{"lowest inside the training range", vee(30, 256), 0, false},
		{"lowest at the training range's end", vee(63, 256), 0, false},
		{"still falling at the window's end", falling, 256 - 4 - 1 - 63, true},
		{"unscored positions skipped", withGap, 100 - 63, false},
	} {
		past, f := ImprovesPast(c.loss, l)
		if past != c.past || f != c.stillFallin {
			t.Errorf("%s: ImprovesPast = %d, %v; want %d, %v", c.name, past, f, c.past, c.stillFallin)
		}
	}
}

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
