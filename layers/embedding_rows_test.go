package layers

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestEmbeddingRowsSplit checks the float32 gather and scatter of the
// embedding op, split between the cores (by ids, and by ranges of table
// rows), bit for bit against plain loops over the ids in order, on shapes
// large enough to be split, with ids spread out and with one id taking
// most of them.
func TestEmbeddingRowsSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for _, tc := range []struct {
		vocab, d, n int
		scale       float32
		skew        bool // nine ids in ten the same: the split's ranges are uneven
	}{
		{7, 3, 5, 1, false},                 // serial
		{256, 128, 2048, 11.3137085, false}, // the tiny model's shape and sqrt(d)
		{256, 128, 2048, 11.3137085, true},
		{50, 136, 700, 2.5, false}, // an odd row length
		{300, 40, 3000, 1, true},
	} {
		t.Run(fmt.Sprintf("V%d_d%d_n%d_skew=%v", tc.vocab, tc.d, tc.n, tc.skew), func(t *testing.T) {
			table := make([]float32, tc.vocab*tc.d)
			dy := make([]float32, tc.n*tc.d)
			for i := range table {
				table[i] = rng.Float32()*4 - 2
			}
			for i := range dy {
				dy[i] = rng.Float32()*2 - 1
			}
			ids := make([]int, tc.n)
			for i := range ids {
				ids[i] = rng.IntN(tc.vocab / 3) // repeated ids: sums of many rows
				if tc.skew && rng.IntN(10) > 0 {
					ids[i] = tc.vocab / 2
				}
			}
			out := make([]float32, tc.n*tc.d)
			gatherRows(table, ids, tc.scale, out, tc.d)
			for i, id := range ids {
				for j := 0; j < tc.d; j++ {
					if want := tc.scale * table[id*tc.d+j]; out[i*tc.d+j] != want {
						t.Fatalf("gather [%d][%d] = %v, want %v", i, j, out[i*tc.d+j], want)
					}
				}
			}
			grad := make([]float32, len(table))
			for i := range grad {
				grad[i] = 99 // overwritten
			}
			scatterRows(dy, ids, tc.scale, grad, tc.d)
			want := make([]float32, len(table))
			for i, id := range ids {
				for j := 0; j < tc.d; j++ {
					want[id*tc.d+j] += tc.scale * dy[i*tc.d+j]
				}
			}
			for i := range want {
				if grad[i] != want[i] {
					t.Fatalf("scatter [%d] = %v, want %v", i, grad[i], want[i])
				}
			}
		})
	}
}
