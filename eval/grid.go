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
// tokens past L its loss by position keeps falling (ImprovesPast).
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
	for _, n := range c.valLengths() {
		c.reachMarkdown(&b, n)
	}
	schemes, groups := c.sweeps()
	for _, pos := range schemes {
		gs := groups[pos]
		var mults []int
		for _, g := range gs {
			for _, st := range g.Lengths {
				if m := st.Len / g.TrainLen; st.Len%g.TrainLen == 0 && !slices.Contains(mults, m) {
					mults = append(mults, m)
				}
			}
		}
		slices.Sort(mults)
		fmt.Fprintf(&b, "\n%s by training length L: perplexity at multiples of its own L", pos)
		if len(gs[0].Seeds) > 1 {
			fmt.Fprintf(&b, " (mean of %d seeds)", len(gs[0].Seeds))
		}
		b.WriteString("; the best length; and how far past L the loss by position keeps falling:\n\n| L |")
		for _, m := range mults {
			fmt.Fprintf(&b, " %dL |", m)
		}
		b.WriteString(" best length | improves past L |\n|---|" + strings.Repeat("---|", len(mults)+2) + "\n")
		for _, g := range gs {
			fmt.Fprintf(&b, "| %d |", g.TrainLen)
			best := LengthStats{Mean: math.Inf(1)}
			for _, m := range mults {
				st, ok := g.at(m * g.TrainLen)
				if !ok {
					b.WriteString(" – |")
					continue
				}
				fmt.Fprintf(&b, " %.3f |", st.Mean)
				if st.Mean < best.Mean {
					best = st
				}
			}
			fmt.Fprintf(&b, " %d (%dL) | %s |\n", best.Len, best.Len/g.TrainLen, c.improvesText(g))
		}
	}
	b.WriteString("\nImproves past L: in the longest evaluation with at least 16 full windows, the loss by position, " +
		"smoothed over L/8 positions, is lowest this many tokens past L (mean over seeds); \"to the end\" when it is still falling " +
		"at the window's end, 0 when it is lowest before L.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// improvesText is ImprovesPast of a group's runs as a table cell: the mean
// over seeds, or "to the end (>= n)" when some seed still improves at the
// end of its window.
func (c Comparison) improvesText(g Scheme) string {
	sum, n, end := 0, 0, 0
	for _, r := range c.Runs {
		if r.Label() != g.Label() {
			continue
		}
		x, ok := improvesWindow(r)
		if !ok {
			continue
		}
		past, falling := ImprovesPast(x.PositionLoss, r.TrainLen)
		if falling {
			end = max(end, x.Len-r.TrainLen)
			continue
		}
		sum += past
		n++
	}
	switch {
	case end > 0:
		return fmt.Sprintf("to the end (≥ %d)", end)
	case n == 0:
		return "–"
	}
	return fmt.Sprintf("%d", sum/n)
}

// improvesWindow is the run's longest evaluation past its training length
// with at least 16 full windows and its loss by position.
func improvesWindow(r TrainedRun) (Result, bool) {
	var best Result
	for _, x := range r.Results {
		if x.Len > r.TrainLen && x.Windows >= 17 && len(x.PositionLoss) == x.Len && x.Len > best.Len {
			best = x // 17 windows: at least 16 full ones and the tail
		}
	}
	return best, best.Len > 0
}

// ImprovesPast reads how far past the training length l a model keeps
// gaining from context, from its mean loss at each position of a window
// (Result.PositionLoss, longer than l): the loss is smoothed by a centred
// moving average over w = max(4, l/8) positions, and past is the number of
// positions after the training range (0..l-1) at which the smoothed loss is
// lowest, 0 if it is lowest inside the training range. falling is true when
// the lowest smoothed loss is in the last w positions: the loss is still
// falling where the window ends, and past is only a lower bound.
func ImprovesPast(loss []float64, l int) (past int, falling bool) {
	w := max(4, l/8)
	h := w / 2
	n := len(loss)
	best, at := math.Inf(1), -1
	for p := h; p+h < n; p++ {
		sum, k := 0.0, 0
		for _, v := range loss[p-h : p+h+1] {
			if !math.IsNaN(v) {
				sum += v
				k++
			}
		}
		if k > 0 && sum/float64(k) < best {
			best, at = sum/float64(k), p
		}
	}
	if at < 0 {
		return 0, false
	}
	return max(0, at-(l-1)), at >= n-w
}

// gridPlot writes the grid's PNG: one panel per scheme with one curve per
// training length (perplexity against the evaluation length, the paper's
// Figure 1); in a grid of at most six groups, a first row with every group
// in one panel and, when the runs have periodic validations, validation
// perplexity against training tokens and wall seconds.
func (c Comparison) gridPlot(path string) error {
	var rows [][]*plot.Plot
	if len(c.Schemes) <= 6 {
		row, err := drawAll(append([]func() (*plot.Plot, error){c.lengthPlot}, c.validationPlots()...))
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		rows = append(rows, row)
	}
	schemes, groups := c.sweeps()
	var row []*plot.Plot
	for _, pos := range schemes {
		p, err := sweepPanel(pos, groups[pos])
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		row = append(row, p)
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	return savePanelRows(path, vg.Length(max(cols, 2))*19*vg.Inch/3, rows)
}

// sweepPanel is one scheme's perplexity against the evaluation length, a
// curve per training length (mean over seeds), each curve's training
// length marked with a filled point.
func sweepPanel(pos string, gs []Scheme) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pos + ": perplexity vs evaluation length, by training length L"
	p.X.Label.Text = "evaluation length (tokens, log scale)"
	p.Y.Label.Text = "perplexity per byte (log scale)"
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
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		line.Color, line.Width = seriesColor(i), vg.Points(2)
		points.Color, points.Shape = seriesColor(i), draw.CircleGlyph{}
		p.Add(line, points)
		p.Legend.Add(fmt.Sprintf("L = %d", g.TrainLen), line, points)
	}
	p.X.Tick.Marker = valueTicks(lengths)
	return p, nil
}
