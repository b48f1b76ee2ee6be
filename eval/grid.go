package eval

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A grid is a comparison of runs from several configs: each scheme at one
// or more training lengths (TrainedRun.Group, "alibi L=256"). Its report
// adds what the paper's cost claim needs: each group's training cost beside
// its perplexity, and per scheme one row per training length (the paper's
// Figure 1) with how far past L the model keeps improving.

// IsGrid reports whether the runs come from more than one training length.
func (c Comparison) IsGrid() bool { return len(c.Runs) > 0 && c.trainLen() == 0 }

// sweeps are the schemes (by Pos, in order of appearance) that the grid
// trained at two or more lengths, each with its groups by ascending L.
func (c Comparison) sweeps() (schemes []string, groups map[string][]Scheme) {
	groups = map[string][]Scheme{}
	for _, s := range c.Schemes {
		if _, ok := groups[s.Pos]; !ok {
			schemes = append(schemes, s.Pos)
		}
		groups[s.Pos] = append(groups[s.Pos], s)
	}
	var out []string
	for _, pos := range schemes {
		slices.SortFunc(groups[pos], func(a, b Scheme) int { return a.TrainLen - b.TrainLen })
		if len(groups[pos]) > 1 {
			out = append(out, pos)
		}
	}
	return out, groups
}

// GridMarkdown writes the grid's own tables: every group's training cost
// (budget, wall time, throughput, peak memory; means over seeds, the
// peak's largest), and for every scheme trained at several lengths its
// perplexity at each multiple of its L, the best length, and how many
// tokens past L it keeps improving (its best evaluated length less L).
func (c Comparison) GridMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("Training, mean over seeds (peak memory: the largest):\n\n")
	if c.noTimings {
		b.WriteString("| run | L | training tokens | last validation perplexity |\n|---|---|---|---|\n")
	} else {
		b.WriteString("| run | L | training tokens | wall (s) | tokens/s | peak RSS (MiB) | last validation perplexity |\n|---|---|---|---|---|---|---|\n")
	}
	for _, s := range c.Schemes {
		var tokens int64
		var wall, tps, last float64
		var peak int64
		n, nv := 0, 0
		for _, r := range c.Runs {
			if r.Label() != s.Label() {
				continue
			}
			tokens = r.TrainTokens
			wall += r.WallSeconds
			tps += r.TokensPerSecond
			peak = max(peak, r.PeakRSSBytes)
			n++
			if v := r.ValidationAt(0); len(v) > 0 {
				last += v[len(v)-1].PPL
				nv++
			}
		}
		lastText := "–"
		if nv > 0 {
			lastText = fmt.Sprintf("%.3f", last/float64(nv))
		}
		if c.noTimings {
			fmt.Fprintf(&b, "| %s | %d | %d | %s |\n", s.Label(), s.TrainLen, tokens, lastText)
			continue
		}
		k := float64(n)
		fmt.Fprintf(&b, "| %s | %d | %d | %.0f | %.0f | %.0f | %s |\n", s.Label(), s.TrainLen, tokens, wall/k, tps/k,
			float64(peak)/(1<<20), lastText)
	}
	c.byLengthMarkdown(&b)
	for _, n := range c.valLengths() {
		c.reachMarkdown(&b, n)
	}
	schemes, groups := c.sweeps()
	for _, pos := range schemes {
		gs := groups[pos]
		var mults []float64
		for _, g := range gs {
			for _, st := range g.Lengths {
				if m := float64(st.Len) / float64(g.TrainLen); !slices.Contains(mults, m) {
					mults = append(mults, m)
				}
			}
		}
		slices.Sort(mults)
		fmt.Fprintf(&b, "\n%s by training length L: perplexity at multiples of its own L", pos)
		if len(gs[0].Seeds) > 1 {
			fmt.Fprintf(&b, " (mean of %d seeds)", len(gs[0].Seeds))
		}
		b.WriteString(", the best of those lengths, and how far past L it keeps improving:\n\n| L |")
		for _, m := range mults {
			fmt.Fprintf(&b, " %gL |", m)
		}
		b.WriteString(" best length | improves past L (tokens) |\n|---|" + strings.Repeat("---|", len(mults)+2) + "\n")
		for _, g := range gs {
			fmt.Fprintf(&b, "| %d |", g.TrainLen)
			for _, m := range mults {
				if st, ok := g.at(int(math.Round(m * float64(g.TrainLen)))); ok {
					fmt.Fprintf(&b, " %.3f |", st.Mean)
				} else {
					b.WriteString(" – |")
				}
			}
			best, last := g.best()
			past := fmt.Sprintf("%d", best.Len-g.TrainLen)
			if best.Len == last && last > g.TrainLen {
				past = fmt.Sprintf("to the end (≥ %d)", last-g.TrainLen)
			}
			fmt.Fprintf(&b, " %d (%gL) | %s |\n", best.Len, float64(best.Len)/float64(g.TrainLen), past)
		}
	}
	if len(schemes) > 0 {
		b.WriteString("\nImproves past L: the best evaluated length (mean perplexity over seeds) less L, in tokens; \"to the end\" when " +
			"the longest length evaluated is the best, so the scheme may improve further. The resolution is that of the lengths evaluated.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// byLengthMarkdown writes every group's perplexity at every evaluation
// length in tokens, so that runs trained at different L compare at one
// length (the paper's ALiBi at L against sinusoidal at 2L): the mean over
// seeds, with the lowest and highest seed when there are several.
func (c Comparison) byLengthMarkdown(b *strings.Builder) {
	lengths := c.lengths()
	if len(lengths) == 0 {
		return
	}
	b.WriteString("\nPerplexity at each evaluation length (tokens), runs of every L side by side")
	if n := len(c.Schemes[0].Seeds); n > 1 {
		fmt.Fprintf(b, " (mean of %d seeds, lowest–highest seed in brackets)", n)
	}
	b.WriteString(":\n\n| run | L |")
	for _, n := range lengths {
		fmt.Fprintf(b, " %d |", n)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(lengths)) + "\n")
	for _, s := range c.Schemes {
		fmt.Fprintf(b, "| %s | %d |", s.Label(), s.TrainLen)
		for _, n := range lengths {
			fmt.Fprintf(b, " %s |", s.cell(n))
		}
		b.WriteString("\n")
	}
}

// gridPlot writes the grid's PNG: one panel per scheme with one curve per
// training length (perplexity against the evaluation length, the paper's
// Figure 1); in a grid of at most six groups, a first row with every group
// in one panel and, when the runs have periodic validations, validation
// perplexity against training tokens and wall seconds.
func (c Comparison) gridPlot(path string) error {
	var rows [][]*plot.Plot
	if len(c.Schemes) <= 6 {
		fs := append([]func() (*plot.Plot, error){c.lengthPlot}, c.validationPlots()...)
		if c.sharedLegend() {
			fs = append(fs, c.legendPanel)
		}
		row, err := drawAll(fs)
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		rows = append(rows, row)
	}
	// The schemes' panels, two to a row.
	schemes, groups := c.sweeps()
	for i, pos := range schemes {
		p, err := sweepPanel(pos, groups[pos])
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		if i%2 == 0 {
			rows = append(rows, nil)
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], p)
	}
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	return savePanelRows(path, vg.Length(max(cols, 2))*19*vg.Inch/3, rows)
}

