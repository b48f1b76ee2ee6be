//go:build amd64 && !purego

package vmath

import "golang.org/x/sys/cpu"

// useAsm selects the assembly kernels. It is true when the CPU supports AVX2
// and FMA; tests set it to false to exercise the portable kernels.
var useAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// The assembly kernels process n elements, n a positive multiple of 8.

// expAVX2 sets dst[i] = e^x[i] for i < n.
//
//go:noescape
func expAVX2(dst, x *float32, n int)

// expSubSumAVX2 sets x[i] = e^(x[i]-shift) for i < n and returns the sum of
// the results, accumulated in float64.
//
//go:noescape
func expSubSumAVX2(x *float32, n int, shift float32) float64

// addMaxAVX2 sets x[i] += b[i] for i < n and returns the maximum of the
// updated x[:n].
//
//go:noescape
func addMaxAVX2(x, b *float32, n int) float32

// maxAVX2 returns the maximum of x[:n].
//
//go:noescape
func maxAVX2(x *float32, n int) float32

// scaleAVX2 sets x[i] *= s for i < n.
//
//go:noescape
func scaleAVX2(x *float32, n int, s float32)

// geluAVX2 sets dst[i] = GELU(x[i]) for i < n.
//
//go:noescape
func geluAVX2(dst, x *float32, n int)

// geluGradAVX2 sets dst[i] = dy[i]·GELU'(x[i]) for i < n.
//
//go:noescape
func geluGradAVX2(dst, x, dy *float32, n int)
