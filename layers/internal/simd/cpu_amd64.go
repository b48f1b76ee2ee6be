//go:build amd64 && !purego

package simd

import "golang.org/x/sys/cpu"

var (
	hasAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasAVX512 = hasAVX2 && cpu.X86.HasAVX512F
	hasBF16   = hasAVX512 && cpu.X86.HasAVX512BF16
	hasVL     = hasAVX512 && cpu.X86.HasAVX512VL
)
