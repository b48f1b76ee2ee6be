package eval

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Plot writes a PNG with two panels: perplexity against evaluation length
// (log scale) for every run, with each training length marked, and the
// mean loss by position inside the window at the longest non-overlapping
// length of each run. With more than legendInPanels runs, the loss by
// position is drawn over log-spaced buckets (bucketPanel) and a third
// panel names the runs instead of the panels' legends.
func (r Report) Plot(path string) error {
	shared := len(r.Runs) > legendInPanels
	left, err := r.pplPlot(!shared)
	if err != nil {
		return err
	}
	if !shared {
		right, err := r.positionPlot()
		if err != nil {
			return err
		}
		return savePanels(path, 13*vg.Inch, left, right)
	}
	var results [][]Result
	var labels []string
	trainLen := r.Runs[0].TrainLen // marked when every run shares it
	for _, run := range r.Runs {
		results, labels = append(results, run.Results), append(labels, runLabel(run))
		if run.TrainLen != trainLen {
			trainLen = 0
		}
	}
	middle, err := bucketPanel(results, nil, trainLen)
	if err != nil {
		return err
	}
	legend, err := legendPanel("Runs", labels)
	if err != nil {
		return err
	}
	return savePanels(path, 19*vg.Inch, left, middle, legend)
}

// savePanels writes plots side by side, 5.5 inches high, to a PNG file.
func savePanels(path string, width vg.Length, panels ...*plot.Plot) error {
	return savePanelRows(path, width, [][]*plot.Plot{panels})
}

