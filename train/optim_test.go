package train

import (
	"math"
	"testing"
)

// Golden values from torch.optim.AdamW's update rule, computed independently
// in float64 with Python (w=1, lr=0.1, betas 0.9/0.99, eps 1e-8, weight decay
// 0.1 for the first parameter and none for the second):
//
//	w *= 1 - lr*wd;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
//	w -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
func TestAdamWMatchesTorchRule(t *testing.T) {
	s := Settings{Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, WeightDecay: 0.1}
	o := NewAdamW(s, []int{1, 1})
	w := [][]float32{{1}, {1}}
	for i, tc := range []struct{ g, decayed, undecayed float64 }{
		{0.5, 0.890000002, 0.900000002},
		{-0.25, 0.8544300597479334, 0.8733300597679334},
		{1.0, 0.7802444752781004, 0.8076887758955797},
	} {
		o.Update(w, [][]float32{{float32(tc.g)}, {float32(tc.g)}}, []bool{true, false}, 0.1)
		if math.Abs(float64(w[0][0])-tc.decayed) > 2e-6 {
			t.Fatalf("step %d, with decay: w = %.7f, want %.7f", i+1, w[0][0], tc.decayed)
		}
		if math.Abs(float64(w[1][0])-tc.undecayed) > 2e-6 {
			t.Fatalf("step %d, without decay: w = %.7f, want %.7f", i+1, w[1][0], tc.undecayed)
		}
	}
	if o.Step != 3 {
		t.Fatalf("step count %d", o.Step)
	}
}

func TestLRSchedule(t *testing.T) {
	s := Settings{LR: 1e-3, MinLR: 1e-4, Warmup: 100, Steps: 2000}
	tests := []struct {
		step int
		want float64
	}{
		{0, 1e-5},      // (0+1)/100 of the peak
		{49, 5e-4},     // half way through warm-up
		{99, 1e-3},     // end of warm-up
		{100, 1e-3},    // cosine starts at the peak
		{1050, 5.5e-4}, // half way: (lr+min)/2
		{1999, 1.0e-4 + 0.5*9e-4*(1+math.Cos(math.Pi*1899/1900))},
		{5000, 1e-4}, // past the end: clamped at min_lr
	}
	for _, tc := range tests {
		if got := s.LRAt(tc.step); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("step %d: lr %g, want %g", tc.step, got, tc.want)
		}
	}
}

func TestClipGlobalNorm(t *testing.T) {
	g := [][]float32{{3, 0}, {4}} // norm 5
	if n := ClipGlobalNorm(g, 1); math.Abs(n-5) > 1e-9 {
		t.Fatalf("norm %g, want 5", n)
	}
	if got := GlobalNorm(g); math.Abs(got-1) > 1e-5 {
		t.Fatalf("norm after clipping %g, want 1", got)
	}
	// The direction is kept: a global, not per-element, clip.
	if math.Abs(float64(g[0][0]/g[1][0])-0.75) > 1e-6 {
		t.Fatalf("direction changed: %v", g)
	}
	small := [][]float32{{0.3}, {0.4}}
	ClipGlobalNorm(small, 1)
	if small[0][0] != 0.3 || small[1][0] != 0.4 {
		t.Fatalf("gradients under the limit changed: %v", small)
	}
}
