package train

import (
	"fmt"
	"sort"
	"time"

	"github.com/alibi-go/alibi/layers"
)

// StepSet is one config's part of a round of StepRounds: Steps training
// steps of Bench in a row, named Name in the round's log line.
type StepSet struct {
	Name  string
	Bench *StepBench
	Steps int
}

// Round is one round of StepRounds: the FMA peak measured at its start
// (GFLOP/s), the AMX tile peak at its end (0 where no set is bf16 or bf16
// products do not run on the tiles, see layers.AMXPeak) and each set's
// steps' GFLOP/s, in the order of the sets.
type Round struct {
	Peak    float64
	AMXPeak float64
	GFLOPs  []float64
}

// StepRounds measures the fraction of peak of training steps the way the
// targets are stated: rounds rounds, each the FMA peak for peakTime
// (layers.FMAPeak, on as many goroutines as the kernels use) followed by
// each set's steps and, when a set is bf16 and its products run on AMX's
// tiles, the tiles' peak for as long (layers.AMXPeak; last, so that the
// tiles' clock does not weigh on the float32 steps), so that every step
// is set beside peaks measured seconds from it. A round's GFLOP/s for a set is its steps' floating-
// point operations (StepBench.FLOPsPerToken) over their wall time. log, if
// not nil, sees each round as it ends (1-based).
func StepRounds(sets []StepSet, rounds int, peakTime time.Duration, log func(i int, r Round)) ([]Round, error) {
	out := make([]Round, 0, rounds)
	for i := 1; i <= rounds; i++ {
		r := Round{Peak: layers.FMAPeak(peakTime), GFLOPs: make([]float64, len(sets))}
		for k, s := range sets {
			t0 := time.Now()
			for j := 0; j < s.Steps; j++ {
				if err := s.Bench.Run(j); err != nil {
					return out, err
				}
			}
			flops := float64(s.Steps*s.Bench.Tokens()) * s.Bench.FLOPsPerToken()
			r.GFLOPs[k] = flops / time.Since(t0).Seconds() / 1e9
		}
		if anyBF16(sets) {
			r.AMXPeak = layers.AMXPeak(peakTime)
		}
		out = append(out, r)
		if log != nil {
			log(i, r)
		}
	}
	return out, nil
}

// anyBF16 reports whether a set trains with bf16 products.
func anyBF16(sets []StepSet) bool {
	for _, s := range sets {
		if s.Bench.Config().Train.Precision == "bf16" {
			return true
		}
	}
	return false
}

// FormatRound is the log line of round i of n: its peak, and each set's
// GFLOP/s, tokens/s and fraction of the peak.
func FormatRound(sets []StepSet, i, n int, r Round) string {
	line := fmt.Sprintf("round %d of %d: peak %.1f GFLOP/s", i, n, r.Peak)
	if r.AMXPeak > 0 {
		line += fmt.Sprintf(", AMX peak %.1f", r.AMXPeak)
	}
	for k, s := range sets {
		rate := r.GFLOPs[k]
		line += fmt.Sprintf(", %s %.1f GFLOP/s (%.0f tokens/s) %.1f%%", s.Name, rate, rate*1e9/s.Bench.FLOPsPerToken(), 100*rate/r.Peak)
	}
	return line
}

// SetSummary is one set's medians over the rounds of StepRounds.
type SetSummary struct {
	Name string
	// Fraction is the median over the rounds of the set's GFLOP/s over the
	// round's peak (0.62 for 62%).
	Fraction float64
	// AMXFraction is the median of the set's GFLOP/s over the round's AMX
	// peak (0 without one): a bf16 step's fraction of what the tiles can do.
	AMXFraction float64
	// GFLOPs is the median of the set's GFLOP/s, and TokensPerSecond the
	// same median in tokens a second (GFLOP/s over FLOPs per token).
	GFLOPs, TokensPerSecond float64
}

// RoundsSummary is the medians over the rounds of StepRounds: of the peaks
// (FMA and AMX), and for each set of its fractions, GFLOP/s and tokens/s.
type RoundsSummary struct {
	Peak, AMXPeak float64
	Sets          []SetSummary
}

// SummarizeRounds takes the medians of rounds, whose sets are sets. It
// needs at least one round.
func SummarizeRounds(sets []StepSet, rounds []Round) RoundsSummary {
	peaks, amx := make([]float64, len(rounds)), make([]float64, len(rounds))
	for i, r := range rounds {
		peaks[i], amx[i] = r.Peak, r.AMXPeak
	}
	sum := RoundsSummary{Peak: median(peaks), AMXPeak: median(amx), Sets: make([]SetSummary, len(sets))}
	for k, s := range sets {
		rates, fractions, amxFractions := make([]float64, len(rounds)), make([]float64, len(rounds)), make([]float64, len(rounds))
		for i, r := range rounds {
			rates[i], fractions[i] = r.GFLOPs[k], r.GFLOPs[k]/r.Peak
			if r.AMXPeak > 0 {
				amxFractions[i] = r.GFLOPs[k] / r.AMXPeak
			}
		}
		rate := median(rates)
		sum.Sets[k] = SetSummary{Name: s.Name, Fraction: median(fractions), AMXFraction: median(amxFractions), GFLOPs: rate,
			TokensPerSecond: rate * 1e9 / s.Bench.FLOPsPerToken()}
	}
	return sum
}

// median returns the median of xs (the mean of the middle two for an even
// count); xs is reordered.
func median(xs []float64) float64 {
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