// savePanelRows writes rows of plots, each row 5.5 inches high and width
// wide, to a PNG file; a row shorter than the longest leaves its right
// end empty.
func savePanelRows(path string, width vg.Length, rows [][]*plot.Plot) error {
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	grid := make([][]*plot.Plot, len(rows))
	for i, r := range rows {
		grid[i] = make([]*plot.Plot, cols)
		copy(grid[i], r)
	}
	img := vgimg.New(width, vg.Length(len(rows))*5.5*vg.Inch)
	tiles := draw.Tiles{Rows: len(rows), Cols: cols, PadX: vg.Inch / 4, PadY: vg.Inch / 4, PadLeft: vg.Inch / 8,
		PadRight: vg.Inch / 8, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8}
	canvases := plot.Align(grid, tiles, draw.New(img))
	for i, r := range grid {
		for j, p := range r {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return f.Close()
}

func runLabel(run RunReport) string { return fmt.Sprintf("%s (%s)", run.Scheme(), run.Run) }

// pplPlot is the panel of perplexity against length; with legend, each run
// named in its legend.
func (r Report) pplPlot(legend bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Perplexity vs evaluation length (non-overlapping windows)"
	p.X.Label.Text = "evaluation length (tokens, log scale)"
	p.Y.Label.Text = "perplexity per token (log scale)"
	p.X.Scale = plot.LogScale{}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	lengths := map[float64]bool{}
	p.Legend.Top = true
	p.Legend.Left = true
	minY, maxY := math.Inf(1), math.Inf(-1)
	for i, run := range r.Runs {
		var pts plotter.XYs
		for _, x := range run.Results {
			if x.Protocol == NonOverlap {
				lengths[float64(x.Len)] = true
				pts = append(pts, plotter.XY{X: float64(x.Len), Y: x.PPL})
				minY, maxY = math.Min(minY, x.PPL), math.Max(maxY, x.PPL)
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := seriesLine(pts, i, 2)
		if err != nil {
			return nil, err
		}
		p.Add(line, points)
		if legend {
			p.Legend.Add(runLabel(run), line, points)
		}
	}
	if math.IsInf(minY, 0) {
		return p, nil
	}
	p.X.Tick.Marker = valueTicks(lengths)
	// Training lengths, as dashed vertical lines.
	marked := map[int]bool{}
	for _, run := range r.Runs {
		if marked[run.TrainLen] || run.TrainLen <= 0 {
			continue
		}
		marked[run.TrainLen] = true
		if err := markTrainLen(p, run.TrainLen, minY*0.9, maxY*1.1); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (r Report) positionPlot() (*plot.Plot, error) {
	p := positionPanel()
	for i, run := range r.Runs {
		if err := addPositionLine(p, i, runLabel(run), run.Results); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// positionPanel is an empty loss-by-position plot.
func positionPanel() *plot.Plot {
	p := plot.New()
	p.Title.Text = "Loss by position inside the window (longest length)"
	p.X.Label.Text = "position in window"
	p.Y.Label.Text = "mean loss (nats)"
	p.Y.Tick.Marker = readableTicks{}
	p.Legend.Top = true
	return p
}

// addPositionLine draws the loss by position of the longest
// non-overlapping result in series i's style, with a legend entry.
func addPositionLine(p *plot.Plot, i int, label string, results []Result) error {
	best := longestResult(results)
	if best == nil {
		return nil
	}
	pts := smoothPositions(best.PositionLoss)
	if len(pts) == 0 {
		return nil
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	styleLine(line, i, 1.5)
	p.Add(line)
	p.Legend.Add(fmt.Sprintf("%s, len %d", label, best.Len), line)
	return nil
}

// bucketPanel is the loss by position for many series: series i is the
// longest non-overlapping result of results[i], averaged over log-spaced
// buckets of positions (bucketPoints: BucketPositions, the committed
// reports' form), a point a bucket on a log axis, so that a dozen curves
// stay apart and the break past the training length shows as a step.
// trainLen > 0 marks the training length.
func bucketPanel(results [][]Result, labels []string, trainLen int) (*plot.Plot, error) {
	p := positionPanel()
	p.Title.Text = "Loss by position inside the window (longest length, log-spaced buckets)"
	p.X.Label.Text = "position in window (from 1, log scale)"
	p.X.Scale = plot.LogScale{}
	lengths := map[int]bool{}
	for i, rs := range results {
		x := longestResult(rs)
		if x == nil {
			continue
		}
		pts := bucketPoints(*x)
		if len(pts) == 0 {
			continue
		}
		lengths[x.Len] = true
		line, points, err := seriesLine(pts, i, 1.5)
		if err != nil {
			return nil, err
		}
		p.Add(line, points)
		if labels != nil {
			p.Legend.Add(fmt.Sprintf("%s, len %d", labels[i], x.Len), line, points)
		}
	}
	longest := 0
	for l := range lengths {
		longest = max(longest, l)
		if len(lengths) == 1 {
			p.Title.Text = fmt.Sprintf("Loss by position inside the window (length %d, log-spaced buckets)", l)
		}
	}
	if longest == 0 {
		return p, nil
	}
	p.X.Tick.Marker = powerTicks(longest)
	if trainLen > 0 {
		if err := markTrainLen(p, trainLen, p.Y.Min, p.Y.Max); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// markTrainLen draws the training length l as a grey dashed vertical line
// from y0 to y1, with a legend entry.
func markTrainLen(p *plot.Plot, l int, y0, y1 float64) error {
	mark, err := plotter.NewLine(plotter.XYs{{X: float64(l), Y: y0}, {X: float64(l), Y: y1}})
	if err != nil {
		return err
	}
	mark.Color = color.Gray{Y: 100}
	mark.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	p.Add(mark)
	p.Legend.Add(fmt.Sprintf("training length %d", l), mark)
	return nil
}

// longestResult is the non-overlapping result of the longest length, or
// nil if there is none.
func longestResult(results []Result) *Result {
	var best *Result
	for j, x := range results {
		if x.Protocol == NonOverlap && (best == nil || x.Len > best.Len) {
			best = &results[j]
		}
	}
	return best
}

// smoothPositions averages the per-position losses in buckets so that long
// windows plot as a readable curve of at most 256 points; positions never
// scored are skipped.
func smoothPositions(loss []float64) plotter.XYs { return smoothPositionsTo(loss, 256) }

// smoothPositionsTo is smoothPositions with at most points points.
func smoothPositionsTo(loss []float64, points int) plotter.XYs {
	bucket := max(1, len(loss)/points)
	var pts plotter.XYs
	for lo := 0; lo < len(loss); lo += bucket {
		var s float64
		var n int
		for _, v := range loss[lo:min(lo+bucket, len(loss))] {
			if !math.IsNaN(v) {
				s += v
				n++
			}
		}
		if n > 0 {
			pts = append(pts, plotter.XY{X: float64(lo) + float64(bucket-1)/2, Y: s / float64(n)})
		}
	}
	return pts
}

// valueTicks marks exactly the given values (the evaluated lengths).
func valueTicks(vs map[float64]bool) plot.ConstantTicks {
	var ticks []plot.Tick
	for v := range vs {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
	}
	sort.Slice(ticks, func(i, j int) bool { return ticks[i].Value < ticks[j].Value })
	return ticks
}

// readableTicks are gonum's default ticks with labels of four significant
// digits, so that close values stay distinct.
type readableTicks struct{}

func (readableTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 4, 64)
		}
	}
	return ts
}

// countTicks are gonum's default ticks labelled as counts: 2.5M for
// 2,500,000, 500k for 500,000 and the number itself below 1000 (gonum's
// own labels read 2500000.00 when the ticks fall between its powers of
// ten).
type countTicks struct{}

func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = countLabel(ts[i].Value)
		}
	}
	return ts
}

// countLabel writes v with a k or M suffix, to four significant digits.
func countLabel(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 4, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// logTicks labels 1, 2, 3, 5 times each power of ten within the range.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 1.5, 2, 3, 5, 7} {
			v := m * math.Pow(10, e)
			if v >= lo && v <= hi {
				ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 4, 64)})
			}
		}
	}
	if len(ts) < 2 {
		return readableTicks{}.Ticks(lo, hi)
	}
	return ts
}

