package model

import "testing"

// Nucleus = smallest set whose probability reaches TopP (>=). Four equal
// logits, TopP 0.5: cum 0.25, 0.50 -> keep ids 0 and 1, each 1/2.
func TestTopPBoundaryInclusive(t *testing.T) {
	s := NewSampler(Sampling{Temperature: 1, TopP: 0.5}, 1)
	counts := make([]int, 4)
	const n = 100000
	for range n {
		counts[s.Next([]float32{0, 0, 0, 0})]++
	}
	if counts[2] != 0 || counts[3] != 0 {
		t.Fatalf("top-p 0.5 over 4 equal tokens drew %v; want only ids 0 and 1", counts)
	}
	for _, c := range counts[:2] {
		if f := float64(c) / n; f < 0.49 || f > 0.51 {
			t.Fatalf("frequencies %v, want 1/2 each for ids 0 and 1", counts)
		}
	}
}

// Equal logits keep id order, so a top-k cut keeps the lowest ids.
func TestTopKTiesKeepLowestIDs(t *testing.T) {
	s := NewSampler(Sampling{Temperature: 1, TopK: 1, TopP: 1}, 1)
	for range 100 {
		if got := s.Next([]float32{1, 1, 1}); got != 0 {
			t.Fatalf("top-k 1 over three equal logits picked %d, want 0", got)
		}
	}
	s = NewSampler(Sampling{Temperature: 1, TopK: 2, TopP: 1}, 1)
	for range 1000 {
		if got := s.Next([]float32{2, 1, 1, 1}); got != 0 && got != 1 {
			t.Fatalf("top-k 2 over {2,1,1,1} picked %d, want 0 or 1", got)
		}
	}
}

// A low temperature must not overflow exp: logits {8, 7} at T 0.01 give
// p = {1/(1+e^-100), e^-100/(1+e^-100)}: always token 0.
func TestLowTemperatureNoOverflow(t *testing.T) {
	s := NewSampler(Sampling{Temperature: 0.01, TopP: 1}, 1)
	for range 1000 {
		if got := s.Next([]float32{8, 7}); got != 0 {
			t.Fatalf("T=0.01 over logits {8, 7} picked %d, want 0", got)
		}
	}
}
