package layers

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/alibi-go/alibi/layers/internal/flash"
)

// columnSums split over the cores gives the bits of one product 1^T g, and
// the column sums to rounding.
func TestColumnSumsSplitSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range [][2]int{{2048, 512}, {2048, 128}, {2048, 384}, {600, 130}, {257, 200}, {4096, 64}, {100, 700}, {3000, 33}} {
		rows, d := s[0], s[1]
		g := make([]float32, rows*d)
		for i := range g {
			g[i] = float32(rng.NormFloat64())
		}
		ones := make([]float32, rows)
		for i := range ones {
			ones[i] = 1
		}
		want := make([]float32, d)
		flash.Gemm(false, false, 1, d, rows, 1, ones, rows, g, d, 0, want, d)
		got := make([]float32, d)
		for i := range got {
			got[i] = float32(math.NaN())
		}
		columnSums(ones, g, got, rows, d)
		for j := range d {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
				t.Fatalf("%dx%d: column %d sums to %v, one product gives %v", rows, d, j, got[j], want[j])
			}
			var exact float64
			for r := range rows {
				exact += float64(g[r*d+j])
			}
			if math.Abs(float64(got[j])-exact) > 1e-4*math.Sqrt(float64(rows)) {
				t.Fatalf("%dx%d: column %d sums to %v, want %v", rows, d, j, got[j], exact)
			}
		}
	}
}