// legendInPanels is the most series whose names a panel lists in its own
// legend; a legend of more covers the curves it names, and the plot gets
// one legend panel instead (legendPanel).
const legendInPanels = 4

// legendPanel is a panel with no axes that holds only a legend: series i
// named labels[i], in the colour, dash pattern and marker every panel draws
// series i in.
func legendPanel(title string, labels []string) (*plot.Plot, error) {
	p := plot.New()
	p.HideAxes()
	p.Title.Text = title
	p.Legend.Top, p.Legend.Left = true, true
	for i, label := range labels {
		line, points, err := seriesLine(plotter.XYs{{}}, i, 2)
		if err != nil {
			return nil, err
		}
		p.Legend.Add(label, line, points)
	}
	return p, nil
}

// saveInRows writes panels three to a row, each row 19 inches wide.
func saveInRows(path string, panels []*plot.Plot) error {
	var rows [][]*plot.Plot
	for i := 0; i < len(panels); i += 3 {
		rows = append(rows, panels[i:min(i+3, len(panels))])
	}
	return savePanelRows(path, 19*vg.Inch, rows)
}

// seriesColors are the colours of a plot's series, in order: the Okabe–Ito
// palette, eight colours that stay apart for colour-blind readers too.
// (gonum's default palette gives its first and sixth series two shades of
// red: ALiBi and KERPLE, side by side in the zoo's plot.)
var seriesColors = []color.RGBA{
	{213, 94, 0, 255},    // vermillion
	{0, 114, 178, 255},   // blue
	{0, 158, 115, 255},   // bluish green
	{230, 159, 0, 255},   // orange
	{204, 121, 167, 255}, // reddish purple
	{0, 0, 0, 255},       // black
	{86, 180, 233, 255},  // sky blue
	{240, 228, 66, 255},  // yellow
}

// seriesColor is the colour of series i.
func seriesColor(i int) color.Color { return seriesColors[i%len(seriesColors)] }

// seriesDashes is the dash pattern of series i: solid for the first
// len(seriesColors) series, then a different pattern for each later round
// of the colours, so that series i and i+8 (the zoo has fifteen) differ in
// a plot of lines without markers too.
func seriesDashes(i int) []vg.Length {
	switch i / len(seriesColors) {
	case 0:
		return nil
	case 1:
		return []vg.Length{vg.Points(6), vg.Points(3)}
	default:
		return []vg.Length{vg.Points(2), vg.Points(2)}
	}
}

// styleLine gives a line series i's colour and dash pattern, w points wide.
func styleLine(line *plotter.Line, i int, w float64) {
	line.Color, line.Width, line.Dashes = seriesColor(i), vg.Points(w), seriesDashes(i)
}

// seriesLine returns the line and points of series i of a plot: the
// series' colour, dash pattern and marker shape, a line w points wide.
func seriesLine(pts plotter.XYs, i int, w float64) (*plotter.Line, *plotter.Scatter, error) {
	line, points, err := plotter.NewLinePoints(pts)
	if err != nil {
		return nil, nil, err
	}
	styleLine(line, i, w)
	points.Color, points.Shape = seriesColor(i), plotutil.Shape(i)
	return line, points, nil
}

// powerTicks marks the powers of ten up to longest on a log axis of
// positions: the buckets' own edges crowd it.
func powerTicks(longest int) plot.Ticker {
	ticks := map[float64]bool{}
	for v := 1.0; v <= float64(longest); v *= 10 {
		ticks[v] = true
	}
	return valueTicks(ticks)
}
