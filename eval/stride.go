package eval

import (
	"fmt"
	"strconv"
	"strings"
)

// StrideSpec is a stride given relative to the evaluation length, as
// cmd/eval --strides and cmd/experiment --strides spell it: "1" is
// non-overlapping windows, "1/k" a stride of length/k tokens (at least
// one), and "1tok" a stride of one token, the paper's Appendix B protocol
// where every scored token after the first window is predicted from the
// length tokens before it.
type StrideSpec struct {
	// Den is k of "1/k": 1 for non-overlapping windows, 0 for "1tok".
	Den int
}

// Stride is the stride at an evaluation length, as Options.Stride takes it:
// 0 for non-overlapping windows.
func (s StrideSpec) Stride(length int) int {
	switch s.Den {
	case 1:
		return 0
	case 0:
		return 1
	}
	return max(1, length/s.Den)
}

// String is the spelling ParseStrides reads.
func (s StrideSpec) String() string {
	switch s.Den {
	case 1:
		return "1"
	case 0:
		return "1tok"
	}
	return "1/" + strconv.Itoa(s.Den)
}

// ParseStrides parses a comma-separated list of StrideSpecs ("1,1/2,1/8,1tok").
// It returns an error naming the first entry that is none of them, or that
// is listed twice.
func ParseStrides(s string) ([]StrideSpec, error) {
	var out []StrideSpec
	seen := map[StrideSpec]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		var spec StrideSpec
		switch {
		case f == "1":
			spec.Den = 1
		case f == "1tok":
			spec.Den = 0
		case strings.HasPrefix(f, "1/"):
			k, err := strconv.Atoi(f[2:])
			if err != nil || k < 2 {
				return nil, fmt.Errorf("stride %q: want 1/k with an integer k of at least 2", f)
			}
			spec.Den = k
		default:
			return nil, fmt.Errorf("stride %q: want 1 (non-overlapping), 1/k (a k-th of the length) or 1tok (one token)", f)
		}
		if seen[spec] {
			return nil, fmt.Errorf("stride %s is listed twice", spec)
		}
		seen[spec] = true
		out = append(out, spec)
	}
	return out, nil
}
