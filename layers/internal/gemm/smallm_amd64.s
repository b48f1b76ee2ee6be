//go:build amd64 && !purego

#include "textflag.h"
#include "mxcsr_amd64.h"

// tailMask<> is 32 int32 -1 followed by 32 zeros: the 32 bytes at offset
// 4*(32-t)+32*v are the VMASKMOVPS mask of the first t-8v lanes of vector v
// (all lanes for t-8v >= 8, none for t-8v <= 0), for 0 <= t <= 32.
DATA tailMask<>+0(SB)/8, $-1
DATA tailMask<>+8(SB)/8, $-1
DATA tailMask<>+16(SB)/8, $-1
DATA tailMask<>+24(SB)/8, $-1
DATA tailMask<>+32(SB)/8, $-1
DATA tailMask<>+40(SB)/8, $-1
DATA tailMask<>+48(SB)/8, $-1
DATA tailMask<>+56(SB)/8, $-1
DATA tailMask<>+64(SB)/8, $-1
DATA tailMask<>+72(SB)/8, $-1
DATA tailMask<>+80(SB)/8, $-1
DATA tailMask<>+88(SB)/8, $-1
DATA tailMask<>+96(SB)/8, $-1
DATA tailMask<>+104(SB)/8, $-1
DATA tailMask<>+112(SB)/8, $-1
DATA tailMask<>+120(SB)/8, $-1
GLOBL tailMask<>(SB), RODATA|NOPTR, $256

// SMROW accumulates one row of the AVX-512 small-M kernel: it broadcasts
// A(i, p) from A_ into ZA and adds it times the 64 B values in Z16-Z19 into
// the row's accumulators C0-C3.
#define SMROW(A_, ZA, C0, C1, C2, C3) \
	VBROADCASTSS A_, ZA \
	VFMADD231PS  Z16, ZA, C0 \
	VFMADD231PS  Z17, ZA, C1 \
	VFMADD231PS  Z18, ZA, C2 \
	VFMADD231PS  Z19, ZA, C3

// SMLOADB loads the 64 B values of the k step at DI into Z16-Z19, lanes
// outside the masks K1-K4 zeroed (and not read), and advances DI by R14
// (ldb bytes) and SI by one float.
#define SMLOADB \
	VMOVUPS.Z (DI), K1, Z16 \
	VMOVUPS.Z 64(DI), K2, Z17 \
	VMOVUPS.Z 128(DI), K3, Z18 \
	VMOVUPS.Z 192(DI), K4, Z19 \
	ADDQ      R14, DI

// SMSTOREB stores one row C0-C3 to the C row at R9 as alpha*acc + beta*C
// (alpha in Z30, beta in Z31, one fused multiply-add per element, as the
// 8x32 kernel), the columns in K1-K4 only, and advances R9 by ldc (R8).
#define SMSTOREB(C0, C1, C2, C3) \
	VMULPS      Z30, C0, C0 \
	VMULPS      Z30, C1, C1 \
	VMULPS      Z30, C2, C2 \
	VMULPS      Z30, C3, C3 \
	VFMADD231PS (R9), Z31, K1, C0 \
	VFMADD231PS 64(R9), Z31, K2, C1 \
	VFMADD231PS 128(R9), Z31, K3, C2 \
	VFMADD231PS 192(R9), Z31, K4, C3 \
	VMOVUPS     C0, K1, (R9) \
	VMOVUPS     C1, K2, 64(R9) \
	VMOVUPS     C2, K3, 128(R9) \
	VMOVUPS     C3, K4, 192(R9) \
	ADDQ        R8, R9

// SMSTOREZ is SMSTOREB for beta == 0: C is not read.
#define SMSTOREZ(C0, C1, C2, C3) \
	VMULPS  Z30, C0, C0 \
	VMULPS  Z30, C1, C1 \
	VMULPS  Z30, C2, C2 \
	VMULPS  Z30, C3, C3 \
	VMOVUPS C0, K1, (R9) \
	VMOVUPS C1, K2, 64(R9) \
	VMOVUPS C2, K3, 128(R9) \
	VMOVUPS C3, K4, 192(R9) \
	ADDQ    R8, R9

