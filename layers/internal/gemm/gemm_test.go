package gemm

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/layers/internal/simd"
	"github.com/alibi-go/alibi/layers/layerstest/longtest"
)

const sentinel = float32(-12345.5)

// refGemm is a float64-accumulating reference for the row-major semantics
// of Sgemm on the m x n window. It copies op(A)'s rows and op(B)'s columns
// into contiguous float64 vectors first, so that each element is one plain
// dot product (summed in four interleaved partial sums).
func refGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) []float64 {
	rows := make([]float64, m*k) // row i of op(A) at i*k
	for i := 0; i < m; i++ {
		for p := 0; p < k; p++ {
			if transA {
				rows[i*k+p] = float64(a[p*lda+i])
			} else {
				rows[i*k+p] = float64(a[i*lda+p])
			}
		}
	}
	cols := make([]float64, n*k) // column j of op(B) at j*k
	for j := 0; j < n; j++ {
		for p := 0; p < k; p++ {
			if transB {
				cols[j*k+p] = float64(b[j*ldb+p])
			} else {
				cols[j*k+p] = float64(b[p*ldb+j])
			}
		}
	}
	out := make([]float64, m*n)
	for i := 0; i < m; i++ {
		x := rows[i*k : i*k+k]
		for j := 0; j < n; j++ {
			y := cols[j*k : j*k+k]
			var s0, s1, s2, s3 float64
			p := 0
			for ; p+4 <= len(x); p += 4 {
				s0 += x[p] * y[p]
				s1 += x[p+1] * y[p+1]
				s2 += x[p+2] * y[p+2]
				s3 += x[p+3] * y[p+3]
			}
			for ; p < len(x); p++ {
				s0 += x[p] * y[p]
			}
			v := float64(alpha) * ((s0 + s1) + (s2 + s3))
			if beta != 0 {
				v += float64(beta) * float64(c[i*ldc+j])
			}
			out[i*n+j] = v
		}
	}
	return out
}

func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = rng.Float32()*2 - 1
	}
	return s
}

type gemmCase struct {
	tA, tB        bool
	m, n, k       int
	padA, padB    int // extra leading-dimension padding
	padC          int
	alpha, beta   float32
	nanC          bool
	threads       int
	extraRowsTail int // extra rows allocated past the matrix end
}

func (tc gemmCase) String() string {
	return fmt.Sprintf("tA=%v,tB=%v,m=%d,n=%d,k=%d,pad=%d/%d/%d,alpha=%g,beta=%g,nan=%v,threads=%d",
		tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.padA, tc.padB, tc.padC, tc.alpha, tc.beta, tc.nanC, tc.threads)
}

// runCase runs one case and reports an error on mismatch or on any change
// outside the C window.
func runCase(t *testing.T, rng *rand.Rand, tc gemmCase) {
	t.Helper()
	ar, ac := tc.m, tc.k
	if tc.tA {
		ar, ac = tc.k, tc.m
	}
	br, bc := tc.k, tc.n
	if tc.tB {
		br, bc = tc.n, tc.k
	}
	lda, ldb, ldc := max(1, ac)+tc.padA, max(1, bc)+tc.padB, max(1, tc.n)+tc.padC
	a := randSlice(rng, ar*lda+tc.extraRowsTail)
	b := randSlice(rng, br*ldb+tc.extraRowsTail)
	c := make([]float32, tc.m*ldc+tc.extraRowsTail)
	for i := range c {
		c[i] = sentinel
	}
	for i := 0; i < tc.m; i++ {
		for j := 0; j < tc.n; j++ {
			if tc.nanC {
				c[i*ldc+j] = float32(math.NaN())
			} else {
				c[i*ldc+j] = rng.Float32()*2 - 1
			}
		}
	}
	aCopy := append([]float32(nil), a...)
	bCopy := append([]float32(nil), b...)
	want := refGemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc)

	Sgemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc, tc.threads)

	tol := 1e-5 * float64(max(tc.k, 1)) * (1 + math.Abs(float64(tc.alpha)))
	bad := 0
	for i := 0; i < tc.m; i++ {
		for j := 0; j < tc.n; j++ {
			got := float64(c[i*ldc+j])
			w := want[i*tc.n+j]
			if math.IsNaN(got) || math.Abs(got-w) > tol*math.Max(1, math.Abs(w)) {
				if bad < 5 {
					t.Errorf("%v: C[%d][%d] = %v, want %v", tc, i, j, got, w)
				}
				bad++
			}
		}
	}
	// Nothing outside the window may change.
	for idx, v := range c {
		i, j := idx/ldc, idx%ldc
		if i < tc.m && j < tc.n {
			continue
		}
		if v != sentinel {
			t.Errorf("%v: C element %d (row %d col %d) outside the window changed to %v", tc, idx, i, j, v)
			break
		}
	}
	for i := range a {
		if a[i] != aCopy[i] {
			t.Fatalf("%v: A was modified", tc)
		}
	}
	for i := range b {
		if b[i] != bCopy[i] {
			t.Fatalf("%v: B was modified", tc)
		}
	}
	if bad > 0 {
		t.Errorf("%v: %d mismatching elements", tc, bad)
	}
}

