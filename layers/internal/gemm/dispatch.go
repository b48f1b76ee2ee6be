package gemm

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

	// Transposed A and B are never read in place by a product of more than
	// directMaxK k steps (0: no limit): such operands (the weight gradients
	// X^T dY of a step of more than 1024 tokens) are megabytes, read from
	// beyond L2 on every pass, where packing reads them once. Measured on
	// an Intel Xeon (family 6, model 207), two threads: the small model's
	// four weight-gradient products (k = 8192) ran 1.2-1.7x faster packed.
	// The tiny model's (k = 2048) ran no faster packed while their operands
	// stayed in cache, but 1.1-1.4x faster from memory (operands rotated
	// through 24 copies), and the whole tiny step about 1.04x faster (44
	// alternating runs).
	directMaxK int

	// sharedRows is the height of the chunks of C that the shared
	// multi-threaded path hands out (0: mcMax). Measured on an Intel Xeon
	// (family 6, model 207), training steps alternating in one process:
	// chunks of 64 rows instead of 144 made the small model's step 1.057x
	// faster (6 of 6 sets) and the tiny one's 1.017x (7 of 8): the last
	// chunks leave a core idle for less time, and a chunk's C (64 x 1024
	// floats for the small model's widest products) stays in L2 for the
	// epilogue and the next k block. 32 rows gained nothing more for the
	// small model.
	sharedRows int

	// sharedMaxK is the longest k reduction the shared multi-threaded path
	// takes (0: no limit); a longer product takes the static split even
	// when its packed operands fit sharedPackBudget. The shared path packs
	// all of both operands before either goroutine computes, and for a
	// long k those are megabytes of A and B that the chunks then read
	// back from beyond L2. Measured on an Intel Xeon (family 6, model 207)
	// with AVX512_BF16 shown, quiet, two threads: at k = 2048 and 4096 the
	// static split ran 1.15-1.4x faster (the tiny model's 128 x 128 x 2048
	// weight gradient 171 against 239 GFLOP/s; A transposed or not); at k
	// = 512 and 1024 the two were within a few percent.
	sharedMaxK int

	// stridedAInPlace lets non-transposed A whose row stride is a multiple
	// of 4 KiB be read in place (see useDirectA): set at start-up on the
	// AVX-512 path when the L1 data cache has more than 8 ways
	// (simd.L1DataWays), so that the 8 rows of a sliver, which share one
	// set, leave ways for B and C. With 8 ways (Zen 4) they would fill the
	// set, so that A is packed. Measured on an Intel Xeon (family 6, model
	// 207; 12 ways), small-model steps alternating in one process: reading
	// in place made the step 1.05x faster (6 of 6 sets; the small model's
	// 1024-wide activations are such an A, and without their packing the
	// products fit the shared path).
	stridedAInPlace bool
}

// KBlock is the longest sum over k that a product computes in one chain
// per element of C, on every path: a longer k is cut into ceil(k/KBlock)
// blocks of nearly equal size, so where the chain is cut depends on k. Up
// to KBlock, and while the product stays on the same path (partial tiles
// with beta != 0 and the small-M path round differently), an element's
// bits do not change when terms 0 * x are left off the end of its sum.
const KBlock = 256

var geometries = [...]geometry{
	Portable: {path: Portable, mr: 6, nr: 16, kcMax: KBlock, mcMax: 144, ncMax: 2048, directACols: 64, directARowMajorCols: 512},
	AVX2:     {path: AVX2, mr: 6, nr: 16, kcMax: KBlock, mcMax: 144, ncMax: 2048, directACols: 64, directARowMajorCols: 512},
	AVX512:   {path: AVX512, mr: 8, nr: 32, kcMax: KBlock, mcMax: 144, ncMax: 2048, directACols: 512, directARowMajorCols: 512, directBMaxRows: 512, directMaxK: 1024, sharedRows: 64, sharedMaxK: 1024},
}

// kernels selects the path the kernels run; tests change it with setPath.
var kernels = simd.NewSelector("gemm")

func init() { geometries[AVX512].stridedAInPlace = simd.L1DataWays() > 8 }

// Active returns the path Sgemm uses.
func Active() Path { return kernels.Path() }

// setPath makes Sgemm use path p, which must be supported, and returns the
// previous path. It is for tests and benchmarks, which must not run Sgemm
// concurrently with it.
func setPath(p Path) Path { return kernels.Set(p) }

// geom returns the geometry of the active path.
func geom() *geometry { return &geometries[kernels.Path()] }