// func smallN512(rows, n, kb int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)
//
// See the Go declaration. Register use: CX columns left, AX A row 0, BX B
// and DX C at the current column block, R10 lda, R12 3*lda, R14 ldb, R8
// ldc (bytes), SI A at the current k step, DI B at the current k step, R11
// k steps left, R9 the mask then the C row, R13 scratch, K1-K4 the column
// masks of the block, Z0-Z15 the accumulators (row i in Z(4i)-Z(4i+3);
// one row in a block of 128 columns: Z0-Z7), Z16-Z19 and Z21-Z24 B, Z20-Z23
// A broadcasts, Z30 alpha, Z31 beta.
TEXT ·smallN512(SB), NOSPLIT, $8-80
	FLUSHDENORMALS
	MOVQ         n+8(FP), CX
	MOVQ         a+24(FP), AX
	MOVQ         lda+32(FP), R10
	SHLQ         $2, R10
	LEAQ         (R10)(R10*2), R12
	MOVQ         b+40(FP), BX
	MOVQ         ldb+48(FP), R14
	SHLQ         $2, R14
	MOVQ         c+56(FP), DX
	MOVQ         ldc+64(FP), R8
	SHLQ         $2, R8
	VBROADCASTSS alpha+72(FP), Z30
	VBROADCASTSS beta+76(FP), Z31

block:
	// The masks of the block's min(64, CX) columns.
	MOVQ  $-1, R9
	CMPQ  CX, $64
	JAE   masked
	MOVQ  $1, R9
	SHLQ  CX, R9
	DECQ  R9

masked:
	KMOVW R9, K1
	SHRQ  $16, R9
	KMOVW R9, K2
	SHRQ  $16, R9
	KMOVW R9, K3
	SHRQ  $16, R9
	KMOVW R9, K4

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

	MOVQ AX, SI
	MOVQ BX, DI
	MOVQ kb+16(FP), R11
	MOVQ DX, R9
	MOVQ rows+0(FP), R13
	CMPQ R13, $2
	JAE  rows2up
	CMPQ CX, $128
	JAE  wide1
	JMP  rows1

rows2up:
	CMPQ R13, $2
	JE   rows2
	CMPQ R13, $3
	JE   rows3

rows4:
	SMLOADB
	SMROW((SI), Z20, Z0, Z1, Z2, Z3)
	SMROW((SI)(R10*1), Z21, Z4, Z5, Z6, Z7)
	SMROW((SI)(R10*2), Z22, Z8, Z9, Z10, Z11)
	SMROW((SI)(R12*1), Z23, Z12, Z13, Z14, Z15)
	ADDQ $4, SI
	DECQ R11
	JNZ  rows4
	MOVL beta+76(FP), R13
	SHLL $1, R13 // drop the sign bit: +0 and -0 both mean "overwrite"
	JZ   rows4z
	SMSTOREB(Z0, Z1, Z2, Z3)
	SMSTOREB(Z4, Z5, Z6, Z7)
	SMSTOREB(Z8, Z9, Z10, Z11)
	SMSTOREB(Z12, Z13, Z14, Z15)
	JMP  next

rows4z:
	SMSTOREZ(Z0, Z1, Z2, Z3)
	SMSTOREZ(Z4, Z5, Z6, Z7)
	SMSTOREZ(Z8, Z9, Z10, Z11)
	SMSTOREZ(Z12, Z13, Z14, Z15)
	JMP  next

rows3:
	SMLOADB
	SMROW((SI), Z20, Z0, Z1, Z2, Z3)
	SMROW((SI)(R10*1), Z21, Z4, Z5, Z6, Z7)
	SMROW((SI)(R10*2), Z22, Z8, Z9, Z10, Z11)
	ADDQ $4, SI
	DECQ R11
	JNZ  rows3
	MOVL beta+76(FP), R13
	SHLL $1, R13
	JZ   rows3z
	SMSTOREB(Z0, Z1, Z2, Z3)
	SMSTOREB(Z4, Z5, Z6, Z7)
	SMSTOREB(Z8, Z9, Z10, Z11)
	JMP  next

