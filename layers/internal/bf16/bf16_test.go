package bf16

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/alibi-go/alibi/layers/internal/simd"
	"github.com/alibi-go/alibi/layers/layerstest/longtest"
)

// roundRef is Round worked out on values: the nearer of the two bfloat16
// neighbours of x, the even one on a tie.
func roundRef(x float32) uint16 {
	b := math.Float32bits(x)
	lo := uint16(b >> 16) // truncation: the neighbour toward zero
	hi := lo + 1
	dlo := math.Abs(float64(x) - float64(Float32(lo)))
	dhi := math.Abs(float64(x) - float64(Float32(hi)))
	if math.IsInf(float64(Float32(hi)), 0) { // rounding up reaches infinity past MaxFloat32's midpoint
		dhi = math.Pow(2, 128) - math.Abs(float64(x))
	}
	switch {
	case dlo < dhi:
		return lo
	case dhi < dlo:
		return hi
	case lo&1 == 0:
		return lo
	}
	return hi
}

func TestRound(t *testing.T) {
	for _, c := range []struct {
		in   uint32
		want uint16
	}{
		{0x3f800000, 0x3f80}, // 1
		{0x3f808000, 0x3f80}, // 1 + 2^-8: a tie, to the even 1
		{0x3f818000, 0x3f82}, // a tie to the even neighbour above
		{0x3f808001, 0x3f81}, // just past the tie
		{0x3f807fff, 0x3f80}, // just before it
		{0xbf808001, 0xbf81}, // the same below zero
		{0x7f7fffff, 0x7f80}, // MaxFloat32 rounds to +Inf
		{0x7f800000, 0x7f80}, // +Inf
		{0xff800000, 0xff80}, // -Inf
		{0x7f800001, 0x7fc0}, // a signalling NaN becomes quiet
		{0xffc12345, 0xffc1}, // a quiet NaN keeps its top bits
		{0x00000001, 0x0000}, // denormals become zeros of their sign
		{0x807fffff, 0x8000},
		{0x00800000, 0x0080}, // the smallest normal stays
		{0x80000000, 0x8000}, // -0
	} {
		if got := Round(math.Float32frombits(c.in)); got != c.want {
			t.Errorf("Round(%#08x) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	// Every normal finite float32 of random bits, and the ties, against
	// the nearest neighbour worked out on values.
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		b := r.Uint32()
		if r.IntN(4) == 0 {
			b = b&0xffff0000 | 0x8000 // a tie
		}
		x := math.Float32frombits(b)
		if e := b & 0x7f800000; e == 0 || e == 0x7f800000 {
			continue
		}
		if got, want := Round(x), roundRef(x); got != want {
			t.Fatalf("Round(%#08x) = %#04x, want %#04x", b, got, want)
		}
	}
}

// randMatrix returns rows x cols values (row stride ld) of mixed signs and
// magnitudes.
func randMatrix(r *rand.Rand, rows, ld int) []float32 {
	s := make([]float32, rows*ld)
	for i := range s {
		s[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(7)-3)) // times 2^-3..2^3, exactly
	}
	return s
}

type shape struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
}

// shapes lists the products the tests run: every transpose; one tile,
// partial tiles, odd k, one k block and two (k = 257, with m = 150 two
// blocks of rows too), wide B; alpha and beta. The long tests add three
// blocks of rows and of k (300 x 65 x 600), most of the portable kernel's
// time.
func shapes() []shape {
	dims := longtest.Pick(
		[][3]int{{1, 1, 1}, {8, 32, 2}, {7, 31, 3}, {9, 33, 255}, {17, 70, 256}, {150, 40, 257}, {64, 384, 128}},
		[][3]int{{1, 1, 1}, {8, 32, 2}, {7, 31, 3}, {9, 33, 255}, {17, 70, 256}, {150, 40, 257}, {300, 65, 600}, {64, 384, 128}})
	var out []shape
	for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		for _, d := range dims {
			for _, ab := range [][2]float32{{1, 0}, {0.5, 1}, {-1.25, 0.75}} {
				out = append(out, shape{tr[0], tr[1], d[0], d[1], d[2], ab[0], ab[1]})
			}
		}
	}
	return out
}

// stored is the stored shape (rows x columns) of A and of B.
func (s shape) stored() (ar, ac, br, bc int) {
	ar, ac, br, bc = s.m, s.k, s.k, s.n
	if s.transA {
		ar, ac = s.k, s.m
	}
	if s.transB {
		br, bc = s.n, s.k
	}
	return ar, ac, br, bc
}

