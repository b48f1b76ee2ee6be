package bf16

import "math"

// The largest tile of Intel AMX: 16 rows of 64 bytes.
const (
	TileRows  = 16 // rows of a tile
	TilePairs = 16 // bfloat16 pairs in a 64-byte row of A (and rows of packed B)
	TileCols  = 16 // float32 columns of C (and bfloat16 pairs in a row of packed B)
)

// TileDot is the arithmetic of AMX's TDPBF16PS, in Go: C (m x n float32,
// row stride ldc) += A (m x 2kp bfloat16, row stride lda) times B, with B
// packed as the instruction reads it, kp rows of n bfloat16 pairs (row
// stride ldb, in words): bp[p*ldb + 2j + i] is B[2p+i][j]. m and n are at
// most 16, kp at most 16.
//
// Intel's pseudo-code adds the products into C one at a time, in the order
// of k. The instruction does not (measured on an Intel Xeon of family 6,
// model 167, and checked bit for bit by the tests where the CPU has AMX):
// for each element it sums the products of the even steps, A[i][2p]·B[2p][j]
// for p = 0, 1, ..., into one float32 from zero, those of the odd steps into
// another, adds the two, and adds that sum to C. Every sum is rounded to
// nearest even and flushed to a zero of its sign below the smallest normal
// float32 (madd's rule); each product is exact; inputs that are bfloat16
// denormals count as zeros of their sign, as does a denormal C; MXCSR plays
// no part.
func TileDot(m, n, kp int, c []float32, ldc int, a []uint16, lda int, bp []uint16, ldb int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		for j := range row {
			var even, odd float32
			for p := 0; p < kp; p++ {
				even = madd(even, tileInput(a[i*lda+2*p]), tileInput(bp[p*ldb+2*j]))
				odd = madd(odd, tileInput(a[i*lda+2*p+1]), tileInput(bp[p*ldb+2*j+1]))
			}
			row[j] = madd(flushDenormal(row[j]), madd(even, odd, 1), 1)
		}
	}
}

// tileInput is a bfloat16 as the tile unit reads it: a denormal is a zero
// of its sign.
func tileInput(h uint16) float32 {
	if h&0x7f80 == 0 {
		h &= 0x8000
	}
	return Float32(h)
}

// flushDenormal is x, or a zero of its sign when x is a denormal.
func flushDenormal(x float32) float32 {
	if math.Float32bits(x)&0x7f800000 == 0 {
		return float32(math.Copysign(0, float64(x)))
	}
	return x
}

// PackTileB packs k rows of n bfloat16 values (row stride ldb) as TileDot
// and TDPBF16PS read B: (k+1)/2 rows of n pairs, an odd k padded with a
// zero row. dst holds at least (k+1)/2 * 2n words, row stride 2n.
func PackTileB(dst []uint16, b []uint16, k, n, ldb int) {
	for p := 0; p < (k+1)/2; p++ {
		for j := 0; j < n; j++ {
			dst[p*2*n+2*j] = b[2*p*ldb+j]
			if 2*p+1 < k {
				dst[p*2*n+2*j+1] = b[(2*p+1)*ldb+j]
			} else {
				dst[p*2*n+2*j+1] = 0
			}
		}
	}
}
