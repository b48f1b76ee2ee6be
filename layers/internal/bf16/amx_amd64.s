//go:build linux && amd64 && !purego

#include "textflag.h"

// Go's assembler has no AMX mnemonics: each instruction is written as its
// bytes (checked with binutils' objdump), using only the legacy registers
// so that the VEX prefix keeps its inverted R, X and B bits set.

// func tileDotAMX(cfg *[64]byte, c *float32, ldc uintptr, a *uint16, lda uintptr, b *uint16, ldb uintptr)
// C (tmm0) += A (tmm1) · B (tmm2) with TDPBF16PS, strides in bytes. The
// tile state is configured and released inside the call: it belongs to the
// OS thread, which the goroutine may leave between calls.
TEXT ·tileDotAMX(SB), NOSPLIT, $0-56
	MOVQ cfg+0(FP), SI
	MOVQ c+8(FP), DI
	MOVQ ldc+16(FP), CX
	MOVQ a+24(FP), DX
	MOVQ lda+32(FP), BX
	MOVQ b+40(FP), AX
	// LDTILECFG (SI)
	BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0x06
	// TILELOADD tmm0, (DI)(CX*1)
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x04; BYTE $0x0F
	// TILELOADD tmm1, (DX)(BX*1)
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x0C; BYTE $0x1A
	MOVQ ldb+48(FP), CX
	// TILELOADD tmm2, (AX)(CX*1)
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x14; BYTE $0x08
	// TDPBF16PS tmm0, tmm1, tmm2
	BYTE $0xC4; BYTE $0xE2; BYTE $0x6A; BYTE $0x5C; BYTE $0xC1
	MOVQ ldc+16(FP), CX
	// TILESTORED (DI)(CX*1), tmm0
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $0x04; BYTE $0x0F
	// TILERELEASE
	BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0xC0
	RET

// func tileBlocksAsm(cfg *[64]byte, c *float32, ldc uintptr, a, b *uint16, kb int)
// C (16 x 16 float32, rows ldc bytes apart) += the kb A tiles times the kb
// B tiles (each 16 rows of 64 B, 1024 B apart): C stays in tmm0.
TEXT ·tileBlocksAsm(SB), NOSPLIT, $0-48
	MOVQ cfg+0(FP), SI
	MOVQ c+8(FP), DI
	MOVQ ldc+16(FP), CX
	MOVQ a+24(FP), DX
	MOVQ b+32(FP), AX
	MOVQ kb+40(FP), BX
	// LDTILECFG (SI)
	BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0x06
	// TILELOADD tmm0, (DI)(CX*1)
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x04; BYTE $0x0F
	MOVQ $64, CX
	MOVQ DX, SI
blocks:
	// TILELOADD tmm1, (SI)(CX*1)
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x0C; BYTE $0x0E
	// TILELOADD tmm2, (AX)(CX*1)
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x14; BYTE $0x08
	// TDPBF16PS tmm0, tmm1, tmm2
	BYTE $0xC4; BYTE $0xE2; BYTE $0x6A; BYTE $0x5C; BYTE $0xC1
	ADDQ $1024, SI
	ADDQ $1024, AX
	DECQ BX
	JNZ  blocks
	MOVQ ldc+16(FP), CX
	// TILESTORED (DI)(CX*1), tmm0
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $0x04; BYTE $0x0F
	// TILERELEASE
	BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0xC0
	RET

// func tileBlocks2x2Asm(cfg *[64]byte, c *float32, ldc uintptr, a0, a1, b0, b1 *uint16, kb int)
// The 2 x 2 C tiles at c (32 x 32 float32, rows ldc bytes apart) += the
// kb tiles of the A panels a0 (rows 0-15) and a1 (rows 16-31) times those
// of the B panels b0 (columns 0-15) and b1 (16-31), each tile 16 rows of
// 64 B, 1024 B apart: C in tmm0-3, A in tmm4-5, B in tmm6-7, each A and B
// tile loaded once for two products.
TEXT ·tileBlocks2x2Asm(SB), NOSPLIT, $0-64
	MOVQ cfg+0(FP), SI
	MOVQ c+8(FP), DI
	MOVQ ldc+16(FP), CX
	MOVQ CX, R10
	SHLQ $4, R10 // 16 rows
	// LDTILECFG (SI)
	BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0x06
	// TILELOADD tmm0, (DI)(CX*1); TILELOADD tmm1, 64(DI)(CX*1)
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x04; BYTE $0x0F
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x4C; BYTE $0x0F; BYTE $0x40
	ADDQ R10, DI
	// TILELOADD tmm2, (DI)(CX*1); TILELOADD tmm3, 64(DI)(CX*1)
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x14; BYTE $0x0F
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x5C; BYTE $0x0F; BYTE $0x40
	SUBQ R10, DI
	MOVQ a0+24(FP), SI
	MOVQ a1+32(FP), DX
	MOVQ b0+40(FP), AX
	MOVQ b1+48(FP), BX
	MOVQ kb+56(FP), R8
	MOVQ $64, CX
blocks2x2:
	// TILELOADD tmm4, (SI)(CX*1); tmm5, (DX)(CX*1); tmm6, (AX)(CX*1); tmm7, (BX)(CX*1)
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x24; BYTE $0x0E
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x2C; BYTE $0x0A
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x34; BYTE $0x08
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x3C; BYTE $0x0B
	// TDPBF16PS tmm0, tmm4, tmm6; tmm1, tmm4, tmm7; tmm2, tmm5, tmm6; tmm3, tmm5, tmm7
	BYTE $0xC4; BYTE $0xE2; BYTE $0x4A; BYTE $0x5C; BYTE $0xC4
	BYTE $0xC4; BYTE $0xE2; BYTE $0x42; BYTE $0x5C; BYTE $0xCC
	BYTE $0xC4; BYTE $0xE2; BYTE $0x4A; BYTE $0x5C; BYTE $0xD5
	BYTE $0xC4; BYTE $0xE2; BYTE $0x42; BYTE $0x5C; BYTE $0xDD
	ADDQ $1024, SI
	ADDQ $1024, DX
	ADDQ $1024, AX
	ADDQ $1024, BX
	DECQ R8
	JNZ  blocks2x2
	MOVQ ldc+16(FP), CX
	// TILESTORED (DI)(CX*1), tmm0; 64(DI)(CX*1), tmm1
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $0x04; BYTE $0x0F
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $0x4C; BYTE $0x0F; BYTE $0x40
	ADDQ R10, DI
	// TILESTORED (DI)(CX*1), tmm2; 64(DI)(CX*1), tmm3
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $0x14; BYTE $0x0F
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $0x5C; BYTE $0x0F; BYTE $0x40
	// TILERELEASE
	BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0xC0
	RET
