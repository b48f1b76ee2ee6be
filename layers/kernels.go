package layers

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/alibi-go/alibi/layers/internal/flash"
	"github.com/alibi-go/alibi/layers/internal/gemm"
	"github.com/alibi-go/alibi/layers/parallel"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Float is the element type of every kernel: float32 for models, float64 for
// gradient checks.
type Float interface{ ~float32 | ~float64 }

// float is Float, the short name the kernels use.
type float = Float

// parallelChunks runs fn on the fixed chunks of [0, n) on every core (see
// package parallel: the split never depends on the machine, so reductions
// stay bit-identical from run to run).
func parallelChunks(n, minChunk int, fn func(chunk, lo, hi int)) { parallel.Chunks(n, minChunk, fn) }

// serial reports whether parallelChunks(n, minChunk, ...) would run one
// chunk. Callers then run the loop directly: the closure they would hand to
// parallelChunks escapes to the heap on every call (with the dictionary of
// a generic function), which was most of the allocations of a one-token
// decoding step.
func serial(n, minChunk int) bool { return parallel.NumChunks(n, minChunk) <= 1 }

// resize returns s with length n, reusing its storage when large enough.
func resize[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	return s[:n]
}

// parallelWorkers is parallelChunks that also tells fn which worker runs the
// chunk, so that each can use its own scratch buffer.
func parallelWorkers(n, minChunk int, fn func(worker, chunk, lo, hi int)) {
	parallel.ChunksOnWorkers(n, minChunk, fn)
}

// workers is the number of goroutines the kernels run on.
func workers() int { return parallel.Workers() }

// gemmAll is flash.Gemm spread over every core, for the large products of one op
// (Linear): float32 with the build's sgemmAll, float64 with gonum. then
// (nil for none) runs on finished blocks of C (gemm.SgemmThen): on each
// block as the float32 kernel finishes it, or on the whole of C after the
// float64 product.
func gemmAll[T float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, then gemm.Epilogue) {
	if a32, ok := any(a).([]float32); ok {
		sgemmAll(tA, tB, m, n, k, float32(alpha), a32, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc, then)
		return
	}
	flash.Gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	thenWhole(then, m, n)
}

// thenWhole runs then (if any) on the whole of an m x n product.
func thenWhole(then gemm.Epilogue, m, n int) {
	if then != nil && m > 0 && n > 0 {
		then(0, m, 0, n)
	}
}

// elems returns the elements of t, whose dtype must be E, read in place.
// Unlike Dense.Data, which builds the slice by reflection and boxes it, it
// allocates nothing, which matters for the ops of a one-token decoding step.
func elems[E any](t *tensor.Dense) []E {
	if dt := t.Dtype(); dt.Type != reflect.TypeFor[E]() {
		panic(fmt.Sprintf("layers: a tensor of %v read as %v", dt, reflect.TypeFor[E]()))
	}
	raw := t.Header.Raw
	var e E
	return unsafe.Slice((*E)(unsafe.Pointer(unsafe.SliceData(raw))), uintptr(len(raw))/unsafe.Sizeof(e))
}

// dense returns v as a *tensor.Dense or an error naming the op.
func dense(op string, v G.Value) (*tensor.Dense, error) {
	d, ok := v.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("%s: expected a dense tensor, got %T", op, v)
	}
	return d, nil
}

// denseAll returns every input as a *tensor.Dense, in a slice that the op
// reuses (valid until its next call), so that a run allocates nothing.
func (o *opBase) denseAll(vals []G.Value) ([]*tensor.Dense, error) {
	o.ins = o.ins[:0]
	for _, v := range vals {
		d, err := dense(o.key, v)
		if err != nil {
			return nil, err
		}
		o.ins = append(o.ins, d)
	}
	return o.ins, nil
}

// newLike allocates a zeroed tensor of the given dtype and shape.
func newLike(dt tensor.Dtype, shape ...int) *tensor.Dense {
	return tensor.New(tensor.Of(dt), tensor.WithShape(shape...), tensor.WithEngine(engine))
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
