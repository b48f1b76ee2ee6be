package gemm

import (
	"math"
	"math/rand"
	"testing"
)

// TestSgemmSumB checks SgemmSumB against Sgemm: C bit for bit always, and,
// when it reports the column sums, those bit for bit against the product
// of a row of ones with B (the small-M path, what the layers computed
// before). B holds subnormal numbers and zeros of both signs, so the
// flushing of the packing's sums must match the kernels'. On the AVX-512
// path the shapes that pack B (k above the in-place limit, one goroutine
// or the static split) must report the sums; the shared path and B read in
// place must not.
func TestSgemmSumB(t *testing.T) {
	type shape struct {
		transA   bool
		m, n, k  int
		threads  int
		budget   int // sharedPackBudget: -1 forces the static split
		wantSums bool
		name     string
	}
	shapes := []shape{
		{true, 128, 384, 2048, 2, -1, true, "tiny QKV dW, static split"},
		{true, 40, 77, 1500, 2, -1, true, "partial slivers and k blocks, static split"},
		{true, 40, 77, 1500, 1, -1, true, "one goroutine"},
		{false, 24, 2100, 1100, 1, -1, true, "A not transposed, two column panels"},
		{true, 64, 96, 700, 2, -1, false, "k within the in-place limit: B read in place"},
		{true, 520, 96, 700, 2, 1 << 30, false, "shared path"},
		{true, 64, 96, 1100, 2, 1 << 30, true, "k past sharedMaxK: static split despite the budget"},
		{false, 3, 50, 1100, 1, -1, false, "small-M path"},
	}
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(31))
		for _, s := range shapes {
			t.Run(s.name, func(t *testing.T) {
				withParallelSettings(0, s.budget, func() {
					lda := s.k + 3
					if s.transA {
						lda = s.m + 3
					}
					ldb, ldc := s.n+5, s.n+2
					ar := s.m
					if s.transA {
						ar = s.k
					}
					a, b := randSlice(rng, ar*lda), randSlice(rng, s.k*ldb)
					for i := 0; i < len(b); i += 97 {
						b[i] = [...]float32{1e-40, -3e-39, 0, float32(math.Copysign(0, -1))}[i%4]
					}
					for p := 0; p < s.k; p++ {
						b[p*ldb+5] = 1e-40 // a column of subnormal numbers: its sum is 0 when flushed
					}
					want := make([]float32, s.m*ldc)
					Sgemm(s.transA, false, s.m, s.n, s.k, 1, a, lda, b, ldb, 0, want, ldc, s.threads)
					ones := make([]float32, s.k)
					for i := range ones {
						ones[i] = 1
					}
					wantSums := make([]float32, s.n)
					Sgemm(false, false, 1, s.n, s.k, 1, ones, s.k, b, ldb, 0, wantSums, s.n, 1)

					got := randSlice(rng, s.m*ldc)
					sums := make([]float32, s.n+1)
					sums[s.n] = 7 // past n: must stay
					ok := SgemmSumB(s.transA, s.m, s.n, s.k, a, lda, b, ldb, got, ldc, sums, s.threads)
					for i := 0; i < s.m; i++ {
						for j := 0; j < s.n; j++ {
							if g, w := got[i*ldc+j], want[i*ldc+j]; math.Float32bits(g) != math.Float32bits(w) {
								t.Fatalf("C[%d][%d] = %v, Sgemm gives %v", i, j, g, w)
							}
						}
					}
					if want := s.wantSums && geom().path == AVX512; ok != want {
						t.Fatalf("reported sums %v, want %v on the %v path", ok, want, geom().path)
					}
					if sums[s.n] != 7 {
						t.Fatalf("sums[%d] written", s.n)
					}
					if !ok {
						return
					}
					for j := 0; j < s.n; j++ {
						if math.Float32bits(sums[j]) != math.Float32bits(wantSums[j]) {
							t.Fatalf("sums[%d] = %v, the product of ones gives %v", j, sums[j], wantSums[j])
						}
					}
				})
			})
		}
	})
}
