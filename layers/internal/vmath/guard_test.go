//go:build unix

package vmath

import (
	"syscall"
	"testing"
	"unsafe"
)

// guarded returns a slice of n floats that ends exactly where an
// inaccessible page begins, so that reading or writing past its end faults.
func guarded(t *testing.T, n int) []float32 {
	t.Helper()
	page := syscall.Getpagesize()
	size := (n*4+page-1)/page*page + page
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[size-page:], syscall.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&mem[size-page-4*n])), n)
}

// guarded64 is guarded for float64.
func guarded64(t *testing.T, n int) []float64 {
	f := guarded(t, 2*n)
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&f[0])), n)
}

// TestNoOverread runs every kernel on slices that end right before an
// inaccessible page: any access past the last element crashes the test.
func TestNoOverread(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		for n := 0; n <= 40; n++ {
			in := func() []float32 {
				s := guarded(t, n)
				copy(s, grid(-3, 3, n, 0, 0))
				return s
			}
			x, y, z, w := in(), in(), in(), in()
			Exp(x, y)
			GELU(x, y)
			GELUGrad(x, y, z)
			ExpSubSum(x, 1)
			AddMax(x, y)
			Max(x)
			Scale(x, 0.5)
			Moments(x)
			Normalize(x, y, z, w, 0.1, 2)
			LayerNormGradSums(x, y, z, 0.1, 2, guarded64(t, n), guarded64(t, n))
			LayerNormGradX(x, y, z, w, 0.1, 2, 0.3, 0.4)
			for i := range z {
				z[i] = z[i] * z[i]
			}
			AdamW(x, y, w, z, AdamWCoeffs{Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, Shrink: 1, StepSize: 1e-3, InvSqrtBC2: 1})
		}
	})
}
