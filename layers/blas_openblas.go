//go:build openblas

package layers

/*
#cgo LDFLAGS: -lopenblas
*/
import "C"

import (
	fastgemm "github.com/alibi-go/alibi/layers/internal/gemm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

// With -tags openblas, Linear multiplies with OpenBLAS (Debian: apt-get
// install libopenblas-dev), and so do Gorgonia's own matrix ops after
// UseFastBLAS; attention keeps the package's kernel, one head per goroutine.
func fastBLAS() G.BLAS { return netlib.Implementation{} }

// sgemmAll multiplies float32 matrices with OpenBLAS and its threads, then
// runs then (nil for none) on the whole of C.
func sgemmAll(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, then fastgemm.Epilogue) {
	ta, tb := blas.NoTrans, blas.NoTrans
	if tA {
		ta = blas.Trans
	}
	if tB {
		tb = blas.Trans
	}
	netlib.Implementation{}.Sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	if then != nil && m > 0 && n > 0 {
		then(0, m, 0, n)
	}
}

// sgemmBias reports false: with OpenBLAS the bias is copied into every row
// and the product added with beta 1.
func sgemmBias(n, m, k int, x, w, b, y []float32, then fastgemm.Epilogue) bool { return false }

// BLASName names the matrix-multiply backend in use.
func BLASName() string { return "openblas" }

// sgemmSumB sets out = x^T dy with OpenBLAS and reports false: the column
// sums of dy are taken by their own op.
func sgemmSumB(n, k, m int, x, dy, out, sums []float32) bool {
	sgemmAll(true, false, k, m, n, 1, x, k, dy, m, 0, out, m, nil)
	return false
}
