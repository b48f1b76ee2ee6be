package eval

import (
	"strings"
	"testing"

	"github.com/alibi-go/alibi/data"
)

// LongestPrompt is the length of the deepest episode's prompt,
// with data.Passkey's rounding: distance 41, depth 0.5: before = round(1.5)
// = 2, 2 + 58 + 41 = 101.
func TestLongestPromptRounds(t *testing.T) {
	gen, err := data.NewTokenPasskey(fillerIDs, data.ByteTokenizer{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := gen.Episode(41, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if got := longestPrompt(41, data.MinPasskeyDistance, []float64{0, 0.5}); got != len(e.Prompt) || got != 101 {
		t.Errorf("longestPrompt(41, {0, 0.5}) = %d, the episode's prompt %d, want 101", got, len(e.Prompt))
	}
}

// The cache part of PasskeyBytes covers what the cache holds: 100 tokens
// in chunks of 64 grow it to 128 rows.
func TestPasskeyBytesCoversCache(t *testing.T) {
	m := testModel(t, "alibi")
	gen, err := data.NewTokenPasskey(fillerIDs, data.ByteTokenizer{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := gen.Episode(38, 0) // prompt 96 bytes, 100 tokens with 4 digits
	if err != nil {
		t.Fatal(err)
	}
	s := &cachedScorer{m: m, cache: m.NewCache(1), chunk: 64}
	defer s.close()
	if _, err := s.answerLogits(e.Prompt, e.Answer); err != nil {
		t.Fatal(err)
	}
	n := longestPrompt(38, data.MinPasskeyDistance, []float64{0})
	est := PasskeyBytes(m, n, 64) - m.EvalGraphBytes(1, min(64, n))
	if got := int64(s.cache.Bytes()); got > est {
		t.Errorf("the cache holds %d bytes, the estimate allows %d", got, est)
	}
}

// The sweep lists a length's strides from the longest down.
func TestSweepMarkdownOrder(t *testing.T) {
	r := Report{Runs: []RunReport{{Pos: "alibi", TrainLen: 8, Results: []Result{
		{Len: 16, Protocol: NonOverlap, PPL: 3}, {Len: 16, Protocol: Sliding, Stride: 2, PPL: 2.5}, {Len: 16, Protocol: Sliding, Stride: 8, PPL: 2.8}}}}}
	var b strings.Builder
	if err := r.SweepMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	want := "| eval length (tokens) | windows | alibi |\n|---|---|---|\n| 16 (2x L) | non-overlapping | 3.000 |\n| 16 (2x L) | stride 8 (len/2) | 2.800 |\n| 16 (2x L) | stride 2 (len/8) | 2.500 |\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// The largest pass has as many windows as SlidingWindows makes:
// 101 tokens, length 32, stride 16: windows end at 32, 48, 64, 80, 96, 100.
func TestLargestPassSliding(t *testing.T) {
	ws, err := data.SlidingWindows(101, 32, 16)
	if err != nil {
		t.Fatal(err)
	}
	l, batch := largestPass(101, Options{Len: 32, Stride: 16, BatchTokens: 4096})
	if l != 32 || batch != len(ws) || batch != 6 {
		t.Errorf("largest pass %d windows of %d, want %d of 32", batch, l, len(ws))
	}
}

// The relative column is the row's median over the first row's.
func TestCostRelative(t *testing.T) {
	c := CostReport{Processor: "x", Steps: 1, Rounds: 1, Rows: []CostRow{
		{Label: "alibi", TokensPerSecond: []float64{100}}, {Label: "rope", TokensPerSecond: []float64{50}}}}
	var b strings.Builder
	if err := c.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| rope | 0 | 0 | 0 | 50 | 0.500 |") {
		t.Errorf("rope at half alibi's speed is not 0.500:\n%s", b.String())
	}
}

// A length not every seed was evaluated at has no statistics.
func TestCompareSkipsPartialLengths(t *testing.T) {
	c := Compare([]TrainedRun{run("alibi", 1, 100, 4, 8), run("alibi", 2, 100, 5)})
	if l := c.Schemes[0].Lengths; len(l) != 1 || l[0].Len != 8 || l[0].Mean != 4.5 {
		t.Errorf("lengths %+v, want length 8 alone, mean 4.5", l)
	}
}

// Validations without a length are at the training length only.
func TestValidationAtOtherLength(t *testing.T) {
	r := TrainedRun{TrainLen: 8, Validation: []ValPoint{{Step: 1, PPL: 5}, {Step: 1, PPL: 6, Len: 16}}}
	if v := r.ValidationAt(16); len(v) != 1 || v[0].PPL != 6 {
		t.Errorf("validation at 16: %+v, want the one point of PPL 6", v)
	}
	if v := r.ValidationAt(0); len(v) != 1 || v[0].PPL != 5 {
		t.Errorf("validation at L: %+v, want the one point of PPL 5", v)
	}
}
