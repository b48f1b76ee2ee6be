package gemm

import (
	"fmt"
	"math"
	"math/rand"
	"sync"
	"testing"

	"github.com/alibi-go/alibi/layers/layerstest/longtest"
)

// epilogueLog records SgemmThen's calls: how often each element of C was
// handed over, and C's block as it was at the call.
type epilogueLog struct {
	mu     sync.Mutex
	m, n   int
	c      []float32
	ldc    int
	count  []int
	seen   []float32
	calls  int
	errors []string
}

func newEpilogueLog(m, n int, c []float32, ldc int) *epilogueLog {
	return &epilogueLog{m: m, n: n, c: c, ldc: ldc, count: make([]int, m*n), seen: make([]float32, m*n)}
}

func (l *epilogueLog) then(i0, i1, j0, j1 int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if i0 < 0 || i1 > l.m || i0 >= i1 || j0 < 0 || j1 > l.n || j0 >= j1 {
		l.errors = append(l.errors, fmt.Sprintf("block rows [%d, %d) columns [%d, %d) outside the %dx%d window or empty", i0, i1, j0, j1, l.m, l.n))
		return
	}
	for i := i0; i < i1; i++ {
		for j := j0; j < j1; j++ {
			l.count[i*l.n+j]++
			l.seen[i*l.n+j] = l.c[i*l.ldc+j]
		}
	}
}

// check reports the first element not handed over exactly once, or whose
// value at the call differs from C's final value (a block handed over
// before its last k block).
func (l *epilogueLog) check() error {
	if len(l.errors) > 0 {
		return fmt.Errorf("%s", l.errors[0])
	}
	for i := range l.m {
		for j := range l.n {
			if c := l.count[i*l.n+j]; c != 1 {
				return fmt.Errorf("element (%d, %d) handed to the epilogue %d times", i, j, c)
			}
			if got, want := l.seen[i*l.n+j], l.c[i*l.ldc+j]; math.Float32bits(got) != math.Float32bits(want) {
				return fmt.Errorf("element (%d, %d) was %v when handed over, %v at the end", i, j, got, want)
			}
		}
	}
	return nil
}

// SgemmThen hands every element of C to the epilogue exactly once, after
// its final value is stored, and computes Sgemm's bits, on every path and
// split; products larger than one block hand over more than one block on
// the shared and serial paths (the epilogue runs on blocks still in cache,
// not once at the end).
func TestSgemmThen(t *testing.T) {
	modes := []struct {
		name     string
		minFlops float64
		budget   int
	}{
		{"default", minParallelFlops, sharedPackBudget},
		{"shared", 0, sharedPackBudget},
		{"static", 0, -1},
	}
	// One goroutine and three (an odd split); the long tests add two.
	threads := longtest.Pick([]int{1, 3}, []int{1, 2, 3})
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			withParallelSettings(mode.minFlops, mode.budget, func() {
				forEachSweepPath(t, func(t *testing.T) {
					rng := rand.New(rand.NewSource(7))
					for _, s := range [][3]int{{600, 512, 128}, {300, 130, 600}, {37, 1000, 70}, {3, 70, 40}, {40, 1, 300}, {7, 13, 5}, {20, 30, 0}} {
						m, n, k := s[0], s[1], s[2]
						for _, tA := range []bool{false, true} {
							for _, tB := range []bool{false, true} {
								for _, th := range threads {
									lda, ldb, ldc := k+1, n+2, n+3
									if tA {
										lda = m + 1
									}
									if tB {
										ldb = k + 2
									}
									a, b := randSlice(rng, max(m, k)*lda), randSlice(rng, max(n, k)*ldb)
									c0 := randSlice(rng, m*ldc)
									want := append([]float32(nil), c0...)
									Sgemm(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 0.25, want, ldc, th)
									got := append([]float32(nil), c0...)
									log := newEpilogueLog(m, n, got, ldc)
									SgemmThen(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 0.25, got, ldc, th, log.then)
									name := fmt.Sprintf("%dx%dx%d tA=%v tB=%v on %d goroutines", m, n, k, tA, tB, th)
									if err := log.check(); err != nil {
										t.Fatalf("%s: %v", name, err)
									}
									for i := range got {
										if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
											t.Fatalf("%s: element %d is %v, Sgemm gives %v", name, i, got[i], want[i])
										}
									}
									if m == 600 && mode.budget >= 0 && log.calls < 2 {
										t.Fatalf("%s: the epilogue ran once on the whole of C, want it per block", name)
									}
								}
							}
						}
					}
				})
			})
		})
	}
}

// TrySgemmBiasThen hands every element over once, after the bias and the
// product are stored, with TrySgemmBias's bits.
func TestTrySgemmBiasThen(t *testing.T) {
	for _, budget := range []int{sharedPackBudget, -1} {
		withParallelSettings(0, budget, func() {
			rng := rand.New(rand.NewSource(8))
			for _, s := range [][3]int{{2048, 512, 128}, {300, 130, 600}, {13, 35, 600}} {
				m, n, k := s[0], s[1], s[2]
				for _, th := range []int{1, 2} {
					a, b, bias := randSlice(rng, m*k), randSlice(rng, k*n), randSlice(rng, n)
					want := make([]float32, m*n)
					ran := TrySgemmBias(m, n, k, a, k, b, n, bias, want, n, th)
					got := make([]float32, m*n)
					log := newEpilogueLog(m, n, got, n)
					if TrySgemmBiasThen(m, n, k, a, k, b, n, bias, got, n, th, log.then) != ran {
						t.Fatalf("%dx%dx%d: TrySgemmBiasThen and TrySgemmBias disagree on running", m, n, k)
					}
					if !ran {
						if log.calls != 0 {
							t.Fatalf("%dx%dx%d: the epilogue ran on a product that did not", m, n, k)
						}
						continue
					}
					if err := log.check(); err != nil {
						t.Fatalf("%dx%dx%d on %d goroutines, budget %d: %v", m, n, k, th, budget, err)
					}
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%dx%dx%d: element %d is %v, TrySgemmBias gives %v", m, n, k, i, got[i], want[i])
						}
					}
				}
			}
		})
	}
}
