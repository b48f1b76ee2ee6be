// Package simd names the instruction-set paths of the project's assembly
// kernels (layers/internal/gemm, layers/internal/vmath and
// layers/internal/bf16) and chooses the fastest one that both the CPU and
// the build support: AVX-512, AVX2 with FMA, or portable Go (the only one
// with the purego build tag or on other architectures). The environment
// variable ALIBI_SIMD ("portable", "avx2" or "avx512") picks a slower
// supported path instead, for comparisons: with "avx2", the bfloat16
// products run their AVX2 kernel too, on any CPU with AVX2.
package simd

import (
	"fmt"
	"os"
)

// Path is one implementation of a package's kernels.
type Path int

// The paths, from the slowest to the fastest.
const (
	Portable Path = iota // portable Go, any CPU
	AVX2                 // AVX2 + FMA assembly
	AVX512               // AVX-512F assembly (with AVX2 and FMA)
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

// Supported reports whether the CPU and the build can run path p.
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

// BF16 reports whether the CPU and the build run AVX512_BF16's instructions
// (VDPBF16PS, VCVTNE2PS2BF16) and the chosen path is AVX-512: then the
// bfloat16 products (layers/internal/bf16) run in assembly.
func BF16() bool { return hasBF16 && Best() == AVX512 }

// BF16Emulated reports whether the bfloat16 products can run their
// AVX-512F emulation of those instructions instead: the chosen path is
// AVX-512 and the CPU has AVX512VL (for the 256-bit forms of its integer
// operations), with or without AVX512_BF16.
func BF16Emulated() bool { return hasVL && Best() == AVX512 }

// Best is the fastest supported path, or the one ALIBI_SIMD names if that
// is slower and supported.
func Best() Path { return best(os.Getenv("ALIBI_SIMD")) }

func best(want string) Path {
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

// Selector is the path one package's kernels run: Best() unless a test or
// benchmark sets another. Each kernel package keeps one, so that its tests
// can run every path in turn. Set must not be called while the package's
// kernels run.
type Selector struct {
	pkg  string
	path Path
}

// NewSelector returns the selector of package pkg (named in Set's panic),
// starting at Best().
func NewSelector(pkg string) *Selector { return &Selector{pkg: pkg, path: Best()} }

// Path is the path the kernels run.
func (s *Selector) Path() Path { return s.path }

// Set makes the kernels run path p and returns the previous one. An
// unsupported p is a programming error in a test: it panics.
func (s *Selector) Set(p Path) Path {
	if !p.Supported() {
		panic(fmt.Sprintf("%s: path %v is not supported", s.pkg, p))
	}
	prev := s.path
	s.path = p
	return prev
}

// L1DataWays is the associativity of the CPU's level-1 data cache, as
// CPUID's deterministic cache parameters report it (Intel's leaf 4, AMD's
// leaf 0x8000001D), or 0 when unknown (other architectures, the purego
// tag, or a hypervisor that hides the leaves). The matrix kernels use it
// to decide whether rows 4 KiB apart, which share one set of the cache,
// can be read in place.
func L1DataWays() int { return l1DataWays() }
