//go:build amd64 && !purego

package bf16

import (
	"os"
	"sync"
	"time"
)

// The products' kernel. A CPU with AVX512_BF16 does not always run
// VDPBF16PS fast: on an Intel Xeon of the Emerald Rapids generation (family
// 6, model 207) it retires one every two cycles, 32 multiply-adds a cycle,
// where two fused multiply-adds a cycle give the emulation (two FMAs per
// VDPBF16PS) 64. There the emulated kernel runs the products 1.7x faster,
// with the same bits; the conversions (VCVTNEPS2BF16) stay on the
// instructions. Which kernel is faster is measured, not looked up by model:
// the first product times both on the same operands, in cache.
var (
	productsOnce sync.Once
	products     kpath // set by productsOnce, or by tests
)

// productsPath is the kernel the products run on: AMX's tiles where
// path is native, the CPU and kernel grant the tiles (HasAMX) and
// ALIBI_SIMD names no path without them (amxAllowed); otherwise path's, except where path is
// native and the emulated kernel measures faster on this CPU
// (emulationFaster), measured once.
func productsPath() kpath {
	productsOnce.Do(func() {
		products = path
		switch {
		case path == native && amxAllowed(os.Getenv("ALIBI_SIMD")) && HasAMX():
			products = amx
		case path == native && emulationFaster():
			products = emulated
		}
	})
	return products
}

// amxAllowed reports whether ALIBI_SIMD's value env leaves the products to
// the tile unit: anything but the name of a path without tiles (avx512,
// avx2, portable), as simd.Best ignores a value that names no path.
func amxAllowed(env string) bool { return env != "avx512" && env != "avx2" && env != "portable" }

// emulationFaster reports whether the emulated kernel computes the same
// tiles at least 10% faster than the native one: each is timed on 18 tiles
// of 128 pairs (the 8 x 32 tiles of a block of A against one sliver of B,
// 2.4 MFLOP, tens of microseconds) in five alternating rounds of three
// calls, and the fastest round of each counts, so that an interruption
// of one round does not decide. About a millisecond in all, once a process.
func emulationFaster() bool {
	const nsl, kp, calls = 18, 128, 3
	a, b := make([]uint32, nsl*kp*MR), make([]uint32, kp*NR)
	for i := range a {
		a[i] = 0x3f803f80 // 1.0 in both halves
	}
	copy(b, a)
	af := make([]float32, 2*len(a))
	split(af, a, MR)
	c := make([]float32, MR*NR*nsl)
	var best [2]time.Duration
	for r := range 5 {
		for i, kern := range []kpath{native, emulated} {
			start := time.Now()
			for range calls {
				kernel(kern, nsl, kp, a, b, af, c, NR, 1, 0, nil, MR, NR)
			}
			if d := time.Since(start); r == 0 || d < best[i] {
				best[i] = d
			}
		}
	}
	return best[1]*10 < best[0]*9
}
