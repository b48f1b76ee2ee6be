package position_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/alibi-go/alibi/layers/position"
)

// The drawn positions are sorted, distinct and below m, the same for the
// same generator, every position about equally likely, and 0..n-1 for m = n.
func TestDrawPositions(t *testing.T) {
	const n, m, draws = 16, 64, 20000
	counts := make([]int, m)
	for k := range draws {
		p := position.DrawPositions(rand.New(rand.NewPCG(1, uint64(k))), n, m)
		if len(p) != n || !slices.IsSorted(p) || p[0] < 0 || p[n-1] >= m {
			t.Fatalf("draw %d: %v", k, p)
		}
		for i := 1; i < n; i++ {
			if p[i] == p[i-1] {
				t.Fatalf("draw %d repeats %d: %v", k, p[i], p)
			}
		}
		if again := position.DrawPositions(rand.New(rand.NewPCG(1, uint64(k))), n, m); !slices.Equal(p, again) {
			t.Fatalf("draw %d: %v, then %v from the same seed", k, p, again)
		}
		for _, x := range p {
			counts[x]++
		}
	}
	// Each position is in a draw with probability n/m = 1/4: 5000 of 20000,
	// standard deviation about 61.
	for x, c := range counts {
		if c < 5000-400 || c > 5000+400 {
			t.Errorf("position %d drawn %d times in %d draws, want about 5000", x, c, draws)
		}
	}
	if p := position.DrawPositions(rand.New(rand.NewPCG(2, 3)), n, n); !slices.Equal(p, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}) {
		t.Fatalf("m = n: %v", p)
	}
}
