package eval

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// sharePlot is the panel of the share of attention past L of every head,
// layer after layer, at each run's longest length; with legend, each run
// named in the panel's legend.
func (r AttentionReport) sharePlot(legend bool) (*plot.Plot, error) {
	p := plot.New()
	p.X.Label.Text = "head (layer by layer)"
	p.Y.Label.Text = "share of attention past L"
	p.Legend.Top = true
	longest, heads, layers := 0, 0, 0
	for i, run := range r.Runs {
		if len(run.Results) == 0 {
			continue
		}
		x := run.Results[len(run.Results)-1]
		longest = max(longest, x.Len)
		var pts plotter.XYs
		for l, hs := range x.Layers {
			layers, heads = max(layers, len(x.Layers)), max(heads, len(hs))
			for h, s := range hs {
				pts = append(pts, plotter.XY{X: float64(l*len(hs) + h), Y: s.PastL})
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := seriesLine(pts, i, 1)
		if err != nil {
			return nil, err
		}
		p.Add(line, points)
		if legend {
			p.Legend.Add(run.Pos, line, points)
		}
	}
	p.Title.Text = fmt.Sprintf("Share of attention on keys past L, per head, at length %d", longest)
	// Layer boundaries, as dotted vertical lines.
	for l := 1; l < layers; l++ {
		x := float64(l*heads) - 0.5
		line, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: 1}})
		if err != nil {
			return nil, err
		}
		line.Color = color.Gray{Y: 160}
		line.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
		p.Add(line)
	}
	p.Y.Min = 0
	return p, nil
}
