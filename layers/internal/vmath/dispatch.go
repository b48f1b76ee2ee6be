package vmath

import "github.com/alibi-go/alibi/layers/internal/simd"

// Path is an implementation of the kernels: portable Go, AVX2 or AVX-512
// (see package simd, which chooses).
type Path = simd.Path

// The paths.
const (
	Portable = simd.Portable
	AVX2     = simd.AVX2
	AVX512   = simd.AVX512
)

// Paths lists every path, in order.
var Paths = simd.Paths

// kernels selects the path the kernels run; tests change it with setPath.
var kernels = simd.NewSelector("vmath")

// Active returns the path the kernels uses.
func Active() Path { return kernels.Path() }

// setPath makes the kernels use path p, which must be supported, and returns the
// previous path. It is for tests and benchmarks, which must not run the kernels
// concurrently with it.
func setPath(p Path) Path { return kernels.Set(p) }
