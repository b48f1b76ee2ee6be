package gemm

import "unsafe"

// Transpose16 sets dst[p*ldd+i] = src[i*lds+p] for i < 16 and p < n: 16
// rows of 32-bit words into n rows of 16, their bits kept. It runs the
// fp32 packing's AVX-512 transposes (each row of dst one 64-byte store)
// for the first n&^7 words where AVX-512 is the path, and Go for the rest.
// It panics if a slice is too short.
func Transpose16(n int, src []uint32, lds int, dst []uint32, ldd int) {
	if n <= 0 {
		return
	}
	_ = src[15*lds+n-1]
	_ = dst[(n-1)*ldd+15]
	done := 0
	if n8 := n &^ 7; n8 > 0 && Active() == AVX512 {
		transpose16(n8, (*float32)(unsafe.Pointer(&src[0])), lds, (*float32)(unsafe.Pointer(&dst[0])), ldd)
		done = n8
	}
	for p := done; p < n; p++ {
		for i := range 16 {
			dst[p*ldd+i] = src[i*lds+p]
		}
	}
}
