//go:build !linux || !amd64 || purego

package bf16

// HasAMX reports whether the tile unit can run TDPBF16PS here: never on
// this build (AMX needs amd64, Linux's permission and the assembly).
func HasAMX() bool { return false }
