package eval

import (
	"math"
	"strings"
	"testing"
)

func TestReachOf(t *testing.T) {
	v := []ValPoint{{1, 100, 10, 8, 0}, {2, 200, 20, 4, 0}, {3, 300, 30, 2, 0}}
	for _, c := range []struct {
		target          float64
		tokens, seconds float64
		ok              bool
	}{
		{10, 100, 10, true},            // already there at the first validation
		{8, 100, 10, true},             // exactly the first
		{4, 200, 20, true},             // exactly the second
		{math.Sqrt(32), 150, 15, true}, // halfway from 8 to 4 in log perplexity
		{math.Pow(2, 1.25), 275, 27.5, true},
		{1.5, 0, 0, false}, // never
	} {
		got := ReachOf(v, c.target)
		if got.OK != c.ok || math.Abs(got.Tokens-c.tokens) > 1e-9 || math.Abs(got.Seconds-c.seconds) > 1e-9 {
			t.Errorf("ReachOf(%g) = %+v, want %v tokens, %v s, %v", c.target, got, c.tokens, c.seconds, c.ok)
		}
	}
}

// The table gives each scheme's mean over seeds at the highest last
// validation perplexity, without seconds when timings are left out.
func TestReachMarkdown(t *testing.T) {
	c := Comparison{
		Runs: []TrainedRun{
			{Pos: "a", Seed: 1, Validation: []ValPoint{{1, 100, 10, 8, 0}, {2, 200, 20, 4, 0}}},
			{Pos: "a", Seed: 2, Validation: []ValPoint{{1, 100, 12, 8, 0}, {2, 200, 24, 2, 0}}},
			{Pos: "b", Seed: 1, Validation: []ValPoint{{1, 100, 5, 16, 0}, {2, 200, 10, 4, 0}}},
			{Pos: "b+ext", Seed: 1}, // an extension column: no training of its own
		},
		Schemes: []Scheme{{Pos: "a", Seeds: []uint64{1, 2}}, {Pos: "b", Seeds: []uint64{1}}, {Pos: "b+ext", Seeds: []uint64{1}}},
	}
	if got := c.ReachTarget(); got != 4 {
		t.Fatalf("ReachTarget = %v, want 4 (the highest last validation)", got)
	}
	var b strings.Builder
	c.reachMarkdown(&b, 0)
	// a: seed 1 reaches 4 at 200 tokens, 20 s; seed 2 at f = ln2/ln4 = 1/2: 150 tokens, 18 s.
	// b: 200 tokens, 10 s.
	for _, want := range []string{"Time to perplexity 4.000", "| a | 3.000 | 175 | 19.0 |", "| b | 4.000 | 200 | 10.0 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "b+ext") {
		t.Errorf("an extension column has a row:\n%s", b.String())
	}
	b.Reset()
	c.WithoutTimings().reachMarkdown(&b, 0)
	if !strings.Contains(b.String(), "| a | 3.000 | 175 |\n") || strings.Contains(b.String(), "seconds") {
		t.Errorf("without timings:\n%s", b.String())
	}
}
