//go:build amd64 && !purego

#include "textflag.h"
#include "mxcsr_amd64.h"

// KSTEP8 is one k step of the 8x32 micro-kernel: it loads the 32 B values
// at DI into Z16 and Z17, broadcasts A(i, p) for the 8 rows (row i at SI +
// i*rsa, with R10 = rsa, R12 = 3*rsa and R13 = SI + 5*rsa, all in bytes) and
// accumulates row i into Z(2i) (columns 0-15) and Z(2i+1) (columns 16-31).
// It then advances DI by R14 (the row stride of B in bytes) and SI and R13
// by R11 (csa bytes) to the next k step.
#define KSTEP8 \
	VMOVUPS      (DI), Z16 \
	VMOVUPS      64(DI), Z17 \
	VBROADCASTSS (SI), Z18 \
	VFMADD231PS  Z16, Z18, Z0 \
	VFMADD231PS  Z17, Z18, Z1 \
	VBROADCASTSS (SI)(R10*1), Z19 \
	VFMADD231PS  Z16, Z19, Z2 \
	VFMADD231PS  Z17, Z19, Z3 \
	VBROADCASTSS (SI)(R10*2), Z18 \
	VFMADD231PS  Z16, Z18, Z4 \
	VFMADD231PS  Z17, Z18, Z5 \
	VBROADCASTSS (SI)(R12*1), Z19 \
	VFMADD231PS  Z16, Z19, Z6 \
	VFMADD231PS  Z17, Z19, Z7 \
	VBROADCASTSS (SI)(R10*4), Z18 \
	VFMADD231PS  Z16, Z18, Z8 \
	VFMADD231PS  Z17, Z18, Z9 \
	VBROADCASTSS (R13), Z19 \
	VFMADD231PS  Z16, Z19, Z10 \
	VFMADD231PS  Z17, Z19, Z11 \
	VBROADCASTSS (SI)(R12*2), Z18 \
	VFMADD231PS  Z16, Z18, Z12 \
	VFMADD231PS  Z17, Z18, Z13 \
	VBROADCASTSS (R13)(R10*2), Z19 \
	VFMADD231PS  Z16, Z19, Z14 \
	VFMADD231PS  Z17, Z19, Z15 \
	ADDQ         R14, DI \
	ADDQ         R11, SI \
	ADDQ         R11, R13

// PSTEP is one k step for an A whose 8 values of a k step are adjacent (rsa
// = 1: a packed sliver, or a transposed A read in place): each A value is
// broadcast by the multiply-add itself ({1to16}), so that the load and the
// multiply-add go through the front end as one micro-fused operation (an
// indexed address would split them; these have none). B0 and B1 are the
// addresses of the step's 32 B values; SI then advances by R11 (csa bytes).
// Each accumulator gets one multiply-add of the same operands per k step, in
// the order of k, as in KSTEP8: the same bits.
#define PSTEP(B0, B1) \
	VMOVUPS          B0, Z16 \
	VMOVUPS          B1, Z17 \
	VFMADD231PS.BCST (SI), Z16, Z0 \
	VFMADD231PS.BCST (SI), Z17, Z1 \
	VFMADD231PS.BCST 4(SI), Z16, Z2 \
	VFMADD231PS.BCST 4(SI), Z17, Z3 \
	VFMADD231PS.BCST 8(SI), Z16, Z4 \
	VFMADD231PS.BCST 8(SI), Z17, Z5 \
	VFMADD231PS.BCST 12(SI), Z16, Z6 \
	VFMADD231PS.BCST 12(SI), Z17, Z7 \
	VFMADD231PS.BCST 16(SI), Z16, Z8 \
	VFMADD231PS.BCST 16(SI), Z17, Z9 \
	VFMADD231PS.BCST 20(SI), Z16, Z10 \
	VFMADD231PS.BCST 20(SI), Z17, Z11 \
	VFMADD231PS.BCST 24(SI), Z16, Z12 \
	VFMADD231PS.BCST 24(SI), Z17, Z13 \
	VFMADD231PS.BCST 28(SI), Z16, Z14 \
	VFMADD231PS.BCST 28(SI), Z17, Z15 \
	ADDQ             R11, SI

