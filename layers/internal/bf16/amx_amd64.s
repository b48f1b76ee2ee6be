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
