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

// packedT is B^T for products C = A B^T on the calling goroutine that share
// B (a head's keys or values in one key tile, multiplied by each of its
// query tiles): in float32 packed once by the gemm package, in float64
// multiplied in place.
type packedT[T Float] struct {
	p    fastgemm.PackedB
	b    []T
	ldb  int
	k, n int
}

// pack prepares B^T for B the n x k matrix at b (row stride ldb).
func (pt *packedT[T]) pack(k, n int, b []T, ldb int) {
	pt.b, pt.ldb, pt.k, pt.n = b, ldb, k, n
	if b32, ok := any(b).([]float32); ok {
		pt.p.Pack(true, k, n, b32, ldb)
	}
}

// reserve makes room for a later pack of k x n (see gemm.PackedB.Reserve).
func (pt *packedT[T]) reserve(k, n int) {
	var zero T
	if _, ok := any(zero).(float32); ok {
		pt.p.Reserve(k, n)
	}
}

// gemmT computes C = alpha*A*B^T[:, :n] + beta*C for A (m x k) and pt's B,
// with the bits of Gemm(false, true, m, n, k, alpha, a, lda, b, ldb, beta,
// c, ldc).
func gemmT[T Float](m, n int, alpha T, a []T, lda int, pt *packedT[T], beta T, c []T, ldc int) {
	if a32, ok := any(a).([]float32); ok {
		fastgemm.SgemmPackedB(m, n, float32(alpha), a32, lda, &pt.p, float32(beta), any(c).([]float32), ldc)
		return
	}
	Gemm(false, true, m, n, pt.k, alpha, a, lda, pt.b, pt.ldb, beta, c, ldc)
}
