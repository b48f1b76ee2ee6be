//go:build linux && amd64 && !purego

#include "textflag.h"
#include "tile_amd64.h"

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

// func tileStripAsm(cfg *[64]byte, scratch *[1024]float32, a *uint16, lda uintptr, b *uint32, panel uintptr, kb, blocks int, c *float32, ldc uintptr, rows int, mask uint32, alpha, beta float32, bias *float32)
// One strip of C, blocks blocks of 32 columns. For each block: its sums
// (tmm0-3) = A's 32 rows (bfloat16, rows lda bytes apart) times the
// block's B panel (at b + panel bytes per block, rows of 32 pair words,
// 128 B), from zero, over kb steps of 32: step q's A tiles at a + 64q
// (rows 0-15) and 16 rows below (16-31), its B tiles 16 rows (2 KiB)
// further each step, columns 0-15 and 64 B to the right (16-31); A in
// tmm4-5, B in tmm6-7, each A and B tile loaded once for two products.
// The sums go to scratch (rows of 128 B) and from there, while in L1, to
// C's rows rows (ldc bytes apart) as alpha*s + bias, alpha*s (beta zero of
// either sign) or alpha*s + beta*C, each product and the sum rounded; the
// last block stores the columns of mask. R12 is the block's B panel, R13
// its C, R10 its bias (0 for none), R11 the blocks left; the tile
// instructions address with legacy registers only.
TEXT ·tileStripAsm(SB), NOSPLIT, $0-112
	MOVQ         cfg+0(FP), SI
	// LDTILECFG (SI)
	BYTE         $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0x06
	MOVQ         b+32(FP), R12
	MOVQ         c+64(FP), R13
	MOVQ         blocks+56(FP), R11
	MOVQ         bias+104(FP), R10
	VBROADCASTSS alpha+92(FP), Z30
	VBROADCASTSS beta+96(FP), Z31
	MOVL         $0xffff, R9
	KMOVW        R9, K1
	KMOVW        R9, K2

block:
	CMPQ  R11, $1
	JNE   sums
	MOVL  mask+88(FP), R9
	KMOVW R9, K1
	SHRL  $16, R9
	KMOVW R9, K2

sums:
	// TILEZERO tmm0; tmm1; tmm2; tmm3
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $0xC0
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $0xC8
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $0xD0
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $0xD8
	MOVQ lda+24(FP), CX
	MOVQ a+16(FP), SI
	MOVQ CX, DX
	SHLQ $4, DX
	ADDQ SI, DX // A's rows 16-31
	MOVQ R12, AX
	LEAQ 64(AX), BX // B's columns 16-31
	MOVQ $128, DI
	MOVQ kb+48(FP), R8

steps:
	// TILELOADD tmm4, (SI)(CX*1); tmm5, (DX)(CX*1); then B with TILELOADDT1
	// (the same load, hinted not to keep the panel in L1, which it streams
	// through once a block): tmm6, (AX)(DI*1); tmm7, (BX)(DI*1). The hint
	// made the tiny bf16 step 1-4% faster (4 of 4 alternating pairs).
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x24; BYTE $0x0E
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x2C; BYTE $0x0A
	BYTE $0xC4; BYTE $0xE2; BYTE $0x79; BYTE $0x4B; BYTE $0x34; BYTE $0x38
	BYTE $0xC4; BYTE $0xE2; BYTE $0x79; BYTE $0x4B; BYTE $0x3C; BYTE $0x3B
	// TDPBF16PS tmm0, tmm4, tmm6; tmm1, tmm4, tmm7; tmm2, tmm5, tmm6; tmm3, tmm5, tmm7
	BYTE $0xC4; BYTE $0xE2; BYTE $0x4A; BYTE $0x5C; BYTE $0xC4
	BYTE $0xC4; BYTE $0xE2; BYTE $0x42; BYTE $0x5C; BYTE $0xCC
	BYTE $0xC4; BYTE $0xE2; BYTE $0x4A; BYTE $0x5C; BYTE $0xD5
	BYTE $0xC4; BYTE $0xE2; BYTE $0x42; BYTE $0x5C; BYTE $0xDD
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $2048, AX
	ADDQ $2048, BX
	DECQ R8
	JNZ  steps
	MOVQ scratch+8(FP), SI
	MOVQ $128, CX
	// TILESTORED (SI)(CX*1), tmm0; 64(SI)(CX*1), tmm1
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $0x04; BYTE $0x0E
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $0x4C; BYTE $0x0E; BYTE $0x40
	ADDQ $2048, SI // 16 rows down
	// TILESTORED (SI)(CX*1), tmm2; 64(SI)(CX*1), tmm3
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $0x14; BYTE $0x0E
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $0x5C; BYTE $0x0E; BYTE $0x40

	// The stores, with tile_amd64.h's row stores: SI the scratch row, R9
	// the C row, R8 ldc, CX rows left.
	MOVQ  scratch+8(FP), SI
	MOVQ  ldc+72(FP), R8
	MOVQ  rows+80(FP), CX
	MOVQ  R13, R9
	TESTQ R10, R10
	JNZ   withbias
	MOVL  beta+96(FP), AX
	SHLL  $1, AX // beta == 0 of either sign
	JNZ   withbeta