var shapes = [][3]int{
	{1, 1, 1}, {1, 1, 7}, {2, 3, 4}, {7, 13, 5}, {17, 33, 65}, {6, 16, 1},
	{6, 16, 8}, {5, 15, 9}, {7, 17, 3}, {12, 32, 4}, {13, 31, 257},
	{6, 16, 256}, {6, 16, 257}, {6, 16, 513}, {145, 17, 3}, {143, 49, 30},
	{289, 33, 20}, {1, 100, 50}, {100, 1, 50}, {64, 64, 64}, {31, 2049, 3},
	{3, 4100, 2}, {150, 40, 600}, {128, 32, 128}, {130, 130, 32},
}

// forEachPath runs f as a subtest on every path (see Path); a path that the
// CPU or the build does not support is skipped.
func forEachPath(t *testing.T, f func(t *testing.T)) {
	for _, p := range Paths {
		t.Run(p.String(), func(t *testing.T) {
			if !p.Supported() {
				t.Skipf("the %v path is not supported by this CPU or build", p)
			}
			defer setPath(setPath(p))
			f(t)
		})
	}
}

// forEachSweepPath is forEachPath for the large sweeps over goroutine
// counts and splits. Where the CPU has an assembly path, the portable one
// runs them in the long tests only: its kernel's arithmetic is checked
// here by the per-shape tests, and it shares the AVX2 path's blocking.
func forEachSweepPath(t *testing.T, f func(t *testing.T)) {
	forEachPath(t, func(t *testing.T) {
		if Active() == Portable && simd.Best() != Portable {
			longtest.Only(t)
		}
		f(t)
	})
}

func TestSgemmShapes(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(1))
		for _, s := range shapes {
			for _, tA := range []bool{false, true} {
				for _, tB := range []bool{false, true} {
					runCase(t, rng, gemmCase{tA: tA, tB: tB, m: s[0], n: s[1], k: s[2], alpha: 1, beta: 0, threads: 1})
				}
			}
		}
	})
}

func TestSgemmStridedAlphaBeta(t *testing.T) {
	ab := [][2]float32{{1, 0}, {1, 1}, {0.5, -2}, {-1.5, 0.25}, {2, 0}, {0, 0}, {0, 3}, {1, -1}}
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(2))
		for _, s := range [][3]int{{7, 13, 5}, {17, 33, 65}, {6, 16, 300}, {12, 48, 16}, {1, 1, 1}, {40, 20, 0}} {
			for _, tA := range []bool{false, true} {
				for _, tB := range []bool{false, true} {
					for _, x := range ab {
						for _, nan := range []bool{false, true} {
							if nan && x[1] != 0 {
								continue
							}
							runCase(t, rng, gemmCase{
								tA: tA, tB: tB, m: s[0], n: s[1], k: s[2],
								padA: 3, padB: 5, padC: 7, alpha: x[0], beta: x[1], nanC: nan,
								threads: 1, extraRowsTail: 0,
							})
						}
					}
				}
			}
		}
	})
}

// withParallelSettings runs f with the given parallel threshold and shared
// packing budget, restoring the defaults afterwards.
func withParallelSettings(minFlops float64, budget int, f func()) {
	savedFlops, savedBudget := minParallelFlops, sharedPackBudget
	defer func() { minParallelFlops, sharedPackBudget = savedFlops, savedBudget }()
	minParallelFlops, sharedPackBudget = minFlops, budget
	f()
}