// QSTEP is PSTEP with KSTEP8's broadcasts: each A value broadcast once
// into a register (Z18, Z19) for its two multiply-adds. On some processors
// (an Intel Xeon of family 6, model 167) this runs the packed loop 9-11%
// faster than PSTEP's folded broadcasts; packedBroadcasts chooses, by
// measurement. The same multiply-adds in the same order: the same bits.
#define QSTEP(B0, B1) \
	VMOVUPS      B0, Z16 \
	VMOVUPS      B1, Z17 \
	VBROADCASTSS (SI), Z18 \
	VFMADD231PS  Z16, Z18, Z0 \
	VFMADD231PS  Z17, Z18, Z1 \
	VBROADCASTSS 4(SI), Z19 \
	VFMADD231PS  Z16, Z19, Z2 \
	VFMADD231PS  Z17, Z19, Z3 \
	VBROADCASTSS 8(SI), Z18 \
	VFMADD231PS  Z16, Z18, Z4 \
	VFMADD231PS  Z17, Z18, Z5 \
	VBROADCASTSS 12(SI), Z19 \
	VFMADD231PS  Z16, Z19, Z6 \
	VFMADD231PS  Z17, Z19, Z7 \
	VBROADCASTSS 16(SI), Z18 \
	VFMADD231PS  Z16, Z18, Z8 \
	VFMADD231PS  Z17, Z18, Z9 \
	VBROADCASTSS 20(SI), Z19 \
	VFMADD231PS  Z16, Z19, Z10 \
	VFMADD231PS  Z17, Z19, Z11 \
	VBROADCASTSS 24(SI), Z18 \
	VFMADD231PS  Z16, Z18, Z12 \
	VFMADD231PS  Z17, Z18, Z13 \
	VBROADCASTSS 28(SI), Z19 \
	VFMADD231PS  Z16, Z19, Z14 \
	VFMADD231PS  Z17, Z19, Z15 \
	ADDQ         R11, SI

// RSTEP is one k step for an A whose rows are contiguous in k (csa = 1: a
// row-major A read in place), D bytes past SI and R13 (the loop advances
// them every four steps, so a step adds no pointer): KSTEP8's broadcasts
// and multiply-adds, with B at B0 and B1.
#define RSTEP(D, B0, B1) \
	VMOVUPS      B0, Z16 \
	VMOVUPS      B1, Z17 \
	VBROADCASTSS D(SI), Z18 \
	VFMADD231PS  Z16, Z18, Z0 \
	VFMADD231PS  Z17, Z18, Z1 \
	VBROADCASTSS D(SI)(R10*1), Z19 \
	VFMADD231PS  Z16, Z19, Z2 \
	VFMADD231PS  Z17, Z19, Z3 \
	VBROADCASTSS D(SI)(R10*2), Z18 \
	VFMADD231PS  Z16, Z18, Z4 \
	VFMADD231PS  Z17, Z18, Z5 \
	VBROADCASTSS D(SI)(R12*1), Z19 \
	VFMADD231PS  Z16, Z19, Z6 \
	VFMADD231PS  Z17, Z19, Z7 \
	VBROADCASTSS D(SI)(R10*4), Z18 \
	VFMADD231PS  Z16, Z18, Z8 \
	VFMADD231PS  Z17, Z18, Z9 \
	VBROADCASTSS D(R13), Z19 \
	VFMADD231PS  Z16, Z19, Z10 \
	VFMADD231PS  Z17, Z19, Z11 \
	VBROADCASTSS D(SI)(R12*2), Z18 \
	VFMADD231PS  Z16, Z18, Z12 \
	VFMADD231PS  Z17, Z18, Z13 \
	VBROADCASTSS D(R13)(R10*2), Z19 \
	VFMADD231PS  Z16, Z19, Z14 \
	VFMADD231PS  Z17, Z19, Z15

