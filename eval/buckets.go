package eval

import "math"

// PositionBucket is the mean loss over positions From..To-1 of a window:
// the mean of those positions' mean losses, over the positions some window
// scored; nil when none was.
type PositionBucket struct {
	From int      `json:"from"`
	To   int      `json:"to"`
	Loss *float64 `json:"loss"`
}

// BucketPositions averages losses by position over log-spaced buckets:
// [0, 1), [1, 2), [2, 4), [4, 8), ..., each up to the next power of two, the
// last ending at len(loss). Positions no window scored (NaN) do not count.
// A window of 32768 positions becomes 16 buckets, which keep the shape of
// the loss-by-position curve (the early-token curse, the break past the
// training length) and drop its noise.
func BucketPositions(loss []float64) []PositionBucket {
	var out []PositionBucket
	for from := 0; from < len(loss); from = max(1, 2*from) {
		to := min(len(loss), max(1, 2*from))
		b := PositionBucket{From: from, To: to}
		sum, n := 0.0, 0
		for _, v := range loss[from:to] {
			if !math.IsNaN(v) {
				sum += v
				n++
			}
		}
		if n > 0 {
			mean := sum / float64(n)
			b.Loss = &mean
		}
		out = append(out, b)
	}
	return out
}

// Compact returns the result with its losses by position replaced by their
// buckets (BucketPositions): the form of the reports that are committed,
// small enough to read and diff. The full arrays stay in each run's own
// evaluations (cmd/experiment's eval.json, cmd/eval's --json).
func (x Result) Compact() Result {
	if x.PositionLoss != nil {
		x.PositionBuckets = BucketPositions(x.PositionLoss)
		x.PositionLoss = nil
	}
	return x
}

// compactAll returns a copy of results, each Compact.
func compactAll(results []Result) []Result {
	out := make([]Result, len(results))
	for i, x := range results {
		out[i] = x.Compact()
	}
	return out
}

// Compact returns the comparison with every result Compact.
func (c Comparison) Compact() Comparison {
	runs := make([]TrainedRun, len(c.Runs))
	for i, r := range c.Runs {
		r.Results = compactAll(r.Results)
		runs[i] = r
	}
	c.Runs = runs
	return c
}

// Compact returns the report with every result Compact.
func (r Report) Compact() Report {
	runs := make([]RunReport, len(r.Runs))
	for i, rr := range r.Runs {
		rr.Results = compactAll(rr.Results)
		runs[i] = rr
	}
	r.Runs = runs
	return r
}