rows3z:
	SMSTOREZ(Z0, Z1, Z2, Z3)
	SMSTOREZ(Z4, Z5, Z6, Z7)
	SMSTOREZ(Z8, Z9, Z10, Z11)
	JMP  next

rows2:
	SMLOADB
	SMROW((SI), Z20, Z0, Z1, Z2, Z3)
	SMROW((SI)(R10*1), Z21, Z4, Z5, Z6, Z7)
	ADDQ $4, SI
	DECQ R11
	JNZ  rows2
	MOVL beta+76(FP), R13
	SHLL $1, R13
	JZ   rows2z
	SMSTOREB(Z0, Z1, Z2, Z3)
	SMSTOREB(Z4, Z5, Z6, Z7)
	JMP  next

rows2z:
	SMSTOREZ(Z0, Z1, Z2, Z3)
	SMSTOREZ(Z4, Z5, Z6, Z7)
	JMP  next

rows1:
	SMLOADB
	SMROW((SI), Z20, Z0, Z1, Z2, Z3)
	ADDQ $4, SI
	DECQ R11
	JNZ  rows1
	MOVL beta+76(FP), R13
	SHLL $1, R13
	JZ   rows1z
	SMSTOREB(Z0, Z1, Z2, Z3)
	JMP  next

rows1z:
	SMSTOREZ(Z0, Z1, Z2, Z3)

next:
	ADDQ $256, BX
	ADDQ $256, DX
	SUBQ $64, CX
	JG   block
	VZEROUPPER
	RESTOREMXCSR
	RET

	// One row, 128 full columns: Z0-Z7 accumulate, Z16-Z23 hold B.
wide1:
	VMOVUPS      (DI), Z16
	VMOVUPS      64(DI), Z17
	VMOVUPS      128(DI), Z18
	VMOVUPS      192(DI), Z19
	VMOVUPS      256(DI), Z21
	VMOVUPS      320(DI), Z22
	VMOVUPS      384(DI), Z23
	VMOVUPS      448(DI), Z24
	VBROADCASTSS (SI), Z20
	VFMADD231PS  Z16, Z20, Z0
	VFMADD231PS  Z17, Z20, Z1
	VFMADD231PS  Z18, Z20, Z2
	VFMADD231PS  Z19, Z20, Z3
	VFMADD231PS  Z21, Z20, Z4
	VFMADD231PS  Z22, Z20, Z5
	VFMADD231PS  Z23, Z20, Z6
	VFMADD231PS  Z24, Z20, Z7
	ADDQ         R14, DI
	ADDQ         $4, SI
	DECQ         R11
	JNZ          wide1
	VMULPS       Z30, Z0, Z0
	VMULPS       Z30, Z1, Z1
	VMULPS       Z30, Z2, Z2
	VMULPS       Z30, Z3, Z3
	VMULPS       Z30, Z4, Z4
	VMULPS       Z30, Z5, Z5
	VMULPS       Z30, Z6, Z6
	VMULPS       Z30, Z7, Z7
	MOVL         beta+76(FP), R13
	SHLL         $1, R13
	JZ           wide1z
	VFMADD231PS  (R9), Z31, Z0
	VFMADD231PS  64(R9), Z31, Z1
	VFMADD231PS  128(R9), Z31, Z2
	VFMADD231PS  192(R9), Z31, Z3
	VFMADD231PS  256(R9), Z31, Z4
	VFMADD231PS  320(R9), Z31, Z5
	VFMADD231PS  384(R9), Z31, Z6
	VFMADD231PS  448(R9), Z31, Z7

