package gemm

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/alibi-go/alibi/layers/internal/memtest"
	"github.com/alibi-go/alibi/layers/layerstest/longtest"
)

// smallNs are column counts around the kernels' blocks (8, 32 and 64
// columns) and the widths of the decoding products.
var smallNs = []int{1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 96, 127, 128, 129, 200, 384, 512}

// TestSmallMShapes checks the small-M path against the reference at every
// small row count (and the first count past it), many widths including
// partial blocks, k blocks and tails, padded strides, alpha and beta
// (beta = 0 must overwrite a C full of NaNs), both for B in place and for
// B transposed.
func TestSmallMShapes(t *testing.T) {
	ab := [][2]float32{{1, 0}, {1, 1}, {0.5, -2}, {-1.5, 0.25}}
	// k within one block (1, 5, 31, 32) and over two (257); the long tests
	// add k = 8 and three blocks (600).
	ks := longtest.Pick([]int{1, 5, 31, 32, 257}, []int{1, 5, 8, 31, 32, 257, 600})
	forEachSweepPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(21))
		for m := 1; m <= smallMRows+1; m++ {
			for _, n := range smallNs {
				for _, k := range ks {
					for _, tB := range []bool{false, true} {
						for i, x := range ab {
							runCase(t, rng, gemmCase{tB: tB, m: m, n: n, k: k, padA: i, padB: 3 * i, padC: 2 * i,
								alpha: x[0], beta: x[1], nanC: x[1] == 0, threads: 1 + i%2})
						}
					}
				}
			}
		}
	})
}

// TestSmallMBitIdentical checks that with B in place a row of C has the
// same bits computed alone (on the small-M path) as within a product of 12
// rows (on the tiled path), on every path, and that the AVX2 and AVX-512
// small-M kernels agree bit for bit. (The AVX2 tiled path merges partial
// tiles with beta != 0 without fusing, so alpha and beta other than 1 and
// 0 or 1 are checked on full tiles only.)
func TestSmallMBitIdentical(t *testing.T) {
	const rows = 12
	type product struct {
		n, k        int
		alpha, beta float32
	}
	var products []product
	for _, n := range []int{1, 13, 32, 64, 100, 384} {
		for _, k := range []int{1, 7, 128, 300, 600} {
			products = append(products, product{n, k, 1, 0}, product{n, k, 1, 1})
			if n%16 == 0 {
				products = append(products, product{n, k, 0.75, 0.5})
			}
		}
	}
	results := map[Path][][]float32{}
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(22))
		var all [][]float32
		for _, pr := range products {
			n, k := pr.n, pr.k
			lda, ldb, ldc := k+3, n+5, n+2
			a, b := randSlice(rng, rows*lda), randSlice(rng, k*ldb)
			c0 := randSlice(rng, rows*ldc)
			whole := append([]float32(nil), c0...)
			Sgemm(false, false, rows, n, k, pr.alpha, a, lda, b, ldb, pr.beta, whole, ldc, 1)
			for m := 1; m <= smallMRows; m++ {
				for i0 := 0; i0+m <= rows; i0 += m {
					part := append([]float32(nil), c0...)
					Sgemm(false, false, m, n, k, pr.alpha, a[i0*lda:], lda, b, ldb, pr.beta, part[i0*ldc:], ldc, 1)
					for i := i0; i < i0+m; i++ {
						for j := 0; j < n; j++ {
							got, want := part[i*ldc+j], whole[i*ldc+j]
							if math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("%+v: row %d of a product of %d rows: C[%d] = %v, within %d rows %v", pr, i, m, j, got, rows, want)
							}
						}
					}
					if m == 1 {
						all = append(all, part)
					}
				}
			}
		}
		results[Active()] = all
	})
	if r2, r5 := results[AVX2], results[AVX512]; r2 != nil && r5 != nil {
		for i := range r2 {
			for j := range r2[i] {
				if math.Float32bits(r2[i][j]) != math.Float32bits(r5[i][j]) {
					t.Fatalf("product %d, element %d: avx2 %v, avx512 %v", i, j, r2[i][j], r5[i][j])
				}
			}
		}
	}
}

