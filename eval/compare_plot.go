package eval

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Plot writes a PNG with three panels: each scheme's perplexity against
// the evaluation length (log scales; the mean over seeds, with a bar from
// the smallest to the largest when there are several), the loss by
// position inside the window at the longest length (first seed), and the
// training loss against the step of every run.
//
// When the runs have periodic validations, two more panels plot the
// validation perplexity against the training tokens and (with timings)
// against the wall seconds, so that runs of different training lengths or
// speeds compare at equal data and equal time.
//
// With more than legendInPanels schemes, the panels leave their schemes
// out of their legends and one more panel lists them (legendPanel), and
// the panels go three to a row.
//
// A grid (IsGrid) is drawn by scheme instead: gridPlot.
func (c Comparison) Plot(path string) error {
	if c.IsGrid() {
		return c.gridPlot(path)
	}
	// A report from before losses by position or training curves were kept
	// draws the panels it has data for.
	fs := []func() (*plot.Plot, error){c.lengthPlot}
	if c.hasPositionLosses() {
		fs = append(fs, c.positionPlot)
	}
	if c.hasTrainingLoss() {
		fs = append(fs, c.lossPlot)
	}
	fs = append(fs, c.validationPlots()...)
	if c.sharedLegend() {
		fs = append(fs, c.legendPanel)
	}
	panels, err := drawAll(fs)
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if !c.sharedLegend() {
		return savePanels(path, vg.Length(len(panels))*19*vg.Inch/3, panels...)
	}
	return saveInRows(path, panels)
}

// hasPositionLosses reports whether a run holds a loss by position.
func (c Comparison) hasPositionLosses() bool {
	for _, r := range c.Runs {
		for _, x := range r.Results {
			if len(x.PositionLoss) > 0 || len(x.PositionBuckets) > 0 {
				return true
			}
		}
	}
	return false
}

// hasFullPositionLosses reports whether a run holds its loss at every
// position (a report.json keeps log-spaced buckets of it only).
func (c Comparison) hasFullPositionLosses() bool {
	for _, r := range c.Runs {
		for _, x := range r.Results {
			if len(x.PositionLoss) > 0 {
				return true
			}
		}
	}
	return false
}

// hasTrainingLoss reports whether a run holds its training loss curve.
func (c Comparison) hasTrainingLoss() bool {
	for _, r := range c.Runs {
		if len(r.Loss) > 0 {
			return true
		}
	}
	return false
}

// sharedLegend reports whether the schemes are too many for each panel's
// legend, so that one legend panel lists them instead.
func (c Comparison) sharedLegend() bool { return len(c.Schemes) > legendInPanels }

// legendPanel is the panel that names the schemes, with their numbers of
// seeds, for a plot whose panels leave them out (the package's
// legendPanel).
func (c Comparison) legendPanel() (*plot.Plot, error) {
	var labels []string
	for _, s := range c.Schemes {
		label := s.Label()
		if len(s.Seeds) > 1 {
			label = fmt.Sprintf("%s (%d seeds)", s.Label(), len(s.Seeds))
		}
		labels = append(labels, label)
	}
	return legendPanel("Schemes", labels)
}

// validationPlots are the panels of the periodic validations, when the
// runs have them: against training tokens and (with timings) against wall
// seconds; one pair at the training length, or in a grid one pair per
// window length that two groups share (valLengths).
func (c Comparison) validationPlots() []func() (*plot.Plot, error) {
	lengths := []int{0}
	if c.IsGrid() {
		lengths = c.valLengths()
	}
	var fs []func() (*plot.Plot, error)
	for _, n := range lengths {
		if c.reachTargetAt(n) == 0 {
			continue
		}
		fs = append(fs, func() (*plot.Plot, error) { return c.validationPlot(n, false) })
		if !c.noTimings {
			fs = append(fs, func() (*plot.Plot, error) { return c.validationPlot(n, true) })
		}
	}
	return fs
}

// drawAll makes every panel, stopping at the first error.
func drawAll(fs []func() (*plot.Plot, error)) ([]*plot.Plot, error) {
	var panels []*plot.Plot
	for _, f := range fs {
		p, err := f()
		if err != nil {
			return nil, err
		}
		panels = append(panels, p)
	}
	return panels, nil
}

