//go:build !amd64 || purego

package simd

const (
	hasAVX2   = false
	hasAVX512 = false
	hasBF16   = false
	hasVL     = false
)
