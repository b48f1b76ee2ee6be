//go:build unix

// Package memtest is test support for the kernels of layers/internal: slices
// that end exactly where an inaccessible page begins, so that a kernel that
// reads or writes one element past the end crashes the test instead of
// passing by luck.
package memtest

import (
	"syscall"
	"testing"
	"unsafe"
)

// Guarded32 returns a slice of n float32s whose last element is the last
// accessible word before a page mapped PROT_NONE. The memory is unmapped
// when the test ends.
func Guarded32(t testing.TB, n int) []float32 {
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

// Guarded64 is Guarded32 for float64s.
func Guarded64(t testing.TB, n int) []float64 {
	t.Helper()
	f := Guarded32(t, 2*n)
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&f[0])), n)
}
