package gemm

import (
	"fmt"
	"math/rand"
	"runtime"
	"strings"
	"sync"
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

// benchShapes are the products of a training step: the tiny model (d_model
// 128, d_ff 512, vocab 256, 4 heads of 32, 16 x 128 = 2048 tokens per step),
// then the small model (d_model 256, d_ff 1024, 8192 tokens per step). A
// Linear layer computes Y = X W (fwd), dX = dY W^T and dW = X^T dY;
// attention works per (sequence, head) on heads strided inside the QKV rows.
var benchShapes = []benchShape{
	// Tiny model, forward: QKV, attention output, FF in, FF out, LM head.
	{name: "fwd", m: 2048, n: 384, k: 128},
	{name: "fwd", m: 2048, n: 128, k: 128},
	{name: "fwd", m: 2048, n: 512, k: 128},
	{name: "fwd", m: 2048, n: 128, k: 512},
	{name: "fwd", m: 2048, n: 256, k: 128},
	// Tiny model, backward.
	{name: "dX", tB: true, m: 2048, n: 128, k: 384},
	{name: "dX", tB: true, m: 2048, n: 128, k: 512},
	{name: "dX", tB: true, m: 2048, n: 512, k: 128},
	{name: "dX", tB: true, m: 2048, n: 128, k: 256},
	{name: "dW", tA: true, m: 128, n: 384, k: 2048},
	{name: "dW", tA: true, m: 128, n: 512, k: 2048},
	{name: "dW", tA: true, m: 512, n: 128, k: 2048},
	{name: "dW", tA: true, m: 128, n: 256, k: 2048},
	// Tiny model, attention for one (sequence, head): T = 128, d_head = 32,
	// QKV rows 384 wide; 64 x 64 for shorter sequences.
	{name: "attnQKt", tB: true, m: 128, n: 128, k: 32, lda: 384, ldb: 384},
	{name: "attnPV", m: 128, n: 32, k: 128, ldb: 384, ldc: 128},
	{name: "attn_dV", tA: true, m: 128, n: 32, k: 128, ldb: 128, ldc: 384},
	{name: "attn_dP", tB: true, m: 128, n: 128, k: 32, lda: 128, ldb: 384},
	{name: "attn_dQ", m: 128, n: 32, k: 128, ldb: 384, ldc: 384},
	{name: "attn_dK", tA: true, m: 128, n: 32, k: 128, ldb: 384, ldc: 384},
	{name: "attnQKt", tB: true, m: 64, n: 64, k: 32, lda: 384, ldb: 384},
	{name: "attnPV", m: 64, n: 32, k: 64, ldb: 384, ldc: 128},
	// Small model, Linear layers.
	{name: "fwd", m: 8192, n: 768, k: 256},
	{name: "fwd", m: 8192, n: 1024, k: 256},
	{name: "fwd", m: 8192, n: 256, k: 1024},
	{name: "dX", tB: true, m: 8192, n: 256, k: 768},
	{name: "dX", tB: true, m: 8192, n: 1024, k: 256},
	{name: "dW", tA: true, m: 256, n: 768, k: 8192},
	{name: "dW", tA: true, m: 1024, n: 256, k: 8192},
	// Small model, attention at T = 512 with QKV rows 768 wide.
	{name: "attnQKt", tB: true, m: 512, n: 512, k: 32, lda: 768, ldb: 768},
	{name: "attnPV", m: 512, n: 32, k: 512, ldb: 768, ldc: 256},
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

func (s benchShape) label() string {
	return fmt.Sprintf("%s_%s%s_m%d_n%d_k%d", s.name, trans(s.tA), trans(s.tB), s.m, s.n, s.k)
}

func (s benchShape) flops() float64 { return 2 * float64(s.m) * float64(s.n) * float64(s.k) }

func trans(t bool) string {
	if t {
		return "T"
	}
	return "N"
}

// forEachPathBench runs f as a sub-benchmark on every supported path.
func forEachPathBench(b *testing.B, f func(b *testing.B, p Path)) {
	for _, p := range Paths {
		b.Run(p.String(), func(b *testing.B) {
			if !p.Supported() {
				b.Skipf("the %v path is not supported by this CPU or build", p)
			}
			defer setPath(setPath(p))
			f(b, p)
		})
	}
}

var (
	peakMu    sync.Mutex
	peakCache = map[[2]int]float64{}
)

// peakGFLOPS returns the measured peak of path p on threads goroutines (at
// most GOMAXPROCS): the best of several short runs, measured once per test
// binary. Taking the best makes it robust against other load on the machine.
func peakGFLOPS(p Path, threads int) float64 {
	threads = max(1, min(threads, runtime.GOMAXPROCS(0)))
	peakMu.Lock()
	defer peakMu.Unlock()
	key := [2]int{int(p), threads}
	if v, ok := peakCache[key]; ok {
		return v
	}
	var best float64
	for range 7 {
		best = max(best, runPeak(p, threads, 15*time.Millisecond))
	}
	peakCache[key] = best
	return best
}

// peakSink keeps the results of the portable loop alive.
var peakSink float32

// BenchmarkPeak measures the peak FMA throughput of each path on one core
// (t1) and on GOMAXPROCS cores.
func BenchmarkPeak(b *testing.B) {
	forEachPathBench(b, func(b *testing.B, p Path) {
		b.Run("t1", func(b *testing.B) {
			var flops float64
			var x float32
			for b.Loop() {
				f, y := peakLoop(p, x)
				flops, x = flops+f, y
			}
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			peakSink = x
		})
		b.Run(fmt.Sprintf("t%d", runtime.GOMAXPROCS(0)), func(b *testing.B) {
			var mu sync.Mutex
			var flops float64
			b.RunParallel(func(pb *testing.PB) {
				var f float64
				var x float32
				for pb.Next() {
					g, y := peakLoop(p, x)
					f, x = f+g, y
				}
				mu.Lock()
				flops += f
				peakSink += x
				mu.Unlock()
			})
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	})
}

// BenchmarkSgemm measures every shape on every path, with one and two
// goroutines, and reports GFLOP/s and the percentage of the path's measured
// peak on as many cores (BenchmarkPeak); gonum's Sgemm is the reference.
// For a table, run it with -count and summarise with benchstat.
func BenchmarkSgemm(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	for _, s := range benchShapes {
		ar, _, br, _, lda, ldb, ldc := s.dims()
		a := randSlice(rng, ar*lda)
		bm := randSlice(rng, br*ldb)
		c := randSlice(rng, s.m*ldc)
		b.Run(s.label(), func(b *testing.B) {
			forEachPathBench(b, func(b *testing.B, p Path) {
				for _, th := range []int{1, 2} {
					b.Run(fmt.Sprintf("t%d", th), func(b *testing.B) {
						peak := peakGFLOPS(p, th) // before b.Loop, which starts the timer
						for b.Loop() {
							Sgemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, ldc, th)
						}
						gf := s.flops() * float64(b.N) / b.Elapsed().Seconds() / 1e9
						b.ReportMetric(gf, "GFLOP/s")
						b.ReportMetric(100*gf/peak, "%peak")
					})
				}
			})
			b.Run("gonum", func(b *testing.B) {
				ta, tb := blas.NoTrans, blas.NoTrans
				if s.tA {
					ta = blas.Trans
				}
				if s.tB {
					tb = blas.Trans
				}
				for b.Loop() {
					gonum.Implementation{}.Sgemm(ta, tb, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, ldc)
				}
				b.ReportMetric(s.flops()*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		})
	}
}

// BenchmarkAttentionConcurrent measures the aggregate throughput of
// single-threaded attention products issued from GOMAXPROCS goroutines at
// once, the way a per-(sequence, head) attention loop uses the package.
func BenchmarkAttentionConcurrent(b *testing.B) {
	for _, s := range benchShapes {
		if !strings.HasPrefix(s.name, "attn") {
			continue
		}
		ar, _, br, _, lda, ldb, ldc := s.dims()
		b.Run(s.label(), func(b *testing.B) {
			forEachPathBench(b, func(b *testing.B, p Path) {
				peak := peakGFLOPS(p, runtime.GOMAXPROCS(0))
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					rng := rand.New(rand.NewSource(1))
					a := randSlice(rng, ar*lda)
					bm := randSlice(rng, br*ldb)
					c := randSlice(rng, s.m*ldc)
					for pb.Next() {
						Sgemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, ldc, 1)
					}
				})
				gf := s.flops() * float64(b.N) / b.Elapsed().Seconds() / 1e9
				b.ReportMetric(gf, "GFLOP/s")
				b.ReportMetric(100*gf/peak, "%peak")
			})
		})
	}
}
