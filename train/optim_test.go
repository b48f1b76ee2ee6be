package train

import (
	"math"
	"math/rand/v2"
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

// ClipScale is torch's clip_grad_norm_ factor to the bit: max/(norm+1e-6),
// rounded to float32, only when the norm exceeds the limit; a norm equal
// to the limit leaves the gradients as they are.
func TestClipScaleExact(t *testing.T) {
	for _, tc := range []struct {
		norm, max float64
		want      float32
	}{
		{5, 1, float32(1 / 5.000001)}, // 0x3e4cccca, not 0.2 (0x3e4ccccd)
		{2, 1.5, float32(1.5 / 2.000001)},
		{5, 5, 1}, // at the limit: unchanged
		{4.999, 5, 1},
		{5, 0, 1}, // clipping off
	} {
		if got := ClipScale(tc.norm, tc.max); got != tc.want {
			t.Errorf("ClipScale(%v, %v) = %v (%#x), want %v (%#x)", tc.norm, tc.max, got, math.Float32bits(got), tc.want, math.Float32bits(tc.want))
		}
	}
	if w := float32(1 / 5.000001); math.Float32bits(w) != 0x3e4cccca {
		t.Fatalf("reference factor %#x, want 0x3e4cccca", math.Float32bits(w))
	}
	g := [][]float32{{3}, {4}} // norm exactly 5
	ClipGlobalNorm(g, 5)
	if g[0][0] != 3 || g[1][0] != 4 {
		t.Errorf("gradients at the limit changed: %v", g)
	}
}

// GlobalNorm gives the bits of its definition: each piece's squares added
// one after another in float64, then the pieces' sums in piece order, for
// gradients whose pieces group four at a time with tails of other lengths,
// and fewer than four. Each piece's sum is checked on its own: a sum taken
// in another order differs in its last bits, which the norm can round away.
func TestGlobalNormSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sizes := range [][]int{
		{49152, 16384, 384, 128, 128, 65536, 512, 65536, 128, 32768, 33000},
		{3 * pieceLen, 1, 17},
		{100},
		{pieceLen + 5, pieceLen - 3, 2*pieceLen + 1, 7, 0, 9},
		{2 * pieceLen, pieceLen + 1000, pieceLen - 100, 300, 200},
	} {
		grads := make([][]float32, len(sizes))
		for i, n := range sizes {
			grads[i] = make([]float32, n)
			for j := range grads[i] {
				grads[i][j] = float32(rng.NormFloat64() * math.Exp(rng.NormFloat64()))
			}
		}
		var want []float64
		for _, g := range grads {
			for lo := 0; lo < len(g); lo += pieceLen {
				var p float64
				for _, v := range g[lo:min(lo+pieceLen, len(g))] {
					p += float64(v) * float64(v)
				}
				want = append(want, p)
			}
		}
		got := pieceSquares(grads)
		if len(got) != len(want) {
			t.Fatalf("sizes %v: %d pieces, want %d", sizes, len(got), len(want))
		}
		var s float64
		for k := range want {
			if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
				t.Errorf("sizes %v: piece %d's sum %v, want %v", sizes, k, got[k], want[k])
			}
			s += want[k]
		}
		if n := GlobalNorm(grads); math.Float64bits(n) != math.Float64bits(math.Sqrt(s)) {
			t.Errorf("sizes %v: norm %v, want %v", sizes, n, math.Sqrt(s))
		}
	}
}

// A clipped update that scales each piece of the gradients just before the
// update reads it (the training step's UpdateScaled with ClipScale) gives
// the bits of ClipGlobalNorm followed by Update: the weights, both moments
// and the scaled gradients, over steps that clip and steps that do not,
// with subnormal gradients among the values (the reference fails when the
// scale is applied after the update or rounded differently).
func TestUpdateScaledEqualsClipThenUpdate(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	sizes := []int{3*pieceLen + 17, 300, 1, 40000}
	mk := func() [][]float32 {
		x := make([][]float32, len(sizes))
		for i, n := range sizes {
			x[i] = make([]float32, n)
		}
		return x
	}
	s := Settings{Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, WeightDecay: 0.1}
	a, b := NewAdamW(s, sizes), NewAdamW(s, sizes)
	wa, wb := mk(), mk()
	for i := range wa {
		for j := range wa[i] {
			wa[i][j] = float32(rng.NormFloat64())
			wb[i][j] = wa[i][j]
		}
	}
	decay := []bool{true, false, true, false}
	for step, size := range []float64{0.01, 3, 0.2, 50} { // scales of the gradients: clipped when their norm passes 1
		ga, gb := mk(), mk()
		for i := range ga {
			for j := range ga[i] {
				v := float32(rng.NormFloat64() * size / 400)
				if j%97 == 0 {
					v = float32(rng.NormFloat64() * 1e-39) // subnormal
				}
				ga[i][j], gb[i][j] = v, v
			}
		}
		na := ClipGlobalNorm(ga, 1)
		a.Update(wa, ga, decay, 1e-3)
		nb := GlobalNorm(gb)
		b.UpdateScaled(wb, gb, decay, 1e-3, ClipScale(nb, 1))
		if math.Float64bits(na) != math.Float64bits(nb) {
			t.Fatalf("step %d: norms %v and %v", step, na, nb)
		}
		for i := range wa {
			for j := range wa[i] {
				for _, p := range [][2]float32{{wa[i][j], wb[i][j]}, {a.M[i][j], b.M[i][j]}, {a.V[i][j], b.V[i][j]}, {ga[i][j], gb[i][j]}} {
					if math.Float32bits(p[0]) != math.Float32bits(p[1]) {
						t.Fatalf("step %d (norm %v): tensor %d element %d: %v (clip, then update) against %v", step, na, i, j, p[0], p[1])
					}
				}
			}
		}
	}
}
