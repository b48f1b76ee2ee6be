package eval

import (
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// The loss by position over log-spaced buckets, worked out by hand for
// positions 0..4: buckets [0,1), [1,2), [2,4) and [4,5) with means 1, 2,
// (3+5)/2 and 7 at the middles 1, 2, 3.5 and 5 of the positions counted
// from 1; an unscored bucket ([4,5) here holds NaN) gives no point; the
// Compact form gives the same points.
func TestBucketPoints(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		loss []float64
		want plotter.XYs
	}{
		{[]float64{1, 2, 3, 5, 7}, plotter.XYs{{X: 1, Y: 1}, {X: 2, Y: 2}, {X: 3.5, Y: 4}, {X: 5, Y: 7}}},
		{[]float64{1, 2, 3, 5, nan}, plotter.XYs{{X: 1, Y: 1}, {X: 2, Y: 2}, {X: 3.5, Y: 4}}},
		{[]float64{1, 2, 3, 5, 6, 8, 10, 12, 4}, plotter.XYs{{X: 1, Y: 1}, {X: 2, Y: 2}, {X: 3.5, Y: 4}, {X: 6.5, Y: 9}, {X: 9, Y: 4}}},
	} {
		x := Result{Len: len(tc.loss), Protocol: NonOverlap, PositionLoss: tc.loss}
		for _, r := range []Result{x, x.Compact()} {
			got := bucketPoints(r)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("%v (compact %v): %v, want %v", tc.loss, r.PositionLoss == nil, got, tc.want)
			}
		}
	}
}

// Series i and i+8 share a colour and differ in dash pattern; the first
// eight are solid.
func TestSeriesDashes(t *testing.T) {
	for i := 0; i < 8; i++ {
		if seriesDashes(i) != nil {
			t.Errorf("series %d dashed: %v", i, seriesDashes(i))
		}
		if fmt.Sprint(seriesDashes(i+8)) == fmt.Sprint(seriesDashes(i)) || fmt.Sprint(seriesDashes(i+16)) == fmt.Sprint(seriesDashes(i+8)) {
			t.Errorf("series %d, %d and %d: dashes %v, %v, %v", i, i+8, i+16, seriesDashes(i), seriesDashes(i+8), seriesDashes(i+16))
		}
	}
}

// A comparison of up to legendInPanels schemes puts its panels in one row
// with their own legends; one of more schemes adds a legend panel and puts
// the panels three to a row: three panels and the legend make two rows of
// 5.5 inches. The PNG's size shows which (96 dots an inch, 19 inches wide
// for three panels).
func TestComparisonPlotLayout(t *testing.T) {
	for _, tc := range []struct {
		schemes       int
		width, height int
	}{
		{legendInPanels, 1824, 528},
		{legendInPanels + 1, 1824, 1056},
		{15, 1824, 1056},
	} {
		var runs []TrainedRun
		for i := range tc.schemes {
			runs = append(runs, run(fmt.Sprintf("s%d", i), 1, 100, 4, 5))
		}
		c := Compare(runs)
		if got := c.sharedLegend(); got != (tc.schemes > legendInPanels) {
			t.Errorf("%d schemes: sharedLegend %v", tc.schemes, got)
		}
		path := filepath.Join(t.TempDir(), "c.png")
		if err := c.Plot(path); err != nil {
			t.Fatal(err)
		}
		if w, h := pngSize(t, path); w != tc.width || h != tc.height {
			t.Errorf("%d schemes: %dx%d, want %dx%d", tc.schemes, w, h, tc.width, tc.height)
		}
	}
}

