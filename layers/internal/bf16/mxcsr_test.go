//go:build amd64 && !purego

package bf16

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/alibi-go/alibi/layers/internal/simd"
)

// The AVX-512F and AVX2 kernels set flush-to-zero only around their k
// loops: after they return, float32 arithmetic on the same thread still
// gives denormals (were the flag left set, every later operation with a
// denormal result would silently give zero), whichever way they store.
func TestEmulatedKernelsRestoreMXCSR(t *testing.T) {
	if !simd.AVX2.Supported() {
		t.Skip("no AVX2 on this machine or build")
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
	bias := make([]float32, NR)
	for _, kern := range asmPaths() {
		if kern == native {
			continue // no MXCSR change: VDPBF16PS flushes by itself
		}
		for _, store := range []struct {
			beta float32
			bias *float32
		}{{0, nil}, {1, nil}, {1, &bias[0]}} {
			c := make([]float32, MR*NR)
			if kern == emulated {
				kernelEmuAsm(1, kp, unsafe.SliceData(af), unsafe.SliceData(b), unsafe.SliceData(c), NR, 1, store.beta, MR, ^uint32(0), store.bias)
			} else {
				kernelAVX2Asm(1, kp, unsafe.SliceData(af), unsafe.SliceData(b), unsafe.SliceData(c), NR, 1, store.beta, store.bias)
			}
			if c[0] != 0 {
				t.Fatalf("%v: the denormal products summed to %v, want 0 (flushed)", kern, c[0])
			}
			if d := mul(0x1p-126, 0.25); d == 0 {
				t.Fatalf("%v, beta %v, bias %v: 2^-126 * 0.25 gives 0 after the kernel: flush-to-zero was left set", kern, store.beta, store.bias != nil)
			}
		}
	}
}

// mul is x*y computed at run time, under the thread's MXCSR.
//
//go:noinline
func mul(x, y float32) float32 { return x * y }