// The store macros write one row of the tile, held in Z0_ (columns 0-15)
// and Z1_ (columns 16-31), to the C row at R9 and advance R9 by ldc (R8
// bytes): C = alpha*acc + beta*C with alpha in Z30 and beta in Z31. The
// masked variants touch only the columns selected by K1 (0-15) and K2
// (16-31); masked-off elements are neither read nor written.

// STOREBETA is the beta != 0 store, all 32 columns.
#define STOREBETA(Z0_, Z1_) \
	VMULPS      Z30, Z0_, Z0_ \
	VMULPS      Z30, Z1_, Z1_ \
	VFMADD231PS (R9), Z31, Z0_ \
	VFMADD231PS 64(R9), Z31, Z1_ \
	VMOVUPS     Z0_, (R9) \
	VMOVUPS     Z1_, 64(R9) \
	ADDQ        R8, R9

// STOREZERO is the beta == 0 store (C is not read), all 32 columns.
#define STOREZERO(Z0_, Z1_) \
	VMULPS  Z30, Z0_, Z0_ \
	VMULPS  Z30, Z1_, Z1_ \
	VMOVUPS Z0_, (R9) \
	VMOVUPS Z1_, 64(R9) \
	ADDQ    R8, R9

// STOREBETAM is STOREBETA for the columns in K1 and K2.
#define STOREBETAM(Z0_, Z1_) \
	VMULPS      Z30, Z0_, Z0_ \
	VMULPS      Z30, Z1_, Z1_ \
	VFMADD231PS (R9), Z31, K1, Z0_ \
	VFMADD231PS 64(R9), Z31, K2, Z1_ \
	VMOVUPS     Z0_, K1, (R9) \
	VMOVUPS     Z1_, K2, 64(R9) \
	ADDQ        R8, R9

// STOREZEROM is STOREZERO for the columns in K1 and K2.
#define STOREZEROM(Z0_, Z1_) \
	VMULPS  Z30, Z0_, Z0_ \
	VMULPS  Z30, Z1_, Z1_ \
	VMOVUPS Z0_, K1, (R9) \
	VMOVUPS Z1_, K2, 64(R9) \
	ADDQ    R8, R9

// STOREBIAS is the store of a linear layer's first k block, C = alpha*acc +
// bias, with the bias's columns in Z28 and Z29 (C is not read): the bits
// of a C pre-filled with the bias and STOREBETAM with beta 1, whose fused
// multiply-add by 1 rounds once as this addition does.
#define STOREBIAS(Z0_, Z1_) \
	VMULPS  Z30, Z0_, Z0_ \
	VMULPS  Z30, Z1_, Z1_ \
	VADDPS  Z28, Z0_, Z0_ \
	VADDPS  Z29, Z1_, Z1_ \
	VMOVUPS Z0_, K1, (R9) \
	VMOVUPS Z1_, K2, 64(R9) \
	ADDQ    R8, R9

// STORE8 stores the rows of the tile with the store macro ST, leaving for
// label next after BX rows.
#define STORE8(ST) \
	ST(Z0, Z1) \
	DECQ BX \
	JZ   next \
	ST(Z2, Z3) \
	DECQ BX \
	JZ   next \
	ST(Z4, Z5) \
	DECQ BX \
	JZ   next \
	ST(Z6, Z7) \
	DECQ BX \
	JZ   next \
	ST(Z8, Z9) \
	DECQ BX \
	JZ   next \
	ST(Z10, Z11) \
	DECQ BX \
	JZ   next \
	ST(Z12, Z13) \
	DECQ BX \
	JZ   next \
	ST(Z14, Z15) \
	JMP  next

