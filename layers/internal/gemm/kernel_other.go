//go:build !amd64 || purego

package gemm

// useAsm is always false on builds without the assembly kernel.
var useAsm = false

// packB16N is never called on builds without the assembly kernel.
func packB16N(kb int, src *float32, ldb int, dst *float32) {
	panic("gemm: assembly kernel not available")
}

// packB16T is never called on builds without the assembly kernel.
func packB16T(kb8 int, src *float32, ldb int, dst *float32) {
	panic("gemm: assembly kernel not available")
}

// packA6T is never called on builds without the assembly kernel.
func packA6T(kb, nsl int, src *float32, lda int, dst *float32) {
	panic("gemm: assembly kernel not available")
}

// kernel6x16L is never called on builds without the assembly kernel.
func kernel6x16L(nsl, kc int, a *float32, rsa, csa, asl int, b, c *float32, ldc int, alpha, beta float32) {
	panic("gemm: assembly kernel not available")
}
