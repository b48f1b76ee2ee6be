//go:build !linux

package hugepage

// advise does nothing where huge pages cannot be asked for.
func advise(addr, n uintptr) bool { return false }
