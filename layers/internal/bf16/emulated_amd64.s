//go:build amd64 && !purego

#include "textflag.h"
#include "tile_amd64.h"

// The AVX512_BF16 instructions' arithmetic on AVX-512F alone (with VL for
// the 8-float chunks of pairsEmuAsm): for the CPUs that have AVX-512 but
// not its BF16 extension, or whose hypervisor hides it.
//
// A pair word holds two bfloat16 numbers, and a bfloat16 placed in the top
// half of a 32-bit lane is that number as a float32. splitAsm (in
// avx2_amd64.s) turns the packed A words into such floats once per packed
// block, kernelEmuAsm splits the B words in registers, and it then does
// with two fused multiply-adds what VDPBF16PS does with one instruction:
// acc += odd·odd, then acc += even·even. A product of two bfloat16 numbers
// is exact in float32, so each fused multiply-add rounds once, as the
// instruction does; MXCSR's flush-to-zero and denormals-are-zero bits, set
// only around the k loop, give its denormal handling (a sum below 2^-126
// after rounding becomes zero, see madd). The conversion to bfloat16
// (VCVTNEPS2BF16) is worked out on the integer bits, as Round does.

// Constants of the conversion, one per dword lane: Z24 = 1, Z25 = 0x7fff,
// Z26 = 0x7f800000 (the exponent bits; +Inf), Z27 = 0x80000000 (the sign),
// Z28 = 0x7fffffff (the magnitude), Z29 = 0x00400000 (the quiet bit of a
// NaN in the top half), Z31 = 0xffff0000 (the top half).
#define CONSTANTS \
	MOVL         $1, R12 \
	VPBROADCASTD R12, Z24 \
	MOVL         $0x7fff, R12 \
	VPBROADCASTD R12, Z25 \
	MOVL         $0x7f800000, R12 \
	VPBROADCASTD R12, Z26 \
	MOVL         $0x80000000, R12 \
	VPBROADCASTD R12, Z27 \
	MOVL         $0x7fffffff, R12 \
	VPBROADCASTD R12, Z28 \
	MOVL         $0x00400000, R12 \
	VPBROADCASTD R12, Z29 \
	MOVL         $0xffff0000, R12 \
	VPBROADCASTD R12, Z31

// ROUND(X, T, U) sets the top half of each lane of T to Round of the float
// in that lane of X (the bottom half is left over): X + 0x7fff + the
// lowest kept bit (round to nearest, ties to even; a carry into the
// exponent is the rounding up), then, where X's exponent bits are all zero
// (zero or denormal), X's sign alone, and where X's magnitude is above
// +Inf's (a NaN), X with the quiet bit set. U is a scratch register; K3 and
// K4 are overwritten.
#define ROUND(X, T, U) \
	VPSRLD    $16, X, T \
	VPANDD    Z24, T, T \
	VPADDD    X, T, T \
	VPADDD    Z25, T, T \
	VPTESTNMD Z26, X, K3 \
	VPANDD    Z27, X, K3, T \
	VPANDD    Z28, X, U \
	VPCMPGTD  Z26, U, K4 \
	VPORD     Z29, X, K4, T

// ROUNDY is ROUND on Y registers (the constants' low halves).
#define ROUNDY(X, T, U) \
	VPSRLD    $16, X, T \
	VPANDD    Y24, T, T \
	VPADDD    X, T, T \
	VPADDD    Y25, T, T \
	VPTESTNMD Y26, X, K3 \
	VPANDD    Y27, X, K3, T \
	VPANDD    Y28, X, U \
	VPCMPGTD  Y26, U, K4 \
	VPORD     Y29, X, K4, T

// CVT(X, T, U, Yd) is VCVTNEPS2BF16 Yd, X: the 16 floats of X rounded to
// 16 bfloat16 words in Yd.
#define CVT(X, T, U, Yd) \
	ROUND(X, T, U) \
	VPSRLD  $16, T, T \
	VPMOVDW T, Yd

