//go:build amd64 && !purego

#include "textflag.h"
#include "tile_amd64.h"

// The AVX512_BF16 instructions' arithmetic on AVX2 with FMA, for the CPUs
// without AVX-512: the products as the AVX-512F emulation does them
// (emulated_amd64.s), a pair split into two floats and two fused
// multiply-adds, odd step first, under flush-to-zero; and the conversion
// to bfloat16 worked out on the integer bits, with blends where AVX-512
// has masks. With 16 vector registers of 8 floats, the kernel computes the
// 8 x 32 tile of the other paths as four 4 x 16 parts, one after the
// other, each over all of the tile's k steps.

// SPLAT defines a read-only 32-byte vector with the 32-bit value bits in
// all 8 lanes, for use as a memory operand.
#define SPLAT(name, bits) \
	DATA name+0(SB)/4, bits \
	DATA name+4(SB)/4, bits \
	DATA name+8(SB)/4, bits \
	DATA name+12(SB)/4, bits \
	DATA name+16(SB)/4, bits \
	DATA name+20(SB)/4, bits \
	DATA name+24(SB)/4, bits \
	DATA name+28(SB)/4, bits \
	GLOBL name(SB), RODATA|NOPTR, $32

SPLAT(one<>, $1)
SPLAT(half<>, $0x7fff)         // just under half of the lowest kept bit
SPLAT(exponent<>, $0x7f800000) // the exponent bits; +Inf
SPLAT(sign<>, $0x80000000)
SPLAT(magnitude<>, $0x7fffffff)
SPLAT(quiet<>, $0x00400000) // the quiet bit of a NaN, in the top half
SPLAT(top<>, $0xffff0000)   // the top half of a lane: a bfloat16 as a float32

// ROUND8(X, T, U, V) sets the top half of each lane of T to Round of the
// float in that lane of X (the bottom half is left over), as ROUND of
// emulated_amd64.s: X + 0x7fff + the lowest kept bit (round to nearest,
// ties to even); where X's magnitude is above +Inf's (a NaN), X with the
// quiet bit set; where X's exponent bits are all zero (zero or denormal),
// X's sign alone. U and V are scratch registers.
#define ROUND8(X, T, U, V) \
	VPSRLD    $16, X, T \
	VPAND     one<>(SB), T, T \
	VPADDD    X, T, T \
	VPADDD    half<>(SB), T, T \
	VPAND     magnitude<>(SB), X, U \
	VPCMPGTD  exponent<>(SB), U, U \
	VPOR      quiet<>(SB), X, V \
	VPBLENDVB U, V, T, T \
	VPAND     exponent<>(SB), X, U \
	VPXOR     V, V, V \
	VPCMPEQD  V, U, U \
	VPAND     sign<>(SB), X, V \
	VPBLENDVB U, V, T, T

// CVT16(A0, A1, Y) converts the 16 floats at A0 (8) and A1 (8) to 16
// bfloat16 words in Y, in order, with Y8-Y13 as scratch: the rounded top
// halves shifted down and packed two lanes to a 32-bit word (VPACKUSDW,
// which works on 128-bit halves and so needs VPERMQ to put the 64-bit
// quarters back in order).
#define CVT16(A0, A1, Y) \
	VMOVUPS   A0, Y8 \
	VMOVUPS   A1, Y9 \
	ROUND8(Y8, Y10, Y12, Y13) \
	ROUND8(Y9, Y11, Y12, Y13) \
	VPSRLD    $16, Y10, Y10 \
	VPSRLD    $16, Y11, Y11 \
	VPACKUSDW Y11, Y10, Y \
	VPERMQ    $0xD8, Y, Y

