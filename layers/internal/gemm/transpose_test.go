package gemm

import (
	"math/rand/v2"
	"testing"
)

// Transpose16 moves every word to its place, bits unchanged (NaN
// patterns included), on every path, with n a multiple of 8 and not.
func TestTranspose16(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, p := range Paths {
		if !p.Supported() {
			continue
		}
		prev := setPath(p)
		for _, n := range []int{1, 7, 8, 16, 23, 64} {
			lds, ldd := n+3, 19
			src := make([]uint32, 16*lds)
			for i := range src {
				src[i] = r.Uint32()
			}
			dst := make([]uint32, n*ldd)
			Transpose16(n, src, lds, dst, ldd)
			for q := range n {
				for i := range 16 {
					if dst[q*ldd+i] != src[i*lds+q] {
						t.Fatalf("%v, n %d: dst[%d][%d] = %#x, want %#x", p, n, q, i, dst[q*ldd+i], src[i*lds+q])
					}
				}
				for i := 16; i < ldd; i++ {
					if dst[q*ldd+i] != 0 {
						t.Fatalf("%v, n %d: dst[%d][%d] written past the 16 words", p, n, q, i)
					}
				}
			}
		}
		setPath(prev)
	}
}
