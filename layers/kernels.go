package layers

import (
	"fmt"
	"runtime"
	"sync"

	fastgemm "github.com/alibi-go/alibi/layers/internal/gemm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// float is the element type of every kernel: float32 for models, float64 for
// gradient checks.
type float interface{ ~float32 | ~float64 }

// parallelChunks splits [0, n) into fixed chunks (their number depends only on
// n and minChunk, never on the machine) and runs fn on them concurrently. A
// fixed split keeps every reduction's summation order, and so every result,
// bit-identical from run to run.
func parallelChunks(n, minChunk int, fn func(chunk, lo, hi int)) {
	parallelWorkers(n, minChunk, func(_, chunk, lo, hi int) { fn(chunk, lo, hi) })
}

// parallelWorkers is parallelChunks that also tells fn which of at most
// workers() goroutines runs the chunk, so that each can use its own scratch
// buffer.
func parallelWorkers(n, minChunk int, fn func(worker, chunk, lo, hi int)) {
	chunks := numChunks(n, minChunk)
	if chunks <= 1 {
		if n > 0 {
			fn(0, 0, 0, n)
		}
		return
	}
	workers := min(workers(), chunks)
	var wg sync.WaitGroup
	next := make(chan int, chunks)
	for c := 0; c < chunks; c++ {
		next <- c
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				lo, hi := chunkBounds(n, chunks, c)
				fn(w, c, lo, hi)
			}
		}()
	}
	wg.Wait()
}

// workers is the number of goroutines the kernels run on: GOMAXPROCS.
func workers() int { return runtime.GOMAXPROCS(0) }

// workerScratch returns one buffer of n elements per worker, kept in *cache
// and reused while the sizes stay the same.
func workerScratch[T float](cache *any, n int) [][]T {
	w := workers()
	if b, ok := (*cache).([][]T); ok && len(b) == w && len(b[0]) == n {
		return b
	}
	b := make([][]T, w)
	for i := range b {
		b[i] = make([]T, n)
	}
	*cache = b
	return b
}

// maxChunks bounds the number of chunks a loop is split into.
const maxChunks = 16

func numChunks(n, minChunk int) int {
	if minChunk < 1 {
		minChunk = 1
	}
	c := n / minChunk
	if c > maxChunks {
		c = maxChunks
	}
	if c < 1 {
		c = 1
	}
	return c
}

func chunkBounds(n, chunks, c int) (lo, hi int) {
	return n * c / chunks, n * (c + 1) / chunks
}

// gemm computes C = alpha*op(A)*op(B) + beta*C (row-major) for the custom
// ops. They call it from several goroutines at once (one per attention
// head), so it runs on the calling goroutine: float32 with the package's
// AVX2 kernel, float64 (gradient checks) with gonum.
func gemm[T float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	switch a := any(a).(type) {
	case []float32:
		fastgemm.Sgemm(tA, tB, m, n, k, float32(alpha), a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc, 1)
	case []float64:
		ta, tb := blas.NoTrans, blas.NoTrans
		if tA {
			ta = blas.Trans
		}
		if tB {
			tb = blas.Trans
		}
		gonum.Implementation{}.Dgemm(ta, tb, m, n, k, float64(alpha), a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}

// gemmAll is gemm spread over every core, for the large products of one op
// (Linear): float32 with the build's sgemmAll, float64 with gonum.
func gemmAll[T float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if a32, ok := any(a).([]float32); ok {
		sgemmAll(tA, tB, m, n, k, float32(alpha), a32, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
		return
	}
	gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// dense returns v as a *tensor.Dense or an error naming the op.
func dense(op string, v G.Value) (*tensor.Dense, error) {
	d, ok := v.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("%s: expected a dense tensor, got %T", op, v)
	}
	return d, nil
}

// denseAll returns every input as a *tensor.Dense.
func denseAll(op string, vals []G.Value) ([]*tensor.Dense, error) {
	out := make([]*tensor.Dense, len(vals))
	for i, v := range vals {
		d, err := dense(op, v)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

// newLike allocates a zeroed tensor of the given dtype and shape.
func newLike(dt tensor.Dtype, shape ...int) *tensor.Dense {
	return tensor.New(tensor.Of(dt), tensor.WithShape(shape...))
}

// scalarValue reads a scalar gradient value (a Gorgonia scalar or a
// one-element tensor) as float64.
func scalarValue(v G.Value) (float64, error) {
	switch s := v.(type) {
	case *G.F32:
		return float64(*s), nil
	case *G.F64:
		return float64(*s), nil
	case *tensor.Dense:
		switch d := s.Data().(type) {
		case float32:
			return float64(d), nil
		case float64:
			return d, nil
		case []float32:
			if len(d) == 1 {
				return float64(d[0]), nil
			}
		case []float64:
			if len(d) == 1 {
				return d[0], nil
			}
		}
	}
	return 0, fmt.Errorf("expected a scalar gradient, got %T", v)
}
