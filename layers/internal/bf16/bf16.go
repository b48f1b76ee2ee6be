// Package bf16 multiplies float32 matrices in bfloat16 with float32
// accumulation: the arithmetic of AVX512_BF16's VDPBF16PS, which PyTorch's
// CPU autocast uses for its linear layers, or on Intel AMX's tiles that of
// TDPBF16PS (see Tiles).
//
// # Numbers
//
// A bfloat16 is the top half of a float32: the sign, the 8 exponent bits
// and 7 of the 23 mantissa bits. Round converts as VCVTNE2PS2BF16 does:
// round to nearest, ties to even; a denormal input becomes a zero of its
// sign; a NaN stays a quiet NaN. The relative rounding error is at most
// 2^-8 (half a unit in the 8th significant bit); the range is float32's.
// Two bfloat16 numbers multiply exactly in float32 (8 x 8 significant bits).
//
// # The product
//
// Except on AMX's tiles (see Tiles), Gemm computes C = alpha*Â*B̂ + beta*C with Â and B̂ the elementwise Round
// of op(A) and op(B). Each element of C is accumulated in float32 over k in
// blocks of at most KC steps, pairs of steps at a time, as one VDPBF16PS
// lane does: acc += â(2p+1)·b̂(2p+1), then acc += â(2p)·b̂(2p), each
// product exact and each sum rounded once to nearest even, a sum below
// 2^-126 after that rounding flushed to zero (see madd); an odd k is padded
// with a zero step. A block's sum s then goes into C as alpha*s + beta*C
// with each product and the sum rounded (beta is 1 after the first block;
// C is not read when beta is 0).
//
// # Paths
//
// Four paths follow exactly these steps (a fifth, AMX's tiles, has its
// own arithmetic: see Tiles): AVX512_BF16's instructions
// (kernel_amd64.s, see simd.BF16); their arithmetic on AVX-512F alone
// (emulated_amd64.s, for a CPU without them: each pair split into two
// float32, a fused multiply-add each, under flush-to-zero); the same
// arithmetic on AVX2 with FMA (avx2_amd64.s, for a CPU without AVX-512,
// or when ALIBI_SIMD=avx2 asks for it); and portable Go. They give the
// same bits (the tests check each assembly path against the portable
// one), except which NaN a NaN result is: its sign and payload follow
// each path's order of operands. The conversions and the products' kernel
// choose their paths apart: a CPU can have the instructions and run
// VDPBF16PS slower than its emulation (an Intel Xeon of the Emerald
// Rapids generation retires one every two cycles), so where the
// instructions exist, the first product times both kernels and keeps the
// faster. Path names what runs.
//
// # Tiles
//
// Intel's AMX tile unit multiplies bfloat16 with its own arithmetic, not
// VDPBF16PS's: TDPBF16PS sums a 32-step block's even and odd steps apart,
// each from zero, adds the two, and adds that to the accumulator (TileDot
// defines it in Go, to the bit, and the tests hold the instruction to it).
// Where the CPU has AMX-BF16 and Linux grants the tiles (HasAMX), and
// ALIBI_SIMD names no path, Gemm runs on the tiles (Path "amx",
// tilegemm.go): each 32 x 32 block of C is summed from zero over k in
// blocks of 32 (k padded with zeros), four accumulator tiles at a time,
// and the sums s go into C as alpha*s + beta*C, or + bias, as on the other
// paths. Those bits are the tile unit's, not the four paths' above: a
// product on AMX differs from the same product elsewhere in its last bits,
// and is as reproducible (any number of goroutines gives the same bits).
// The same blocked product runs on TileDot in the tests, on every machine.
// TilePeak measures the tiles' rate.
//
// # Error
//
// Against the exact product of the float32 inputs, each product term
// carries the inputs' rounding, a relative error up to about 2^-7, so a sum
// of k terms of mixed signs is typically off by about 2^-8·sqrt(k) of the
// terms' size: the price of bfloat16 inputs, which mixed-precision training
// accepts.
package bf16

import "math"

// KC is the k block: the steps summed in registers before C is updated.
const KC = 256

// Round converts x to bfloat16 bits: round to nearest even, denormals to a
// zero of their sign, NaN to a quiet NaN.
func Round(x float32) uint16 {
	b := math.Float32bits(x)
	switch {
	case b&0x7fffffff > 0x7f800000: // NaN: keep the top bits, set the quiet bit
		return uint16(b>>16) | 0x40
	case b&0x7f800000 == 0: // zero or denormal
		return uint16(b>>16) & 0x8000
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// Float32 is the float32 value of bfloat16 bits h.
func Float32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// dot2 is one VDPBF16PS lane: acc plus the products of the pairs a and b,
// the odd halves first, each added as madd adds it.
func dot2(acc float32, a, b uint32) float32 {
	acc = madd(acc, Float32(uint16(a>>16)), Float32(uint16(b>>16)))
	return madd(acc, Float32(uint16(a)), Float32(uint16(b)))
}

// madd is acc + x·y for bfloat16 values x and y, as a fused multiply-add
// under x86's flush-to-zero gives it: the exact sum rounded once to
// float32, to nearest even, and a zero of its sign where the sum is tiny.
// x86 detects tininess after rounding: a sum is tiny when, rounded to
// float32's 24 significant bits as if the exponent had no lower bound, it
// is below 2^-126. So a sum in [2^-126 - 2^-151, 2^-126) rounds up to
// 2^-126 (the midpoint below it goes to the even 2^-126) and one just
// below becomes zero, where rounding to float32's denormals first would
// keep 2^-126 down to 2^-126 - 2^-150 (VDPBF16PS on Zen 4 gives 2^-126
// and zero there, as the fused multiply-add does; TestTinyAfterRounding).
// The float64 product of two bfloat16 numbers is exact, and so is the
// float64 sum up to the one rounding that matters: a bfloat16 product
// spans at most 16 bits, too few for the float64 rounding to land on a
// float32 boundary or tie that the exact sum is not on.
func madd(acc, x, y float32) float32 {
	s := float64(acc) + float64(x)*float64(y)
	switch m := math.Abs(s); {
	case m >= 0x1p-126 || m != m: // normal, infinite or NaN
		return float32(s)
	case m >= 0x1p-126-0x1p-151:
		return float32(math.Copysign(0x1p-126, s))
	}
	return float32(math.Copysign(0, s))
}