wide1z:
	VMOVUPS Z0, (R9)
	VMOVUPS Z1, 64(R9)
	VMOVUPS Z2, 128(R9)
	VMOVUPS Z3, 192(R9)
	VMOVUPS Z4, 256(R9)
	VMOVUPS Z5, 320(R9)
	VMOVUPS Z6, 384(R9)
	VMOVUPS Z7, 448(R9)
	ADDQ    $512, BX
	ADDQ    $512, DX
	SUBQ    $128, CX
	JG      block
	VZEROUPPER
	RESTOREMXCSR
	RET

// SNSTEP is one k step of the AVX2 small-M kernel: it broadcasts A(p) at SI
// into Y8, loads the 32 B values at DI into Y4-Y7 with LD (SNLOAD, or
// SNLOADM for the lanes in the masks Y9-Y12, others zeroed and not read),
// adds their products into Y0-Y3 and advances DI by ldb (R14) and SI by
// one float.
#define SNSTEP(LD) \
	VBROADCASTSS (SI), Y8 \
	LD \
	VFMADD231PS  Y4, Y8, Y0 \
	VFMADD231PS  Y5, Y8, Y1 \
	VFMADD231PS  Y6, Y8, Y2 \
	VFMADD231PS  Y7, Y8, Y3 \
	ADDQ         R14, DI \
	ADDQ         $4, SI

#define SNLOAD \
	VMOVUPS (DI), Y4 \
	VMOVUPS 32(DI), Y5 \
	VMOVUPS 64(DI), Y6 \
	VMOVUPS 96(DI), Y7

#define SNLOADM \
	VMASKMOVPS (DI), Y9, Y4 \
	VMASKMOVPS 32(DI), Y10, Y5 \
	VMASKMOVPS 64(DI), Y11, Y6 \
	VMASKMOVPS 96(DI), Y12, Y7

// func smallN256(n, kb int, a, b *float32, ldb int, c *float32, alpha, beta float32)
//
// See the Go declaration. Register use: CX columns left, AX A, BX B and DX
// C at the current column block, R14 ldb (bytes), SI A and DI B at the
// current k step, R11 k steps left, R9 and R13 scratch, Y0-Y7 the
// accumulators of a 64-column block, Y0-Y3 those of a 32-column one, whose
// B is in Y4-Y7, Y8 the A broadcast, Y9-Y12 the tail block's lane masks,
// Y13 C, Y14 alpha, Y15 beta.
TEXT ·smallN256(SB), NOSPLIT, $8-56
	FLUSHDENORMALS
	MOVQ         n+0(FP), CX
	MOVQ         a+16(FP), AX
	MOVQ         b+24(FP), BX
	MOVQ         ldb+32(FP), R14
	SHLQ         $2, R14
	MOVQ         c+40(FP), DX
	VBROADCASTSS alpha+48(FP), Y14
	VBROADCASTSS beta+52(FP), Y15

wide:
	// Blocks of 64 columns: Y0-Y7 accumulate, B is read by the
	// multiply-adds.
	CMPQ   CX, $64
	JB     full
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ   AX, SI
	MOVQ   BX, DI
	MOVQ   kb+8(FP), R11

widek:
	VBROADCASTSS (SI), Y8
	VFMADD231PS  (DI), Y8, Y0
	VFMADD231PS  32(DI), Y8, Y1
	VFMADD231PS  64(DI), Y8, Y2
	VFMADD231PS  96(DI), Y8, Y3
	VFMADD231PS  128(DI), Y8, Y4
	VFMADD231PS  160(DI), Y8, Y5
	VFMADD231PS  192(DI), Y8, Y6
	VFMADD231PS  224(DI), Y8, Y7
	ADDQ         R14, DI
	ADDQ         $4, SI
	DECQ         R11
	JNZ          widek
	VMULPS       Y14, Y0, Y0
	VMULPS       Y14, Y1, Y1
	VMULPS       Y14, Y2, Y2
	VMULPS       Y14, Y3, Y3
	VMULPS       Y14, Y4, Y4
	VMULPS       Y14, Y5, Y5
	VMULPS       Y14, Y6, Y6
	VMULPS       Y14, Y7, Y7
	MOVL         beta+52(FP), R13
	SHLL         $1, R13 // drop the sign bit: +0 and -0 both mean "overwrite"
	JZ           widest
	VFMADD231PS  (DX), Y15, Y0
	VFMADD231PS  32(DX), Y15, Y1
	VFMADD231PS  64(DX), Y15, Y2
	VFMADD231PS  96(DX), Y15, Y3
	VFMADD231PS  128(DX), Y15, Y4
	VFMADD231PS  160(DX), Y15, Y5
	VFMADD231PS  192(DX), Y15, Y6
	VFMADD231PS  224(DX), Y15, Y7