// run multiplies random matrices of shape s, with padded strides (lda =
// ac+3, ldb = bc+1, ldc = n+5), into C starting from random values, and
// returns A, B, the starting C and the result.
func run(s shape, seed uint64, threads int) (a, b, c0, c []float32) {
	return runWith(s, seed, threads, inputs{scale: 1})
}

// inputs says how runWith changes run's random matrices.
type inputs struct {
	scale    float64 // A, B and the starting C multiplied by it
	specials bool    // about one element in 1000 of A and B a NaN or an infinity
}

// runWith is run on the inputs in describes.
func runWith(s shape, seed uint64, threads int, in inputs) (a, b, c0, c []float32) {
	r := rand.New(rand.NewPCG(seed, 7))
	ar, ac, br, bc := s.stored()
	a, b = randMatrix(r, ar, ac+3), randMatrix(r, br, bc+1)
	c = randMatrix(r, s.m, s.n+5)
	for _, m := range [][]float32{a, b, c} {
		for i := range m {
			m[i] = float32(float64(m[i]) * in.scale)
		}
	}
	if in.specials {
		specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
		for _, m := range [][]float32{a, b} {
			for i := range m {
				if r.IntN(1000) == 0 {
					m[i] = specials[r.IntN(len(specials))]
				}
			}
		}
	}
	c0 = append([]float32(nil), c...)
	Gemm(s.transA, s.transB, s.m, s.n, s.k, s.alpha, a, ac+3, b, bc+1, s.beta, c, s.n+5, threads)
	return a, b, c0, c
}

// asmPaths lists the assembly paths this CPU and build run: the AVX2
// emulation (on any CPU with AVX2, so that a CPU with AVX-512 tests it
// too), the AVX-512F emulation, and AVX512_BF16's instructions where the
// CPU has them.
func asmPaths() []kpath {
	var ps []kpath
	if simd.AVX2.Supported() {
		ps = append(ps, avx2)
	}
	if simd.BF16Emulated() {
		ps = append(ps, emulated)
	}
	if simd.BF16() {
		ps = append(ps, native)
	}
	return ps
}

// usePath makes the package run p, its conversions and its kernel, until
// the returned function is called.
func usePath(p kpath) (restore func()) { return usePaths(p, p) }

// usePaths makes the conversions run on conv and the products on kern
// until the returned function is called.
func usePaths(conv, kern kpath) (restore func()) {
	productsPath() // measured now, so that the measurement cannot replace kern later
	prevConv, prevKern := path, products
	path, products = conv, kern
	return func() { path, products = prevConv, prevKern }
}

// pathPair is a way to run the package: the conversions' path and the
// kernel's.
type pathPair struct{ conv, kern kpath }

// asmPathPairs lists the ways productsPath can run the package with
// assembly on this CPU and build: each assembly path alone, and the
// instructions' conversions with the emulated kernel.
func asmPathPairs() []pathPair {
	var ps []pathPair
	for _, p := range asmPaths() {
		ps = append(ps, pathPair{p, p})
	}
	if simd.BF16() && simd.BF16Emulated() {
		ps = append(ps, pathPair{native, emulated})
	}
	return ps
}

// Each assembly path gives the portable kernel's bits on every shape:
// partial tiles, odd k, several k blocks, transposes, beta 0, 1 and other;
// and on inputs whose products and sums fall among the denormals (flushed
// to zero), overflow to infinities, or hold NaNs.
func TestAssemblyBitsEqualPortable(t *testing.T) {
	ps := asmPathPairs()
	if len(ps) == 0 {
		t.Skip("no AVX2 on this machine or build")
	}
	for i, s := range shapes() {
		for _, in := range edgeInputs {
			restore := usePath(portable)
			_, _, _, ref := runWith(s, uint64(i), 1, in)
			restore()
			for _, p := range ps {
				restore := usePaths(p.conv, p.kern)
				_, _, _, asm := runWith(s, uint64(i), 1, in)
				restore()
				for j := range asm {
					if !sameBits(asm[j], ref[j]) {
						t.Fatalf("%v, %+v, %+v: element %d: assembly %v (%#08x), portable %v (%#08x)", p, s, in, j, asm[j], math.Float32bits(asm[j]), ref[j], math.Float32bits(ref[j]))
					}
				}
			}
		}
	}
}

