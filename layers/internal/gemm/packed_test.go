package gemm

import (
	"math"
	"math/rand"
	"testing"
	"unsafe"
)

// TestSgemmPackedB checks that products by a PackedB, on a prefix of its
// columns, have the bits of Sgemm on one goroutine with the same B: rows
// on the small-M path and on the tiles, partial slivers, alpha and beta,
// padded strides, and shapes that Pack leaves unpacked (k beyond a k block,
// B not transposed).
func TestSgemmPackedB(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(41))
		for _, s := range []struct {
			transB bool
			k, n   int
		}{{true, 32, 128}, {true, 64, 512}, {true, 7, 45}, {true, 300, 96}, {false, 32, 100}} {
			ldb := s.k + 3
			rows := s.n
			if !s.transB {
				ldb, rows = s.n+5, s.k
			}
			b := randSlice(rng, rows*ldb)
			var p PackedB
			p.Pack(s.transB, s.k, s.n, b, ldb)
			if want := geom().path == AVX512 && s.transB && s.k <= geom().kcMax; (p.panel != nil) != want {
				t.Fatalf("%+v: packed %v, want %v", s, p.panel != nil, want)
			}
			for _, m := range []int{1, 4, 5, 8, 64, 130} {
				for _, n := range []int{1, 31, 33, s.n / 2, s.n} {
					if n < 1 || n > s.n {
						continue
					}
					for _, ab := range [][2]float32{{1, 0}, {0.5, 1}, {-2, 0.25}} {
						lda, ldc := s.k+1, n+2
						a := randSlice(rng, m*lda)
						c0 := randSlice(rng, m*ldc)
						want := append([]float32(nil), c0...)
						Sgemm(false, s.transB, m, n, s.k, ab[0], a, lda, b, ldb, ab[1], want, ldc, 1)
						got := append([]float32(nil), c0...)
						SgemmPackedB(m, n, ab[0], a, lda, &p, ab[1], got, ldc)
						for i := range want {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%+v, m %d, n %d, alpha/beta %v: c[%d] = %v, Sgemm gives %v", s, m, n, ab, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	})
}

// aSource.prefetch hands out its range in steps of the lines a kernel call
// prefetches (nsl slivers, a line every four of kb k steps) and then the
// sliver it is given, whose lines are in the cache already.
// After Reserve(k, n), packing k x m for any m up to n takes no new
// storage, and the products still have Sgemm's bits.
func TestPackedBReserve(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		const k, n = 32, 256
		rng := rand.New(rand.NewSource(43))
		b := randSlice(rng, n*k)
		var p PackedB
		p.Reserve(k, n)
		m := 32
		if allocs := testing.AllocsPerRun(5, func() {
			p.Pack(true, k, m, b, k)
			m += 32
		}); allocs != 0 {
			t.Errorf("Pack after Reserve allocated %v times a call", allocs)
		}
		a := randSlice(rng, 16*k)
		for _, cols := range []int{5, 64, 200} {
			p.Pack(true, k, cols, b, k)
			got, want := make([]float32, 16*cols), make([]float32, 16*cols)
			SgemmPackedB(16, cols, 1, a, k, &p, 0, got, cols)
			Sgemm(false, true, 16, cols, k, 1, a, k, b, k, 0, want, cols, 1)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%d columns: element %d is %v, want %v", cols, i, got[i], want[i])
				}
			}
		}
	})
}

func TestPrefetchRange(t *testing.T) {
	b := make([]float32, 64)
	sliver := uintptr(unsafe.Pointer(&b[0]))
	s := aSource{pf: 1 << 20, pfEnd: 1<<20 + 3*1024*64 - 5}
	for i, want := range []uintptr{1 << 20, 1<<20 + 1024*64, 1<<20 + 2*1024*64, sliver, sliver} {
		if got := s.prefetch(&b[0], 16, 256); got != want {
			t.Fatalf("call %d: prefetch from %#x, want %#x", i, got, want)
		}
	}
	var none aSource
	if got := none.prefetch(&b[0], 16, 256); got != sliver {
		t.Fatalf("no range: prefetch from %#x, want the sliver %#x", got, sliver)
	}
}
