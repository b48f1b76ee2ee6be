//go:build linux

package hugepage

import "golang.org/x/sys/unix"

// advise marks the n bytes at addr (whole huge pages) for huge pages and
// collapses the small pages already there; it reports whether the marking
// was accepted. The addresses stay uintptr: the range may reach past the
// buffer into memory no Go pointer may point at. MADV_COLLAPSE is best
// effort (and unknown before Linux 6.1): its failure leaves the range
// marked, for the background collapser and later faults.
func advise(addr, n uintptr) bool {
	if _, _, e := unix.Syscall(unix.SYS_MADVISE, addr, n, unix.MADV_HUGEPAGE); e != 0 {
		return false
	}
	unix.Syscall(unix.SYS_MADVISE, addr, n, unix.MADV_COLLAPSE)
	return true
}