// func roundEmuAsm(dst *uint16, src *float32, n int)
//
// roundAsm without AVX512_BF16: n floats (a multiple of 32) to bfloat16.
TEXT ·roundEmuAsm(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $5, CX
	JZ   rdone
	CONSTANTS

rloop:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	CVT(Z0, Z16, Z17, Y0)
	CVT(Z1, Z18, Z19, Y1)
	VMOVDQU Y0, (DI)
	VMOVDQU Y1, 32(DI)
	ADDQ    $128, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     rloop

rdone:
	VZEROUPPER
	RET

// func pairsEmuAsm(dst *uint32, lo, hi *float32, groups, width, stride int)
//
// pairsAsm without AVX512_BF16: dst word j = Round(lo[j]) | Round(hi[j])<<16
// for groups groups of width floats (a multiple of 8), 8 at a time.
TEXT ·pairsEmuAsm(SB), NOSPLIT, $0-48
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
	CONSTANTS

pgroup:
	MOVQ R8, R10
	XORQ R11, R11

pchunk:
	VMOVUPS (SI)(R11*1), Y0
	VMOVUPS (DX)(R11*1), Y1
	ROUNDY(Y0, Y16, Y17)
	ROUNDY(Y1, Y18, Y19)
	VPSRLD  $16, Y16, Y16
	VPANDD  Y31, Y18, Y18
	VPORD   Y16, Y18, Y18
	VMOVDQU32 Y18, (DI)(R11*1)
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

// func alongEmuAsm(dst *uint32, src *float32, ld, chunks, ldd int)
//
// alongAsm without AVX512_BF16: each line's 16 floats of a chunk converted
// into 8 pair words (CVT), and the 8 x 8 words transposed as alongAsm does.
TEXT ·alongEmuAsm(SB), NOSPLIT, $0-40
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
	CONSTANTS

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
	CVT(Z0, Z16, Z17, Y0)
	CVT(Z1, Z18, Z19, Y1)
	CVT(Z2, Z20, Z21, Y2)
	CVT(Z3, Z22, Z23, Y3)
	CVT(Z4, Z16, Z17, Y4)
	CVT(Z5, Z18, Z19, Y5)
	CVT(Z6, Z20, Z21, Y6)
	CVT(Z7, Z22, Z23, Y7)

	TRANSPOSE8STORE

	ADDQ $64, SI         // the next 16 steps of each line
	LEAQ (DI)(R11*8), DI // the next 8 words
	DECQ CX
	JNZ  aloop

adone:
	VZEROUPPER
	RET

// KSTEPE is one pair of k steps of the 8x32 tile: the B sliver's 32 pair
// words at DI split into their odd-step floats (Z16, Z17: the top halves,
// Z24 = 0xffff0000) and even-step floats (Z20, Z21: the bottom halves
// shifted up); row i's odd-step A float at 4i(SI) and its even-step one at
// 32+4i(SI) (split by splitAsm), broadcast. Each accumulator takes the odd
// product, then the even one: VDPBF16PS's order. DI and SI then move to
// the next pair.
#define KSTEPE \
	VMOVDQU32    (DI), Z16 \
	VMOVDQU32    64(DI), Z17 \
	VPSLLD       $16, Z16, Z20 \
	VPSLLD       $16, Z17, Z21 \
	VPANDD       Z24, Z16, Z16 \
	VPANDD       Z24, Z17, Z17 \
	VBROADCASTSS 0(SI), Z18 \
	VBROADCASTSS 32(SI), Z19 \
	VFMADD231PS  Z18, Z16, Z0 \
	VFMADD231PS  Z18, Z17, Z1 \
	VFMADD231PS  Z19, Z20, Z0 \
	VFMADD231PS  Z19, Z21, Z1 \
	VBROADCASTSS 4(SI), Z22 \
	VBROADCASTSS 36(SI), Z23 \
	VFMADD231PS  Z22, Z16, Z2 \
	VFMADD231PS  Z22, Z17, Z3 \
	VFMADD231PS  Z23, Z20, Z2 \
	VFMADD231PS  Z23, Z21, Z3 \
	VBROADCASTSS 8(SI), Z18 \
	VBROADCASTSS 40(SI), Z19 \
	VFMADD231PS  Z18, Z16, Z4 \
	VFMADD231PS  Z18, Z17, Z5 \
	VFMADD231PS  Z19, Z20, Z4 \
	VFMADD231PS  Z19, Z21, Z5 \
	VBROADCASTSS 12(SI), Z22 \
	VBROADCASTSS 44(SI), Z23 \
	VFMADD231PS  Z22, Z16, Z6 \
	VFMADD231PS  Z22, Z17, Z7 \
	VFMADD231PS  Z23, Z20, Z6 \
	VFMADD231PS  Z23, Z21, Z7 \
	VBROADCASTSS 16(SI), Z18 \
	VBROADCASTSS 48(SI), Z19 \
	VFMADD231PS  Z18, Z16, Z8 \
	VFMADD231PS  Z18, Z17, Z9 \
	VFMADD231PS  Z19, Z20, Z8 \
	VFMADD231PS  Z19, Z21, Z9 \
	VBROADCASTSS 20(SI), Z22 \
	VBROADCASTSS 52(SI), Z23 \
	VFMADD231PS  Z22, Z16, Z10 \
	VFMADD231PS  Z22, Z17, Z11 \
	VFMADD231PS  Z23, Z20, Z10 \
	VFMADD231PS  Z23, Z21, Z11 \
	VBROADCASTSS 24(SI), Z18 \
	VBROADCASTSS 56(SI), Z19 \
	VFMADD231PS  Z18, Z16, Z12 \
	VFMADD231PS  Z18, Z17, Z13 \
	VFMADD231PS  Z19, Z20, Z12 \
	VFMADD231PS  Z19, Z21, Z13 \
	VBROADCASTSS 28(SI), Z22 \
	VBROADCASTSS 60(SI), Z23 \
	VFMADD231PS  Z22, Z16, Z14 \
	VFMADD231PS  Z22, Z17, Z15 \
	VFMADD231PS  Z23, Z20, Z14 \
	VFMADD231PS  Z23, Z21, Z15 \
	ADDQ         $128, DI \
	ADDQ         $64, SI

// func kernelEmuAsm(nsl, kp int, a *float32, b *uint32, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32)
//
// kernelAsm with the A slivers split (splitAsm: kp groups of 8 rows each),
// the same bits. Registers as in kernelAsm, and Z24 for the top halves'
// mask; the two local words hold the caller's MXCSR and that MXCSR
// with flush-to-zero and denormals-are-zero set, loaded around each
// tile's k loop (the stores round as kernelAsm's do, under the caller's).
// Nothing else on the thread sees those bits: Go does not preempt
// assembly asynchronously, a signal handler starts with the default MXCSR
// (Linux saves the interrupted one and restores it on return), and every
// way out of the function has restored the caller's (tested).
TEXT ·kernelEmuAsm(SB), NOSPLIT, $8-80
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
	MOVL    mask+64(FP), BX
	KMOVW   BX, K1
	SHRL    $16, BX
	KMOVW   BX, K2
	MOVL         $0xffff0000, BX
	VPBROADCASTD BX, Z24
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
	LDMXCSR ftz-4(SP)

	MOVQ kp+8(FP), BX
	SHRQ $1, BX
	JZ   tail

loop2:
	KSTEPE
	KSTEPE
	DECQ BX
	JNZ  loop2

tail:
	MOVQ kp+8(FP), BX
	ANDQ $1, BX
	JZ   store
	KSTEPE

store:
	LDMXCSR mxcsr-8(SP)
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
