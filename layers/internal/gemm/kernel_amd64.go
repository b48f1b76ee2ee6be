//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

// useAsm selects the assembly micro-kernel. It is true when the CPU supports
// AVX2 and FMA; tests set it to false to exercise the portable kernel.
var useAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// packB16N copies kb rows of 16 floats (row stride ldb elements) from src to
// consecutive 16-float rows of dst.
//
//go:noescape
func packB16N(kb int, src *float32, ldb int, dst *float32)

// packB16T transposes the 16 x kb8 block of src (16 rows with stride ldb
// elements; kb8 a multiple of 8) into kb8 consecutive 16-float rows of dst.
//
//go:noescape
func packB16T(kb8 int, src *float32, ldb int, dst *float32)

// packA6T packs nsl full 6-row slivers of a transposed A block: for each k
// step p and sliver s, dst[s*6*kb+p*6+i] = src[p*lda+s*6+i] for i < 6.
//
//go:noescape
func packA6T(kb, nsl int, src *float32, lda int, dst *float32)

// kernel6x16L computes nsl vertically adjacent 6x16 tiles of C: for tile s,
// C[6s:6s+6, 0:16] = alpha*A_s*B + beta*C[6s:6s+6, 0:16], where element (i, p)
// of A_s is a[s*asl + i*rsa + p*csa] and b is a packed kc x 16 sliver. Strides
// are in elements; ldc is the row stride of c. When beta is zero c is not read.
//
//go:noescape
func kernel6x16L(nsl, kc int, a *float32, rsa, csa, asl int, b, c *float32, ldc int, alpha, beta float32)