widest:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	VMOVUPS Y4, 128(DX)
	VMOVUPS Y5, 160(DX)
	VMOVUPS Y6, 192(DX)
	VMOVUPS Y7, 224(DX)
	ADDQ    $256, BX
	ADDQ    $256, DX
	SUBQ    $64, CX
	JMP     wide

full:
	CMPQ   CX, $32
	JB     tail
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ   AX, SI
	MOVQ   BX, DI
	MOVQ   kb+8(FP), R11

fullk:
	SNSTEP(SNLOAD)
	DECQ R11
	JNZ  fullk
	VMULPS Y14, Y0, Y0
	VMULPS Y14, Y1, Y1
	VMULPS Y14, Y2, Y2
	VMULPS Y14, Y3, Y3
	MOVL   beta+52(FP), R13
	SHLL   $1, R13 // drop the sign bit: +0 and -0 both mean "overwrite"
	JZ     fullst
	VFMADD231PS (DX), Y15, Y0
	VFMADD231PS 32(DX), Y15, Y1
	VFMADD231PS 64(DX), Y15, Y2
	VFMADD231PS 96(DX), Y15, Y3

fullst:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	ADDQ    $128, BX
	ADDQ    $128, DX
	SUBQ    $32, CX
	JMP     full

tail:
	TESTQ   CX, CX
	JZ      done
	LEAQ    tailMask<>(SB), R9
	MOVQ    $32, R13
	SUBQ    CX, R13
	LEAQ    (R9)(R13*4), R9
	VMOVDQU (R9), Y9
	VMOVDQU 32(R9), Y10
	VMOVDQU 64(R9), Y11
	VMOVDQU 96(R9), Y12
	VXORPS  Y0, Y0, Y0
	VXORPS  Y1, Y1, Y1
	VXORPS  Y2, Y2, Y2
	VXORPS  Y3, Y3, Y3
	MOVQ    AX, SI
	MOVQ    BX, DI
	MOVQ    kb+8(FP), R11

tailk:
	SNSTEP(SNLOADM)
	DECQ R11
	JNZ  tailk
	VMULPS Y14, Y0, Y0
	VMULPS Y14, Y1, Y1
	VMULPS Y14, Y2, Y2
	VMULPS Y14, Y3, Y3
	MOVL   beta+52(FP), R13
	SHLL   $1, R13
	JZ     tailst
	VMASKMOVPS  (DX), Y9, Y13
	VFMADD231PS Y13, Y15, Y0
	VMASKMOVPS  32(DX), Y10, Y13
	VFMADD231PS Y13, Y15, Y1
	VMASKMOVPS  64(DX), Y11, Y13
	VFMADD231PS Y13, Y15, Y2
	VMASKMOVPS  96(DX), Y12, Y13
	VFMADD231PS Y13, Y15, Y3

tailst:
	VMASKMOVPS Y0, Y9, (DX)
	VMASKMOVPS Y1, Y10, 32(DX)
	VMASKMOVPS Y2, Y11, 64(DX)
	VMASKMOVPS Y3, Y12, 96(DX)

done:
	VZEROUPPER
	RESTOREMXCSR
	RET