// func kernel8x32(nsl, kc int, a *float32, rsa, csa, asl int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint32, bias *float32, pf uintptr)
//
// Computes nsl vertically adjacent 8x32 tiles of C; see the Go declaration.
// Register use: CX slivers left, AX the current A sliver, DX its C tile, R8
// ldc, R10 rsa, R11 csa, R12 3*rsa, R14 ldb (all strides in bytes), SI and
// R13 rows 0 and 5 of A at the current k step, DI B at the current k step,
// BX a counter, R15 the next line to prefetch, R9 3*ldb in the k loops and
// the C row being stored after them, Z0-Z15 the accumulators, Z16-Z19 B and
// A values, Z30 alpha, Z31 beta, K1 and K2 the column masks.
//
// The k steps go four at a time through one of three loops: loopP4 (or
// loopQ4, where packedBroadcasts is set) when the 8 A values of a step are
// adjacent (rsa = 1: packed A, or transposed A read in place), loopR4 when A's rows are contiguous in k (csa = 1: row-major A
// read in place), loop4 otherwise; the last kc%4 steps go through loop1. The
// first two issue fewer operations per step than loop4 (no pointer adds
// inside a round; loopP4 also folds each broadcast into its multiply-add).
// Measured on an Intel Xeon (family 6, model 207), two threads, toggled in
// one process: the tiny model's linear-layer products 1.01-1.08x faster and
// its weight gradient of 512 rows 1.23x, the tiny training step 1.020x
// (80 alternating sets, 55 faster). All of them give the same bits.
TEXT ·kernel8x32(SB), NOSPLIT, $16-120
	FLUSHDENORMALS
	// packedBroadcasts is read into the frame before R15 is loaded: a
	// global's address may take R15 in a dynamically linked build.
	MOVBLZX ·packedBroadcasts(SB), AX
	MOVL    AX, bcast-16(SP)
	MOVQ    pf+112(FP), R15
	MOVQ    nsl+0(FP), CX
	TESTQ   CX, CX
	JZ      done
	MOVQ  a+16(FP), AX
	MOVQ  rsa+24(FP), R10
	SHLQ  $2, R10
	LEAQ  (R10)(R10*2), R12
	MOVQ  csa+32(FP), R11
	SHLQ  $2, R11
	MOVQ  ldb+56(FP), R14
	SHLQ  $2, R14
	MOVQ  c+64(FP), DX
	MOVQ  ldc+72(FP), R8
	SHLQ  $2, R8
	MOVL  mask+96(FP), BX
	KMOVW BX, K1
	SHRL  $16, BX
	KMOVW BX, K2

sliver:
	MOVQ AX, SI
	LEAQ (SI)(R10*4), R13
	ADDQ R10, R13
	MOVQ b+48(FP), DI

	// Prefetch the C tile: each 128-byte row may straddle three lines.
	MOVQ       DX, R9
	MOVQ       $8, BX
prefetch:
	PREFETCHT0 (R9)
	PREFETCHT0 64(R9)
	PREFETCHT0 127(R9)
	ADDQ       R8, R9
	DECQ       BX
	JNZ        prefetch

	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15

	// loopP4 and loopR4 read the four B rows of a round at DI, DI+ldb,
	// DI+2*ldb and DI+3*ldb (R9), and advance DI once a round.
	LEAQ (R14)(R14*2), R9
	MOVQ kc+8(FP), BX
	SHRQ $2, BX
	JZ   tail
	CMPQ R10, $4
	JNE  notpacked
	CMPL bcast-16(SP), $0
	JEQ  loopP4
	JMP  loopQ4

notpacked:
	CMPQ R11, $4
	JEQ  loopR4

loop4:
	KSTEP8
	KSTEP8
	PREFETCHT1 (R15)
	ADDQ       $64, R15
	KSTEP8
	KSTEP8
	DECQ       BX
	JNZ        loop4
	JMP        tail