// A grid of six groups (three schemes at two training lengths) draws its
// first row (perplexity against length, and the groups' legend panel) and
// the three schemes' panels two to a row: three rows of two panels,
// 2 x 19/3 inches wide.
func TestGridPlotSharedLegend(t *testing.T) {
	var runs []TrainedRun
	for _, pos := range []string{"alibi", "rope", "t5"} {
		for _, l := range []int{8, 16} {
			r := run(pos, 1, 100, 4, 5)
			r.TrainLen, r.Group = l, fmt.Sprintf("%s L=%d", pos, l)
			runs = append(runs, r)
		}
	}
	c := Compare(runs)
	if !c.IsGrid() || !c.sharedLegend() {
		t.Fatalf("grid %v, shared legend %v (%d groups)", c.IsGrid(), c.sharedLegend(), len(c.Schemes))
	}
	path := filepath.Join(t.TempDir(), "g.png")
	if err := c.Plot(path); err != nil {
		t.Fatal(err)
	}
	if w, h := pngSize(t, path); w != 1216 || h != 3*528 {
		t.Errorf("%dx%d, want 1216x1584", w, h)
	}
}

// pngSize is the width and height of the PNG file at path.
func pngSize(t *testing.T, path string) (width, height int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Width, cfg.Height
}

// The context lenses share one legend panel when they list the same runs
// in the same order and there are more than legendInPanels of them; a lens
// without runs does not count; runs in another order, or a lens with
// another set, keep each panel's own legend.
func TestContextLabels(t *testing.T) {
	names := func(n int) []string {
		var s []string
		for i := range n {
			s = append(s, fmt.Sprintf("p%d", i))
		}
		return s
	}
	sweep := func(pos ...string) Report {
		var r Report
		for _, p := range pos {
			r.Runs = append(r.Runs, RunReport{Run: "runs/" + p, Pos: p})
		}
		return r
	}
	passkey := func(pos ...string) PasskeyReport {
		var r PasskeyReport
		for _, p := range pos {
			r.Runs = append(r.Runs, PasskeyResult{Run: "runs/" + p, Pos: p})
		}
		return r
	}
	attention := func(pos ...string) AttentionReport {
		var r AttentionReport
		for _, p := range pos {
			r.Runs = append(r.Runs, AttentionRun{Run: "runs/" + p, Pos: p})
		}
		return r
	}
	five, four := names(legendInPanels+1), names(legendInPanels)
	swapped := append([]string{five[1], five[0]}, five[2:]...)
	for _, tc := range []struct {
		name string
		s    Report
		p    PasskeyReport
		a    AttentionReport
		want []string
	}{
		{"three lenses alike", sweep(five...), passkey(five...), attention(five...), five},
		{"passkey alone", Report{}, passkey(five...), AttentionReport{}, five},
		{"few runs", sweep(four...), passkey(four...), attention(four...), nil},
		{"another order", sweep(five...), passkey(swapped...), attention(five...), nil},
		{"another set", sweep(five...), passkey(five...), attention(five[:4]...), nil},
	} {
		if got := contextLabels(tc.s, tc.p, tc.a); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// An evaluation report of up to legendInPanels runs is two panels, 13
// inches wide; one of more runs gains a third, the runs' legend, 19 inches
// wide.
func TestReportPlotLayout(t *testing.T) {
	for _, tc := range []struct{ runs, width int }{{legendInPanels, 1248}, {legendInPanels + 1, 1824}} {
		var r Report
		for i := range tc.runs {
			tr := run(fmt.Sprintf("s%d", i), 1, 100, 4, 5)
			r.Runs = append(r.Runs, RunReport{Run: tr.Run, Pos: tr.Pos, TrainLen: tr.TrainLen, Results: tr.Results})
		}
		path := filepath.Join(t.TempDir(), "r.png")
		if err := r.Plot(path); err != nil {
			t.Fatal(err)
		}
		if w, h := pngSize(t, path); w != tc.width || h != 528 {
			t.Errorf("%d runs: %dx%d, want %dx528", tc.runs, w, h, tc.width)
		}
	}
}

// Counts on an axis: a k or M suffix past a thousand, four significant
// digits.
func TestCountLabel(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {800, "800"}, {1500, "1.5k"}, {5e5, "500k"}, {2.5e6, "2.5M"}, {4e6, "4M"}, {1234567, "1.235M"},
	} {
		if got := countLabel(tc.v); got != tc.want {
			t.Errorf("countLabel(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