// sameBits reports whether x and y have the same bits, or are both NaN:
// which NaN an operation on NaNs and infinities gives (its sign and
// payload) follows each path's own order of operands.
func sameBits(x, y float32) bool {
	return math.Float32bits(x) == math.Float32bits(y) || x != x && y != y
}

// edgeInputs are the inputs of TestAssemblyBitsEqualPortable: ordinary
// values; values whose products and sums fall among the denormals (2^-64
// and 2^-66: products near 2^-128, flushed to zero); sums that overflow
// (2^64); and infinities and NaNs among the inputs.
var edgeInputs = []inputs{{scale: 1}, {scale: 0x1p-64}, {scale: 0x1p-66}, {scale: 0x1p64}, {scale: 1, specials: true}}

// The edge inputs reach what they are meant to: sums flushed to zero,
// infinities and NaNs.
func TestEdgeInputsReachTheEdges(t *testing.T) {
	// On the portable path: the tile unit's arithmetic sums even and odd
	// steps apart, so that an overflow there is often inf - inf, a NaN.
	defer usePath(portable)()
	s := shape{false, false, 17, 70, 256, 1, 0}
	count := func(in inputs) (zeros, infs, nans int) {
		_, _, _, c := runWith(s, 1, 1, in)
		for i := range s.m {
			for _, x := range c[i*(s.n+5) : i*(s.n+5)+s.n] {
				switch {
				case x == 0:
					zeros++
				case math.IsInf(float64(x), 0):
					infs++
				case x != x:
					nans++
				}
			}
		}
		return zeros, infs, nans
	}
	tiny, _, _ := count(inputs{scale: 0x1p-66})
	_, huge, _ := count(inputs{scale: 0x1p64})
	_, infs, nans := count(inputs{scale: 1, specials: true})
	if tiny < s.m*s.n/4 || huge < s.m*s.n/2 || infs == 0 || nans == 0 {
		t.Fatalf("%d of %d sums flushed to zero at 2^-66, %d infinite at 2^64; with special inputs %d infinite, %d NaN", tiny, s.m*s.n, huge, infs, nans)
	}
}

// splitAsm gives splitGo's floats.
func TestSplit(t *testing.T) {
	if !simd.AVX2.Supported() {
		t.Skip("no AVX2 on this machine or build")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, width := range []int{MR, NR} {
		for _, groups := range []int{0, 1, 3, 18} {
			src := make([]uint32, groups*width)
			for i := range src {
				src[i] = r.Uint32()
			}
			got, want := make([]float32, 2*len(src)+1), make([]float32, 2*len(src)+1)
			split(got, src, width)
			splitGo(want, src, width)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("width %d, %d groups: float %d is %#08x, want %#08x", width, groups, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
				}
			}
		}
	}
}

// Several goroutines give the bits of one.
func TestThreadsSameBits(t *testing.T) {
	defer func(f float64) { minParallelFlops = f }(minParallelFlops)
	minParallelFlops = 0
	for i, s := range shapes() {
		_, _, _, one := run(s, uint64(i), 1)
		_, _, _, four := run(s, uint64(i), 4)
		for j := range one {
			if math.Float32bits(one[j]) != math.Float32bits(four[j]) {
				t.Fatalf("%+v: element %d: %v with one goroutine, %v with four", s, j, one[j], four[j])
			}
		}
	}
}

// Against float64 sums: of the rounded inputs, within float32 accumulation
// error; of the float32 inputs, within the bfloat16 rounding of the terms.
func TestGemmAccuracy(t *testing.T) {
	for i, s := range shapes() {
		a, b, c0, got := run(s, uint64(i), 2)
		_, ac, _, bc := s.stored()
		lda, ldb, ldc := ac+3, bc+1, s.n+5
		for i := range s.m {
			for j := range s.n {
				var rounded, exact, mag float64
				for p := range s.k {
					var x, y float32
					if s.transA {
						x = a[p*lda+i]
					} else {
						x = a[i*lda+p]
					}
					if s.transB {
						y = b[j*ldb+p]
					} else {
						y = b[p*ldb+j]
					}
					rounded += float64(Float32(Round(x))) * float64(Float32(Round(y)))
					exact += float64(x) * float64(y)
					mag += math.Abs(float64(x) * float64(y))
				}
				al, be := float64(s.alpha), float64(s.beta)
				cij := float64(c0[i*ldc+j])
				g := float64(got[i*ldc+j])
				scale := math.Abs(al)*mag + math.Abs(be*cij)
				if d := math.Abs(g - (al*rounded + be*cij)); d > 2*float64(s.k+2)*0x1p-24*scale+1e-30 {
					t.Fatalf("%+v: C(%d,%d) = %v, the float64 sum of the rounded terms gives %v (off by %.3g of %.3g)", s, i, j, g, al*rounded+be*cij, d, scale)
				}
				if d := math.Abs(g - (al*exact + be*cij)); d > 0x1p-7*math.Abs(al)*mag+2*float64(s.k+2)*0x1p-24*scale+1e-30 {
					t.Fatalf("%+v: C(%d,%d) = %v, the exact product gives %v (off by %.3g of %.3g)", s, i, j, g, al*exact+be*cij, d, scale)
				}
			}
		}
	}
}

