package hugepage

import (
	"testing"
	"unsafe"
)

func TestPages(t *testing.T) {
	const M = Size
	for _, c := range []struct {
		p, n, lo, hi uintptr
	}{
		{0, 1, 0, M},
		{M, M, M, 2 * M},
		{M, M + 1, M, 3 * M},
		{M - 1, 2, 0, 2 * M},
		{3*M + 100, 5 << 20, 3 * M, 6 * M},
	} {
		lo, hi := pages(c.p, c.n)
		if lo != c.lo || hi != c.hi {
			t.Errorf("pages(%#x, %#x) = [%#x, %#x), want [%#x, %#x)", c.p, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

func TestAdviseSmall(t *testing.T) {
	for _, n := range []int{0, 1, MinBytes/4 - 1} {
		if got := Advise(make([]float32, n)); got != 0 {
			t.Errorf("Advise of %d float32s = %d, want 0 (below MinBytes)", n, got)
		}
	}
}

// TestAdviseKeepsContents checks that advice, and the collapse into huge
// pages, leave every value where it was.
func TestAdviseKeepsContents(t *testing.T) {
	s := make([]float32, 3<<20/4+123)
	for i := range s {
		s[i] = float32(i)
	}
	got := Advise(s)
	if got != 0 {
		lo, hi := pages(uintptr(unsafe.Pointer(&s[0])), uintptr(4*len(s)))
		if got != int(hi-lo) || got%Size != 0 || got < 4*len(s) {
			t.Errorf("Advise of %d bytes = %d, want the %d bytes of the huge pages it touches", 4*len(s), got, hi-lo)
		}
	}
	for i, v := range s {
		if v != float32(i) {
			t.Fatalf("s[%d] = %v after Advise, want %d", i, v, i)
		}
	}
}
