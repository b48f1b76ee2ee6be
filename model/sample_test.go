package model

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestSamplingValidate(t *testing.T) {
	for _, tc := range []struct {
		s    Sampling
		want string // "" for valid
	}{
		{Greedy, ""},
		{Sampling{Temperature: 0.8, TopK: 40, TopP: 0.95}, ""},
		{Sampling{Temperature: -0.1, TopP: 1}, "temperature"},
		{Sampling{Temperature: math.NaN(), TopP: 1}, "temperature"},
		{Sampling{Temperature: math.Inf(1), TopP: 1}, "temperature"},
		{Sampling{Temperature: 1, TopK: -1, TopP: 1}, "top-k"},
		{Sampling{Temperature: 1, TopP: 0}, "top-p"},
		{Sampling{Temperature: 1, TopP: 1.5}, "top-p"},
		{Sampling{Temperature: 1, TopP: math.NaN()}, "top-p"},
	} {
		err := tc.s.Validate()
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.s, err, tc.want)
		}
	}
}

func randomLogits(rng *rand.Rand, n int) []float32 {
	l := make([]float32, n)
	for i := range l {
		l[i] = float32(rng.NormFloat64() * 3)
	}
	return l
}

// Top-k 1 and a tiny top-p keep only the most likely token: greedy.
func TestSamplingCutsToGreedy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	k1 := NewSampler(Sampling{Temperature: 0.8, TopK: 1, TopP: 1}, 7)
	p0 := NewSampler(Sampling{Temperature: 0.8, TopP: 1e-6}, 7)
	greedy := NewSampler(Greedy, 7)
	for i := 0; i < 500; i++ {
		l := randomLogits(rng, 256)
		want := greedy.Next(l)
		if got := k1.Next(l); got != want {
			t.Fatalf("top-k 1 picked %d, greedy %d", got, want)
		}
		if got := p0.Next(l); got != want {
			t.Fatalf("top-p 1e-6 picked %d, greedy %d", got, want)
		}
	}
	if got := greedy.Next([]float32{1, 3, 3, 2}); got != 1 {
		t.Fatalf("greedy on a tie picked %d, want the first, 1", got)
	}
}

func TestSamplingSeeded(t *testing.T) {
	draw := func(seed uint64) []int {
		s := NewSampler(Sampling{Temperature: 1, TopK: 50, TopP: 0.9}, seed)
		rng := rand.New(rand.NewPCG(3, 4))
		var out []int
		for i := 0; i < 200; i++ {
			out = append(out, s.Next(randomLogits(rng, 256)))
		}
		return out
	}
	a, b, c := draw(11), draw(11), draw(12)
	same := func(x, y []int) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Fatal("one seed gave two outputs")
	}
	if same(a, c) {
		t.Fatal("two seeds gave one output")
	}
}

// The frequencies of 200,000 draws match the distribution each option
// defines, worked out by hand for probabilities 0.5, 0.3 and 0.2.
func TestSamplingDistribution(t *testing.T) {
	logits := []float32{float32(math.Log(0.5)), float32(math.Log(0.3)), float32(math.Log(0.2))}
	sq := []float64{math.Sqrt(0.5), math.Sqrt(0.3), math.Sqrt(0.2)}
	sqSum := sq[0] + sq[1] + sq[2]
	for _, tc := range []struct {
		name string
		s    Sampling
		want []float64
	}{
		{"temperature 1", Sampling{Temperature: 1, TopP: 1}, []float64{0.5, 0.3, 0.2}},
		{"temperature 2 flattens: p^(1/2)", Sampling{Temperature: 2, TopP: 1}, []float64{sq[0] / sqSum, sq[1] / sqSum, sq[2] / sqSum}},
		{"top-k 2", Sampling{Temperature: 1, TopK: 2, TopP: 1}, []float64{0.625, 0.375, 0}},
		{"top-p 0.7 keeps 0.5 and 0.3", Sampling{Temperature: 1, TopP: 0.7}, []float64{0.625, 0.375, 0}},
		{"top-p 0.45 keeps 0.5 alone", Sampling{Temperature: 1, TopP: 0.45}, []float64{1, 0, 0}},
	} {
		s := NewSampler(tc.s, 99)
		counts := make([]float64, 3)
		const n = 200000
		for i := 0; i < n; i++ {
			counts[s.Next(logits)]++
		}
		for i := range counts {
			if got := counts[i] / n; math.Abs(got-tc.want[i]) > 0.005 {
				t.Errorf("%s: token %d drawn %.4f of the time, want %.4f", tc.name, i, got, tc.want[i])
			}
		}
	}
}
