package eval

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// Off a terminal, an evaluation prints a line whenever 10 s have passed
// since the start or the previous line, the last call included, and none
// sooner; the clock is a fake one, so the test takes no time.
func TestProgressLinesEvery10s(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		calls []float64 // seconds after the start of each call; the last scores all 1000 tokens
		want  []string
	}{
		{"shorter than 10 s: nothing", []float64{2, 5, 9.9}, nil},
		{"a line at 10 s, then 10 s after it", []float64{3, 9.99, 10, 15, 19.9, 20, 29}, []string{
			"length 512: 300 of 1000 tokens scored (30%) in 10s",
			"length 512: 600 of 1000 tokens scored (60%) in 20s",
		}},
		{"the last call waits 10 s too", []float64{12, 40, 45}, []string{
			"length 512: 100 of 1000 tokens scored (10%) in 12s",
			"length 512: 200 of 1000 tokens scored (20%) in 40s",
		}},
		{"the 100% line", []float64{4, 11, 21.5}, []string{
			"length 512: 200 of 1000 tokens scored (20%) in 11s",
			"length 512: 1000 of 1000 tokens scored (100%) in 22s",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now := t0
			var w bytes.Buffer
			p := NewProgress(&w, false, 512, func() time.Time { return now })
			for i, s := range tc.calls {
				now = t0.Add(time.Duration(s * float64(time.Second)))
				scored := 100 * (i + 1)
				if i == len(tc.calls)-1 {
					scored = 1000
				}
				p(scored, 1000)
			}
			var got []string
			if out := strings.TrimSpace(w.String()); out != "" {
				got = strings.Split(out, "\n")
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
