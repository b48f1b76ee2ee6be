//go:build !amd64 || purego

package gemm

const noAsm = "gemm: assembly kernels not available"

// packB16N is never called on builds without the assembly kernels.
func packB16N(kb int, src *float32, ldb int, dst *float32) { panic(noAsm) }

// packB16T is never called on builds without the assembly kernels.
func packB16T(kb8 int, src *float32, ldb int, dst *float32) { panic(noAsm) }

// packA6T is never called on builds without the assembly kernels.
func packA6T(kb, nsl int, src *float32, lda int, dst *float32) { panic(noAsm) }

// kernel6x16L is never called on builds without the assembly kernels.
func kernel6x16L(nsl, kc int, a *float32, rsa, csa, asl int, b, c *float32, ldc int, alpha, beta float32) {
	panic(noAsm)
}

// kernel8x32 is never called on builds without the assembly kernels.
func kernel8x32(nsl, kc int, a *float32, rsa, csa, asl int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32, pf uintptr) {
	panic(noAsm)
}

// transpose8 is never called on builds without the assembly kernels.
func transpose8(kb8 int, src *float32, lds int, dst *float32, ldd int) { panic(noAsm) }

// transpose16 is never called on builds without the assembly kernels.
func transpose16(kb8 int, src *float32, lds int, dst *float32, ldd int) { panic(noAsm) }

// packA8T is never called on builds without the assembly kernels.
func packA8T(kb, nsl int, src *float32, lda int, dst *float32) { panic(noAsm) }

// packB32N is never called on builds without the assembly kernels.
func packB32N(kb int, src *float32, ldb int, dst *float32, mask uint32) { panic(noAsm) }

// packB32NSum is never called on builds without the assembly kernels.
func packB32NSum(kb int, src *float32, ldb int, dst *float32, mask uint32, sum *float32, add int) {
	panic(noAsm)
}

// fmaPeakAVX2 is never called on builds without the assembly kernels.
func fmaPeakAVX2(n int) { panic(noAsm) }

// fmaPeakAVX512 is never called on builds without the assembly kernels.
func fmaPeakAVX512(n int) { panic(noAsm) }

// smallN512 is never called on builds without the assembly kernels.
func smallN512(rows, n, kb int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32) {
	panic(noAsm)
}

// smallN256 is never called on builds without the assembly kernels.
func smallN256(n, kb int, a, b *float32, ldb int, c *float32, alpha, beta float32) { panic(noAsm) }

// dotsNT8 is never called on builds without the assembly kernels.
func dotsNT8(blocks, k int, a, b *float32, ldb int, c *float32, alpha float32) { panic(noAsm) }
