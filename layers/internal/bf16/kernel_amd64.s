//go:build amd64 && !purego

#include "textflag.h"
#include "tile_amd64.h"

// VDPBF16PS Zd, Zs1, Zs2 (EVEX.512.F3.0F38.W0 52 /r) has no mnemonic in
// Go's assembler, so each use below is spelled out in bytes: 62, the three
// EVEX payload bytes (inverted register extensions, the map 0F38, W0, the
// inverted Zs1, prefix F3, 512 bits, no mask), the opcode 52 and ModRM
// 11 ddd sss. Each lane i of Zd gets Zd[i] += Zs1.hi[i]*Zs2.hi[i], then
// += Zs1.lo[i]*Zs2.lo[i] (the bfloat16 halves of the 32-bit lanes), each
// rounded to float32. The bytes were checked against GNU as and objdump
// (vdpbf16ps %zmm18,%zmm16,%zmm0 = 62 b2 7e 40 52 c2), and the kernel is
// tested bit for bit against the portable one.

// KSTEP is one pair of k steps of the 8x32 tile: the 32 B words at DI into
// Z16 and Z17, each row's A word at SI broadcast into Z18 or Z19 and
// multiplied into the row's accumulators Z(2i) (columns 0-15) and Z(2i+1)
// (16-31); DI and SI then move to the next pair.
#define KSTEP \
	VMOVDQU32 (DI), Z16 \
	VMOVDQU32 64(DI), Z17 \
	VBROADCASTSS 0(SI), Z18 \
	BYTE $0x62; BYTE $0xb2; BYTE $0x7e; BYTE $0x40; BYTE $0x52; BYTE $0xc2 \
	BYTE $0x62; BYTE $0xb2; BYTE $0x76; BYTE $0x40; BYTE $0x52; BYTE $0xca \
	VBROADCASTSS 4(SI), Z19 \
	BYTE $0x62; BYTE $0xb2; BYTE $0x7e; BYTE $0x40; BYTE $0x52; BYTE $0xd3 \
	BYTE $0x62; BYTE $0xb2; BYTE $0x76; BYTE $0x40; BYTE $0x52; BYTE $0xdb \
	VBROADCASTSS 8(SI), Z18 \
	BYTE $0x62; BYTE $0xb2; BYTE $0x7e; BYTE $0x40; BYTE $0x52; BYTE $0xe2 \
	BYTE $0x62; BYTE $0xb2; BYTE $0x76; BYTE $0x40; BYTE $0x52; BYTE $0xea \
	VBROADCASTSS 12(SI), Z19 \
	BYTE $0x62; BYTE $0xb2; BYTE $0x7e; BYTE $0x40; BYTE $0x52; BYTE $0xf3 \
	BYTE $0x62; BYTE $0xb2; BYTE $0x76; BYTE $0x40; BYTE $0x52; BYTE $0xfb \
	VBROADCASTSS 16(SI), Z18 \
	BYTE $0x62; BYTE $0x32; BYTE $0x7e; BYTE $0x40; BYTE $0x52; BYTE $0xc2 \
	BYTE $0x62; BYTE $0x32; BYTE $0x76; BYTE $0x40; BYTE $0x52; BYTE $0xca \
	VBROADCASTSS 20(SI), Z19 \
	BYTE $0x62; BYTE $0x32; BYTE $0x7e; BYTE $0x40; BYTE $0x52; BYTE $0xd3 \
	BYTE $0x62; BYTE $0x32; BYTE $0x76; BYTE $0x40; BYTE $0x52; BYTE $0xdb \
	VBROADCASTSS 24(SI), Z18 \
	BYTE $0x62; BYTE $0x32; BYTE $0x7e; BYTE $0x40; BYTE $0x52; BYTE $0xe2 \
	BYTE $0x62; BYTE $0x32; BYTE $0x76; BYTE $0x40; BYTE $0x52; BYTE $0xea \
	VBROADCASTSS 28(SI), Z19 \
	BYTE $0x62; BYTE $0x32; BYTE $0x7e; BYTE $0x40; BYTE $0x52; BYTE $0xf3 \
	BYTE $0x62; BYTE $0x32; BYTE $0x76; BYTE $0x40; BYTE $0x52; BYTE $0xfb \
	ADDQ $128, DI \
	ADDQ $32, SI

