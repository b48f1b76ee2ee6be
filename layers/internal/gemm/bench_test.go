package gemm

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// benchShape is one product measured by the benchmarks. Zero leading
// dimensions mean "contiguous".
type benchShape struct {
	name          string
	tA, tB        bool
	m, n, k       int
	lda, ldb, ldc int
}

var benchShapes = []benchShape{
	// Linear layers, forward: Y = X * W.
	{name: "fwd", m: 2048, n: 384, k: 128},
	{name: "fwd", m: 2048, n: 128, k: 128},
	{name: "fwd", m: 2048, n: 512, k: 128},
	{name: "fwd", m: 2048, n: 256, k: 128},
	{name: "fwd", m: 2048, n: 128, k: 512},
	// Backward: dX = dY * W^T.
	{name: "dX", tB: true, m: 2048, n: 128, k: 384},
	{name: "dX", tB: true, m: 2048, n: 512, k: 128},
	{name: "dX", tB: true, m: 2048, n: 128, k: 512},
	// Backward: dW = X^T * dY (k = 2048 reduction).
	{name: "dW", tA: true, m: 128, n: 384, k: 2048},
	{name: "dW", tA: true, m: 128, n: 512, k: 2048},
	{name: "dW", tA: true, m: 512, n: 128, k: 2048},
	// Attention, per (batch, head), heads strided inside a 384-wide QKV row.
	{name: "attnQKt", tB: true, m: 128, n: 128, k: 32, lda: 384, ldb: 384},
	{name: "attnQKt", tB: true, m: 512, n: 512, k: 32, lda: 384, ldb: 384},
	{name: "attnQKt", tB: true, m: 2048, n: 2048, k: 32, lda: 384, ldb: 384},
	{name: "attnPV", m: 128, n: 32, k: 128, ldb: 384, ldc: 384},
	{name: "attnPV", m: 512, n: 32, k: 512, ldb: 384, ldc: 384},
	{name: "attn_dP", tB: true, m: 128, n: 128, k: 32, lda: 384, ldb: 384},
	{name: "attn_dV", tA: true, m: 128, n: 32, k: 128, ldb: 384, ldc: 384},
	{name: "attn_dQ", m: 128, n: 32, k: 128, ldb: 384, ldc: 384},
	{name: "attn_dK", tA: true, m: 128, n: 32, k: 128, ldb: 384, ldc: 384},
}

func (s benchShape) dims() (ar, ac, br, bc, lda, ldb, ldc int) {
	ar, ac = s.m, s.k
	if s.tA {
		ar, ac = s.k, s.m
	}
	br, bc = s.k, s.n
	if s.tB {
		br, bc = s.n, s.k
	}
	lda, ldb, ldc = s.lda, s.ldb, s.ldc
	if lda == 0 {
		lda = ac
	}
	if ldb == 0 {
		ldb = bc
	}
	if ldc == 0 {
		ldc = s.n
	}
	return
}

func trans(t bool) string {
	if t {
		return "T"
	}
	return "N"
}

