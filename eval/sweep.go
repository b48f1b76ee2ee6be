package eval

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// strideLabel names a result's protocol: "non-overlapping", "stride 1" or
// "stride S (len/k)".
func strideLabel(x Result) string {
	switch {
	case x.Protocol != Sliding:
		return "non-overlapping"
	case x.Stride == 1:
		return "stride 1"
	case x.Len%x.Stride == 0:
		return fmt.Sprintf("stride %d (len/%d)", x.Stride, x.Len/x.Stride)
	}
	return fmt.Sprintf("stride %d", x.Stride)
}

// SweepMarkdown writes a stride sweep: one row per evaluation length and
// protocol, grouped by length with the non-overlapping windows first and
// then the strides from longest to shortest, one column per run, the
// length also as a multiple of the first run's training length.
func (r Report) SweepMarkdown(w io.Writer) error {
	type key struct{ len, stride int }
	var keys []key
	labels := map[key]string{}
	for _, run := range r.Runs {
		for _, x := range run.Results {
			k := key{x.Len, x.Stride}
			if _, ok := labels[k]; !ok {
				labels[k] = strideLabel(x)
				keys = append(keys, k)
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.len != b.len {
			return a.len < b.len
		}
		if (a.stride == 0) != (b.stride == 0) {
			return a.stride == 0
		}
		return a.stride > b.stride
	})
	var b strings.Builder
	b.WriteString("| eval length (tokens) | windows |")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, " %s |", run.Pos)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(r.Runs)) + "\n")
	for _, k := range keys {
		length := fmt.Sprint(k.len)
		if len(r.Runs) > 0 && r.Runs[0].TrainLen > 0 && k.len%r.Runs[0].TrainLen == 0 {
			length = fmt.Sprintf("%d (%dx L)", k.len, k.len/r.Runs[0].TrainLen)
		}
		fmt.Fprintf(&b, "| %s | %s |", length, labels[k])
		for _, run := range r.Runs {
			cell := " – |"
			for _, x := range run.Results {
				if (key{x.Len, x.Stride}) == k {
					cell = fmt.Sprintf(" %.3f |", x.PPL)
				}
			}
			b.WriteString(cell)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// SweepSpeedMarkdown writes the speed of the sweep's sliding evaluations:
// one row per length and sliding stride, one column per run, each cell the
// scored tokens per second and the wall time.
func (r Report) SweepSpeedMarkdown(w io.Writer) error {
	type key struct{ len, stride int }
	var keys []key
	seen := map[key]bool{}
	for _, run := range r.Runs {
		for _, x := range run.Results {
			if k := (key{x.Len, x.Stride}); x.Protocol == Sliding && !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].len != keys[j].len {
			return keys[i].len < keys[j].len
		}
		return keys[i].stride > keys[j].stride
	})
	var b strings.Builder
	b.WriteString("| eval length (tokens) | stride |")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, " %s |", run.Pos)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(r.Runs)) + "\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "| %d | %d |", k.len, k.stride)
		for _, run := range r.Runs {
			cell := " – |"
			for _, x := range run.Results {
				if x.Protocol == Sliding && x.Len == k.len && x.Stride == k.stride {
					cell = fmt.Sprintf(" %.0f (%.1f s) |", x.TokensPerSecond, x.WallSeconds)
				}
			}
			b.WriteString(cell)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sweepPlot is the panel of a stride sweep: perplexity against length for
// every run, solid for non-overlapping windows and dashed for the shortest
// stride; with legend, each run named in the panel's legend.
func (r Report) sweepPlot(legend bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Perplexity vs length: non-overlapping (solid) and shortest stride (dashed)"
	p.X.Label.Text = "evaluation length (tokens, log scale)"
	p.Y.Label.Text = "perplexity per token (log scale)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	lengths := map[float64]bool{}
	for i, run := range r.Runs {
		var solid, dashed plotter.XYs
		for _, x := range run.Results {
			lengths[float64(x.Len)] = true
			if x.Protocol != Sliding {
				solid = append(solid, plotter.XY{X: float64(x.Len), Y: x.PPL})
			}
		}
		for _, x := range shortestSliding(run.Results) {
			dashed = append(dashed, plotter.XY{X: float64(x.Len), Y: x.PPL})
		}
		for j, pts := range []plotter.XYs{solid, dashed} {
			if len(pts) == 0 {
				continue
			}
			line, points, err := seriesLine(pts, i, 2)
			if err != nil {
				return nil, err
			}
			if j == 1 {
				line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			} else if legend {
				p.Legend.Add(run.Pos, line, points)
			}
			p.Add(line, points)
		}
	}
	if len(lengths) > 0 {
		p.X.Tick.Marker = valueTicks(lengths)
	}
	return p, nil
}

// slidingPositionPlot is the panel of the loss by position at each run's
// longest length, with non-overlapping windows (solid) and with the longest
// sliding stride (dashed: the positions it scores, from len-stride on, each
// with at least len-stride tokens of context); nil when no run has a
// sliding stride longer than one token. With legend, each run is named in
// the panel's legend.
func (r Report) slidingPositionPlot(legend bool) (*plot.Plot, error) {
	p := positionPanel()
	p.Title.Text = "Loss by position at the longest length (dashed: longest sliding stride)"
	// A context.json keeps log-spaced buckets of the losses, not every
	// position: drawn from those, on a log axis.
	buckets := true
	for _, run := range r.Runs {
		for _, x := range run.Results {
			buckets = buckets && len(x.PositionLoss) == 0
		}
	}
	longest := 0
	if buckets {
		p.Title.Text = "Loss by position at the longest length (log-spaced buckets; dashed: longest sliding stride)"
		p.X.Label.Text = "position in window (from 1, log scale)"
		p.X.Scale = plot.LogScale{}
	}
	drawn := false
	for i, run := range r.Runs {
		var plain, sliding *Result
		for j, x := range run.Results {
			switch {
			case x.Protocol == NonOverlap && (plain == nil || x.Len > plain.Len):
				plain = &run.Results[j]
			case x.Protocol == Sliding && x.Stride > 1 && (sliding == nil || x.Len > sliding.Len || x.Len == sliding.Len && x.Stride > sliding.Stride):
				sliding = &run.Results[j]
			}
		}
		if sliding == nil {
			continue
		}
		for k, x := range []*Result{plain, sliding} {
			if x == nil || (k == 0 && x.Len != sliding.Len) {
				continue
			}
			// 64 points: a sweep bounded by --max-tokens has few windows
			// at the longest length, and a sliding stride scores the early
			// positions in its first window only.
			pts := smoothPositionsTo(x.PositionLoss, 64)
			if buckets {
				pts = bucketPoints(*x)
				longest = max(longest, x.Len)
			}
			if len(pts) == 0 {
				continue
			}
			line, err := plotter.NewLine(pts)
			if err != nil {
				return nil, err
			}
			line.Color, line.Width = seriesColor(i), vg.Points(1.5)
			if k == 1 {
				line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			} else if legend {
				p.Legend.Add(fmt.Sprintf("%s, len %d", run.Pos, x.Len), line)
			}
			p.Add(line)
			drawn = true
		}
	}
	if !drawn {
		return nil, nil
	}
	if buckets {
		p.X.Tick.Marker = powerTicks(longest)
	}
	return p, nil
}

// shortestSliding returns, for every length with a sliding result, the one
// of the shortest stride, by length: a stride given as a fraction of the
// length (1/k) differs from length to length, so the shortest overall would
// leave most lengths out.
func shortestSliding(results []Result) []Result {
	best := map[int]Result{}
	for _, x := range results {
		if b, ok := best[x.Len]; x.Protocol == Sliding && (!ok || x.Stride < b.Stride) {
			best[x.Len] = x
		}
	}
	out := make([]Result, 0, len(best))
	for _, x := range best {
		out = append(out, x)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Len < out[b].Len })
	return out
}

