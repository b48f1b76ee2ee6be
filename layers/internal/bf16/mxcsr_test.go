//go:build amd64 && !purego

package bf16

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/alibi-go/alibi/layers/internal/simd"
)

// The AVX-512F kernel sets flush-to-zero only around its k loop: after it
// returns, float32 arithmetic on the same thread still gives denormals
// (were the flag left set, every later operation with a denormal result
// would silently give zero).
func TestEmulatedKernelRestoresMXCSR(t *testing.T) {
	if !simd.BF16Emulated() {
		t.Skip("no AVX-512 on this machine or build")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// One tile whose products are denormal, so that the k loop runs with
	// flush-to-zero and flushes them (checked against the portable path by
	// TestAssemblyBitsEqualPortable).
	const kp = 3
	a, b := make([]uint32, kp*MR), make([]uint32, kp*NR)
	for i := range a {
		a[i] = 0x00810081 // 2^-126·(1+2^-7) in both halves: the products are denormal
	}
	for i := range b {
		b[i] = 0x3f003f00 // 0.5
	}
	af := make([]float32, 2*len(a))
	splitGo(af, a, MR)
	for _, beta := range []float32{0, 1} {
		c := make([]float32, MR*NR)
		kernelEmuAsm(1, kp, unsafe.SliceData(af), unsafe.SliceData(b), unsafe.SliceData(c), NR, 1, beta, MR, ^uint32(0), nil)
		if d := mul(0x1p-126, 0.25); d == 0 {
			t.Fatalf("beta %v: 2^-126 * 0.25 gives 0 after the kernel: flush-to-zero was left set", beta)
		}
	}
}

// mul is x*y computed at run time, under the thread's MXCSR.
//
//go:noinline
func mul(x, y float32) float32 { return x * y }