// func kernelAsm(nsl, kp int, a, b *uint32, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32)
//
// See the Go declaration. CX slivers left, AX the current A sliver, DX its
// C tile, R8 ldc in bytes, R10 the A sliver size in bytes, SI and DI the A
// and B words of the current pair, BX a counter, R9 the C row being stored.
TEXT ·kernelAsm(SB), NOSPLIT, $0-80
	MOVQ  nsl+0(FP), CX
	TESTQ CX, CX
	JZ    done
	MOVQ  a+16(FP), AX
	MOVQ  c+32(FP), DX
	MOVQ  ldc+40(FP), R8
	SHLQ  $2, R8
	MOVQ  kp+8(FP), R10
	SHLQ  $5, R10
	MOVL  mask+64(FP), BX
	KMOVW BX, K1
	SHRL  $16, BX
	KMOVW BX, K2
	VBROADCASTSS alpha+48(FP), Z30
	VBROADCASTSS beta+52(FP), Z31
	MOVQ         bias+72(FP), R11
	TESTQ        R11, R11
	JZ           sliver
	VMOVUPS.Z    (R11), K1, Z28
	VMOVUPS.Z    64(R11), K2, Z29

sliver:
	MOVQ AX, SI
	MOVQ b+24(FP), DI

	TILESTART

	MOVQ kp+8(FP), BX
	SHRQ $1, BX
	JZ   tail

loop2:
	KSTEP
	KSTEP
	DECQ BX
	JNZ  loop2

tail:
	MOVQ kp+8(FP), BX
	ANDQ $1, BX
	JZ   store
	KSTEP

store:
	// BX = rows to store: 8, or rows for the last sliver.
	MOVQ    $8, BX
	CMPQ    CX, $1
	CMOVQEQ rows+56(FP), BX
	MOVQ    DX, R9
	MOVQ    bias+72(FP), R11
	TESTQ   R11, R11
	JNZ     withbias
	MOVL    beta+52(FP), R11
	SHLL    $1, R11 // beta == 0 of either sign
	JNZ     withbeta
	STORE8(STOREZ)

withbeta:
	STORE8(STOREB)

withbias:
	STORE8(STOREA)

next:
	ADDQ R10, AX
	MOVQ R8, R11
	SHLQ $3, R11
	ADDQ R11, DX
	DECQ CX
	JNZ  sliver

done:
	VZEROUPPER
	RET