// validationPlot is each run's periodic validation perplexity at window
// length n (0: its training length) against its training tokens, or its
// wall seconds, with the time-to-perplexity target as a dashed line.
func (c Comparison) validationPlot(n int, seconds bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Validation perplexity vs training tokens"
	p.X.Label.Text = "training tokens"
	p.X.Tick.Marker = countTicks{}
	if seconds {
		p.Title.Text = "Validation perplexity vs wall time"
		p.X.Label.Text = "wall seconds"
	}
	if n > 0 {
		p.Title.Text += fmt.Sprintf(", at length %d", n)
	}
	p.Y.Label.Text = "validation perplexity (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Legend.Top = true
	color := map[string]int{}
	for i, s := range c.Schemes {
		color[s.Label()] = i
	}
	labelled := map[string]bool{}
	xmax := 0.0
	for _, r := range c.Runs {
		var pts plotter.XYs
		for _, v := range r.ValidationAt(n) {
			x := float64(v.Tokens)
			if seconds {
				x = v.Seconds
			}
			pts = append(pts, plotter.XY{X: x, Y: v.PPL})
			xmax = math.Max(xmax, x)
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := seriesLine(pts, color[r.Label()], 1)
		if err != nil {
			return nil, err
		}
		p.Add(line, points)
		if !labelled[r.Label()] && !c.sharedLegend() {
			labelled[r.Label()] = true
			p.Legend.Add(r.Label(), line, points)
		}
	}
	t := c.reachTargetAt(n)
	target, err := plotter.NewLine(plotter.XYs{{X: 0, Y: t}, {X: xmax, Y: t}})
	if err != nil {
		return nil, err
	}
	target.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	p.Add(target)
	p.Legend.Add(fmt.Sprintf("target %.3f", t), target)
	return p, nil
}

func (c Comparison) lengthPlot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Perplexity vs evaluation length"
	p.X.Label.Text = "evaluation length (tokens, log scale)"
	p.Y.Label.Text = "perplexity per token (log scale)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	lengths := map[float64]bool{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range c.Schemes {
		var mean plotter.XYs
		var bars plotter.YErrors
		for _, st := range s.Lengths {
			lengths[float64(st.Len)] = true
			mean = append(mean, plotter.XY{X: float64(st.Len), Y: st.Mean})
			bars = append(bars, struct{ Low, High float64 }{st.Mean - st.Min, st.Max - st.Mean})
			lo, hi = math.Min(lo, st.Min), math.Max(hi, st.Max)
		}
		if len(mean) == 0 {
			continue
		}
		line, points, err := seriesLine(mean, i, 2)
		if err != nil {
			return nil, err
		}
		p.Add(line, points)
		if len(s.Seeds) > 1 {
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{mean, bars})
			if err != nil {
				return nil, err
			}
			eb.Color = seriesColor(i)
			p.Add(eb)
		}
		if c.sharedLegend() {
			continue
		}
		label := s.Label()
		if len(s.Seeds) > 1 {
			label = fmt.Sprintf("%s (%d seeds, min–max)", s.Label(), len(s.Seeds))
		}
		p.Legend.Add(label, line, points)
	}
	if math.IsInf(lo, 0) {
		return p, nil
	}
	p.X.Tick.Marker = valueTicks(lengths)
	if l := c.trainLen(); l > 0 {
		if err := markTrainLen(p, l, lo*0.9, hi*1.1); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (c Comparison) positionPlot() (*plot.Plot, error) {
	if c.sharedLegend() {
		return c.bucketPlot(nil)
	}
	if !c.hasFullPositionLosses() { // a report.json keeps the buckets only
		var labels []string
		for _, s := range c.Schemes {
			labels = append(labels, s.Label())
		}
		p, err := c.bucketPlot(labels)
		if err == nil {
			p.Legend.Top = true
		}
		return p, err
	}
	p := positionPanel()
	for i, s := range c.Schemes {
		if err := addPositionLine(p, i, s.Label(), c.firstRun(s.Label()).Results); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// bucketPlot is the loss by position of positionPlot for many schemes:
// bucketPanel of each scheme's first run.
func (c Comparison) bucketPlot(labels []string) (*plot.Plot, error) {
	var results [][]Result
	for _, s := range c.Schemes {
		results = append(results, c.firstRun(s.Label()).Results)
	}
	return bucketPanel(results, labels, c.trainLen())
}

func (c Comparison) lossPlot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Training loss"
	p.X.Label.Text = "step"
	p.Y.Label.Text = "training loss (nats per token)"
	p.Y.Tick.Marker = readableTicks{}
	p.Legend.Top = true
	color := map[string]int{}
	for i, s := range c.Schemes {
		color[s.Label()] = i
	}
	labelled := map[string]bool{}
	for _, r := range c.Runs {
		var pts plotter.XYs
		for _, lp := range r.Loss {
			pts = append(pts, plotter.XY{X: float64(lp.Step), Y: lp.Loss})
		}
		if len(pts) == 0 {
			continue
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		styleLine(line, color[r.Label()], 1)
		p.Add(line)
		if !labelled[r.Label()] && !c.sharedLegend() {
			labelled[r.Label()] = true
			p.Legend.Add(r.Label(), line)
		}
	}
	return p, nil
}

// bucketPoints are a result's losses by position over log-spaced buckets
// (its PositionBuckets, or BucketPositions of its PositionLoss), a point a
// scored bucket at the bucket's middle, positions counted from 1: the same
// points from a result and from its Compact form.
func bucketPoints(x Result) plotter.XYs {
	buckets := x.PositionBuckets
	if buckets == nil {
		buckets = BucketPositions(x.PositionLoss)
	}
	var pts plotter.XYs
	for _, b := range buckets {
		if b.Loss != nil {
			pts = append(pts, plotter.XY{X: float64(b.From+1+b.To) / 2, Y: *b.Loss})
		}
	}
	return pts
}

// firstRun is the first run of a scheme (by Label).
func (c Comparison) firstRun(label string) TrainedRun {
	for _, r := range c.Runs {
		if r.Label() == label {
			return r
		}
	}
	return TrainedRun{}
}

// trainLen is the training length every run shares, or 0 when they differ
// (a grid of several configs) or there are none.
func (c Comparison) trainLen() int {
	if len(c.Runs) == 0 {
		return 0
	}
	for _, r := range c.Runs {
		if r.TrainLen != c.Runs[0].TrainLen {
			return 0
		}
	}
	return c.Runs[0].TrainLen
}
