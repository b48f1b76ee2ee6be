//go:build !amd64 || purego

package simd

const (
	hasAVX2   = false
	hasAVX512 = false
	hasBF16   = false
	hasVL     = false
)

// l1DataWays is 0 (unknown) off amd64 and with the purego tag.
func l1DataWays() int { return 0 }
