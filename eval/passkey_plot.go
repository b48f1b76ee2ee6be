package eval

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Plot writes a PNG of passkey accuracy against distance (log scale) for
// every run, with each training length L marked where copying the key
// starts to need attention at distances past L (D = L - the run's
// PasskeyResult.Lag).
func (r PasskeyReport) Plot(path string) error {
	p, err := r.accuracyPlot(true)
	if err != nil {
		return err
	}
	return savePanels(path, 8*vg.Inch, p)
}

// accuracyPlot is the panel of accuracy against distance; with legend,
// each run named in the panel's legend.
func (r PasskeyReport) accuracyPlot(legend bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Passkey retrieval: greedy exact match vs distance"
	p.X.Label.Text = "distance D from the end of the key statement to the answer (tokens, log scale)"
	p.Y.Label.Text = "accuracy"
	p.X.Scale = plot.LogScale{}
	p.Y.Min, p.Y.Max = -0.02, 1.02
	p.Legend.Top = true
	distances := map[float64]bool{}
	for i, run := range r.Runs {
		var pts plotter.XYs
		for _, x := range run.Points {
			distances[float64(x.Distance)] = true
			pts = append(pts, plotter.XY{X: float64(x.Distance), Y: x.Accuracy})
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
			p.Legend.Add(fmt.Sprintf("%s (%s)", run.Scheme(), run.Run), line, points)
		}
	}
	if len(distances) == 0 {
		return p, nil
	}
	p.X.Tick.Marker = valueTicks(distances)
	marked := map[int]bool{}
	for _, run := range r.Runs {
		lag := run.Lag()
		if marked[run.TrainLen-lag] || run.TrainLen <= 0 {
			continue
		}
		marked[run.TrainLen-lag] = true
		at := float64(run.TrainLen - lag)
		if at <= 0 {
			continue
		}
		l, err := plotter.NewLine(plotter.XYs{{X: at, Y: 0}, {X: at, Y: 1}})
		if err != nil {
			return nil, err
		}
		l.Color = color.Gray{Y: 100}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("D = %d: the key's digits %d back, the training length", run.TrainLen-lag, run.TrainLen), l)
	}
	return p, nil
}
