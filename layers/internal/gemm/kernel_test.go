package gemm

import (
	"math"
	"math/rand"
	"testing"
)

// TestKernel8x32Loops checks that the 8x32 kernel's four k loops give the
// same bits: the same A in a packed layout (rsa = 1, the loop that folds
// the broadcast into the multiply-add, and the one that broadcasts into
// registers), row-major (csa = 1) and with
// neither stride 1 (the general loop), for k lengths with and without a
// tail of single steps, a packed B and one read in place with a wider
// stride, and beta 0 and 0.5. A float64 product bounds them all.
func TestKernel8x32Loops(t *testing.T) {
	if !AVX512.Supported() {
		t.Skip("needs the avx512 path")
	}
	defer func(p bool) { packedBroadcasts = p }(packedBroadcasts)
	rng := rand.New(rand.NewSource(12))
	const nsl, rows = 3, 8 * 3
	for _, kc := range []int{1, 3, 4, 5, 8, 13, 64, 257} {
		for _, ldb := range []int{32, 45} {
			for _, beta := range []float32{0, 0.5} {
				av := randSlice(rng, rows*kc) // A(r, p) = av[r*kc+p]
				b := randSlice(rng, kc*ldb)
				c0 := randSlice(rng, rows*32)

				packed := make([]float32, rows*kc) // rsa 1, csa 8, asl 8*kc
				lda := kc + 3
				rowMajor := make([]float32, rows*lda) // rsa lda, csa 1, asl 8*lda
				csa := 2*rows + 1
				general := make([]float32, kc*csa) // rsa 2, csa 2*rows+1, asl 16
				for r := range rows {
					s, i := r/8, r%8
					for p := range kc {
						v := av[r*kc+p]
						packed[s*8*kc+p*8+i] = v
						rowMajor[r*lda+p] = v
						general[r*2+p*csa] = v
					}
				}
				layouts := []struct {
					name          string
					a             []float32
					rsa, csa, asl int
				}{
					{"packed", packed, 1, 8, 8 * kc},
					{"row-major", rowMajor, lda, 1, 8 * lda},
					{"general", general, 2, csa, 16},
				}
				// The packed layout twice: with the broadcasts folded into
				// the multiply-adds (loopP4) and into registers (loopQ4).
				layouts = append(layouts, layouts[0])
				layouts[3].name = "packed, broadcasts in registers"
				out := make([][]float32, len(layouts))
				for l, lay := range layouts {
					out[l] = append([]float32(nil), c0...)
					packedBroadcasts = l == 3
					kernel8x32(nsl, kc, &lay.a[0], lay.rsa, lay.csa, lay.asl, &b[0], ldb, &out[l][0], 32, 0.75, beta, 8, 0xffffffff, nil, 0)
				}
				for e := range out[0] {
					r, j := e/32, e%32
					want := float64(beta) * float64(c0[e])
					for p := range kc {
						want += 0.75 * float64(av[r*kc+p]) * float64(b[p*ldb+j])
					}
					if math.Abs(float64(out[0][e])-want) > 1e-5*float64(kc) {
						t.Fatalf("kc %d ldb %d beta %g: C(%d, %d) = %v, float64 product %v", kc, ldb, beta, r, j, out[0][e], want)
					}
					for l := 1; l < len(layouts); l++ {
						if math.Float32bits(out[l][e]) != math.Float32bits(out[0][e]) {
							t.Fatalf("kc %d ldb %d beta %g: C(%d, %d) is %v with A %s, %v with A %s", kc, ldb, beta, r, j, out[0][e], layouts[0].name, out[l][e], layouts[l].name)
						}
					}
				}
			}
		}
	}
}