// GemmBias gives the bits of the bias copied into every row and Gemm with
// beta 1, on every shape (several k blocks, partial tiles, k = 0 and alpha
// = 0 too), in assembly and portable Go, on one goroutine and four; the
// padding of C beyond n columns is not touched.
func TestGemmBiasEqualsCopiedBias(t *testing.T) {
	defer func(f float64) { minParallelFlops = f }(minParallelFlops)
	defer usePaths(path, productsPath())()
	minParallelFlops = 0
	paths := append([]kpath{portable}, asmPaths()...)
	for i, s := range append(shapes(), shape{false, false, 5, 7, 0, 1, 1}, shape{false, false, 9, 40, 3, 0, 1}) {
		r := rand.New(rand.NewPCG(uint64(i), 9))
		ar, ac, br, bc := s.stored()
		a, b := randMatrix(r, ar, ac+3), randMatrix(r, br, bc+1)
		bias, c0 := randMatrix(r, 1, s.n), randMatrix(r, s.m, s.n+5)
		for _, p := range paths {
			usePath(p)
			want := append([]float32(nil), c0...)
			for row := range s.m {
				copy(want[row*(s.n+5):], bias)
			}
			Gemm(s.transA, s.transB, s.m, s.n, s.k, s.alpha, a, ac+3, b, bc+1, 1, want, s.n+5, 1)
			for _, threads := range []int{1, 4} {
				got := append([]float32(nil), c0...)
				GemmBias(s.transA, s.transB, s.m, s.n, s.k, s.alpha, a, ac+3, b, bc+1, bias, got, s.n+5, threads)
				for j := range got {
					if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
						t.Fatalf("%+v, %v, %d goroutines: element %d: %v, copied bias and beta 1 give %v", s, p, threads, j, got[j], want[j])
					}
				}
			}
		}
	}
}

// GemmThen and GemmBiasThen give the bits of Gemm and GemmBias followed by
// the epilogue on the whole of C, and call it on disjoint ranges of whole
// rows that cover C once, on one goroutine and on four (several chunks),
// and on products with k = 0.
func TestGemmThenChunks(t *testing.T) {
	defer func(f float64) { minParallelFlops = f }(minParallelFlops)
	minParallelFlops = 0
	for i, s := range append(shapes(), shape{false, false, 5, 7, 0, 1, 1}, shape{false, false, 300, 40, 64, 1, 0}) {
		r := rand.New(rand.NewPCG(uint64(i), 11))
		ar, ac, br, bc := s.stored()
		a, b := randMatrix(r, ar, ac+3), randMatrix(r, br, bc+1)
		bias, c0 := randMatrix(r, 1, s.n), randMatrix(r, s.m, s.n+5)
		ldc := s.n + 5
		square := func(c []float32) func(i0, i1, j0, j1 int) {
			return func(i0, i1, j0, j1 int) {
				for i := i0; i < i1; i++ {
					for j := j0; j < j1; j++ {
						c[i*ldc+j] = c[i*ldc+j]*c[i*ldc+j] + 1
					}
				}
			}
		}
		for _, withBias := range []bool{false, true} {
			want := append([]float32(nil), c0...)
			if withBias {
				GemmBias(s.transA, s.transB, s.m, s.n, s.k, s.alpha, a, ac+3, b, bc+1, bias, want, ldc, 1)
			} else {
				Gemm(s.transA, s.transB, s.m, s.n, s.k, s.alpha, a, ac+3, b, bc+1, s.beta, want, ldc, 1)
			}
			square(want)(0, s.m, 0, s.n)
			for _, threads := range []int{1, 4} {
				got := append([]float32(nil), c0...)
				calls := make([]atomic.Int32, s.m)
				then := func(i0, i1, j0, j1 int) {
					if j0 != 0 || j1 != s.n || i0 >= i1 {
						t.Errorf("%+v: epilogue on rows %d..%d, columns %d..%d", s, i0, i1, j0, j1)
					}
					for i := i0; i < i1; i++ {
						calls[i].Add(1)
					}
					square(got)(i0, i1, j0, j1)
				}
				if withBias {
					GemmBiasThen(s.transA, s.transB, s.m, s.n, s.k, s.alpha, a, ac+3, b, bc+1, bias, got, ldc, threads, then)
				} else {
					GemmThen(s.transA, s.transB, s.m, s.n, s.k, s.alpha, a, ac+3, b, bc+1, s.beta, got, ldc, threads, then)
				}
				for i := range calls {
					if n := calls[i].Load(); n != 1 {
						t.Fatalf("%+v, bias %v, %d goroutines: row %d had the epilogue %d times", s, withBias, threads, i, n)
					}
				}
				for j := range got {
					if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
						t.Fatalf("%+v, bias %v, %d goroutines: element %d: %v, the product then the epilogue give %v", s, withBias, threads, j, got[j], want[j])
					}
				}
			}
		}
	}
}

