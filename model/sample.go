package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Sampling chooses the next token from a row of logits.
//
// Temperature 0 is greedy decoding: the most likely token (the lowest id on
// a tie). Otherwise the logits are divided by the temperature, cut to the
// TopK most likely tokens (0: no cut), then to the smallest set of most likely
// tokens whose probabilities add up to at least TopP (1: no cut; the nucleus
// of Holtzman et al.), and a token is drawn from the renormalised
// probabilities.
type Sampling struct {
	Temperature float64
	TopK        int
	TopP        float64
}

// Greedy is Sampling that always picks the most likely token.
var Greedy = Sampling{Temperature: 0, TopP: 1}

// Validate reports an option out of range, naming it.
func (s Sampling) Validate() error {
	switch {
	case !(s.Temperature >= 0) || math.IsInf(s.Temperature, 0):
		return fmt.Errorf("temperature must be a finite number >= 0 (0: greedy), got %g", s.Temperature)
	case s.TopK < 0:
		return fmt.Errorf("top-k must be >= 0 (0: off), got %d", s.TopK)
	case !(s.TopP > 0 && s.TopP <= 1):
		return fmt.Errorf("top-p must be in (0, 1] (1: off), got %g", s.TopP)
	}
	return nil
}

// Sampler draws tokens with a Sampling and its own seeded random generator,
// so that the same seed gives the same tokens.
type Sampler struct {
	Sampling
	rng   *rand.Rand
	order []int     // token ids, sorted by logit
	probs []float64 // probabilities of order's tokens
}

// NewSampler returns a sampler seeded with seed.
func NewSampler(s Sampling, seed uint64) *Sampler {
	return &Sampler{Sampling: s, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
}

// Next returns the token chosen from logits.
func (s *Sampler) Next(logits []float32) int {
	if s.Temperature == 0 {
		return argmax(logits)
	}
	s.order = s.order[:0]
	for i := range logits {
		s.order = append(s.order, i)
	}
	// Most likely first; equal logits in id order, so the cut is stable.
	sort.SliceStable(s.order, func(a, b int) bool { return logits[s.order[a]] > logits[s.order[b]] })
	keep := len(s.order)
	if s.TopK > 0 && s.TopK < keep {
		keep = s.TopK
	}
	s.probs = s.probs[:0]
	top := float64(logits[s.order[0]])
	var sum float64
	for _, id := range s.order[:keep] {
		p := math.Exp((float64(logits[id]) - top) / s.Temperature)
		s.probs = append(s.probs, p)
		sum += p
	}
	if s.TopP < 1 {
		var cum float64
		for i, p := range s.probs {
			cum += p / sum
			if cum >= s.TopP {
				keep = i + 1
				break
			}
		}
		s.probs = s.probs[:keep]
		sum = 0
		for _, p := range s.probs {
			sum += p
		}
	}
	u := s.rng.Float64() * sum
	for i, p := range s.probs {
		if u < p {
			return s.order[i]
		}
		u -= p
	}
	return s.order[len(s.probs)-1] // u landed on the rounding error of the sum
}

// argmax is the index of the largest value, the first one on a tie.
func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}