loopP4:
	PSTEP((DI), 64(DI))
	PSTEP((DI)(R14*1), 64(DI)(R14*1))
	PREFETCHT1 (R15)
	ADDQ       $64, R15
	PSTEP((DI)(R14*2), 64(DI)(R14*2))
	PSTEP((DI)(R9*1), 64(DI)(R9*1))
	LEAQ       (DI)(R14*4), DI
	DECQ       BX
	JNZ        loopP4
	LEAQ       (SI)(R10*4), R13 // row 5 at the tail's first k step
	ADDQ       R10, R13
	JMP        tail

loopQ4:
	QSTEP((DI), 64(DI))
	QSTEP((DI)(R14*1), 64(DI)(R14*1))
	PREFETCHT1 (R15)
	ADDQ       $64, R15
	QSTEP((DI)(R14*2), 64(DI)(R14*2))
	QSTEP((DI)(R9*1), 64(DI)(R9*1))
	LEAQ       (DI)(R14*4), DI
	DECQ       BX
	JNZ        loopQ4
	LEAQ       (SI)(R10*4), R13 // row 5 at the tail's first k step
	ADDQ       R10, R13
	JMP        tail

loopR4:
	RSTEP(0, (DI), 64(DI))
	RSTEP(4, (DI)(R14*1), 64(DI)(R14*1))
	PREFETCHT1 (R15)
	ADDQ       $64, R15
	RSTEP(8, (DI)(R14*2), 64(DI)(R14*2))
	RSTEP(12, (DI)(R9*1), 64(DI)(R9*1))
	LEAQ       (DI)(R14*4), DI
	ADDQ       $16, SI
	ADDQ       $16, R13
	DECQ       BX
	JNZ        loopR4

tail:
	MOVQ kc+8(FP), BX
	ANDQ $3, BX
	JZ   store

loop1:
	KSTEP8
	DECQ BX
	JNZ  loop1

store:
	// BX = rows to store: 8, or rows for the last sliver.
	MOVQ         $8, BX
	CMPQ         CX, $1
	CMOVQEQ      rows+88(FP), BX
	MOVQ         DX, R9
	VBROADCASTSS alpha+80(FP), Z30
	VBROADCASTSS beta+84(FP), Z31
	MOVQ         bias+104(FP), DI
	TESTQ        DI, DI
	JNZ          withbias
	MOVL         mask+96(FP), SI
	MOVL         beta+84(FP), DI
	SHLL         $1, DI // drop the sign bit: +0 and -0 both mean "overwrite"
	JZ           zero
	CMPL         SI, $-1
	JNE          betamasked
	STORE8(STOREBETA)

betamasked:
	STORE8(STOREBETAM)

zero:
	CMPL SI, $-1
	JNE  zeromasked
	STORE8(STOREZERO)

zeromasked:
	STORE8(STOREZEROM)

withbias:
	VMOVUPS.Z (DI), K1, Z28
	VMOVUPS.Z 64(DI), K2, Z29
	STORE8(STOREBIAS)

next:
	MOVQ asl+40(FP), BX
	LEAQ (AX)(BX*4), AX // next A sliver
	LEAQ (DX)(R8*8), DX // next 8 rows of C
	DECQ CX
	JNZ  sliver

done:
	RESTOREMXCSR
	VZEROUPPER
	RET

