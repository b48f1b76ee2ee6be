package eval

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Reach is when a run's periodic validation first reached a perplexity:
// the training tokens and wall seconds, interpolated linearly in log
// perplexity between the validation before and the one at or below it (the
// first validation's own values when that one is already there). OK is
// false when the run never reached it.
type Reach struct {
	Tokens, Seconds float64
	OK              bool
}

// ReachOf is when the validations v (in training order) first reach
// perplexity target.
func ReachOf(v []ValPoint, target float64) Reach {
	for i, p := range v {
		if !(p.PPL <= target) {
			continue
		}
		if i == 0 {
			return Reach{Tokens: float64(p.Tokens), Seconds: p.Seconds, OK: true}
		}
		q := v[i-1]
		// The fraction of the way from q to p at which log perplexity
		// crosses log target.
		f := (math.Log(q.PPL) - math.Log(target)) / (math.Log(q.PPL) - math.Log(p.PPL))
		return Reach{Tokens: float64(q.Tokens) + f*float64(p.Tokens-q.Tokens), Seconds: q.Seconds + f*(p.Seconds-q.Seconds), OK: true}
	}
	return Reach{}
}

// ReachTarget is the perplexity every run's validation at its training
// length reaches: the largest of the runs' last periodic validation
// perplexities (0 when no run has one).
func (c Comparison) ReachTarget() float64 { return c.reachTargetAt(0) }

// reachTargetAt is ReachTarget over the runs' validations at window length
// n (0: each run's training length), among the runs that have any there.
func (c Comparison) reachTargetAt(n int) float64 {
	t := 0.0
	for _, r := range c.Runs {
		if v := r.ValidationAt(n); len(v) > 0 {
			t = math.Max(t, v[len(v)-1].PPL)
		}
	}
	return t
}

// valLengths are the window lengths at which the periodic validations of
// at least two groups (Label) can be compared, ascending.
func (c Comparison) valLengths() []int {
	groups := map[int]map[string]bool{}
	for _, r := range c.Runs {
		for _, v := range r.Validation {
			n := v.Len
			if n == 0 {
				n = r.TrainLen
			}
			if groups[n] == nil {
				groups[n] = map[string]bool{}
			}
			groups[n][r.Label()] = true
		}
	}
	var out []int
	for n, g := range groups {
		if len(g) > 1 {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// reachMarkdown writes, when the runs have periodic validations at window
// length n (0: each run's training length), each group's last validation
// perplexity there and the training tokens and seconds it took to reach
// the target (reachTargetAt; means over seeds): the paper's "reaches a
// given perplexity sooner". Without timings, the seconds are left out.
func (c Comparison) reachMarkdown(b *strings.Builder, n int) {
	target := c.reachTargetAt(n)
	if target == 0 {
		return
	}
	at := ""
	if n > 0 {
		at = fmt.Sprintf(" at length %d", n)
	}
	fmt.Fprintf(b, "\nTime to perplexity %.3f%s, the highest last periodic validation perplexity of any run there (so every run reaches it; "+
		"periodic validations on train.eval_tokens, interpolated in log perplexity), mean over seeds:\n\n", target, at)
	if c.noTimings {
		b.WriteString("| run | last validation perplexity | training tokens to reach it |\n|---|---|---|\n")
	} else {
		b.WriteString("| run | last validation perplexity | training tokens to reach it | seconds to reach it |\n|---|---|---|---|\n")
	}
	for _, s := range c.Schemes {
		var last, tokens, seconds float64
		k := 0
		for _, r := range c.Runs {
			v := r.ValidationAt(n)
			if r.Label() != s.Label() || len(v) == 0 {
				continue
			}
			at := ReachOf(v, target)
			if !at.OK {
				continue
			}
			last += v[len(v)-1].PPL
			tokens += at.Tokens
			seconds += at.Seconds
			k++
		}
		if k == 0 {
			continue
		}
		f := float64(k)
		if c.noTimings {
			fmt.Fprintf(b, "| %s | %.3f | %.0f |\n", s.Label(), last/f, tokens/f)
		} else {
			fmt.Fprintf(b, "| %s | %.3f | %.0f | %.1f |\n", s.Label(), last/f, tokens/f, seconds/f)
		}
	}
}
