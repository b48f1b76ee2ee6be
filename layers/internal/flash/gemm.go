package flash

import (
	fastgemm "github.com/alibi-go/alibi/layers/internal/gemm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Gemm computes C = alpha*op(A)*op(B) + beta*C (row-major) on the calling
// goroutine: the kernels call it from several goroutines at once (one per
// attention head). float32 runs the gemm package's kernel, float64
// (gradient checks) gonum's Dgemm.
func Gemm[T Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
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
