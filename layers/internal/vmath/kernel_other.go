//go:build !amd64 || purego

package vmath

// useAsm is always false on builds without the assembly kernels.
var useAsm = false

// expAVX2 is never called on builds without the assembly kernels.
func expAVX2(dst, x *float32, n int) {
	panic("vmath: assembly kernels not available")
}

// expSubSumAVX2 is never called on builds without the assembly kernels.
func expSubSumAVX2(x *float32, n int, shift float32) float64 {
	panic("vmath: assembly kernels not available")
}

// addMaxAVX2 is never called on builds without the assembly kernels.
func addMaxAVX2(x, b *float32, n int) float32 {
	panic("vmath: assembly kernels not available")
}

// maxAVX2 is never called on builds without the assembly kernels.
func maxAVX2(x *float32, n int) float32 {
	panic("vmath: assembly kernels not available")
}

// scaleAVX2 is never called on builds without the assembly kernels.
func scaleAVX2(x *float32, n int, s float32) {
	panic("vmath: assembly kernels not available")
}

// geluAVX2 is never called on builds without the assembly kernels.
func geluAVX2(dst, x *float32, n int) {
	panic("vmath: assembly kernels not available")
}

// geluGradAVX2 is never called on builds without the assembly kernels.
func geluGradAVX2(dst, x, dy *float32, n int) {
	panic("vmath: assembly kernels not available")
}