// TR8 transposes the 8x8 block of floats in Y0-Y7 (row i in Yi) into
// Y8-Y15 (column j in Y(8+j)) with AVX shuffles; Y0-Y7 are clobbered.
#define TR8 \
	VUNPCKLPS  Y1, Y0, Y8 \
	VUNPCKHPS  Y1, Y0, Y9 \
	VUNPCKLPS  Y3, Y2, Y10 \
	VUNPCKHPS  Y3, Y2, Y11 \
	VUNPCKLPS  Y5, Y4, Y12 \
	VUNPCKHPS  Y5, Y4, Y13 \
	VUNPCKLPS  Y7, Y6, Y14 \
	VUNPCKHPS  Y7, Y6, Y15 \
	VSHUFPS    $0x44, Y10, Y8, Y0 \
	VSHUFPS    $0xEE, Y10, Y8, Y1 \
	VSHUFPS    $0x44, Y11, Y9, Y2 \
	VSHUFPS    $0xEE, Y11, Y9, Y3 \
	VSHUFPS    $0x44, Y14, Y12, Y4 \
	VSHUFPS    $0xEE, Y14, Y12, Y5 \
	VSHUFPS    $0x44, Y15, Y13, Y6 \
	VSHUFPS    $0xEE, Y15, Y13, Y7 \
	VPERM2F128 $0x20, Y4, Y0, Y8 \
	VPERM2F128 $0x20, Y5, Y1, Y9 \
	VPERM2F128 $0x20, Y6, Y2, Y10 \
	VPERM2F128 $0x20, Y7, Y3, Y11 \
	VPERM2F128 $0x31, Y4, Y0, Y12 \
	VPERM2F128 $0x31, Y5, Y1, Y13 \
	VPERM2F128 $0x31, Y6, Y2, Y14 \
	VPERM2F128 $0x31, Y7, Y3, Y15

// LOAD8ROWS loads 8 floats from each of the 8 rows at SI (row stride R8
// bytes, R9 = 3*R8) into Y0-Y7, with R12 as scratch.
#define LOAD8ROWS \
	LEAQ    (SI)(R8*4), R12 \
	VMOVUPS (SI), Y0 \
	VMOVUPS (SI)(R8*1), Y1 \
	VMOVUPS (SI)(R8*2), Y2 \
	VMOVUPS (SI)(R9*1), Y3 \
	VMOVUPS (R12), Y4 \
	VMOVUPS (R12)(R8*1), Y5 \
	VMOVUPS (R12)(R8*2), Y6 \
	VMOVUPS (R12)(R9*1), Y7

// STORE8ROWS stores R0-R7 to the 8 rows at DI (row stride R11 bytes, R10
// = 3*R11), with R12 as scratch.
#define STORE8ROWS(R0, R1, R2, R3, R4, R5, R6, R7) \
	LEAQ    (DI)(R11*4), R12 \
	VMOVUPS R0, (DI) \
	VMOVUPS R1, (DI)(R11*1) \
	VMOVUPS R2, (DI)(R11*2) \
	VMOVUPS R3, (DI)(R10*1) \
	VMOVUPS R4, (R12) \
	VMOVUPS R5, (R12)(R11*1) \
	VMOVUPS R6, (R12)(R11*2) \
	VMOVUPS R7, (R12)(R10*1)

// func transpose8(kb8 int, src *float32, lds int, dst *float32, ldd int)
//
// Transposes the 8 x kb8 block of src (8 rows with stride lds elements, kb8
// a multiple of 8) into kb8 rows of 8 floats in dst with stride ldd
// elements, 8x8 at a time with AVX shuffles: dst[p*ldd + i] = src[i*lds + p].
TEXT ·transpose8(SB), NOSPLIT, $0-40
	MOVQ kb8+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ lds+16(FP), R8
	SHLQ $2, R8
	MOVQ dst+24(FP), DI
	MOVQ ldd+32(FP), R11
	SHLQ $2, R11
	SHRQ $3, CX
	JZ   trdone
	LEAQ (R8)(R8*2), R9    // 3*lds bytes
	LEAQ (R11)(R11*2), R10 // 3*ldd bytes

trloop:
	LOAD8ROWS
	TR8
	STORE8ROWS(Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)

	ADDQ $32, SI         // next 8 columns of src
	LEAQ (DI)(R11*8), DI // next 8 rows of dst
	DECQ CX
	JNZ  trloop

