package model

import (
	"math"
	"testing"
)

// The tiny model's counts, worked out by hand: linear layers
// 2*(4*(4*128^2 + 2*128*512) + 128*256) = 1,638,400 per token; attention at
// T = 128, 64.5 keys on average, 4*128*64.5*4 = 132,096 forward and
// 10*128*64.5*4 = 330,240 more backward.
func TestFLOPsPerToken(t *testing.T) {
	c := Config{Vocab: 256, DModel: 128, NLayers: 4, NHeads: 4, DFF: 512}
	for _, tc := range []struct {
		train bool
		want  float64
	}{
		{false, 1638400 + 132096},
		{true, 3*1638400 + 132096 + 330240},
	} {
		if got := c.FLOPsPerToken(128, tc.train); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("train %v: %.0f, want %.0f", tc.train, got, tc.want)
		}
	}
}
