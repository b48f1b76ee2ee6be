package vmath

import (
	"fmt"

	"github.com/alibi-go/alibi/layers/internal/simd"
)

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

// best is the path the kernels use unless a test changes it: the fastest
// supported, or the one ALIBI_SIMD names.
var best = simd.Best()

// active is the path the kernels use; tests change it with setPath.
var active = best

// Active returns the path the kernels use.
func Active() Path { return active }

// setPath makes the kernels use path p, which must be supported, and returns
// the previous path. It is for tests and benchmarks, which must not run the
// kernels concurrently with it.
func setPath(p Path) Path {
	if !p.Supported() {
		panic(fmt.Sprintf("vmath: path %v is not supported", p))
	}
	prev := active
	active = p
	return prev
}