func TestSgemmThreads(t *testing.T) {
	modes := []struct {
		name     string
		minFlops float64
		budget   int
	}{
		{"default", minParallelFlops, sharedPackBudget},
		{"shared", 0, sharedPackBudget}, // every shape takes the shared-packing path
		{"static", 0, -1},               // every shape takes the static split
	}
	// Two goroutines and seven (odd, and more than most CPUs' cores); the
	// long tests add three and four.
	threads := longtest.Pick([]int{2, 7}, []int{2, 3, 4, 7})
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			withParallelSettings(mode.minFlops, mode.budget, func() {
				forEachSweepPath(t, func(t *testing.T) {
					rng := rand.New(rand.NewSource(3))
					for _, s := range [][3]int{{256, 130, 64}, {130, 514, 40}, {2048, 32, 32}, {37, 1000, 70}, {300, 300, 300}, {7, 13, 5}, {1, 40, 3}, {40, 1, 300}, {13, 35, 600}} {
						for _, tA := range []bool{false, true} {
							for _, tB := range []bool{false, true} {
								for _, th := range threads {
									runCase(t, rng, gemmCase{
										tA: tA, tB: tB, m: s[0], n: s[1], k: s[2],
										padA: 1, padB: 2, padC: 3, alpha: 0.75, beta: 0.5, threads: th,
									})
								}
							}
						}
					}
				})
			})
		})
	}
}

func TestSgemmBetaZeroNaN(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(4))
		for _, s := range [][3]int{{6, 16, 4}, {7, 17, 4}, {200, 100, 300}, {700, 40, 300}} {
			for _, th := range []int{1, 2} {
				runCase(t, rng, gemmCase{m: s[0], n: s[1], k: s[2], padC: 4, alpha: 1, beta: 0, nanC: true, threads: th})
				// Negative zero must also mean "overwrite".
				runCase(t, rng, gemmCase{m: s[0], n: s[1], k: s[2], padC: 4, alpha: 1, beta: float32(math.Copysign(0, -1)), nanC: true, threads: th})
			}
		}
	})
}

// TestSgemmAttentionStrided mimics Q*K^T for one head inside a packed QKV
// tensor: lda = ldb = 384 with k = 32.
func TestSgemmAttentionStrided(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(5))
		for _, th := range []int{1, 2} {
			runCase(t, rng, gemmCase{tB: true, m: 128, n: 128, k: 32, padA: 352, padB: 352, alpha: 0.125, beta: 0, threads: th})
			runCase(t, rng, gemmCase{tA: true, m: 128, n: 32, k: 128, padA: 100, padB: 352, alpha: 1, beta: 1, threads: th})
		}
	})
}

func TestSgemmEmpty(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		// m or n == 0 must not touch anything, even with nil slices.
		Sgemm(false, false, 0, 5, 3, 1, nil, 3, make([]float32, 15), 5, 0, nil, 5, 2)
		Sgemm(false, false, 5, 0, 3, 1, make([]float32, 15), 3, nil, 1, 0, nil, 1, 2)
		// k == 0: C = beta*C and A, B may be empty.
		c := []float32{1, 2, 3, 4, 5, 6}
		Sgemm(false, false, 2, 2, 0, 1, nil, 1, nil, 2, 2, c, 3, 1)
		want := []float32{2, 4, 3, 8, 10, 6}
		for i := range c {
			if c[i] != want[i] {
				t.Fatalf("k=0 beta=2: got %v, want %v", c, want)
			}
		}
		nan := float32(math.NaN())
		c = []float32{nan, nan, 7}
		Sgemm(true, true, 1, 2, 0, 1, nil, 1, nil, 1, 0, c, 2, 1)
		if c[0] != 0 || c[1] != 0 || c[2] != 7 {
			t.Fatalf("k=0 beta=0: got %v", c)
		}
	})
}

