package bf16

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/alibi-go/alibi/layers/layerstest/longtest"
)

// tileReference is the tile product's arithmetic as a plain loop over the
// elements of C, without tiles, packing or blocks of C: for each step of
// 32 from zero (k padded with zeros to a multiple of 32, as the tiles
// are), the even and the odd steps' products summed apart from zero, the two added, and that added to the sum (TileDot); then alpha*s
// + bias, alpha*s or alpha*s + beta*C, each product and the sum rounded.
// The tests hold the blocked product to it.
func tileReference(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, bias, c []float32, ldc int) {
	at := func(i, p int) float32 {
		if transA {
			return a[p*lda+i]
		}
		return a[i*lda+p]
	}
	bt := func(p, j int) float32 {
		if transB {
			return b[j*ldb+p]
		}
		return b[p*ldb+j]
	}
	for i := range m {
		for j := range n {
			var s float32
			for k0 := 0; k0 < k; k0 += kStep {
				var even, odd float32
				for t := k0; t < k0+kStep; t++ {
					var x, y float32 // zeros past k: they turn a sum of -0 into +0
					if t < k {
						x, y = tileInput(Round(at(i, t))), tileInput(Round(bt(t, j)))
					}
					if (t-k0)%2 == 0 {
						even = madd(even, x, y)
					} else {
						odd = madd(odd, x, y)
					}
				}
				s = madd(flushDenormal(s), madd(even, odd, 1), 1)
			}
			t := float32(alpha * s)
			switch {
			case bias != nil:
				c[i*ldc+j] = t + bias[j]
			case beta == 0:
				c[i*ldc+j] = t
			default:
				c[i*ldc+j] = t + float32(beta*c[i*ldc+j])
			}
		}
	}
}

// oddShapes are shapes around the tiles' and blocks' edges: 1, 15, 17,
// 31, 33 and 100 in each dimension. modelShapes are those the models use:
// rows of a batch against d_model, 3 d_model, d_ff and the byte
// vocabulary, and a k of 2048, whose rows of A are padded by a line.
var (
	oddShapes = func() [][3]int {
		var s [][3]int
		odd := []int{1, 15, 17, 31, 33, 100}
		for _, m := range odd {
			for _, n := range odd {
				for _, k := range odd {
					s = append(s, [3]int{m, n, k})
				}
			}
		}
		return s
	}()
	modelShapes = [][3]int{{256, 384, 128}, {256, 128, 512}, {256, 512, 128}, {128, 384, 256}, {64, 256, 128}, {96, 1024, 64}, {40, 70, 2048}}
)

// tileProduct is one product of the tile tests: shape, transposes, alpha,
// beta and whether a bias is added; and whether it runs on every edge
// input or on ordinary values only.
type tileProduct struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	bias           bool
	edges          bool
}

func (c tileProduct) String() string {
	return fmt.Sprintf("%dx%dx%d transA %v transB %v alpha %g beta %g bias %v", c.m, c.n, c.k, c.transA, c.transB, c.alpha, c.beta, c.bias)
}

// tileProducts gives each odd shape (on every edge input) and each model
// shape (on ordinary values) two of the four stores (beta 0, beta 1 and
// another, a bias) and two of the four transposes in turn, so that every
// store meets every transpose; the long tests give every shape all
// sixteen.
func tileProducts() []tileProduct {
	stores := []tileProduct{{alpha: 1}, {alpha: 0.5, beta: 1}, {alpha: -1.25, beta: 0.75}, {alpha: 1, beta: 1, bias: true}}
	trans := [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}}
	var cs []tileProduct
	add := func(s [3]int, st tileProduct, tr [2]bool, edges bool) {
		st.m, st.n, st.k, st.transA, st.transB, st.edges = s[0], s[1], s[2], tr[0], tr[1], edges
		cs = append(cs, st)
	}
	for i, s := range append(oddShapes, modelShapes...) {
		edges := i < len(oddShapes)
		if longtest.Enabled {
			for _, st := range stores {
				for _, tr := range trans {
					add(s, st, tr, edges)
				}
			}
			continue
		}
		add(s, stores[i%4], trans[(i/4)%4], edges)
		add(s, stores[(i+2)%4], trans[(i/4+2)%4], edges)
	}
	return cs
}

