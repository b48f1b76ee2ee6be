package gemm

import (
	"fmt"
	"os"
)

// Path is one implementation of the micro-kernel and the packing routines.
type Path int

// The paths, from the slowest to the fastest.
const (
	Portable Path = iota // portable Go, any CPU
	AVX2                 // AVX2 + FMA assembly, 6x16 tiles
	AVX512               // AVX-512F assembly, 8x32 tiles
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

// geometry is the register tile and cache blocking of one path.
type geometry struct {
	path   Path
	mr, nr int // micro-kernel tile: mr rows by nr columns

	kcMax int // k block
	mcMax int // m block: an mc x kc packed A block stays in L2
	ncMax int // n block: a kc x nc packed B panel lives in L2/L3

	// A is read in place instead of being packed when the B panel has at
	// most directACols columns, or directARowMajorCols when A is not
	// transposed (its rows are then contiguous in k and cheap to read in
	// place); with few columns the packing cost of A is not amortised. The
	// 8x32 kernel reads A from L2 at half the rate of the 6x16 one, so it
	// takes transposed A in place for wider panels.
	directACols, directARowMajorCols int

	// Non-transposed B is read in place instead of being packed when the
	// product has at most directBMaxRows rows: B is then reused by few A
	// slivers, and packing it costs a pass over memory (0 disables it; the
	// kernel must take a B row stride).
	directBMaxRows int
}

var geometries = [...]geometry{
	Portable: {path: Portable, mr: 6, nr: 16, kcMax: 256, mcMax: 144, ncMax: 2048, directACols: 64, directARowMajorCols: 512},
	AVX2:     {path: AVX2, mr: 6, nr: 16, kcMax: 256, mcMax: 144, ncMax: 2048, directACols: 64, directARowMajorCols: 512},
	AVX512:   {path: AVX512, mr: 8, nr: 32, kcMax: 256, mcMax: 144, ncMax: 2048, directACols: 512, directARowMajorCols: 512, directBMaxRows: 512},
}

// best is the fastest supported path, or the one named by the ALIBI_SIMD
// environment variable ("portable", "avx2" or "avx512") if that is slower
// and supported.
var best = bestPath(os.Getenv("ALIBI_SIMD"))

// active is the path Sgemm uses; tests change it with setPath.
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

// Active returns the path Sgemm uses.
func Active() Path { return active }

// setPath makes Sgemm use path p, which must be supported, and returns the
// previous path. It is for tests and benchmarks, which must not run Sgemm
// concurrently with it.
func setPath(p Path) Path {
	if !p.Supported() {
		panic(fmt.Sprintf("gemm: path %v is not supported", p))
	}
	prev := active
	active = p
	return prev
}

// geom returns the geometry of the active path.
func geom() *geometry { return &geometries[active] }