func TestSgemmPanics(t *testing.T) {
	a := make([]float32, 100)
	cases := []struct {
		name string
		want string
		f    func()
	}{
		{"negative m", "negative dimension", func() { Sgemm(false, false, -1, 2, 2, 1, a, 2, a, 2, 0, a, 2, 1) }},
		{"small lda", "lda", func() { Sgemm(false, false, 2, 2, 3, 1, a, 2, a, 2, 0, a, 2, 1) }},
		{"small ldb trans", "ldb", func() { Sgemm(false, true, 2, 2, 3, 1, a, 3, a, 2, 0, a, 2, 1) }},
		{"small ldc", "ldc", func() { Sgemm(false, false, 2, 3, 2, 1, a, 2, a, 3, 0, a, 2, 1) }},
		{"short A", "A has length", func() { Sgemm(false, false, 20, 2, 10, 1, a, 10, a, 2, 0, a, 2, 1) }},
		{"short B", "B has length", func() { Sgemm(false, false, 2, 20, 10, 1, a, 10, a, 20, 0, a, 20, 1) }},
		{"short C", "C has length", func() { Sgemm(false, false, 20, 10, 2, 1, a, 2, a, 10, 0, a, 10, 1) }},
	}
	forEachPath(t, func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				defer func() {
					r := recover()
					if r == nil {
						t.Fatalf("no panic")
					}
					if msg := fmt.Sprint(r); !strings.Contains(msg, tc.want) {
						t.Fatalf("panic %q does not mention %q", msg, tc.want)
					}
				}()
				tc.f()
			})
		}
	})
}

// TestSgemmExactLengths checks that slices exactly as long as the CBLAS
// formula requires are accepted (no over-reads past the last row).
func TestSgemmExactLengths(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(6))
		for _, s := range [][3]int{{7, 13, 5}, {13, 35, 19}, {64, 64, 64}} {
			for _, tA := range []bool{false, true} {
				for _, tB := range []bool{false, true} {
					m, n, k := s[0], s[1], s[2]
					ar, ac := m, k
					if tA {
						ar, ac = k, m
					}
					br, bc := k, n
					if tB {
						br, bc = n, k
					}
					lda, ldb, ldc := ac+3, bc+2, n+5
					a := randSlice(rng, (ar-1)*lda+ac)
					b := randSlice(rng, (br-1)*ldb+bc)
					c := randSlice(rng, (m-1)*ldc+n)
					want := refGemm(tA, tB, m, n, k, 1, a, lda, b, ldb, 1, c, ldc)
					Sgemm(tA, tB, m, n, k, 1, a, lda, b, ldb, 1, c, ldc, 2)
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							if d := math.Abs(float64(c[i*ldc+j]) - want[i*n+j]); d > 1e-5*float64(k)*math.Max(1, math.Abs(want[i*n+j])) {
								t.Fatalf("tA=%v tB=%v %v: C[%d][%d]=%v want %v", tA, tB, s, i, j, c[i*ldc+j], want[i*n+j])
							}
						}
					}
				}
			}
		}
	})
}

func TestSplitGrid(t *testing.T) {
	for _, p := range Paths {
		for _, s := range [][4]int{{2048, 384, 128, 2}, {128, 512, 2048, 2}, {6, 16, 10, 8}, {1000, 1000, 10, 4}, {1, 1, 1, 3}} {
			tr, tc := splitGrid(&geometries[p], s[0], s[1], s[2], s[3])
			if tr < 1 || tc < 1 || tr*tc > s[3] {
				t.Errorf("%v: splitGrid%v = %d x %d", p, s, tr, tc)
			}
		}
	}
}

// TestSgemmEdgeTiles covers every number of rows and columns of a partial
// tile of every path (up to the largest tile, 8 x 32), with and without
// beta, transposed or not.
func TestSgemmEdgeTiles(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(9))
		for m := 1; m <= 17; m++ {
			for _, n := range []int{1, 2, 5, 8, 15, 16, 17, 24, 31, 32, 33, 47, 48, 63, 64, 65} {
				for _, tA := range []bool{false, true} {
					for _, tB := range []bool{false, true} {
						for _, beta := range []float32{0, 0.5} {
							runCase(t, rng, gemmCase{tA: tA, tB: tB, m: m, n: n, k: 2 + m%9, padA: 1, padB: 2, padC: 3, alpha: 1.25, beta: beta, threads: 1})
						}
					}
				}
			}
		}
	})
}

