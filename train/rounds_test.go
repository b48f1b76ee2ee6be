package train

import (
	"math"
	"testing"
	"time"
)

// SummarizeRounds takes the medians of hand-made rounds: the peaks', and
// for each set those of its fractions (not the median GFLOP/s over the
// median peak) and GFLOP/s, with tokens/s from the GFLOP/s.
func TestSummarizeRounds(t *testing.T) {
	sets := []StepSet{{Name: "a", Bench: &StepBench{flopsPerToken: 2e6}}, {Name: "b", Bench: &StepBench{flopsPerToken: 5e6}}}
	rounds := []Round{
		{Peak: 100, AMXPeak: 1000, GFLOPs: []float64{60, 10}}, // fractions 0.6, 0.1; of AMX 0.06, 0.01
		{Peak: 200, AMXPeak: 2000, GFLOPs: []float64{80, 30}}, // 0.4, 0.15; 0.04, 0.015
		{Peak: 50, AMXPeak: 500, GFLOPs: []float64{40, 20}},   // 0.8, 0.4; 0.08, 0.04
		{Peak: 150, AMXPeak: 1500, GFLOPs: []float64{75, 60}}, // 0.5, 0.4; 0.05, 0.04
	}
	got := SummarizeRounds(sets, rounds)
	want := RoundsSummary{Peak: 125, AMXPeak: 1250, Sets: []SetSummary{
		{Name: "a", Fraction: 0.55, AMXFraction: 0.055, GFLOPs: 67.5, TokensPerSecond: 67.5e9 / 2e6},
		{Name: "b", Fraction: 0.275, AMXFraction: 0.0275, GFLOPs: 25, TokensPerSecond: 25e9 / 5e6},
	}}
	if math.Abs(got.Peak-want.Peak) > 1e-12 || math.Abs(got.AMXPeak-want.AMXPeak) > 1e-9 || len(got.Sets) != 2 {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for k, w := range want.Sets {
		g := got.Sets[k]
		if g.Name != w.Name || math.Abs(g.Fraction-w.Fraction) > 1e-12 || math.Abs(g.AMXFraction-w.AMXFraction) > 1e-12 || math.Abs(g.GFLOPs-w.GFLOPs) > 1e-12 ||
			math.Abs(g.TokensPerSecond-w.TokensPerSecond) > 1e-6 {
			t.Errorf("set %d: got %+v, want %+v", k, g, w)
		}
	}
	// The rounds are left as they were (the medians sort copies).
	if rounds[0].Peak != 100 || rounds[2].GFLOPs[0] != 40 {
		t.Errorf("the rounds were changed: %+v", rounds)
	}

	one := SummarizeRounds(sets[:1], rounds[:1])
	if one.Peak != 100 || one.Sets[0].Fraction != 0.6 || one.Sets[0].GFLOPs != 60 {
		t.Errorf("one round: got %+v", one)
	}
	// Rounds without an AMX peak give fractions of it of 0, not NaN.
	none := SummarizeRounds(sets[:1], []Round{{Peak: 100, GFLOPs: []float64{60}}})
	if none.AMXPeak != 0 || none.Sets[0].AMXFraction != 0 {
		t.Errorf("no AMX peak: got %+v", none)
	}
}

// StepRounds runs each set's steps in each round, exactly as many as
// asked (the optimizer counts them), logs each round once, and reports a
// positive peak and GFLOP/s; FormatRound names the sets.
func TestStepRounds(t *testing.T) {
	cfg, err := LoadConfig("../configs/micro.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewStepBench(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	cfg.Train.Batch = 2
	b, err := NewStepBench(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.Tokens() != 4*32 || b.Tokens() != 2*32 {
		t.Errorf("tokens a step: %d and %d, want 128 and 64", a.Tokens(), b.Tokens())
	}
	// micro: d 32, d_ff 64, 2 layers, vocab 256, length 32; worked out by
	// hand from FLOPsPerToken's terms.
	if a.FLOPsPerToken() != 162240 {
		t.Errorf("FLOPs per token %v, want 162240", a.FLOPsPerToken())
	}
	sets := []StepSet{{"micro", a, 3}, {"micro2", b, 2}}
	var logged []int
	rounds, err := StepRounds(sets, 2, 5*time.Millisecond, func(i int, r Round) {
		logged = append(logged, i)
		if line := FormatRound(sets, i, 2, r); len(line) == 0 {
			t.Error("empty round line")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rounds) != 2 || len(logged) != 2 || logged[0] != 1 || logged[1] != 2 {
		t.Fatalf("%d rounds, logged %v; want 2 rounds logged as 1, 2", len(rounds), logged)
	}
	// One untimed step at set-up, then 3 (or 2) a round.
	if a.step.opt.Step != 1+2*3 || b.step.opt.Step != 1+2*2 {
		t.Errorf("optimizer steps %d and %d, want 7 and 5", a.step.opt.Step, b.step.opt.Step)
	}
	for i, r := range rounds {
		if !(r.Peak > 0) || len(r.GFLOPs) != 2 || !(r.GFLOPs[0] > 0) || !(r.GFLOPs[1] > 0) {
			t.Errorf("round %d: %+v", i+1, r)
		}
	}
	want := "round 1 of 2: peak 100.0 GFLOP/s, micro 16.2 GFLOP/s (100000 tokens/s) 16.2%, micro2 8.1 GFLOP/s (50000 tokens/s) 8.1%"
	if got := FormatRound(sets, 1, 2, Round{Peak: 100, GFLOPs: []float64{16.224, 8.112}}); got != want {
		t.Errorf("FormatRound:\n got %s\nwant %s", got, want)
	}
}