trdone:
	VZEROUPPER
	RET

// func transpose16(kb8 int, src *float32, lds int, dst *float32, ldd int)
//
// transpose8 on 16 rows of src: dst[p*ldd + i] = src[i*lds + p] for i < 16
// and p < kb8 (a multiple of 8), each row of dst written as one 64-byte
// store (two 8x8 transposes joined), so that a row of a packed 32-column B
// sliver is written in two whole lines instead of four half lines.
TEXT ·transpose16(SB), NOSPLIT, $0-40
	MOVQ kb8+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ lds+16(FP), R8
	SHLQ $2, R8
	MOVQ dst+24(FP), DI
	MOVQ ldd+32(FP), R11
	SHLQ $2, R11
	SHRQ $3, CX
	JZ   t16done
	LEAQ (R8)(R8*2), R9    // 3*lds bytes
	LEAQ (R11)(R11*2), R10 // 3*ldd bytes
	MOVQ R8, R13
	SHLQ $3, R13           // 8*lds bytes: rows 8-15

t16loop:
	LOAD8ROWS
	TR8
	VMOVAPS Y8, Y16
	VMOVAPS Y9, Y17
	VMOVAPS Y10, Y18
	VMOVAPS Y11, Y19
	VMOVAPS Y12, Y20
	VMOVAPS Y13, Y21
	VMOVAPS Y14, Y22
	VMOVAPS Y15, Y23
	ADDQ    R13, SI
	LOAD8ROWS
	SUBQ    R13, SI
	TR8
	VINSERTF64X4 $1, Y8, Z16, Z16
	VINSERTF64X4 $1, Y9, Z17, Z17
	VINSERTF64X4 $1, Y10, Z18, Z18
	VINSERTF64X4 $1, Y11, Z19, Z19
	VINSERTF64X4 $1, Y12, Z20, Z20
	VINSERTF64X4 $1, Y13, Z21, Z21
	VINSERTF64X4 $1, Y14, Z22, Z22
	VINSERTF64X4 $1, Y15, Z23, Z23

	STORE8ROWS(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)

	ADDQ $32, SI         // next 8 columns of src
	LEAQ (DI)(R11*8), DI // next 8 rows of dst
	DECQ CX
	JNZ  t16loop

t16done:
	VZEROUPPER
	RET

// func packA8T(kb, nsl int, src *float32, lda int, dst *float32)
//
// Packs nsl full 8-row slivers of a transposed A block: for each k step p
// and sliver s, dst[s*8*kb + p*8 + i] = src[p*lda + s*8 + i] for i < 8.
// It takes two k steps at a time, so that each store writes a whole
// 64-byte line of a sliver (the 32-byte halves of one k step each were
// half-line stores to 16 or more streams at once). Measured on an Intel
// Xeon (family 6, model 207), the weight gradients' A blocks of the tiny
// and small models (2048 x 128 and 2048 x 512 from memory): 17-20 GB/s
// against 8-9; the tiny training step about 1.02x faster (two runs of 60
// alternating sets).
TEXT ·packA8T(SB), NOSPLIT, $0-40
	MOVQ  kb+0(FP), CX
	MOVQ  nsl+8(FP), BX
	MOVQ  src+16(FP), SI
	MOVQ  lda+24(FP), R8
	SHLQ  $2, R8
	MOVQ  dst+32(FP), DI
	MOVQ  CX, R9
	SHLQ  $5, R9
	TESTQ BX, BX
	JZ    p2done
	MOVQ  CX, R13
	SHRQ  $1, R13
	JZ    p2odd

p2row:
	MOVQ SI, R10
	LEAQ (SI)(R8*1), R12
	MOVQ DI, R11
	MOVQ BX, DX

