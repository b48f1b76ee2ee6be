package eval

import (
	"math"
	"testing"
)

// ImprovesPast on constructed losses by position whose lowest point is
// known.
func TestImprovesPast(t *testing.T) {
	const l = 64 // smoothing width w = 8
	vee := func(bottom, n int) []float64 {
		loss := make([]float64, n)
		for p := range loss {
			loss[p] = 1 + 0.01*math.Abs(float64(p-bottom))
		}
		return loss
	}
	falling := make([]float64, 256)
	for p := range falling {
		falling[p] = 2 - 0.001*float64(p)
	}
	withGap := vee(100, 256)
	for p := 90; p < 95; p++ {
		withGap[p] = math.NaN() // positions no window scored
	}
	for _, c := range []struct {
		name        string
		loss        []float64
		past        int
		stillFallin bool
	}{
		{"lowest 40 past the last training position", vee(63+40, 256), 40, false},
		{"lowest inside the training range", vee(30, 256), 0, false},
		{"lowest at the training range's end", vee(63, 256), 0, false},
		{"still falling at the window's end", falling, 256 - 4 - 1 - 63, true},
		{"unscored positions skipped", withGap, 100 - 63, false},
	} {
		past, f := ImprovesPast(c.loss, l)
		if past != c.past || f != c.stillFallin {
			t.Errorf("%s: ImprovesPast = %d, %v; want %d, %v", c.name, past, f, c.past, c.stillFallin)
		}
	}
}

func TestCostRowMedian(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		want float64
	}{{nil, 0}, {[]float64{5}, 5}, {[]float64{9, 1, 5}, 5}, {[]float64{4, 1, 3, 10}, 3.5}} {
		if got := (CostRow{TokensPerSecond: c.v}).MedianTokensPerSecond(); got != c.want {
			t.Errorf("median of %v = %v, want %v", c.v, got, c.want)
		}
	}
}