zero:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	STOREZ(Z0, Z1)
	ADDQ    $128, SI
	DECQ    CX
	JNZ     zero
	JMP     next

withbeta:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	STOREB(Z0, Z1)
	ADDQ    $128, SI
	DECQ    CX
	JNZ     withbeta
	JMP     next

withbias:
	VMOVUPS.Z (R10), K1, Z28
	VMOVUPS.Z 64(R10), K2, Z29
	ADDQ      $128, R10

biasrows:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	STOREA(Z0, Z1)
	ADDQ    $128, SI
	DECQ    CX
	JNZ     biasrows

next:
	ADDQ $128, R13
	ADDQ panel+40(FP), R12
	DECQ R11
	JNZ  block
	// TILERELEASE
	BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0xC0
	VZEROUPPER
	RET

// func tilePeakAsm(cfg *[64]byte, a, b *uint16, iters int)
// The tile unit's peak: A tiles (tmm4-5) and B tiles (tmm6-7) loaded once
// (16 rows of 64 B, 1 KiB apart at a and b), then iters times the four
// independent TDPBF16PS of a 2 x 2 block into tmm0-3 (16384 floating-point
// operations each).
TEXT ·tilePeakAsm(SB), NOSPLIT, $0-32
	MOVQ cfg+0(FP), SI
	// LDTILECFG (SI)
	BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0x06
	MOVQ a+8(FP), SI
	LEAQ 1024(SI), DX
	MOVQ b+16(FP), AX
	LEAQ 1024(AX), BX
	MOVQ $64, CX
	MOVQ $64, DI
	// TILELOADD tmm4, (SI)(CX*1); tmm5, (DX)(CX*1); tmm6, (AX)(DI*1); tmm7, (BX)(DI*1)
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x24; BYTE $0x0E
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x2C; BYTE $0x0A
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x34; BYTE $0x38
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x3C; BYTE $0x3B
	// TILEZERO tmm0; tmm1; tmm2; tmm3
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $0xC0
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $0xC8
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $0xD0
	BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $0xD8
	MOVQ iters+24(FP), R8

peak:
	// TDPBF16PS tmm0, tmm4, tmm6; tmm1, tmm4, tmm7; tmm2, tmm5, tmm6; tmm3, tmm5, tmm7
	BYTE $0xC4; BYTE $0xE2; BYTE $0x4A; BYTE $0x5C; BYTE $0xC4
	BYTE $0xC4; BYTE $0xE2; BYTE $0x42; BYTE $0x5C; BYTE $0xCC
	BYTE $0xC4; BYTE $0xE2; BYTE $0x4A; BYTE $0x5C; BYTE $0xD5
	BYTE $0xC4; BYTE $0xE2; BYTE $0x42; BYTE $0x5C; BYTE $0xDD
	DECQ R8
	JNZ  peak
	// TILERELEASE
	BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0xC0
	RET
