package main

import (
	"math"
	"os"
	"reflect"
	"testing"
	"time"
)

// The committed speed.json reads (no unknown field), is written as the
// command writes it (so that --write changes only the row it measures),
// its rows agree with themselves, and speed.md's table is generated from
// it.
func TestCommittedSpeedFiles(t *testing.T) {
	const jsonPath, pagePath = "../../testdata/results/speed.json", "../../testdata/results/speed.md"
	rows, err := readRows(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("no rows")
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := encodeRows(rows); err != nil || string(again) != string(b) {
		t.Errorf("%s is not as the command writes it (%v):\n%s", jsonPath, err, again)
	}
	merged := rows[:0:0]
	for _, r := range rows {
		merged = mergeRow(merged, r)
		if _, err := time.Parse("2006-01-02", r.Date); err != nil {
			t.Errorf("%s: date %q: %v", r.Processor, r.Date, err)
		}
		if r.Processor.Vendor == "" || r.Processor.Family == "" || r.Processor.Model == "" || r.MeasuredBy == "" || r.Kernels == "" ||
			!(r.PeakGFLOPs > 0) || !(r.Tiny.PercentOfPeak > 0) || !(r.Small.PercentOfPeak > 0) {
			t.Errorf("incomplete row %+v", r)
		}
		// GFLOP/s and tokens/s agree through the step's FLOPs per token
		// (5,377,536 tiny, 34,220,544 small: model.Config.FLOPsPerToken).
		for _, s := range []struct {
			step  Step
			flops float64
		}{{r.Tiny, 5377536}, {r.Small, 34220544}} {
			// Stored rounded: GFLOP/s to 0.1, tokens/s to 1.
			slack := 0.05 + 0.5*s.flops/1e9 + 1e-9
			if s.step.GFLOPs > 0 && s.step.TokensPerSecond > 0 && math.Abs(s.step.TokensPerSecond*s.flops/1e9-s.step.GFLOPs) > slack {
				t.Errorf("%s: %v GFLOP/s but %v tokens/s", r.Processor, s.step.GFLOPs, s.step.TokensPerSecond)
			}
		}
		for _, v := range []*Versus{r.TorchFP32, r.TorchBF16} {
			if v == nil || len(v.Ratios) == 0 {
				continue
			}
			if len(v.Project) != len(v.Ratios) || len(v.Torch) != len(v.Ratios) || v.Rounds != len(v.Ratios) {
				t.Errorf("%s: %+v", r.Processor, v)
				continue
			}
			for i := range v.Ratios { // tokens/s stored rounded to 1, ratios to 0.001
				if math.Abs(v.Project[i]/v.Torch[i]-v.Ratios[i]) > 6e-4 {
					t.Errorf("%s: round %d ratio %v, but %v / %v", r.Processor, i+1, v.Ratios[i], v.Project[i], v.Torch[i])
				}
			}
			if math.Abs(median(v.Ratios)-v.Ratio) > 0.005 {
				t.Errorf("%s: ratio %v, but the median of %v", r.Processor, v.Ratio, v.Ratios)
			}
		}
	}
	if !reflect.DeepEqual(merged, rows) {
		t.Errorf("the rows are not one a processor in the command's order (vendor, model name, family, model)")
	}
	page, err := os.ReadFile(pagePath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := replaceTable(string(page), rows)
	if err != nil || want != string(page) {
		t.Errorf("%s's table is not the one speed.json gives (%v); it should read:\n%s", pagePath, err, table(rows))
	}
}