// DOTROWS adds A(p:p+8) in Y8 times the 8 values at offset off of the 8 B
// rows (row r at DI + r*ldb, with R10 = ldb, R11 = 3*ldb and R12 = DI +
// 5*ldb) into Y0-Y7.
#define DOTROWS(off) \
	VFMADD231PS off(DI), Y8, Y0 \
	VFMADD231PS off(DI)(R10*1), Y8, Y1 \
	VFMADD231PS off(DI)(R10*2), Y8, Y2 \
	VFMADD231PS off(DI)(R11*1), Y8, Y3 \
	VFMADD231PS off(DI)(R10*4), Y8, Y4 \
	VFMADD231PS off(R12), Y8, Y5 \
	VFMADD231PS off(R12)(R10*1), Y8, Y6 \
	VFMADD231PS off(R12)(R10*2), Y8, Y7

// DOTTAIL adds the masked (Y14) A tail in Y8 times the masked tail of B
// row address ROW into ACC, through Y9.
#define DOTTAIL(ROW, ACC) \
	VMASKMOVPS  ROW, Y14, Y9 \
	VFMADD231PS Y9, Y8, ACC

// func dotsNT8(blocks, k int, a, b *float32, ldb int, c *float32, alpha float32)
//
// See the Go declaration. Register use: CX blocks left, BX the block's
// first B row, DX its 8 outputs, R10 ldb, R11 3*ldb (bytes), DI and R12
// rows 0 and 5 at the current k step, SI A at the current k step, R9 k
// steps of 8 left, R13 scratch, Y0-Y7 the row accumulators, Y8 A, Y9 a
// masked B tail, Y14 the k tail's lane mask, Y15 alpha.
TEXT ·dotsNT8(SB), NOSPLIT, $8-52
	FLUSHDENORMALS
	MOVQ         blocks+0(FP), CX
	MOVQ         b+24(FP), BX
	MOVQ         ldb+32(FP), R10
	SHLQ         $2, R10
	LEAQ         (R10)(R10*2), R11
	MOVQ         c+40(FP), DX
	VBROADCASTSS alpha+48(FP), Y15
	MOVQ         k+8(FP), R13
	ANDQ         $7, R13
	LEAQ         tailMask<>(SB), R9
	NEGQ         R13
	LEAQ         128(R9)(R13*4), R9
	VMOVDQU      (R9), Y14

dblock:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ   a+16(FP), SI
	MOVQ   BX, DI
	LEAQ   (DI)(R10*4), R12
	ADDQ   R10, R12
	MOVQ   k+8(FP), R9
	SHRQ   $3, R9
	JZ     dktail

dk8:
	VMOVUPS (SI), Y8
	DOTROWS(0)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, R12
	DECQ    R9
	JNZ     dk8

dktail:
	MOVQ k+8(FP), R9
	ANDQ $7, R9
	JZ   dreduce
	VMASKMOVPS (SI), Y14, Y8
	DOTTAIL((DI), Y0)
	DOTTAIL((DI)(R10*1), Y1)
	DOTTAIL((DI)(R10*2), Y2)
	DOTTAIL((DI)(R11*1), Y3)
	DOTTAIL((DI)(R10*4), Y4)
	DOTTAIL((R12), Y5)
	DOTTAIL((R12)(R10*1), Y6)
	DOTTAIL((R12)(R10*2), Y7)

dreduce:
	// Y0 = [sums of rows 0-3 over lanes 0-3 | the same over lanes 4-7],
	// Y4 likewise for rows 4-7; the two halves are then added.
	VHADDPS    Y1, Y0, Y0
	VHADDPS    Y3, Y2, Y2
	VHADDPS    Y5, Y4, Y4
	VHADDPS    Y7, Y6, Y6
	VHADDPS    Y2, Y0, Y0
	VHADDPS    Y6, Y4, Y4
	VPERM2F128 $0x20, Y4, Y0, Y1
	VPERM2F128 $0x31, Y4, Y0, Y2
	VADDPS     Y2, Y1, Y1
	VMULPS     Y15, Y1, Y1
	VMOVUPS    Y1, (DX)
	ADDQ       $32, DX
	LEAQ       (BX)(R10*8), BX
	DECQ       CX
	JNZ        dblock
	VZEROUPPER
	RESTOREMXCSR
	RET
