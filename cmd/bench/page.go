package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The markers of speed.md between which cmd/bench writes the table of
// speed.json's rows; the rest of the page is left as it is.
const (
	tableStart = "<!-- speed table: cmd/bench writes the lines from here to the end marker from speed.json -->"
	tableEnd   = "<!-- end of speed table -->"
)

// replaceTable returns page with the lines between its markers replaced by
// the table of rows. A page without both markers, in order, is an error.
func replaceTable(page string, rows []Row) (string, error) {
	i := strings.Index(page, tableStart)
	j := strings.Index(page, tableEnd)
	if i < 0 || j < 0 || j < i {
		return "", fmt.Errorf("no table markers (%q, then %q)", tableStart, tableEnd)
	}
	return page[:i+len(tableStart)] + "\n" + table(rows) + page[j:], nil
}

// table is the Markdown table of rows, followed by their notes.
func table(rows []Row) string {
	var b strings.Builder
	b.WriteString("| processor | kernels | FMA peak, GFLOP/s | tiny step, % of peak | tiny, tokens/s | small step, % of peak | small, tokens/s | tiny bf16, tokens/s | AMX peak, GFLOP/s (tiny bf16, % of it) | vs PyTorch fp32 | vs PyTorch bf16 autocast | date (UTC) | measured by |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var notes []string
	for _, r := range rows {
		kernels := r.Kernels
		if r.BF16Kernels != "" {
			kernels = r.BF16Kernels
		}
		name := r.Processor.String()
		if r.Note != "" {
			notes = append(notes, fmt.Sprintf("%d. %s: %s", len(notes)+1, name, r.Note))
			name += fmt.Sprintf(" (note %d)", len(notes))
		}
		cells := []string{name, kernels, fmt.Sprintf("%.1f", r.PeakGFLOPs),
			percent(r.Tiny), count(r.Tiny.TokensPerSecond), percent(r.Small), count(r.Small.TokensPerSecond),
			bf16Tokens(r), amxCell(r), ratio(r.TorchFP32), ratio(r.TorchBF16), r.Date, r.MeasuredBy}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	if len(notes) > 0 {
		b.WriteString("\n" + strings.Join(notes, "\n") + "\n")
	}
	return b.String()
}

// percent is a step's fraction of peak as the table shows it: three
// significant digits, and the config's name when it is not the usual one.
func percent(s Step) string {
	p := strconv.FormatFloat(s.PercentOfPeak, 'g', 3, 64) + "%"
	if s.Config != "" && s.Config != "tiny" && s.Config != "small" {
		p += " (" + s.Config + ")"
	}
	return p
}

// bf16Tokens is the bf16 step's tokens/s as the table shows it ("–" when
// not measured).
func bf16Tokens(r Row) string {
	if r.TinyBF16 == nil {
		return "–"
	}
	return count(r.TinyBF16.TokensPerSecond)
}

// amxCell is the AMX peak and the bf16 step's fraction of it as the table
// shows them ("–" without AMX).
func amxCell(r Row) string {
	if r.AMXPeakGFLOPs == 0 {
		return "–"
	}
	c := fmt.Sprintf("%.1f", r.AMXPeakGFLOPs)
	if r.TinyBF16 != nil && r.TinyBF16.PercentOfAMXPeak > 0 {
		c += " (" + strconv.FormatFloat(r.TinyBF16.PercentOfAMXPeak, 'g', 3, 64) + "%)"
	}
	return c
}

// ratio is a PyTorch comparison as the table shows it.
func ratio(v *Versus) string {
	if v == nil {
		return "not measured"
	}
	return fmt.Sprintf("%.2fx", v.Ratio)
}

// count is a rounded number with thousands separated by commas, or "–" for
// 0 (not recorded).
func count(x float64) string {
	if x == 0 {
		return "–"
	}
	s := strconv.FormatInt(int64(x+0.5), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