// TestSmallMNoOverread runs small-M products whose A, B and C end right
// before an inaccessible page (see memtest.Guarded32), with exact and padded strides.
func TestSmallMNoOverread(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(23))
		for m := 1; m <= smallMRows; m++ {
			for _, n := range []int{1, 7, 9, 31, 33, 63, 65, 100, 128, 129, 257} {
				for _, k := range []int{1, 3, 9, 33, 300} {
					for _, tB := range []bool{false, true} {
						for _, pad := range []int{0, 1} {
							br, bc := k, n
							if tB {
								br, bc = n, k
							}
							lda, ldb, ldc := k+pad, bc+pad, n+pad
							a := memtest.Guarded32(t, (m-1)*lda+k)
							b := memtest.Guarded32(t, (br-1)*ldb+bc)
							c := memtest.Guarded32(t, (m-1)*ldc+n)
							copy(a, randSlice(rng, len(a)))
							copy(b, randSlice(rng, len(b)))
							copy(c, randSlice(rng, len(c)))
							for _, beta := range []float32{0, 1} {
								Sgemm(false, tB, m, n, k, 1, a, lda, b, ldb, beta, c, ldc, 1)
							}
						}
					}
				}
			}
		}
	})
}

// smallBenchShapes are the products of generating one token with the tiny
// model (d_model 128, d_ff 512, vocab 256, heads of 32) for 1, 2 and 4
// sequences, and one head's attention against 1024 cached keys.
var smallBenchShapes = []benchShape{
	{name: "qkv", m: 1, n: 384, k: 128},
	{name: "out", m: 1, n: 128, k: 128},
	{name: "fc1", m: 1, n: 512, k: 128},
	{name: "fc2", m: 1, n: 128, k: 512},
	{name: "head", m: 1, n: 256, k: 128},
	{name: "fc1", m: 2, n: 512, k: 128},
	{name: "fc1", m: 4, n: 512, k: 128},
	{name: "fc1", m: 8, n: 512, k: 128},
	{name: "attnQKt", tB: true, m: 1, n: 1024, k: 32, lda: 384, ldb: 128},
	{name: "attnPV", m: 1, n: 32, k: 1024, ldb: 128, ldc: 128},
	{name: "attnQKt", tB: true, m: 4, n: 1024, k: 32, lda: 384, ldb: 128},
	{name: "attnQKt", tB: true, m: 8, n: 1024, k: 32, lda: 384, ldb: 128},
}

// BenchmarkSmallM compares the small-M path with the tiled path on the
// products of decoding, on every path.
func BenchmarkSmallM(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	for _, s := range smallBenchShapes {
		ar, _, br, _, lda, ldb, ldc := s.dims()
		a := randSlice(rng, ar*lda)
		bm := randSlice(rng, br*ldb)
		c := randSlice(rng, s.m*ldc)
		b.Run(s.label(), func(b *testing.B) {
			forEachPathBench(b, func(b *testing.B, p Path) {
				for _, small := range []bool{true, false} {
					b.Run(fmt.Sprintf("small=%v", small), func(b *testing.B) {
						saved := smallMRows
						defer func() { smallMRows = saved }()
						if !small {
							smallMRows = 0
						}
						for b.Loop() {
							Sgemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, ldc, 1)
						}
						b.ReportMetric(s.flops()*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					})
				}
			})
		})
	}
}

// BenchmarkSmallMToken runs the Linear products of one generated token of
// the tiny model (4 layers of QKV, output, FF in and FF out, then the LM
// head) on weights of their own, 3.2 MB in all: more than a core's L2, so
// that they stream from L3 as they do when decoding.
func BenchmarkSmallMToken(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	type product struct{ n, k int }
	var ps []product
	for l := 0; l < 4; l++ {
		ps = append(ps, product{384, 128}, product{128, 128}, product{512, 128}, product{128, 512})
	}
	ps = append(ps, product{256, 128})
	ws := make([][]float32, len(ps))
	for i, p := range ps {
		ws[i] = randSlice(rng, p.k*p.n)
	}
	x, y := randSlice(rng, 512), make([]float32, 512)
	forEachPathBench(b, func(b *testing.B, _ Path) {
		for b.Loop() {
			for i, p := range ps {
				Sgemm(false, false, 1, p.n, p.k, 1, x, p.k, ws[i], p.n, 1, y, p.n, 1)
			}
		}
	})
}
