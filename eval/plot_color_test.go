package eval

import (
	"math"
	"testing"
)

// Every two series of a plot with up to seven runs (the zoo's schemes) are
// told apart by colour: their RGB distance is at least 60 (gonum's default
// palette put its first and sixth colours 42 apart).
func TestSeriesColorsApart(t *testing.T) {
	for i := 0; i < 7; i++ {
		for j := i + 1; j < 7; j++ {
			a, b := seriesColors[i], seriesColors[j]
			d := math.Sqrt(sq(float64(a.R)-float64(b.R)) + sq(float64(a.G)-float64(b.G)) + sq(float64(a.B)-float64(b.B)))
			if d < 60 {
				t.Errorf("series %d %v and %d %v are %.0f apart", i, a, j, b, d)
			}
		}
	}
	if seriesColor(8) != seriesColor(0) {
		t.Error("colours do not cycle")
	}
}

func sq(x float64) float64 { return x * x }