// TestAsmPathsAgree checks that the assembly paths give bit-identical
// results: each element is accumulated over k in the same order with fused
// multiply-adds and scaled the same way. (The AVX2 path merges partial tiles
// with beta != 0 without fusing, so those are left out.)
func TestAsmPathsAgree(t *testing.T) {
	if !AVX2.Supported() || !AVX512.Supported() {
		t.Skip("needs both the avx2 and the avx512 paths")
	}
	defer setPath(setPath(AVX2))
	rng := rand.New(rand.NewSource(10))
	for _, s := range [][3]int{{1, 1, 1}, {7, 13, 5}, {48, 64, 300}, {130, 70, 600}, {96, 32, 1000}, {2048, 128, 64}, {128, 128, 32}} {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, beta := range []float32{0, 0.5} {
					m, n, k := s[0], s[1], s[2]
					if beta != 0 && (m%6 != 0 || n%16 != 0) {
						continue
					}
					a, b := randSlice(rng, m*k), randSlice(rng, k*n)
					c0 := randSlice(rng, m*n)
					lda, ldb := k, n
					if tA {
						lda = m
					}
					if tB {
						ldb = k
					}
					var out [2][]float32
					for i, p := range []Path{AVX2, AVX512} {
						setPath(p)
						out[i] = append([]float32(nil), c0...)
						Sgemm(tA, tB, m, n, k, 0.75, a, lda, b, ldb, beta, out[i], n, 2)
					}
					for i := range out[0] {
						if math.Float32bits(out[0][i]) != math.Float32bits(out[1][i]) {
							t.Fatalf("tA=%v tB=%v %v beta=%g: element %d: avx2 %v, avx512 %v", tA, tB, s, beta, i, out[0][i], out[1][i])
						}
					}
				}
			}
		}
	}
}

// TestGeometries checks the invariants the code relies on.
func TestGeometries(t *testing.T) {
	for _, p := range Paths {
		g := geometries[p]
		if g.path != p || g.mcMax%g.mr != 0 || g.ncMax%g.nr != 0 || g.directBMaxRows > 0 && p != AVX512 {
			t.Errorf("%v: bad geometry %+v", p, g)
		}
	}
	if best := simd.Best(); !best.Supported() {
		t.Errorf("best path %v is not supported", best)
	}
}

// TrySgemmBias gives the bits of the bias copied into every row and Sgemm
// with alpha and beta 1, on shapes that take each of Sgemm's paths (shared
// packing, the static split, one goroutine; partial tiles, several k
// blocks, A and B read in place or packed), on 1 to 7 goroutines; the
// padding of C beyond n columns is not touched. It runs exactly where
// Sgemm would take the AVX-512 kernel (not the small-M one), and elsewhere
// reports false without touching C.
func TestTrySgemmBiasEqualsCopiedBias(t *testing.T) {
	for _, mode := range []struct {
		name     string
		minFlops float64
		budget   int
	}{
		{"default", minParallelFlops, sharedPackBudget},
		{"shared", 0, sharedPackBudget}, // every threaded product on shared packing
		{"static", 0, -1},               // none: the static split
	} {
		t.Run(mode.name, func(t *testing.T) {
			withParallelSettings(mode.minFlops, mode.budget, func() {
				forEachPath(t, func(t *testing.T) {
					rng := rand.New(rand.NewSource(5))
					ran := 0
					for _, s := range [][3]int{{256, 130, 64}, {130, 514, 40}, {2048, 384, 128}, {2048, 128, 512}, {37, 1000, 70}, {300, 300, 300}, {7, 13, 5}, {13, 35, 600}, {40, 1, 300}, {3, 70, 40}, {1200, 768, 256}, {600, 2100, 300}} {
						m, n, k := s[0], s[1], s[2]
						lda, ldb, ldc := k+1, n+2, n+3
						a, b := randSlice(rng, m*lda), randSlice(rng, k*ldb)
						bias, c0 := randSlice(rng, n), randSlice(rng, m*ldc)
						for _, th := range []int{1, 2, 3, 7} {
							got := append([]float32(nil), c0...)
							fused := TrySgemmBias(m, n, k, a, lda, b, ldb, bias, got, ldc, th)
							threaded := th > 1 && 2*float64(m*n*k) >= minParallelFlops
							want512 := Active() == AVX512 && (threaded || !useSmallM(false, m))
							if fused != want512 {
								t.Fatalf("%dx%dx%d on %d goroutines: fused %v, want %v", m, n, k, th, fused, want512)
							}
							if !fused {
								for i := range got {
									if math.Float32bits(got[i]) != math.Float32bits(c0[i]) {
										t.Fatalf("%dx%dx%d on %d goroutines: not fused, but C element %d changed", m, n, k, th, i)
									}
								}
								continue
							}
							ran++
							want := append([]float32(nil), c0...)
							for i := range m {
								copy(want[i*ldc:i*ldc+n], bias)
							}
							Sgemm(false, false, m, n, k, 1, a, lda, b, ldb, 1, want, ldc, th)
							for i := range got {
								if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
									t.Fatalf("%dx%dx%d on %d goroutines: element %d (row %d) is %v, the copied bias and beta 1 give %v", m, n, k, th, i, i/ldc, got[i], want[i])
								}
							}
						}
					}
					if Active() == AVX512 && ran == 0 {
						t.Fatal("no product ran fused")
					}
				})
			})
		})
	}
}

