//go:build unix

package gemm

import (
	"math/rand"
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
	end := size - page
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&mem[end-4*n])), n)
}

// TestSgemmNoOverread runs products whose A, B and C end right before an
// inaccessible page: any read or write past the last element crashes the
// test.
func TestSgemmNoOverread(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(8))
		for _, s := range [][3]int{{1, 1, 1}, {7, 13, 5}, {9, 33, 17}, {8, 32, 8}, {13, 35, 19}, {64, 64, 64}, {130, 70, 300}} {
			for _, tA := range []bool{false, true} {
				for _, tB := range []bool{false, true} {
					for _, th := range []int{1, 2} {
						m, n, k := s[0], s[1], s[2]
						ar, ac := m, k
						if tA {
							ar, ac = k, m
						}
						br, bc := k, n
						if tB {
							br, bc = n, k
						}
						lda, ldb, ldc := ac+1, bc+3, n+2
						a := guarded(t, (ar-1)*lda+ac)
						b := guarded(t, (br-1)*ldb+bc)
						c := guarded(t, (m-1)*ldc+n)
						copy(a, randSlice(rng, len(a)))
						copy(b, randSlice(rng, len(b)))
						copy(c, randSlice(rng, len(c)))
						for _, beta := range []float32{0, 1} {
							withParallelSettings(0, sharedPackBudget, func() {
								Sgemm(tA, tB, m, n, k, 1, a, lda, b, ldb, beta, c, ldc, th)
							})
						}
					}
				}
			}
		}
	})
}
