package bf16

import (
	"math"
	"math/rand/v2"
	"testing"
)

// tileReference is TileGemm's arithmetic as a plain loop over the elements
// of C, without tiles or packing: for each block of 32 steps, the even and
// the odd steps' products summed apart from zero, the two added, and the
// sum added to C (a denormal C read as zero), as TileDot defines.
func tileReference(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			acc := c[i*ldc+j]
			for k0 := 0; k0 < k; k0 += 2 * TilePairs {
				var even, odd float32
				for t := k0; t < min(k, k0+2*TilePairs); t++ {
					x, y := tileInput(Round(a[i*lda+t])), tileInput(Round(b[t*ldb+j]))
					if (t-k0)%2 == 0 {
						even = madd(even, x, y)
					} else {
						odd = madd(odd, x, y)
					}
				}
				acc = madd(flushDenormal(acc), madd(even, odd, 1), 1)
			}
			c[i*ldc+j] = acc
		}
	}
}

// tileShapes are the shapes the models use (rows of a batch against
// d_model, 3 d_model, d_ff) and odd ones around the tiles' edges.
func tileShapes() [][3]int {
	var s [][3]int
	odd := []int{1, 15, 17, 31, 33, 100}
	for _, m := range odd {
		for _, n := range odd {
			for _, k := range odd {
				s = append(s, [3]int{m, n, k})
			}
		}
	}
	return append(s, [3]int{256, 384, 128}, [3]int{256, 128, 512}, [3]int{256, 512, 128}, [3]int{64, 256, 128}, [3]int{48, 64, 32})
}

// randomMatrix is a matrix of normal values with lda past its width.
func randomMatrix(r *rand.Rand, rows, cols, ld int) []float32 {
	x := make([]float32, rows*ld)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// The blocked product on Go's tile arithmetic (packing, tile edges, odd
// remainders) equals the plain loop bit for bit, for every shape.
func TestTileGemmIsTheReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, s := range tileShapes() {
		m, n, k := s[0], s[1], s[2]
		a, b := randomMatrix(r, m, k, k+3), randomMatrix(r, k, n, n+1)
		c := randomMatrix(r, m, n, n+2)
		want := append([]float32(nil), c...)
		tileReference(m, n, k, a, k+3, b, n+1, want, n+2)
		got := append([]float32(nil), c...)
		tileGemm(m, n, k, a, k+3, b, n+1, got, n+2, false)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%dx%dx%d: element %d is %g, the plain loop gives %g", m, n, k, i, got[i], want[i])
			}
		}
	}
}
