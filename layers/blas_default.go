//go:build !openblas

package layers

import (
	"runtime"

	fastgemm "github.com/alibi-go/alibi/layers/internal/gemm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
)

// fastBLAS is the BLAS that UseFastBLAS installs in the default build: it
// multiplies float32 matrices with the package's own AVX2/FMA kernel (pure
// Go and Go assembly, no cgo) and leaves every other routine to gonum.
func fastBLAS() G.BLAS { return goBLAS{} }

// BLASName names the matrix-multiply backend in use.
func BLASName() string { return "alibi-go gemm (pure Go + AVX2 assembly)" }

// sgemmAll multiplies float32 matrices on every core, then (nil for none)
// runs on C's blocks as each is finished (gemm.SgemmThen).
func sgemmAll(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, then fastgemm.Epilogue) {
	fastgemm.SgemmThen(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, runtime.GOMAXPROCS(0), then)
}

// sgemmBias sets y = x w + b (n x k times k x m, b added to every row) on
// every core when the package's kernel can add the bias as it stores
// (gemm.TrySgemmBiasThen, then as in sgemmAll), and reports whether it
// did.
func sgemmBias(n, m, k int, x, w, b, y []float32, then fastgemm.Epilogue) bool {
	return fastgemm.TrySgemmBiasThen(n, m, k, x, k, w, m, b, y, m, runtime.GOMAXPROCS(0), then)
}

// goBLAS is gonum's BLAS with a faster Sgemm.
type goBLAS struct{ gonum.Implementation }

// Sgemm spreads large products over all cores.
func (goBLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmAll(tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nil)
}

// sgemmSumB sets out = x^T dy (x n x k, dy n x m) on every core and, where
// the package's kernel packs dy as it goes (gemm.SgemmSumB), sums to the
// column sums of dy, reporting whether it did.
func sgemmSumB(n, k, m int, x, dy, out, sums []float32) bool {
	return fastgemm.SgemmSumB(true, k, m, n, x, k, dy, m, out, m, sums, runtime.GOMAXPROCS(0))
}
