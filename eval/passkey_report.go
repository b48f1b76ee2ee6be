package eval

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// PasskeyReport is the JSON shape of a passkey evaluation:
// {"runs": [PasskeyResult...]}.
type PasskeyReport struct {
	Runs []PasskeyResult `json:"runs"`
}

// WriteJSON writes the report, indented.
func (r PasskeyReport) WriteJSON(w io.Writer) error { return writeIndented(w, r) }

// Markdown writes the accuracy table, one row per distance and one column
// per run (accuracy, and in brackets the mean log-probability of a digit),
// and each run's effective context length.
func (r PasskeyReport) Markdown(w io.Writer) error {
	var distances []int
	seen := map[int]bool{}
	for _, run := range r.Runs {
		for _, p := range run.Points {
			if !seen[p.Distance] {
				seen[p.Distance] = true
				distances = append(distances, p.Distance)
			}
		}
	}
	sort.Ints(distances)
	var b strings.Builder
	writeWeights(&b, r.Runs, func(run PasskeyResult) *Weights { return run.Weights })
	b.WriteString("Passkey retrieval: exact-match accuracy of greedy decoding (mean log-probability of a digit, nats; a uniform guess among digits is -2.30)\n\n| distance |")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, " %s (%s, L=%d) |", run.Scheme(), run.Run, run.TrainLen)
	}
	b.WriteString("\n|---|")
	for range r.Runs {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, d := range distances {
		fmt.Fprintf(&b, "| %d |", d)
		for _, run := range r.Runs {
			cell := " – |"
			for _, p := range run.Points {
				if p.Distance == d {
					cell = fmt.Sprintf(" %.2f (%.2f) |", p.Accuracy, p.LogProb)
				}
			}
			b.WriteString(cell)
		}
		b.WriteString("\n")
	}
	b.WriteString("| effective context |")
	for _, run := range r.Runs {
		b.WriteString(" " + effectiveCell(run) + " |")
	}
	b.WriteString("\n| contiguous context (every distance up to it) |")
	for _, run := range r.Runs {
		if c := ContiguousContext(run.Points, run.TrainLen); c > 0 {
			fmt.Fprintf(&b, " %d |", c)
		} else {
			b.WriteString(" none |")
		}
	}
	b.WriteString("\n\nThe same accuracy by depth of the key statement (correct episodes of those at each depth), which tells a failure at a " +
		"distance from one at an absolute position: at a given distance, a deeper statement makes a longer prompt.\n\n| distance |")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, " %s by depth %s |", run.Scheme(), depthsLabel(run.Depths))
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(r.Runs)) + "\n")
	for _, d := range distances {
		fmt.Fprintf(&b, "| %d |", d)
		for _, run := range r.Runs {
			cell := " – |"
			for _, p := range run.Points {
				if p.Distance == d {
					var parts []string
					for _, x := range p.ByDepth {
						parts = append(parts, fmt.Sprintf("%d/%d", x.Correct, x.Episodes))
					}
					cell = " " + strings.Join(parts, ", ") + " |"
				}
			}
			b.WriteString(cell)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// depthsLabel lists depths as "(0, 0.5, 1)".
func depthsLabel(depths []float64) string {
	parts := make([]string, len(depths))
	for i, d := range depths {
		parts[i] = fmt.Sprint(d)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// effectiveCell is a run's effective context length as a table cell.
func effectiveCell(r PasskeyResult) string {
	if r.EffectiveContext == 0 {
		return "none: " + r.EffectiveNote
	}
	return fmt.Sprintf("%d (%.2gx L; accuracy up to L/2: %.2f)", r.EffectiveContext, float64(r.EffectiveContext)/float64(r.TrainLen), r.ShortAccuracy)
}
