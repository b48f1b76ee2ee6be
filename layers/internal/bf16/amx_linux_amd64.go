//go:build linux && amd64 && !purego

package bf16

import (
	"sync"
	"syscall"

	"golang.org/x/sys/cpu"
)

// tileDotAMX runs one TDPBF16PS on the tiles cfg describes: C (tmm0) +=
// A (tmm1) · B (tmm2), the strides in bytes.
//
//go:noescape
func tileDotAMX(cfg *[64]byte, c *float32, ldc uintptr, a *uint16, lda uintptr, b *uint16, ldb uintptr)

// Linux's arch_prctl requests, and the tile data's state component.
const (
	archReqXcompPerm = 0x1023
	xfeatureTileData = 18
)

var amxGrant struct {
	once sync.Once
	ok   bool
}

// HasAMX reports whether the CPU has AMX-BF16 and the kernel grants this
// process the tile state (it asks once: Linux gives tile data only on
// request, and without it the first tile load raises SIGILL).
func HasAMX() bool {
	amxGrant.once.Do(func() {
		if !cpu.X86.HasAMXTile || !cpu.X86.HasAMXBF16 {
			return
		}
		_, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureTileData, 0)
		amxGrant.ok = errno == 0
	})
	return amxGrant.ok
}

// tileConfig is the 64-byte tile configuration of one m x n x kp product:
// palette 1; tmm0 (C) m rows of 4n bytes, tmm1 (A) m rows of 4kp bytes,
// tmm2 (B) kp rows of 4n bytes.
func tileConfig(m, n, kp int) *[64]byte {
	var cfg [64]byte
	cfg[0] = 1
	set := func(t, rows, colsb int) {
		cfg[16+2*t] = byte(colsb)
		cfg[16+2*t+1] = byte(colsb >> 8)
		cfg[48+t] = byte(rows)
	}
	set(0, m, 4*n)
	set(1, m, 4*kp)
	set(2, kp, 4*n)
	return &cfg
}

// TileDotAMX is TileDot on the tile unit, with the same arguments; it
// panics when HasAMX is false (a caller's mistake).
func TileDotAMX(m, n, kp int, c []float32, ldc int, a []uint16, lda int, bp []uint16, ldb int) {
	if !HasAMX() {
		panic("bf16: TileDotAMX without AMX")
	}
	if m < 1 || m > TileRows || n < 1 || n > TileCols || kp < 1 || kp > TilePairs {
		panic("bf16: TileDotAMX: a tile of at most 16 x 16 x 16 pairs")
	}
	_ = c[(m-1)*ldc+n-1]
	_ = a[(m-1)*lda+2*kp-1]
	_ = bp[(kp-1)*ldb+2*n-1]
	tileDotAMX(tileConfig(m, n, kp), &c[0], uintptr(4*ldc), &a[0], uintptr(2*lda), &bp[0], uintptr(2*ldb))
}

// fullTiles is the configuration of tileStripAsm: all eight tiles 16
// rows of 64 bytes (four C, two A, two B).
var fullTiles = func() *[64]byte {
	var cfg [64]byte
	cfg[0] = 1
	for t := 0; t < 8; t++ {
		cfg[16+2*t] = 64
		cfg[48+t] = TileRows
	}
	return &cfg
}()

// tileStrip is the tile product's strip on this build: the tile unit's.
func tileStrip() stripFunc { return stripAMX }

// stripAMX is stripFunc on the tile unit, the stores on AVX-512 (HasAMX
// must be true; every CPU with AMX has AVX-512).
func stripAMX(c []float32, ldc int, a []uint16, lda int, b []uint32, panel, kb, n, rows int, alpha, beta float32, bias []float32) {
	if rows < 1 || rows > blockRows || kb < 1 || n < 1 {
		panic("bf16: stripAMX: a strip of 1 to 32 rows, at least one column and one step")
	}
	blocks := (n + blockCols - 1) / blockCols
	_ = c[(rows-1)*ldc+n-1]
	_ = a[(blockRows-1)*lda+kb*kStep-1]
	_ = b[(blocks-1)*panel+kb*TilePairs*blockCols-1]
	var bp *float32
	if bias != nil {
		_ = bias[n-1]
		bp = &bias[0]
	}
	var scratch [blockRows * blockCols]float32
	last := n - (blocks-1)*blockCols // columns of the last block
	tileStripAsm(fullTiles, &scratch, &a[0], uintptr(2*lda), &b[0], uintptr(4*panel), kb, blocks,
		&c[0], uintptr(4*ldc), rows, uint32(1)<<last-1, alpha, beta, bp)
}

// tileStripAsm is stripAMX's work: for each of blocks blocks of 32
// columns, the tile products into tmm0-3, stored to scratch, and from
// there into C (the columns of mask in the last block).
//
//go:noescape
func tileStripAsm(cfg *[64]byte, scratch *[blockRows * blockCols]float32, a *uint16, lda uintptr, b *uint32, panel uintptr, kb, blocks int, c *float32, ldc uintptr, rows int, mask uint32, alpha, beta float32, bias *float32)

//go:noescape
func tilePeakAsm(cfg *[64]byte, a, b *uint16, iters int)

// tilePeakLoop runs one call of the tile unit's peak loop and returns its
// floating-point operations (0 without AMX).
func tilePeakLoop(a, b *[2 * tileWords]uint16) float64 {
	if !HasAMX() {
		return 0
	}
	const iters = 1 << 12 // about 0.1 ms
	tilePeakAsm(fullTiles, &a[0], &b[0], iters)
	return iters * 4 * 2 * TileRows * TileCols * 2 * TilePairs
}
