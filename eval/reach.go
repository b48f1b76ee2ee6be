package eval

import (
	"fmt"
	"math"
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

// ReachTarget is the perplexity every run's validation reaches: the
// largest of the runs' last periodic validation perplexities (0 when no run
// has one).
func (c Comparison) ReachTarget() float64 {
	t := 0.0
	for _, r := range c.Runs {
		if n := len(r.Validation); n > 0 {
			t = math.Max(t, r.Validation[n-1].PPL)
		}
	}
	return t
}

// reachMarkdown writes, when the runs have periodic validations, each
// scheme's last validation perplexity and the training tokens and seconds
// it took to reach ReachTarget (means over seeds): the paper's "reaches a
// given perplexity sooner". Without timings, the seconds are left out.
func (c Comparison) reachMarkdown(b *strings.Builder) {
	target := c.ReachTarget()
	if target == 0 {
		return
	}
	fmt.Fprintf(b, "\nTime to perplexity %.3f, the highest last periodic validation perplexity of any run (so every run reaches it; "+
		"periodic validations on train.eval_tokens, interpolated in log perplexity), mean over seeds:\n\n", target)
	if c.noTimings {
		b.WriteString("| scheme | last validation perplexity | training tokens to reach it |\n|---|---|---|\n")
	} else {
		b.WriteString("| scheme | last validation perplexity | training tokens to reach it | seconds to reach it |\n|---|---|---|---|\n")
	}
	for _, s := range c.Schemes {
		var last, tokens, seconds float64
		n := 0
		for _, r := range c.Runs {
			if r.Label() != s.Label() || len(r.Validation) == 0 {
				continue
			}
			at := ReachOf(r.Validation, target)
			if !at.OK {
				continue
			}
			last += r.Validation[len(r.Validation)-1].PPL
			tokens += at.Tokens
			seconds += at.Seconds
			n++
		}
		if n == 0 {
			continue
		}
		k := float64(n)
		if c.noTimings {
			fmt.Fprintf(b, "| %s | %.3f | %.0f |\n", s.Label(), last/k, tokens/k)
		} else {
			fmt.Fprintf(b, "| %s | %.3f | %.0f | %.1f |\n", s.Label(), last/k, tokens/k, seconds/k)
		}
	}
}
