package eval

import "fmt"

// LengthError says that one window of the length asked for does not fit in
// the tokens available: a window of n tokens scores n targets, each predicted
// from the tokens before it, so it needs n+1 tokens.
type LengthError struct {
	Len       int // the window length asked for
	Available int // tokens available to score: the stream's, or the first MaxTokens+1
	Stream    int // the stream's tokens
	MaxTokens int // Options.MaxTokens (0: the whole stream)
}

func (e *LengthError) Error() string {
	have := fmt.Sprintf("the data has %d", e.Available)
	if e.Available < e.Stream {
		have = fmt.Sprintf("only the first %d of the data's %d are scored (max tokens %d)", e.Available, e.Stream, e.MaxTokens)
	}
	if e.Available < 2 {
		return fmt.Sprintf("length %d needs %d tokens but %s: no length fits (scoring needs at least 2)", e.Len, uint64(e.Len)+1, have)
	}
	return fmt.Sprintf("length %d needs %d tokens but %s; the longest length that fits is %d", e.Len, uint64(e.Len)+1, have, e.Available-1)
}

// available returns the tokens of a stream of n that o scores from: all n,
// or the first o.MaxTokens+1.
func available(n int, o Options) int {
	if o.MaxTokens > 0 && o.MaxTokens < n-1 { // o.MaxTokens+1 < n, which overflows for the largest int
		return o.MaxTokens + 1
	}
	return n
}

// CheckLength returns a *LengthError when one window of o.Len does not fit
// in a stream of n tokens cut to its first o.MaxTokens+1 (a window of n
// tokens needs n+1), and nil when it fits. Perplexity refuses such a length
// rather than score a shorter window under its label; callers check every
// length with it before evaluating any.
func CheckLength(n int, o Options) error {
	if a := available(n, o); o.Len >= a || a < 2 { // o.Len+1 > a, which overflows for the largest int
		return &LengthError{Len: o.Len, Available: a, Stream: n, MaxTokens: o.MaxTokens}
	}
	return nil
}

// ScoredTokens returns how many tokens Perplexity scores in a stream of n
// tokens with o: every one but the first of the stream, or of its first
// o.MaxTokens+1 tokens.
func ScoredTokens(n int, o Options) int { return max(0, available(n, o)-1) }