p2sl:
	VMOVUPS      (R10), Y0
	VINSERTF64X4 $1, (R12), Z0, Z0
	VMOVUPS      Z0, (R11)
	ADDQ         $32, R10
	ADDQ         $32, R12
	ADDQ         R9, R11
	DECQ         DX
	JNZ          p2sl

	LEAQ (SI)(R8*2), SI
	ADDQ $64, DI
	DECQ R13
	JNZ  p2row

p2odd:
	TESTQ $1, CX
	JZ    p2done
	MOVQ  SI, R10
	MOVQ  DI, R11
	MOVQ  BX, DX

p2osl:
	VMOVUPS (R10), Y0
	VMOVUPS Y0, (R11)
	ADDQ    $32, R10
	ADDQ    R9, R11
	DECQ    DX
	JNZ     p2osl

p2done:
	VZEROUPPER
	RET

// func packB32N(kb int, src *float32, ldb int, dst *float32, mask uint32)
//
// Copies kb rows of 32 floats (row stride ldb elements) from src to
// consecutive 32-float rows of dst, reading only the columns selected by
// mask (bit j for column j) and writing zeros in the others.
TEXT ·packB32N(SB), NOSPLIT, $0-36
	MOVQ  kb+0(FP), CX
	MOVQ  src+8(FP), SI
	MOVQ  ldb+16(FP), R8
	SHLQ  $2, R8
	MOVQ  dst+24(FP), DI
	MOVL  mask+32(FP), BX
	KMOVW BX, K1
	SHRL  $16, BX
	KMOVW BX, K2
	TESTQ CX, CX
	JZ    pb32done

pb32loop:
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z 64(SI), K2, Z1
	VMOVUPS   Z0, (DI)
	VMOVUPS   Z1, 64(DI)
	ADDQ      R8, SI
	ADDQ      $128, DI
	DECQ      CX
	JNZ       pb32loop

pb32done:
	VZEROUPPER
	RET

// func packB32NSum(kb int, src *float32, ldb int, dst *float32, mask uint32, sum *float32, add int)
//
// packB32N that also sums the kb rows column by column, each from zero in
// row order (Z2, Z3), and then stores the sums to sum (add == 0) or adds
// them to it (sum[j] + s[j]), for the columns in mask only. The arithmetic
// is that of the small-M kernel (smallN512) on a row of ones: a
// multiply-add by 1 per row is the same rounding as an addition, and its
// beta step adds the block's sum to C. MXCSR as in the matrix kernels
// (subnormal inputs read as zero, subnormal sums are stored as zero).
TEXT ·packB32NSum(SB), NOSPLIT, $8-56
	FLUSHDENORMALS
	MOVQ   kb+0(FP), CX
	MOVQ   src+8(FP), SI
	MOVQ   ldb+16(FP), R8
	SHLQ   $2, R8
	MOVQ   dst+24(FP), DI
	MOVL   mask+32(FP), BX
	KMOVW  BX, K1
	SHRL   $16, BX
	KMOVW  BX, K2
	MOVQ   sum+40(FP), DX
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	TESTQ  CX, CX
	JZ     pbssums

pbsloop:
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z 64(SI), K2, Z1
	VMOVUPS   Z0, (DI)
	VMOVUPS   Z1, 64(DI)
	VADDPS    Z0, Z2, Z2
	VADDPS    Z1, Z3, Z3
	ADDQ      R8, SI
	ADDQ      $128, DI
	DECQ      CX
	JNZ       pbsloop

pbssums:
	MOVQ      add+48(FP), AX
	TESTQ     AX, AX
	JZ        pbsstore
	VMOVUPS.Z (DX), K1, Z0
	VMOVUPS.Z 64(DX), K2, Z1
	VADDPS    Z0, Z2, Z2
	VADDPS    Z1, Z3, Z3

pbsstore:
	VMOVUPS Z2, K1, (DX)
	VMOVUPS Z3, K2, 64(DX)
	VZEROUPPER
	RESTOREMXCSR
	RET
