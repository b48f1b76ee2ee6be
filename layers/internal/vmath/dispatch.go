package vmath

import (
	"fmt"
	"os"
)

// Path is one implementation of the kernels.
type Path int

// The paths, from the slowest to the fastest.
const (
	Portable Path = iota // portable Go, any CPU
	AVX2                 // AVX2 + FMA assembly, 8 lanes; tails of len mod 8 in Go
	AVX512               // AVX-512F assembly, 16 lanes; tails with masked loads and stores
)

// Paths lists every path, in order.
var Paths = []Path{Portable, AVX2, AVX512}

func (p Path) String() string {
	switch p {
	case Portable:
		return "portable"
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	}
	return fmt.Sprintf("Path(%d)", int(p))
}

// Supported reports whether the CPU and the build can run path p. The
// portable path is always supported; the purego build tag leaves only it.
func (p Path) Supported() bool {
	switch p {
	case Portable:
		return true
	case AVX2:
		return hasAVX2
	case AVX512:
		return hasAVX512
	}
	return false
}

// best is the fastest supported path, or the one named by the ALIBI_SIMD
// environment variable ("portable", "avx2" or "avx512") if that is slower
// and supported.
var best = bestPath(os.Getenv("ALIBI_SIMD"))

// active is the path the kernels use; tests change it with setPath.
var active = best

func bestPath(want string) Path {
	b := Portable
	for _, p := range Paths {
		if p.Supported() {
			b = p
		}
	}
	for _, p := range Paths {
		if p.String() == want && p <= b {
			return p
		}
	}
	return b
}

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
