package eval

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(pos string, seed uint64, tps float64, ppl ...float64) TrainedRun {
	r := TrainedRun{Run: pos, Pos: pos, Seed: seed, TrainLen: 8, Params: 100, TokensPerSecond: tps,
		Loss: []LossPoint{{1, 5}, {2, 4}}}
	for i, p := range ppl {
		r.Results = append(r.Results, Result{Len: 8 << i, Protocol: NonOverlap, PPL: p, PositionLoss: []float64{1, math.NaN()}})
	}
	return r
}

// Statistics over seeds, worked out by hand: ppl 4, 5, 9 at length 8 has
// mean 6, min 4, max 9, sample standard deviation sqrt(((4-6)^2 + (5-6)^2 +
// (9-6)^2)/2) = sqrt(7); at length 16, 8, 10, 12 has mean 10, relative 10/6.
func TestCompare(t *testing.T) {
	c := Compare([]TrainedRun{
		run("alibi", 1, 100, 4, 8), run("rope", 1, 50, 3), run("alibi", 2, 200, 5, 10), run("alibi", 3, 300, 9, 12),
	})
	if len(c.Schemes) != 2 || c.Schemes[0].Pos != "alibi" || c.Schemes[1].Pos != "rope" {
		t.Fatalf("schemes %+v", c.Schemes)
	}
	a := c.Schemes[0]
	if len(a.Seeds) != 3 || a.TokensPerSecond != 200 || len(a.Lengths) != 2 {
		t.Fatalf("alibi %+v", a)
	}
	want := []LengthStats{{Len: 8, Mean: 6, Min: 4, Max: 9, Std: math.Sqrt(7), Relative: 1}, {Len: 16, Mean: 10, Min: 8, Max: 12, Std: 2, Relative: 10.0 / 6}}
	for i, w := range want {
		g := a.Lengths[i]
		if g.Len != w.Len || math.Abs(g.Mean-w.Mean) > 1e-12 || g.Min != w.Min || g.Max != w.Max || math.Abs(g.Std-w.Std) > 1e-12 || math.Abs(g.Relative-w.Relative) > 1e-12 {
			t.Errorf("length %d: %+v, want %+v", w.Len, g, w)
		}
	}
	var md bytes.Buffer
	if err := c.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"mean of 3 seeds (min–max)", "| 8 | 6.000 (4.000–9.000) | 3.000 |", "| 16 | 10.000 (8.000–12.000) | – |", "| 16 | 1.667 | – |", "| alibi | 100 | 200 | 1, 2, 3 |"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("markdown lacks %q:\n%s", s, md.String())
		}
	}
	// JSON round trip, NaN as null.
	var js bytes.Buffer
	if err := c.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"position_loss": [
            1,
            null
          ]`) {
		t.Errorf("NaN not written as null:\n%s", js.String())
	}
	var back Comparison
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Runs) != 4 || back.Runs[2].Results[1].PPL != 10 || !math.IsNaN(back.Runs[0].Results[0].PositionLoss[1]) || back.Schemes[0].Lengths[0].Std != c.Schemes[0].Lengths[0].Std {
		t.Errorf("round trip: %+v", back.Runs[0])
	}
	png := filepath.Join(t.TempDir(), "c.png")
	if err := c.Plot(png); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(png); err != nil || st.Size() < 5000 {
		t.Fatalf("plot: %v", err)
	}
}

// The report names the processors the runs trained on, with their kernels
// where the runs name them, each once, and no line when no run names one;
// WithoutTimings drops them with the speeds.
func TestCompareNamesProcessors(t *testing.T) {
	a, b, c := run("alibi", 1, 100, 4), run("alibi", 2, 100, 5), run("rope", 1, 100, 6)
	a.Processor, b.Processor, c.Processor = "Zen 4, 2 CPUs", "Zen 5, 2 CPUs", "Zen 4, 2 CPUs"
	md := func(cmp Comparison) string {
		var buf bytes.Buffer
		if err := cmp.Markdown(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	cmp := Compare([]TrainedRun{a, b, c})
	if got := md(cmp); !strings.Contains(got, "\nTrained on: Zen 4, 2 CPUs; Zen 5, 2 CPUs.\n") {
		t.Errorf("report does not name the two processors once each:\n%s", got)
	}
	if got := md(cmp.WithoutTimings()); strings.Contains(got, "Trained on") {
		t.Errorf("report without timings names a processor:\n%s", got)
	}
	// With the kernels the summaries name: a machine on two kernels is
	// listed twice.
	a.Kernels, b.Kernels, c.Kernels = "avx512", "avx512", "avx512, bf16 on avx512_bf16"
	if got := md(Compare([]TrainedRun{a, b, c})); !strings.Contains(got, "\nTrained on: Zen 4, 2 CPUs (avx512); Zen 5, 2 CPUs (avx512); Zen 4, 2 CPUs (avx512, bf16 on avx512_bf16).\n") {
		t.Errorf("report does not name the processors with their kernels:\n%s", got)
	}
	if got := md(Compare([]TrainedRun{a, b, c}).WithoutTimings()); strings.Contains(got, "Trained on") || strings.Contains(got, "avx512") {
		t.Errorf("report without timings names a processor or kernels:\n%s", got)
	}
	a.Processor, b.Processor, c.Processor = "", "", ""
	if got := md(Compare([]TrainedRun{a, b, c})); strings.Contains(got, "Trained on") {
		t.Errorf("report names a processor no run has:\n%s", got)
	}
}

// Buckets of the losses by position: log-spaced, NaN left out, an empty
// bucket null; a compact result's JSON has the buckets and no array, and
// reads back.
func TestBucketPositions(t *testing.T) {
	nan := math.NaN()
	loss := []float64{1, 2, 3, 5, nan, 7, nan, nan, 9, 9, 9}
	got := BucketPositions(loss)
	want := []struct {
		from, to int
		loss     float64 // NaN: null
	}{{0, 1, 1}, {1, 2, 2}, {2, 4, 4}, {4, 8, 7}, {8, 11, 9}}
	if len(got) != len(want) {
		t.Fatalf("%d buckets, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.From != w.from || g.To != w.to || g.Loss == nil || *g.Loss != w.loss {
			t.Errorf("bucket %d: %+v, want %+v", i, g, w)
		}
	}
	if b := BucketPositions([]float64{1, nan, nan}); len(b) != 3 || b[1].Loss != nil || b[2].Loss != nil {
		t.Errorf("a bucket with no scored position: %+v", b)
	}
	x := Result{Len: 11, PPL: 3, PositionLoss: loss}.Compact()
	js, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), "position_loss") || !strings.Contains(string(js), `"position_buckets":[{"from":0,"to":1,"loss":1}`) {
		t.Errorf("compact JSON: %s", js)
	}
	var back Result
	if err := json.Unmarshal(js, &back); err != nil || back.PositionLoss != nil || len(back.PositionBuckets) != 5 || back.PPL != 3 {
		t.Errorf("read back: %+v, %v", back, err)
	}
	// The full form is unchanged.
	full, _ := json.Marshal(Result{Len: 2, PositionLoss: []float64{1, nan}})
	if !strings.Contains(string(full), `"position_loss":[1,null]`) || strings.Contains(string(full), "buckets") {
		t.Errorf("full JSON: %s", full)
	}
}

// A table of runs of different tokenizers says what each length in tokens
// is in bytes; one of a single tokenizer does not.
func TestMarkdownMixedTokenizers(t *testing.T) {
	rep := Report{Runs: []RunReport{
		{Run: "runs/tiny", Pos: "alibi", TrainLen: 128, Tokenizer: "bytes (256 tokens)", Results: []Result{{Len: 128, Protocol: NonOverlap, PPL: 4.8, Tokens: 1000, Bytes: 1000}}},
		{Run: "runs/tiny-bpe", Pos: "alibi", TrainLen: 128, Tokenizer: "byte-level BPE, 1024 tokens", Results: []Result{{Len: 128, Protocol: NonOverlap, PPL: 40, Tokens: 1000, Bytes: 2660}}},
	}}
	var b strings.Builder
	if err := rep.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "| eval length (tokens) |") || !strings.Contains(s, "| 128 | 4.800 (128 bytes) | 40.000 (340 bytes) |") {
		t.Errorf("table:\n%s", s)
	}
	rep.Runs = rep.Runs[:1]
	b.Reset()
	rep.Markdown(&b)
	if strings.Contains(b.String(), "bytes) |") {
		t.Errorf("one tokenizer:\n%s", b.String())
	}
}
