//go:build unix

package gemm

import (
	"math/rand"
	"testing"

	"github.com/alibi-go/alibi/layers/internal/memtest"
)

// TestSgemmNoOverread runs products whose A, B and C end right before an
// inaccessible page: any read or write past the last element crashes the
// test.
func TestSgemmNoOverread(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(8))
		for _, s := range [][3]int{{1, 1, 1}, {7, 13, 5}, {9, 33, 17}, {8, 32, 8}, {13, 35, 19}, {64, 64, 64}, {130, 70, 300}} {
			for _, tA := range []bool{false, true} {
				for _, tB := range []bool{false, true} {
					for _, th := range []int{1, 2} {
						m, n, k := s[0], s[1], s[2]
						ar, ac := m, k
						if tA {
							ar, ac = k, m
						}
						br, bc := k, n
						if tB {
							br, bc = n, k
						}
						lda, ldb, ldc := ac+1, bc+3, n+2
						a := memtest.Guarded32(t, (ar-1)*lda+ac)
						b := memtest.Guarded32(t, (br-1)*ldb+bc)
						c := memtest.Guarded32(t, (m-1)*ldc+n)
						copy(a, randSlice(rng, len(a)))
						copy(b, randSlice(rng, len(b)))
						copy(c, randSlice(rng, len(c)))
						for _, beta := range []float32{0, 1} {
							withParallelSettings(0, sharedPackBudget, func() {
								Sgemm(tA, tB, m, n, k, 1, a, lda, b, ldb, beta, c, ldc, th)
							})
						}
					}
				}
			}
		}
	})
}
