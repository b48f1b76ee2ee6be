package position

import (
	"math/rand/v2"
	"slices"
)

// DrawPositions returns the positions of a training window of n tokens
// under randomized positional encodings (Ruoss, Delétang, Genewein,
// Grau-Moya, Csordás, Bennani, Legg and Veness, "Randomized Positional
// Encodings Boost Length Generalization of Transformers", ACL 2023): n
// distinct integers drawn uniformly from [0, m) without replacement (Floyd's
// algorithm), sorted. A model trained so sees, at the training length, the
// positions and distances of windows up to m long; it is evaluated at the
// usual positions 0..T-1. With m = n the draw is 0..n-1. It panics unless
// 0 < n <= m (model.Config.Validate checks the config's).
func DrawPositions(rng *rand.Rand, n, m int) []int {
	if n < 1 || n > m {
		panic("position: DrawPositions needs 0 < n <= m")
	}
	seen := make(map[int]bool, n)
	p := make([]int, 0, n)
	for j := m - n; j < m; j++ {
		t := rng.IntN(j + 1)
		if seen[t] {
			t = j
		}
		seen[t] = true
		p = append(p, t)
	}
	slices.Sort(p)
	return p
}