// func roundAsm(dst *uint16, src *float32, n int)
//
// Converts n floats (a multiple of 32) to bfloat16 with VCVTNEPS2BF16
// Yd, Zs (EVEX.512.F3.0F38.W0 72 /r, spelled in bytes: 62 f2 7e 48 72 and
// ModRM 11 ddd sss; GNU objdump reads 62 f2 7e 48 72 c9 as
// vcvtneps2bf16 %zmm1,%ymm1): round to nearest even, denormals to zero,
// NaN quietened, as Round.
TEXT ·roundAsm(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $5, CX
	JZ   rdone

rloop:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	BYTE    $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc0 // VCVTNEPS2BF16 Z0, Y0
	BYTE    $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc9 // VCVTNEPS2BF16 Z1, Y1
	VMOVDQU Y0, (DI)
	VMOVDQU Y1, 32(DI)
	ADDQ    $128, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     rloop

rdone:
	VZEROUPPER
	RET

// func pairsAsm(dst *uint32, lo, hi *float32, groups, width, stride int)
//
// For each of groups groups of width floats (width a multiple of 8; the
// groups follow one another in lo and hi, and are stride words apart in
// dst): dst word j = Round(lo[j]) | Round(hi[j])<<16, the pair words of
// two k steps. VCVTNEPS2BF16 Xd, Ys (EVEX.256.F3.0F38.W0 72 /r: 62 f2 7e
// 28 72 and ModRM; GNU objdump reads 62 f2 7e 28 72 c9 as vcvtneps2bf16
// %ymm1,%xmm1) converts 8 floats as Round does (its 512-bit form 16, two
// chunks at a time); VPMOVZXWD widens the halves to words, and the high
// step's are shifted into the top halves.
TEXT ·pairsAsm(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ lo+8(FP), SI
	MOVQ hi+16(FP), DX
	MOVQ groups+24(FP), CX
	MOVQ width+32(FP), R8
	MOVQ stride+40(FP), R9
	SHLQ $2, R9
	SHRQ $3, R8
	TESTQ CX, CX
	JZ    pdone
	TESTQ R8, R8
	JZ    pdone

pgroup:
	MOVQ R8, R10
	XORQ R11, R11

pchunk16:
	// 16 words at a time while two chunks of 8 are left: VCVTNEPS2BF16
	// Yd, Zs (62 f2 7e 48 72 and ModRM, as in roundAsm).
	CMPQ      R10, $2
	JLT       pchunk
	VMOVUPS   (SI)(R11*1), Z0
	VMOVUPS   (DX)(R11*1), Z1
	BYTE      $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc0 // VCVTNEPS2BF16 Z0, Y0
	BYTE      $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc9 // VCVTNEPS2BF16 Z1, Y1
	VPMOVZXWD Y0, Z0
	VPMOVZXWD Y1, Z1
	VPSLLD    $16, Z1, Z1
	VPORD     Z0, Z1, Z1
	VMOVDQU32 Z1, (DI)(R11*1)
	ADDQ      $64, R11
	SUBQ      $2, R10
	JNZ       pchunk16
	JMP       pnext

pchunk:
	VMOVUPS   (SI)(R11*1), Y0
	VMOVUPS   (DX)(R11*1), Y1
	BYTE      $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x28; BYTE $0x72; BYTE $0xc0 // VCVTNEPS2BF16 Y0, X0
	BYTE      $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x28; BYTE $0x72; BYTE $0xc9 // VCVTNEPS2BF16 Y1, X1
	VPMOVZXWD X0, Y0
	VPMOVZXWD X1, Y1
	VPSLLD    $16, Y1, Y1
	VPOR      Y0, Y1, Y1
	VMOVDQU   Y1, (DI)(R11*1)
	ADDQ      $32, R11
	DECQ      R10
	JNZ       pchunk

pnext:
	ADDQ      R11, SI
	ADDQ      R11, DX
	ADDQ      R9, DI
	DECQ      CX
	JNZ       pgroup

pdone:
	VZEROUPPER
	RET

// func alongAsm(dst *uint32, src *float32, ld, chunks, ldd int)
//
// Packs 8 lines of src whose k steps are contiguous (line i at src +
// i*ld floats) into pair words: for each chunk c of 16 steps, each line's
// 16 floats are converted with VCVTNEPS2BF16 Yi, Zi (EVEX.512.F3.0F38.W0
// 72 /r, ModRM 11 iii iii) into 8 words (step 2q in the low half of word q,
// 2q+1 in the high), and the 8 x 8 words are transposed as gemm's
// transpose8 does, so that dst word (8c+q)*ldd + i is line i's word q.
TEXT ·alongAsm(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	SHLQ $2, R8
	MOVQ chunks+24(FP), CX
	MOVQ ldd+32(FP), R11
	SHLQ $2, R11
	TESTQ CX, CX
	JZ    adone
	LEAQ (R8)(R8*2), R9   // 3*ld bytes
	LEAQ (R11)(R11*2), R10 // 3*ldd bytes

aloop:
	LEAQ    (SI)(R8*4), R12 // line 4
	VMOVUPS (SI), Z0
	VMOVUPS (SI)(R8*1), Z1
	VMOVUPS (SI)(R8*2), Z2
	VMOVUPS (SI)(R9*1), Z3
	VMOVUPS (R12), Z4
	VMOVUPS (R12)(R8*1), Z5
	VMOVUPS (R12)(R8*2), Z6
	VMOVUPS (R12)(R9*1), Z7
	BYTE    $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc0 // VCVTNEPS2BF16 Z0, Y0
	BYTE    $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc9 // VCVTNEPS2BF16 Z1, Y1
	BYTE    $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xd2 // VCVTNEPS2BF16 Z2, Y2
	BYTE    $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xdb // VCVTNEPS2BF16 Z3, Y3
	BYTE    $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xe4 // VCVTNEPS2BF16 Z4, Y4
	BYTE    $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xed // VCVTNEPS2BF16 Z5, Y5
	BYTE    $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xf6 // VCVTNEPS2BF16 Z6, Y6
	BYTE    $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xff // VCVTNEPS2BF16 Z7, Y7

	TRANSPOSE8STORE

	ADDQ $64, SI         // the next 16 steps of each line
	LEAQ (DI)(R11*8), DI // the next 8 words
	DECQ CX
	JNZ  aloop

adone:
	VZEROUPPER
	RET
