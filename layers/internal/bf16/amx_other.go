//go:build !linux || !amd64 || purego

package bf16

// HasAMX reports whether the tile unit can run TDPBF16PS here: never on
// this build (AMX needs amd64, Linux's permission and the assembly).
func HasAMX() bool { return false }

// tileStrip is the tile product's strip on this build: Go's (the
// products run on the tiles only where HasAMX, never on this build; the
// tests run the tile product on the Go arithmetic everywhere).
func tileStrip() stripFunc { return stripGo }

// tilePeakLoop reports no operations: no tile unit on this build.
func tilePeakLoop(a, b *[2 * tileWords]uint16) float64 { return 0 }