// ContextPlot writes the context lenses side by side to a PNG file, each
// when it has runs: the stride sweep, passkey accuracy against distance, and
// every head's share of attention past L at the longest length.
func ContextPlot(path string, sweep Report, passkey PasskeyReport, attention AttentionReport) error {
	labels := contextLabels(sweep, passkey, attention)
	legend := len(labels) <= legendInPanels
	var panels []*plot.Plot
	if len(sweep.Runs) > 0 {
		p, err := sweep.sweepPlot(legend)
		if err != nil {
			return err
		}
		panels = append(panels, p)
	}
	if len(sweep.Runs) > 0 {
		p, err := sweep.slidingPositionPlot(legend)
		if err != nil {
			return err
		}
		if p != nil {
			panels = append(panels, p)
		}
	}
	if len(passkey.Runs) > 0 {
		p, err := passkey.accuracyPlot(legend)
		if err != nil {
			return err
		}
		panels = append(panels, p)
	}
	if len(attention.Runs) > 0 {
		p, err := attention.sharePlot(legend)
		if err != nil {
			return err
		}
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return fmt.Errorf("plot %s: no lens to draw", path)
	}
	if legend {
		return savePanels(path, vg.Length(len(panels))*7*vg.Inch, panels...)
	}
	p, err := legendPanel("Runs", labels)
	if err != nil {
		return err
	}
	return saveInRows(path, append(panels, p))
}

// contextLabels names the runs of the context lenses, in the order their
// series are drawn, when the lenses that have runs list the same runs (by
// directory) in the same order and there are more than legendInPanels of
// them: then one legend panel names them for every lens. Otherwise it is
// nil and each panel keeps its own legend.
func contextLabels(sweep Report, passkey PasskeyReport, attention AttentionReport) []string {
	type lens struct{ dirs, names []string }
	var lenses []lens
	add := func(n int, run func(i int) (dir, name string)) {
		if n == 0 {
			return
		}
		var l lens
		for i := range n {
			dir, name := run(i)
			l.dirs, l.names = append(l.dirs, dir), append(l.names, name)
		}
		lenses = append(lenses, l)
	}
	add(len(sweep.Runs), func(i int) (string, string) { return sweep.Runs[i].Run, sweep.Runs[i].Scheme() })
	add(len(passkey.Runs), func(i int) (string, string) { return passkey.Runs[i].Run, passkey.Runs[i].Scheme() })
	add(len(attention.Runs), func(i int) (string, string) { return attention.Runs[i].Run, attention.Runs[i].Pos })
	if len(lenses) == 0 || len(lenses[0].dirs) <= legendInPanels {
		return nil
	}
	for _, l := range lenses[1:] {
		if !slices.Equal(l.dirs, lenses[0].dirs) {
			return nil
		}
	}
	return lenses[0].names
}
