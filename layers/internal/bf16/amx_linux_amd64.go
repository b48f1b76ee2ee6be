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

var amx struct {
	once sync.Once
	ok   bool
}

// HasAMX reports whether the CPU has AMX-BF16 and the kernel grants this
// process the tile state (it asks once: Linux gives tile data only on
// request, and without it the first tile load raises SIGILL).
func HasAMX() bool {
	amx.once.Do(func() {
		if !cpu.X86.HasAMXTile || !cpu.X86.HasAMXBF16 {
			return
		}
		_, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureTileData, 0)
		amx.ok = errno == 0
	})
	return amx.ok
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

// tileBlocksAMXAt runs kb TDPBF16PS on one 16 x 16 C tile at c (row
// stride ldc): c += the kb packed A tiles times the kb packed B tiles
// (tileWords apart), C held in a tile register throughout.
func tileBlocksAMXAt(c []float32, ldc int, a, b []uint16, kb int) {
	_ = c[(TileRows-1)*ldc+TileCols-1]
	_ = a[kb*tileWords-1]
	_ = b[kb*tileWords-1]
	tileBlocksAsm(fullTile, &c[0], uintptr(4*ldc), &a[0], &b[0], kb)
}

// fullTile is the configuration of 16 x 16 x 16-pair tiles.
var fullTile = tileConfig(TileRows, TileCols, TilePairs)

// fullTiles2x2 configures all eight tiles as 16 rows of 64 bytes: four C,
// two A and two B tiles (tileBlocks2x2Asm).
var fullTiles2x2 = func() *[64]byte {
	var cfg [64]byte
	cfg[0] = 1
	for t := 0; t < 8; t++ {
		cfg[16+2*t] = 64
		cfg[48+t] = TileRows
	}
	return &cfg
}()

// tileBlocks2x2AMX computes the 2 x 2 C tiles at c (row stride ldc) as
// tileBlocksAMXAt computes each: c += the A panels a0 and a1 (rows 0-15
// and 16-31) times the B panels b0 and b1 (columns 0-15 and 16-31), kb
// blocks each, every A and B tile loaded once for two products.
func tileBlocks2x2AMX(c []float32, ldc int, a0, a1, b0, b1 []uint16, kb int) {
	_ = c[(2*TileRows-1)*ldc+2*TileCols-1]
	for _, p := range [][]uint16{a0, a1, b0, b1} {
		_ = p[kb*tileWords-1]
	}
	tileBlocks2x2Asm(fullTiles2x2, &c[0], uintptr(4*ldc), &a0[0], &a1[0], &b0[0], &b1[0], kb)
}

//go:noescape
func tileBlocks2x2Asm(cfg *[64]byte, c *float32, ldc uintptr, a0, a1, b0, b1 *uint16, kb int)

//go:noescape
func tileBlocksAsm(cfg *[64]byte, c *float32, ldc uintptr, a, b *uint16, kb int)