// func roundAVX2Asm(dst *uint16, src *float32, n int)
//
// roundAsm on AVX2: n floats (a multiple of 16) to bfloat16.
TEXT ·roundAVX2Asm(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   rdone

rloop:
	CVT16((SI), 32(SI), Y0)
	VMOVDQU Y0, (DI)
	ADDQ    $64, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     rloop

rdone:
	VZEROUPPER
	RET

// func pairsAVX2Asm(dst *uint32, lo, hi *float32, groups, width, stride int)
//
// pairsAsm on AVX2: dst word j = Round(lo[j]) | Round(hi[j])<<16 for
// groups groups of width floats (a multiple of 8), 8 at a time.
TEXT ·pairsAVX2Asm(SB), NOSPLIT, $0-48
	MOVQ  dst+0(FP), DI
	MOVQ  lo+8(FP), SI
	MOVQ  hi+16(FP), DX
	MOVQ  groups+24(FP), CX
	MOVQ  width+32(FP), R8
	MOVQ  stride+40(FP), R9
	SHLQ  $2, R9
	SHRQ  $3, R8
	TESTQ CX, CX
	JZ    pdone
	TESTQ R8, R8
	JZ    pdone

pgroup:
	MOVQ R8, R10
	XORQ R11, R11

pchunk:
	VMOVUPS (SI)(R11*1), Y0
	VMOVUPS (DX)(R11*1), Y1
	ROUND8(Y0, Y2, Y4, Y5)
	ROUND8(Y1, Y3, Y4, Y5)
	VPSRLD  $16, Y2, Y2
	VPAND   top<>(SB), Y3, Y3
	VPOR    Y2, Y3, Y3
	VMOVDQU Y3, (DI)(R11*1)
	ADDQ    $32, R11
	DECQ    R10
	JNZ     pchunk
	ADDQ    R11, SI
	ADDQ    R11, DX
	ADDQ    R9, DI
	DECQ    CX
	JNZ     pgroup

pdone:
	VZEROUPPER
	RET

// func alongAVX2Asm(dst *uint32, src *float32, ld, chunks, ldd int)
//
// alongAsm on AVX2: each line's 16 floats of a chunk converted into 8
// pair words (CVT16: step 2q in the low half of word q, 2q+1 in the high),
// and the 8 x 8 words transposed as alongAsm does.
TEXT ·alongAVX2Asm(SB), NOSPLIT, $0-40
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  ld+16(FP), R8
	SHLQ  $2, R8
	MOVQ  chunks+24(FP), CX
	MOVQ  ldd+32(FP), R11
	SHLQ  $2, R11
	TESTQ CX, CX
	JZ    adone
	LEAQ  (R8)(R8*2), R9   // 3*ld bytes
	LEAQ  (R11)(R11*2), R10 // 3*ldd bytes

aloop:
	LEAQ (SI)(R8*4), R12 // line 4
	CVT16((SI), 32(SI), Y0)
	CVT16((SI)(R8*1), 32(SI)(R8*1), Y1)
	CVT16((SI)(R8*2), 32(SI)(R8*2), Y2)
	CVT16((SI)(R9*1), 32(SI)(R9*1), Y3)
	CVT16((R12), 32(R12), Y4)
	CVT16((R12)(R8*1), 32(R12)(R8*1), Y5)
	CVT16((R12)(R8*2), 32(R12)(R8*2), Y6)
	CVT16((R12)(R9*1), 32(R12)(R9*1), Y7)

	TRANSPOSE8STORE

	ADDQ $64, SI         // the next 16 steps of each line
	LEAQ (DI)(R11*8), DI // the next 8 words
	DECQ CX
	JNZ  aloop

adone:
	VZEROUPPER
	RET

// func splitAsm(dst *float32, src *uint32, groups, width int)
//
// For each of groups groups of width pair words (width a multiple of 8):
// the width top halves as floats (the odd k steps), then the width bottom
// halves (the even steps), 8 words at a time. AVX2 alone: both the
// AVX-512F and the AVX2 kernels read A split so.
TEXT ·splitAsm(SB), NOSPLIT, $0-32
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  groups+16(FP), CX
	MOVQ  width+24(FP), R8
	MOVQ  R8, R9
	SHLQ  $2, R9 // width in bytes: the even halves' offset
	SHRQ  $3, R8
	TESTQ CX, CX
	JZ    sdone
	TESTQ R8, R8
	JZ    sdone

sgroup:
	MOVQ R8, R10

schunk:
	VMOVDQU (SI), Y0
	VPAND   top<>(SB), Y0, Y1
	VPSLLD  $16, Y0, Y0
	VMOVDQU Y1, (DI)
	VMOVDQU Y0, (DI)(R9*1)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    R10
	JNZ     schunk
	ADDQ    R9, DI // past the group's even halves
	DECQ    CX
	JNZ     sgroup

sdone:
	VZEROUPPER
	RET

// KPAIR is one pair of k steps of a 4 x 16 part: the part's 16 B pair
// words at DI split into their odd-step floats (Y8, Y9: the top halves,
// Y12 = 0xffff0000) and their even-step floats (Y10, Y11: the bottom halves
// shifted up); row i's odd-step A float at 4i(SI) and its even-step one
// at 32+4i(SI) (split by splitAsm; the part's rows are 4 of the sliver's
// 8), broadcast. Each accumulator (row i in Y(2i), Y(2i+1)) takes the odd
// product, then the even one: VDPBF16PS's order. DI and SI then move to
// the next pair (B's 32 words, A's 16 floats).
#define KPAIR \
	VPAND        (DI), Y12, Y8 \
	VPAND        32(DI), Y12, Y9 \
	VBROADCASTSS 0(SI), Y13 \
	VFMADD231PS  Y8, Y13, Y0 \
	VFMADD231PS  Y9, Y13, Y1 \
	VBROADCASTSS 4(SI), Y14 \
	VFMADD231PS  Y8, Y14, Y2 \
	VFMADD231PS  Y9, Y14, Y3 \
	VBROADCASTSS 8(SI), Y15 \
	VFMADD231PS  Y8, Y15, Y4 \
	VFMADD231PS  Y9, Y15, Y5 \
	VBROADCASTSS 12(SI), Y13 \
	VFMADD231PS  Y8, Y13, Y6 \
	VFMADD231PS  Y9, Y13, Y7 \
	VPSLLD       $16, (DI), Y10 \
	VPSLLD       $16, 32(DI), Y11 \
	VBROADCASTSS 32(SI), Y14 \
	VFMADD231PS  Y10, Y14, Y0 \
	VFMADD231PS  Y11, Y14, Y1 \
	VBROADCASTSS 36(SI), Y15 \
	VFMADD231PS  Y10, Y15, Y2 \
	VFMADD231PS  Y11, Y15, Y3 \
	VBROADCASTSS 40(SI), Y13 \
	VFMADD231PS  Y10, Y13, Y4 \
	VFMADD231PS  Y11, Y13, Y5 \
	VBROADCASTSS 44(SI), Y14 \
	VFMADD231PS  Y10, Y14, Y6 \
	VFMADD231PS  Y11, Y14, Y7 \
	ADDQ         $128, DI \
	ADDQ         $64, SI

// STORE4(ST) stores the part's 4 rows with ST (one row: its accumulators,
// the C row at R9, which then advances by ldc, R8 bytes).
#define STORE4(ST) \
	ST(Y0, Y1) \
	ST(Y2, Y3) \
	ST(Y4, Y5) \
	ST(Y6, Y7)

// STOREZ4 stores one row as alpha*acc (alpha in Y8).
#define STOREZ4(Y0_, Y1_) \
	VMULPS  Y8, Y0_, Y0_ \
	VMULPS  Y8, Y1_, Y1_ \
	VMOVUPS Y0_, (R9) \
	VMOVUPS Y1_, 32(R9) \
	ADDQ    R8, R9

// STOREB4 stores one row as alpha*acc + beta*C (beta in Y9), each product
// rounded before the sum, as the portable kernel.
#define STOREB4(Y0_, Y1_) \
	VMULPS  Y8, Y0_, Y0_ \
	VMULPS  Y8, Y1_, Y1_ \
	VMULPS  (R9), Y9, Y13 \
	VMULPS  32(R9), Y9, Y14 \
	VADDPS  Y13, Y0_, Y0_ \
	VADDPS  Y14, Y1_, Y1_ \
	VMOVUPS Y0_, (R9) \
	VMOVUPS Y1_, 32(R9) \
	ADDQ    R8, R9

// STOREA4 stores one row as alpha*acc + bias (the part's 16 columns of
// bias in Y10, Y11).
#define STOREA4(Y0_, Y1_) \
	VMULPS  Y8, Y0_, Y0_ \
	VMULPS  Y8, Y1_, Y1_ \
	VADDPS  Y10, Y0_, Y0_ \
	VADDPS  Y11, Y1_, Y1_ \
	VMOVUPS Y0_, (R9) \
	VMOVUPS Y1_, 32(R9) \
	ADDQ    R8, R9

// func kernelAVX2Asm(nsl, kp int, a *float32, b *uint32, c *float32, ldc int, alpha, beta float32, bias *float32)
//
// kernelEmuAsm on AVX2, for whole tiles only: nsl tiles of 8 x 32, from
// A slivers split as kernelEmuAsm reads them, C = alpha*acc + beta*C (C not
// read when beta is zero of either sign) or alpha*acc + bias when bias is
// not nil. Each tile is computed in four parts of 4 rows by 16 columns:
// part q (R13) has rows 4(q&1) to 4(q&1)+3 and columns 16(q>>1) to
// 16(q>>1)+15. Registers: CX tiles left, AX the current A sliver, DX its C
// tile, R8 ldc in bytes, R10 the A sliver's size in bytes, SI and DI the
// part's A floats and B words of the current pair, BX a counter, R9 the C
// row being stored, R11 the part's bias; Y0-Y7 the accumulators. The two
// local words hold the caller's MXCSR and that MXCSR with flush-to-zero
// and denormals-are-zero set, loaded around each part's k loop, as
// kernelEmuAsm does (the stores round under the caller's).
TEXT ·kernelAVX2Asm(SB), NOSPLIT, $8-64
	STMXCSR mxcsr-8(SP)
	MOVL    mxcsr-8(SP), R12
	ORL     $0x8040, R12
	MOVL    R12, ftz-4(SP)
	MOVQ    nsl+0(FP), CX
	TESTQ   CX, CX
	JZ      done
	MOVQ    a+16(FP), AX
	MOVQ    c+32(FP), DX
	MOVQ    ldc+40(FP), R8
	SHLQ    $2, R8
	MOVQ    kp+8(FP), R10
	SHLQ    $6, R10

tile:
	XORQ R13, R13

part:
	// SI = the A sliver + 16 bytes for the lower rows; DI = B + 64 bytes
	// for the right columns; R9 = the part's C corner.
	MOVQ R13, BX
	ANDQ $1, BX
	SHLQ $4, BX
	LEAQ (AX)(BX*1), SI
	MOVQ R13, BX
	SHRQ $1, BX
	SHLQ $6, BX
	MOVQ b+24(FP), DI
	ADDQ BX, DI
	LEAQ (DX)(BX*1), R9
	MOVQ R13, BX
	ANDQ $1, BX
	JZ   upper
	LEAQ (R9)(R8*4), R9

upper:
	// Prefetch the part's C rows (64 B: two cache lines when not aligned).
	MOVQ       R9, R11
	PREFETCHT0 (R11)
	PREFETCHT0 60(R11)
	ADDQ       R8, R11
	PREFETCHT0 (R11)
	PREFETCHT0 60(R11)
	ADDQ       R8, R11
	PREFETCHT0 (R11)
	PREFETCHT0 60(R11)
	ADDQ       R8, R11
	PREFETCHT0 (R11)
	PREFETCHT0 60(R11)

	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VMOVDQU top<>(SB), Y12
	LDMXCSR ftz-4(SP)

	MOVQ kp+8(FP), BX
	SHRQ $1, BX
	JZ   tail

loop2:
	KPAIR
	KPAIR
	DECQ BX
	JNZ  loop2

tail:
	MOVQ kp+8(FP), BX
	ANDQ $1, BX
	JZ   store
	KPAIR

store:
	LDMXCSR      mxcsr-8(SP)
	VBROADCASTSS alpha+48(FP), Y8
	MOVQ         bias+56(FP), R11
	TESTQ        R11, R11
	JNZ          withbias
	MOVL         beta+52(FP), BX
	SHLL         $1, BX // beta == 0 of either sign
	JNZ          withbeta
	STORE4(STOREZ4)
	JMP          next

withbeta:
	VBROADCASTSS beta+52(FP), Y9
	STORE4(STOREB4)
	JMP          next

withbias:
	MOVQ    R13, BX
	SHRQ    $1, BX
	SHLQ    $6, BX
	VMOVUPS (R11)(BX*1), Y10
	VMOVUPS 32(R11)(BX*1), Y11
	STORE4(STOREA4)

next:
	INCQ R13
	CMPQ R13, $4
	JLT  part
	ADDQ R10, AX
	MOVQ R8, BX
	SHLQ $3, BX
	ADDQ BX, DX
	DECQ CX
	JNZ  tile

done:
	VZEROUPPER
	RET