// RoundSlice gives Round's bits, on every path: ties, denormals, NaNs,
// infinities and random values, at lengths around the 32-element blocks.
func TestRoundSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	special := []uint32{0x3f808000, 0x3f818000, 0x7f7fffff, 0x7f800000, 0xff800000, 0x7f800001, 0xffc12345, 0x00000001, 0x807fffff, 0x00800000, 0x80000000, 0}
	for _, n := range []int{0, 1, 31, 32, 33, 64, 100, 1000} {
		src := make([]float32, n)
		for i := range src {
			b := r.Uint32()
			switch r.IntN(3) {
			case 0:
				b = special[r.IntN(len(special))]
			case 1:
				b = b&0xffff0000 | 0x8000
			}
			src[i] = math.Float32frombits(b)
		}
		for _, p := range append([]kpath{portable}, asmPaths()...) {
			restore := usePath(p)
			dst := make([]uint16, n)
			RoundSlice(dst, src)
			restore()
			for i, x := range src {
				if dst[i] != Round(x) {
					t.Fatalf("%v, n %d: RoundSlice of %#08x gives %#04x, Round %#04x", p, n, math.Float32bits(x), dst[i], Round(x))
				}
			}
		}
	}
}

// A sum just below the smallest normal number, 2^-126, becomes 2^-126 or
// zero as x86's flush-to-zero decides after rounding (madd), on every
// path: 2^-126 when the sum rounded to 24 significant bits is 2^-126 (a
// deficit up to half of 2^-150, the tie going to the even 2^-126), zero
// below. VDPBF16PS on Zen 4 gives these values; a flush decided on the
// sum rounded to float32's denormals would keep 2^-126 for deficits up to
// 2^-150.
func TestTinyAfterRounding(t *testing.T) {
	for _, c := range []struct {
		deficit float64 // below 2^-126
		want    float32
	}{
		{0x1p-160, 0x1p-126},
		{0x1p-152, 0x1p-126},
		{0x1p-151, 0x1p-126}, // the midpoint
		{0x1.8p-151, 0},
		{0x1p-150, 0},
		{0x1.4p-150, 0},
		{0x1p-149, 0}, // 2^-126 - 2^-149, a denormal float32
	} {
		for _, sign := range []float32{1, -1} {
			// k = 2: the odd step's product 2^-63·2^-63 = 2^-126 first,
			// then the even step's -deficit·2^75 · 2^-75.
			a := []float32{sign * float32(-c.deficit*0x1p75), sign * 0x1p-63}
			b := []float32{0x1p-75, 0x1p-63}
			want := sign * c.want
			for _, p := range append([]kpath{portable}, asmPaths()...) {
				restore := usePath(p)
				got := []float32{7}
				Gemm(false, false, 1, 1, 2, 1, a, 2, b, 1, 0, got, 1, 1)
				restore()
				if math.Float32bits(got[0]) != math.Float32bits(want) {
					t.Errorf("%v: %v·(2^-126 - %g·2^-150) gives %v (%#08x), want %v (%#08x)", p, sign, c.deficit*0x1p150, got[0], math.Float32bits(got[0]), want, math.Float32bits(want))
				}
			}
		}
	}
}