func BenchmarkSgemm(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	for _, s := range benchShapes {
		ar, _, br, _, lda, ldb, ldc := s.dims()
		a := randSlice(rng, ar*lda)
		bm := randSlice(rng, br*ldb)
		c := randSlice(rng, s.m*ldc)
		flops := 2 * float64(s.m) * float64(s.n) * float64(s.k)
		label := fmt.Sprintf("%s_%s%s_m%d_n%d_k%d", s.name, trans(s.tA), trans(s.tB), s.m, s.n, s.k)
		impls := []struct {
			name string
			f    func()
		}{
			{"t1", func() { Sgemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, ldc, 1) }},
			{"t2", func() { Sgemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, ldc, 2) }},
			{"gonum", func() {
				ta, tb := blas.NoTrans, blas.NoTrans
				if s.tA {
					ta = blas.Trans
				}
				if s.tB {
					tb = blas.Trans
				}
				gonum.Implementation{}.Sgemm(ta, tb, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, ldc)
			}},
		}
		for _, im := range impls {
			b.Run(label+"/"+im.name, func(b *testing.B) {
				for b.Loop() {
					im.f()
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkAttentionConcurrent measures the aggregate throughput of
// single-threaded attention products issued from GOMAXPROCS goroutines at
// once, the way a per-(batch, head) attention loop uses the package.
func BenchmarkAttentionConcurrent(b *testing.B) {
	for _, s := range []benchShape{
		{name: "attnQKt", tB: true, m: 128, n: 128, k: 32, lda: 384, ldb: 384},
		{name: "attnPV", m: 128, n: 32, k: 128, ldb: 384, ldc: 384},
		{name: "attnQKt", tB: true, m: 512, n: 512, k: 32, lda: 384, ldb: 384},
	} {
		ar, _, br, _, lda, ldb, ldc := s.dims()
		flops := 2 * float64(s.m) * float64(s.n) * float64(s.k)
		label := fmt.Sprintf("%s_%s%s_m%d_n%d_k%d", s.name, trans(s.tA), trans(s.tB), s.m, s.n, s.k)
		b.Run(label, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				rng := rand.New(rand.NewSource(1))
				a := randSlice(rng, ar*lda)
				bm := randSlice(rng, br*ldb)
				c := randSlice(rng, s.m*ldc)
				for pb.Next() {
					Sgemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, ldc, 1)
				}
			})
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// TestPerfTable prints a best-of-N GFLOP/s table for the benchmark shapes.
// Best-of timing is robust against other load on the machine. It only runs
// when GEMM_PERF is set, e.g. GEMM_PERF=1 go test -run PerfTable -v.
func TestPerfTable(t *testing.T) {
	if os.Getenv("GEMM_PERF") == "" {
		t.Skip("set GEMM_PERF=1 to print the performance table")
	}
	rng := rand.New(rand.NewSource(1))
	best := func(flops float64, f func()) float64 {
		f()
		reps := max(1, int(2e7/flops))
		var bestT time.Duration
		for trial := 0; trial < perfTrials(); trial++ {
			start := time.Now()
			for r := 0; r < reps; r++ {
				f()
			}
			if d := time.Since(start) / time.Duration(reps); trial == 0 || d < bestT {
				bestT = d
			}
		}
		return flops / bestT.Seconds() / 1e9
	}
	fmt.Printf("%-34s %8s %8s %8s\n", "shape", "t1", "t2", "gonum")
	for _, s := range benchShapes {
		ar, _, br, _, lda, ldb, ldc := s.dims()
		a := randSlice(rng, ar*lda)
		bm := randSlice(rng, br*ldb)
		c := randSlice(rng, s.m*ldc)
		flops := 2 * float64(s.m) * float64(s.n) * float64(s.k)
		label := fmt.Sprintf("%s_%s%s_m%d_n%d_k%d", s.name, trans(s.tA), trans(s.tB), s.m, s.n, s.k)
		if f := os.Getenv("GEMM_PERF_FILTER"); f != "" && !strings.Contains(label, f) {
			continue
		}
		g1 := best(flops, func() { Sgemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, ldc, 1) })
		g2 := best(flops, func() { Sgemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, ldc, 2) })
		gg := 0.0
		if os.Getenv("GEMM_PERF_GONUM") != "" {
			ta, tb := blas.NoTrans, blas.NoTrans
			if s.tA {
				ta = blas.Trans
			}
			if s.tB {
				tb = blas.Trans
			}
			gg = best(flops, func() { gonum.Implementation{}.Sgemm(ta, tb, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, ldc) })
		}
		fmt.Printf("%-34s %8.1f %8.1f %8.2f\n", label, g1, g2, gg)
	}
}

// perfTrials is the number of timed trials per cell of TestPerfTable
// (GEMM_PERF_TRIALS, default 15); more trials find quieter moments on a
// shared machine.
func perfTrials() int {
	if n, err := strconv.Atoi(os.Getenv("GEMM_PERF_TRIALS")); err == nil && n > 0 {
		return n
	}
	return 15
}