// sweepPanel is one scheme's perplexity against the evaluation length, a
// curve per training length (mean over seeds) with a point at each length
// evaluated; a curve starts at its own L.
func sweepPanel(pos string, gs []Scheme) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pos + ": perplexity vs evaluation length, by training length L"
	p.X.Label.Text = "evaluation length (tokens, log scale)"
	p.Y.Label.Text = "perplexity per token (log scale)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	lengths := map[float64]bool{}
	for i, g := range gs {
		var pts plotter.XYs
		for _, st := range g.Lengths {
			lengths[float64(st.Len)] = true
			pts = append(pts, plotter.XY{X: float64(st.Len), Y: st.Mean})
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := seriesLine(pts, i, 2)
		if err != nil {
			return nil, err
		}
		points.Shape = draw.CircleGlyph{}
		p.Add(line, points)
		p.Legend.Add(fmt.Sprintf("L = %d", g.TrainLen), line, points)
	}
	// Ticks at the powers of two only: fractional multiples of L crowd
	// the axis near each L.
	pow2 := map[float64]bool{}
	for l := range lengths {
		if v := int(l); v&(v-1) == 0 {
			pow2[l] = true
		}
	}
	p.X.Tick.Marker = valueTicks(pow2)
	return p, nil
}

// best is the length of the group's lowest mean perplexity, and last its
// longest evaluated length.
func (s Scheme) best() (best LengthStats, last int) {
	best = LengthStats{Mean: math.Inf(1)}
	for _, st := range s.Lengths {
		if st.Mean < best.Mean {
			best = st
		}
		last = max(last, st.Len)
	}
	return best, last
}