// tileInputs draws c's A and B as stored (strides past their widths), the
// starting C and the bias, scaled by in.scale and with NaNs and
// infinities where in asks.
func tileInputs(r *rand.Rand, c tileProduct, in inputs) (a []float32, lda int, b []float32, ldb int, c0 []float32, ldc int, bias []float32) {
	s := shape{c.transA, c.transB, c.m, c.n, c.k, c.alpha, c.beta}
	ar, ac, br, bc := s.stored()
	lda, ldb, ldc = ac+3, bc+1, c.n+2
	a, b, c0 = randMatrix(r, ar, lda), randMatrix(r, br, ldb), randMatrix(r, c.m, ldc)
	for _, x := range [][]float32{a, b, c0} {
		for i := range x {
			x[i] = float32(float64(x[i]) * in.scale)
			if in.specials && r.IntN(1000) == 0 {
				x[i] = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[r.IntN(3)]
			}
		}
	}
	if c.bias {
		bias = randMatrix(r, 1, c.n)
	}
	return a, lda, b, ldb, c0, ldc, bias
}

// checkTiles runs every tile case on the edge inputs with product (the
// case's inputs, C starting at c0, into got) and compares got bit for bit
// with the plain loop (NaNs aside: both must be NaN), for each product
// given.
func checkTiles(t *testing.T, cases []tileProduct, products ...func(c tileProduct, a []float32, lda int, b []float32, ldb int, bias, got []float32, ldc int)) {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range cases {
		ins := edgeInputs
		if !c.edges {
			ins = ins[:1]
		}
		for _, in := range ins {
			a, lda, b, ldb, c0, ldc, bias := tileInputs(r, c, in)
			want := append([]float32(nil), c0...)
			tileReference(c.transA, c.transB, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, bias, want, ldc)
			for p, product := range products {
				got := append([]float32(nil), c0...)
				product(c, a, lda, b, ldb, bias, got, ldc)
				for i := range got {
					if !sameBits(got[i], want[i]) {
						t.Fatalf("%v, %+v, product %d: element %d (row %d) is %g (%#08x), the plain loop gives %g (%#08x)", c, in, p, i, i/ldc, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
				}
			}
		}
	}
}

// The blocked tile product on Go's tile arithmetic (packing, transposes,
// partial blocks, padded k, every store) equals the plain loop bit for
// bit, on one goroutine and on three (chunks of strips, shared packing).
func TestTileGemmIsTheReference(t *testing.T) {
	defer func(f float64) { minParallelFlops = f }(minParallelFlops)
	minParallelFlops = 0
	tiles := func(threads int) func(c tileProduct, a []float32, lda int, b []float32, ldb int, bias, got []float32, ldc int) {
		return func(c tileProduct, a []float32, lda int, b []float32, ldb int, bias, got []float32, ldc int) {
			beta := c.beta
			if bias != nil {
				beta = 1
			}
			tileGemm(stripGo, c.transA, c.transB, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, beta, bias, got, ldc, threads, nil)
		}
	}
	checkTiles(t, tileProducts(), tiles(1), tiles(3))
}

// Gemm on the tile path, with the kernels of this build (the tile unit
// and AVX-512 where HasAMX), equals the plain loop bit for bit.
func TestGemmOnTilesIsTheReference(t *testing.T) {
	if !HasAMX() {
		t.Skip("this CPU or kernel has no AMX-BF16 tiles: the tile unit's product is not checked here (TestTileGemmIsTheReference checks it on Go's tile arithmetic)")
	}
	defer usePaths(native, amx)()
	checkTiles(t, tileProducts(), func(c tileProduct, a []float32, lda int, b []float32, ldb int, bias, got []float32, ldc int) {
		if bias != nil {
			GemmBias(c.transA, c.transB, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, bias, got, ldc, 2)
			return
		}
		Gemm(c.transA, c.transB, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, got, ldc, 2)
	})
}
