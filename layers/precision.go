package layers

import (
	"fmt"
	"runtime"

	"github.com/alibi-go/alibi/layers/internal/bf16"
	"github.com/alibi-go/alibi/layers/internal/gemm"
	"github.com/alibi-go/alibi/layers/internal/simd"
)

// Precision is the arithmetic of the linear layers' matrix products.
type Precision int

const (
	// FP32 multiplies in float32: the default, and the only precision of
	// float64 graphs.
	FP32 Precision = iota
	// BF16 rounds both factors of each product to bfloat16 and accumulates
	// in float32, as AVX512_BF16's VDPBF16PS does (PyTorch's CPU autocast
	// runs its linear layers so), or AMX's TDPBF16PS where the CPU has the
	// tiles (BF16Path). Only the linear layers' products change:
	// weights, gradients, the optimizer, LayerNorm, softmax, the attention
	// scores and every position bias stay float32. A position bias could
	// not take bfloat16: its 8 significant bits would round -m·(i-j) at a
	// distance of 30,000 to a multiple of 128·m.
	BF16
)

// ParsePrecision reads "fp32" or "bf16" (the empty string is fp32).
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "", "fp32":
		return FP32, nil
	case "bf16":
		return BF16, nil
	}
	return FP32, fmt.Errorf("precision %q: want fp32 or bf16", s)
}

func (p Precision) String() string {
	switch p {
	case FP32:
		return "fp32"
	case BF16:
		return "bf16"
	}
	return fmt.Sprintf("Precision(%d)", int(p))
}

func (p Precision) valid() error {
	if p != FP32 && p != BF16 {
		return fmt.Errorf("linear: unknown precision %v", p)
	}
	return nil
}

// BF16Path names the way BF16 products run on this CPU and build: "amx"
// (Intel AMX's tile unit, where the CPU has AMX-BF16, Linux grants the
// tiles and ALIBI_SIMD names no path without them), "avx512_bf16" (AVX512_BF16's
// instructions; ALIBI_SIMD=avx512 chooses them over the tiles),
// "avx512f" (their arithmetic on AVX-512F, for a CPU that has AVX-512
// without them, or whose hypervisor hides them), "avx2" (the same
// arithmetic on AVX2, for a CPU without AVX-512, or with ALIBI_SIMD=avx2),
// "portable" (Go, many times slower: no AVX2, or ALIBI_SIMD=portable), or
// "avx512f, avx512_bf16 conversions" (a CPU whose VDPBF16PS measured
// slower than its emulation: the products run the emulation, the
// conversions the instructions). All but "amx" give the same results; the
// tile unit rounds its sums in another order (it adds a block's even and
// odd steps apart), so a bf16 run there is not bit for bit the run
// elsewhere (each is reproducible on its own path). On a CPU with
// AVX512_BF16 and no tiles the first call (or bf16 product) times the two
// kernels, about a millisecond.
func BF16Path() string { return bf16.Path() }

// Kernels names the instruction sets a model in precision p runs on with
// this CPU and build: the float32 kernels' path ("avx512", "avx2" or
// "portable", see ALIBI_SIMD), and in BF16 the products' (BF16Path), as in
// "avx512, bf16 on avx512f". A speed figure means little without it.
func Kernels(p Precision) string {
	k := simd.Best().String()
	if p == BF16 {
		k += ", bf16 on " + BF16Path()
	}
	return k
}

// BF16Notice is what a user who chose BF16 is told when this CPU runs its
// products without AVX512_BF16's VDPBF16PS (how they run instead, in one
// line), or "" when they run on it.
func BF16Notice() string {
	switch bf16.Path() {
	case "amx", "avx512_bf16":
		return ""
	case "avx512f, avx512_bf16 conversions":
		return "on a CPU whose VDPBF16PS measured slower than its emulation on AVX-512F: the products run the emulation, the same results, but no faster than fp32"
	case "avx512f":
		return "without AVX512_BF16 on this CPU: the products run its arithmetic on AVX-512F, the same results but slower than fp32"
	case "avx2":
		return "without AVX-512 (on this CPU, or with ALIBI_SIMD=avx2): the products run AVX512_BF16's arithmetic on AVX2, the same results, no faster than fp32"
	}
	return "without AVX2 (on this CPU or build, or with ALIBI_SIMD=portable): the products run in portable Go, the same results many times slower"
}

// gemmIn is gemmAll in precision p (float64 products are always exact
// float64 ones); in bf16, then runs on each chunk of rows of C as the
// product finishes it (bf16.GemmThen).
func gemmIn[T float](p Precision, tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, then gemm.Epilogue) {
	if a32, ok := any(a).([]float32); ok && p == BF16 {
		bf16.GemmThen(tA, tB, m, n, k, float32(alpha), a32, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc, runtime.GOMAXPROCS(0), then)
		return
	}
	gemmAll(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, then)
}

// gemmBiasIn sets y = x w + b (n x k times k x m, b added to every row) in
// precision p when the product can add the bias as it stores (bf16 on
// float32 always; fp32 where sgemmBias can), and reports whether it did.
// Either way the bits are those of b copied into every row of y and the
// product added with beta 1. When it reports true, then (nil for none) has
// run on finished blocks of y, as in gemmIn.
func gemmBiasIn[T float](p Precision, n, m, k int, x, w, b, y []T, then gemm.Epilogue) bool {
	x32, ok := any(x).([]float32)
	if !ok {
		return false
	}
	w32, b32, y32 := any(w).([]float32), any(b).([]float32), any(y).([]float32)
	if p == BF16 {
		bf16.GemmBiasThen(false, false, n, m, k, 1, x32, k, w32, m, b32, y32, m, runtime.GOMAXPROCS(0), then)
		return true
	}
	return sgemmBias(n, m, k, x32, w32, b32, y32, then)
}