// Products longer than directMaxK pack the operands they would read in
// place (the weight gradients of long steps), with the same bits as the
// in-place reads.
func TestLongKPacks(t *testing.T) {
	if !AVX512.Supported() {
		t.Skip("the AVX-512 path is not supported by this CPU or build")
	}
	defer setPath(setPath(AVX512))
	g := &geometries[AVX512]
	k := g.directMaxK + 9
	if g.useDirectA(true, 64, 40, k) || g.useDirectB(false, 24, k) {
		t.Fatalf("k = %d: operands still read in place", k)
	}
	if !g.useDirectA(true, 64, 40, g.directMaxK) || !g.useDirectB(false, 24, g.directMaxK) {
		t.Fatalf("k = %d: operands no longer read in place", g.directMaxK)
	}
	rng := rand.New(rand.NewSource(5))
	const m, n = 24, 40
	a := randSlice(rng, k*m)
	b := randSlice(rng, k*n)
	for _, threads := range []int{1, 2} {
		packed := make([]float32, m*n)
		Sgemm(true, false, m, n, k, 1, a, m, b, n, 0, packed, n, threads)
		saved := g.directMaxK
		g.directMaxK = 0
		inPlace := make([]float32, m*n)
		Sgemm(true, false, m, n, k, 1, a, m, b, n, 0, inPlace, n, threads)
		g.directMaxK = saved
		for i := range packed {
			if math.Float32bits(packed[i]) != math.Float32bits(inPlace[i]) {
				t.Fatalf("threads %d: c[%d] = %g packed, %g read in place", threads, i, packed[i], inPlace[i])
			}
		}
	}
}

// Non-transposed A whose row stride is a multiple of 4 KiB gives the same
// bits read in place (stridedAInPlace, on CPUs whose L1 has the ways for
// it) as packed, serial and threaded.
func TestStridedAInPlaceSameBits(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		g := geom()
		saved := g.stridedAInPlace
		defer func() { g.stridedAInPlace = saved }()
		rng := rand.New(rand.NewSource(9))
		for _, s := range [][4]int{{300, 256, 1024, 1024}, {1024, 256, 1024, 1024}, {77, 40, 300, 2048}, {5, 96, 1024, 1024}} {
			m, n, k, lda := s[0], s[1], s[2], s[3]
			a, b := randSlice(rng, m*lda), randSlice(rng, k*n)
			for _, th := range []int{1, 2} {
				var c [2][]float32
				for i, inPlace := range []bool{false, true} {
					g.stridedAInPlace = inPlace
					if got := g.useDirectA(false, lda, n, k); inPlace != got && n <= g.directARowMajorCols {
						t.Fatalf("useDirectA with stridedAInPlace %v: %v", inPlace, got)
					}
					c[i] = make([]float32, m*n)
					Sgemm(false, false, m, n, k, 1, a, lda, b, n, 0, c[i], n, th)
				}
				for i := range c[0] {
					if math.Float32bits(c[0][i]) != math.Float32bits(c[1][i]) {
						t.Fatalf("%dx%dx%d, lda %d, %d goroutines: element %d is %v packed, %v in place", m, n, k, lda, th, i, c[0][i], c[1][i])
					}
				}
			}
		}
	})
}

// TestBlockSize checks blockSize against its definition, with divisions
// throughout: ceil(total/maxBlock) nearly equal blocks, the size rounded up
// to a multiple of unit; for units that are powers of two and others, totals
// below, at and above one block.
func TestBlockSize(t *testing.T) {
	ceil := func(a, b int) int { return (a + b - 1) / b }
	for _, unit := range []int{1, 2, 6, 8, 16, 32} {
		for _, maxBlock := range []int{1, 7, 64, 256, 512} {
			for total := 1; total <= 1500; total++ {
				want := ceil(ceil(total, ceil(total, maxBlock)), unit) * unit
				if got := blockSize(total, maxBlock, unit); got != want {
					t.Fatalf("blockSize(%d, %d, %d) = %d, want %d", total, maxBlock, unit, got, want)
				}
			}
		}
	}
}
