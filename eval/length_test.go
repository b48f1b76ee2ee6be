package eval

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/model"
)

// A length is scored only if one window of it fits in the tokens available
// (n+1 tokens for a window of n, after MaxTokens); otherwise Perplexity
// refuses it, naming the tokens available and the longest length that fits,
// instead of scoring a shorter window under its label.
func TestLengthMustFit(t *testing.T) {
	m := testModel(t, model.PosALiBi)
	tests := []struct {
		name    string
		n       int
		o       Options
		windows int    // when it fits: the windows scored
		wantErr string // when it does not: the whole message
	}{
		{"longest that fits", 65, Options{Len: 64}, 1, ""},
		{"longest that fits, sliding", 65, Options{Len: 64, Stride: 8}, 1, ""},
		{"one token too many", 65, Options{Len: 65}, 0, "length 65 needs 66 tokens but the data has 65; the longest length that fits is 64"},
		{"far past the data", 65, Options{Len: 1000000}, 0, "length 1000000 needs 1000001 tokens but the data has 65; the longest length that fits is 64"},
		{"past the data, sliding", 65, Options{Len: 80, Stride: 10}, 0, "length 80 needs 81 tokens but the data has 65; the longest length that fits is 64"},
		{"fits max tokens", 65, Options{Len: 20, MaxTokens: 20}, 1, ""},
		{"past max tokens", 65, Options{Len: 21, MaxTokens: 20}, 0, "length 21 needs 22 tokens but only the first 21 of the data's 65 are scored (max tokens 20); the longest length that fits is 20"},
		{"max tokens beyond the data", 65, Options{Len: 65, MaxTokens: 1000}, 0, "length 65 needs 66 tokens but the data has 65; the longest length that fits is 64"},
		{"no target at all", 1, Options{Len: 1}, 0, "length 1 needs 2 tokens but the data has 1: no length fits (scoring needs at least 2)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Perplexity(m, stream(tc.n), tc.o)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if want := ScoredTokens(tc.n, tc.o); r.Len != tc.o.Len || r.Tokens != want || r.Windows != tc.windows {
					t.Fatalf("len %d, %d tokens in %d windows; want len %d, %d tokens in %d windows", r.Len, r.Tokens, r.Windows, tc.o.Len, want, tc.windows)
				}
				return
			}
			var le *LengthError
			if !errors.As(err, &le) || err.Error() != tc.wantErr {
				t.Fatalf("error %v (a result of len %d, %d tokens in %d windows), want the LengthError %q", err, r.Len, r.Tokens, r.Windows, tc.wantErr)
			}
			if CheckLength(tc.n, tc.o) == nil {
				t.Fatal("CheckLength admits a length that Perplexity refuses")
			}
		})
	}
	// The case that was reported: --lens 100000000 on the tiny config's
	// validation split of 56,720 tokens (checked without evaluating).
	err := CheckLength(56720, Options{Len: 100000000})
	if want := "length 100000000 needs 100000001 tokens but the data has 56720; the longest length that fits is 56719"; err == nil || err.Error() != want {
		t.Errorf("CheckLength: %v, want %q", err, want)
	}
}

// ScoredTokens counts what Perplexity scores: the stream's tokens but the
// first, or MaxTokens.
func TestScoredTokens(t *testing.T) {
	for _, tc := range []struct{ n, maxTokens, want int }{{56720, 0, 56719}, {56720, 1000, 1000}, {56720, 56719, 56719}, {56720, 99999, 56719}, {1, 0, 0}} {
		if got := ScoredTokens(tc.n, Options{Len: 8, MaxTokens: tc.maxTokens}); got != tc.want {
			t.Errorf("ScoredTokens(%d, max tokens %d) = %d, want %d", tc.n, tc.maxTokens, got, tc.want)
		}
	}
}

// The largest int is a length and a token limit like any other: refused, or
// no limit, never an overflow (a panic in Perplexity, a negative count).
func TestCheckLengthLargestInt(t *testing.T) {
	err := CheckLength(100, Options{Len: math.MaxInt})
	if err == nil || !strings.Contains(err.Error(), "length 9223372036854775807 needs 9223372036854775808 tokens but the data has 100") {
		t.Errorf("len MaxInt: %v", err)
	}
	if err := CheckLength(100, Options{Len: 50, MaxTokens: math.MaxInt}); err != nil {
		t.Errorf("max tokens MaxInt: %v", err)
	}
	if err := CheckLength(100, Options{Len: 200, MaxTokens: math.MaxInt}); err == nil || strings.Contains(err.Error(), "only the first") {
		t.Errorf("len 200, max tokens MaxInt: %v", err)
	}
	if n := ScoredTokens(100, Options{MaxTokens: math.MaxInt}); n != 99 {
		t.Errorf("scored %d, want 99", n)
	}
}
