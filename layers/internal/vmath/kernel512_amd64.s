//go:build amd64 && !purego

#include "textflag.h"
#include "mxcsr_amd64.h"

// The AVX-512 kernels. The exponential and GELU ones perform, lane by lane,
// the operations of the AVX2 kernels in kernel_amd64.s (same fused
// multiply-adds, same operand order), 16 lanes at a time, so their results
// are bit-identical; the special cases use mask registers instead of blends,
// and the exponential's last step scales by 2^n with VSCALEFPS, which also
// gives its overflow (see EXPSCALE16). Measured on an Intel Xeon (family 6,
// model 207), against adding n to the exponent field and fixing the
// special cases after: Exp 1.11x, ExpSubSum 1.13x, GELU 1.05x faster.

// CONST defines a read-only 4-byte constant, loaded with VBROADCASTSS.
#define CONST(name, bits) \
	DATA name+0(SB)/4, bits \
	GLOBL name(SB), RODATA|NOPTR, $4

CONST(zMagic<>, $0x4b400000)    // 1.5·2^23
CONST(zLog2e<>, $0x3fb8aa3b)    // log2(e)
CONST(zNegLn2Hi<>, $0xbf317200) // -0.693145751953125
CONST(zNegLn2Lo<>, $0xb5bfbe8e) // -1.42860682e-6
CONST(zC2<>, $0x3f000000)       // 1/2
CONST(zC3<>, $0x3e2aaaab)       // 1/6
CONST(zC4<>, $0x3d2aaaab)       // 1/24
CONST(zC5<>, $0x3c088889)       // 1/120
CONST(zC6<>, $0x3ab60b61)       // 1/720
CONST(zExpLo<>, $0xc2aeac4f)    // -87.33654
CONST(zOne<>, $0x3f800000)      // 1
CONST(zExpClamp<>, $0x42b20000) // 89
CONST(zNegInf<>, $0xff800000)   // -Inf
CONST(zPosMax<>, $0x7f7fffff)   // math.MaxFloat32
CONST(zNegMax<>, $0xff7fffff)   // -math.MaxFloat32
CONST(zNegHalf<>, $0xbf000000)  // -0.5
CONST(zAbsMask<>, $0x7fffffff)  // clears the sign bit
CONST(zSignBit<>, $0x80000000)  // the sign bit
CONST(zErfP<>, $0x3e6d3388)     // 0.3275911/√2
CONST(zErfB1<>, $0x3e027906)    // 0.254829592/2
CONST(zErfB2<>, $0xbe11a98e)    // -0.284496736/2
CONST(zErfB3<>, $0x3f35f0e3)    // 1.421413741/2
CONST(zErfB4<>, $0xbf3a00e3)    // -1.453152027/2
CONST(zErfB5<>, $0x3f07dc22)    // 1.061405429/2
CONST(zInvSqrt2Pi<>, $0x3ecc422a) // 1/√(2π)

// LOADEXP16 loads the constants of EXPCLAMP16, EXPCORE16 and EXPSCALE16:
// Z31 1.5·2^23, Z30 log2(e), Z29 -ln2Hi, Z28 -ln2Lo, Z27-Z23 the
// coefficients 1/720 ... 1/2, Z22 1, Z21 expLo, Z19 89.
#define LOADEXP16 \
	VBROADCASTSS zMagic<>(SB), Z31 \
	VBROADCASTSS zLog2e<>(SB), Z30 \
	VBROADCASTSS zNegLn2Hi<>(SB), Z29 \
	VBROADCASTSS zNegLn2Lo<>(SB), Z28 \
	VBROADCASTSS zC6<>(SB), Z27 \
	VBROADCASTSS zC5<>(SB), Z26 \
	VBROADCASTSS zC4<>(SB), Z25 \
	VBROADCASTSS zC3<>(SB), Z24 \
	VBROADCASTSS zC2<>(SB), Z23 \
	VBROADCASTSS zOne<>(SB), Z22 \
	VBROADCASTSS zExpLo<>(SB), Z21 \
	VBROADCASTSS zExpClamp<>(SB), Z19

// LOADERF16 loads the further constants of HALFERFC16: Z18 -0.5, Z17 the
// abs mask, Z16 p/√2, Z15-Z11 the coefficients b1 ... b5, Z10 1/√(2π), Z9
// -MaxFloat32, Z8 MaxFloat32.
#define LOADERF16 \
	VBROADCASTSS zNegHalf<>(SB), Z18 \
	VBROADCASTSS zAbsMask<>(SB), Z17 \
	VBROADCASTSS zErfP<>(SB), Z16 \
	VBROADCASTSS zErfB1<>(SB), Z15 \
	VBROADCASTSS zErfB2<>(SB), Z14 \
	VBROADCASTSS zErfB3<>(SB), Z13 \
	VBROADCASTSS zErfB4<>(SB), Z12 \
	VBROADCASTSS zErfB5<>(SB), Z11 \
	VBROADCASTSS zInvSqrt2Pi<>(SB), Z10 \
	VBROADCASTSS zNegMax<>(SB), Z9 \
	VBROADCASTSS zPosMax<>(SB), Z8

// EXPCORE16 is EXPCORE of kernel_amd64.s on 16 lanes up to its last step:
// it leaves in P the polynomial p(r) and in T the integer n (as a float),
// e^X = p(r)·2^n, for EXPSCALE16 to finish; R is a temporary and X is
// preserved. The arithmetic is EXPCORE's, operation for operation.
#define EXPCORE16(X, P, T, R) \
	VMOVAPS     Z31, T \
	VFMADD231PS Z30, X, T \
	VSUBPS      Z31, T, T \
	VMOVAPS     X, R \
	VFMADD231PS Z29, T, R \
	VFMADD231PS Z28, T, R \
	VMOVAPS     Z27, P \
	VFMADD213PS Z26, R, P \
	VFMADD213PS Z25, R, P \
	VFMADD213PS Z24, R, P \
	VFMADD213PS Z23, R, P \
	VFMADD213PS Z22, R, P \
	VFMADD213PS Z22, R, P

// EXPSCALE16 finishes EXPCORE16(X, P, T, _): P = p(r)·2^n (VSCALEFPS),
// and 0 where X < expLo. EXPCORE adds n to the exponent field of p(r)
// instead, which is the same number wherever the result is normal: for X in
// [expLo, expHi]. Above expHi VSCALEFPS overflows to +Inf, as e^X should,
// once X has been clamped (EXPCLAMP16; the exponent field would wrap);
// below expLo its result would be subnormal where e^X is, and the kernels
// give 0 there (the mask). NaN stays NaN. It uses K2.
#define EXPSCALE16(X, P, T) \
	VCMPPS      $5, Z21, X, K2 \
	VSCALEFPS.Z T, P, K2, P

// EXPCLAMP16 sets X = min(X, 89), NaN kept (VMINPS returns its second
// source when either is NaN): far above 89 the polynomial's argument loses
// its precision, and e^89 already overflows to +Inf in EXPSCALE16. It comes
// before EXPCORE16 wherever X can exceed 89.
#define EXPCLAMP16(X) \
	VMINPS X, Z19, X

// EXPZ0 sets Z1 = e^Z0 on 16 lanes, special cases included (Z0 clamped,
// Z2 and Z3 used).
#define EXPZ0 \
	EXPCLAMP16(Z0) \
	EXPCORE16(Z0, Z1, Z2, Z3) \
	EXPSCALE16(Z0, Z1, Z2)

// HALFERFC16 is HALFERFC of kernel_amd64.s on 16 lanes: H = erfc(|X|/√2)/2
// and E = e^(-X²/2) (0 where -X²/2 < expLo); A, T and R are temporaries and
// K2 is used.
#define HALFERFC16(X, E, H, A, T, R) \
	VMULPS      Z18, X, A \
	VMULPS      X, A, A \
	EXPCORE16(A, E, T, R) \
	EXPSCALE16(A, E, T) \
	VPANDD      Z17, X, A \
	VFMADD132PS Z16, Z22, A \
	VDIVPS      A, Z22, T \
	VMOVAPS     Z11, H \
	VFMADD213PS Z12, T, H \
	VFMADD213PS Z13, T, H \
	VFMADD213PS Z14, T, H \
	VFMADD213PS Z15, T, H \
	VMULPS      T, H, H \
	VMULPS      E, H, H

// CDF16 sets P = Φ(X) from H = HALFERFC16(X): H where the sign bit of X is
// set, 1 - H elsewhere. It uses K4.
#define CDF16(X, H, P) \
	VSUBPS        H, Z22, P \
	VPTESTMD.BCST zSignBit<>(SB), X, K4 \
	VMOVAPS       H, K4, P

// TAILMASK sets K1 to the low R bits (R a register, 0 <= R < 16, clobbered
// along with CX).
#define TAILMASK(R) \
	MOVQ  R, CX \
	MOVL  $1, R \
	SHLL  CX, R \
	DECL  R \
	KMOVW R, K1

// func expAVX512(dst, x *float32, n int)
//
// Sets dst[i] = e^x[i] for i < n, n a positive multiple of 8: 16 lanes per
// iteration, then 8 lanes under the mask K1 if n mod 16 = 8.
TEXT ·expAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), DX
	LOADEXP16
	MOVQ DX, CX
	SHRQ $4, CX
	JZ   exptail

exploop:
	VMOVUPS (SI), Z0
	EXPZ0
	VMOVUPS Z1, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     exploop

exptail:
	TESTQ     $8, DX
	JZ        expdone
	MOVL      $0xff, AX
	KMOVW     AX, K1
	VMOVUPS.Z (SI), K1, Z0
	EXPZ0
	VMOVUPS   Z1, K1, (DI)

expdone:
	VZEROUPPER
	RET

// ESSSUM adds the 16 results in Z1 to the float64 sum Y9 in the order of
// expSubSumAVX2: the two halves of 8 (elements i and i+8), then lanes 0-3 +
// 4-7, converted to float64.
#define ESSSUM \
	VEXTRACTF64X4 $1, Z1, Y3 \
	VADDPS        Y3, Y1, Y1 \
	VEXTRACTF128  $1, Y1, X3 \
	VADDPS        X3, X1, X3 \
	VCVTPS2PD     X3, Y3 \
	VADDPD        Y3, Y9, Y9

// EXPSUB16 sets the 16 floats at SI to e^(x - Z8), leaving them in Z1 too.
#define EXPSUB16 \
	VMOVUPS (SI), Z0 \
	VSUBPS  Z8, Z0, Z0 \
	EXPZ0 \
	VMOVUPS Z1, (SI)

// EXPSUB8 is EXPSUB16 on the 8 floats at SI, under the mask K1 (set here,
// with AX); the results are lanes 0-7 of Z1.
#define EXPSUB8 \
	MOVL      $0xff, AX \
	KMOVW     AX, K1 \
	VMOVUPS.Z (SI), K1, Z0 \
	VSUBPS    Z8, Z0, Z0 \
	EXPZ0 \
	VMOVUPS   Z1, K1, (SI)

// func expSubAVX512(x *float32, n int, shift float32)
//
// Sets x[i] = e^(x[i]-shift) for i < n, n a positive multiple of 8, as
// expSubSumAVX512 does, without the sum (the last 8 under the mask K1).
TEXT ·expSubAVX512(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), DX
	LOADEXP16
	VBROADCASTSS shift+16(FP), Z8
	MOVQ         DX, CX
	SHRQ         $4, CX
	JZ           estail

esloop:
	EXPSUB16
	ADDQ $64, SI
	DECQ CX
	JNZ  esloop

estail:
	TESTQ $8, DX
	JZ    esdone
	EXPSUB8

esdone:
	VZEROUPPER
	RET

// func expAddSubAVX512(x, b *float32, nb, n int, shift float32)
//
// Sets x[i] = e^(x[i]+b[i]-shift) for i < nb and x[i] = e^(x[i]-shift) for
// nb <= i < n, n a positive multiple of 8 and nb <= n: expSubAVX512 after
// x[:nb] += b (the sum rounded to float32 first, as a separate addition
// would store it). Vectors of 16 with all their bias first; then the rest
// under masks, K3 for x (16 lanes, or 8 at the end) and K4 for b (the
// lanes below nb; a masked-off lane of b is not read).
TEXT ·expAddSubAVX512(SB), NOSPLIT, $0-36
	MOVQ         x+0(FP), SI
	MOVQ         b+8(FP), DI
	MOVQ         nb+16(FP), BX
	MOVQ         n+24(FP), DX
	LOADEXP16
	VBROADCASTSS shift+32(FP), Z8
	MOVQ         BX, CX
	SHRQ         $4, CX
	JZ           eastail

easloop:
	VMOVUPS (SI), Z0
	VADDPS  (DI), Z0, Z0
	VSUBPS  Z8, Z0, Z0
	EXPZ0
	VMOVUPS Z1, (SI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     easloop

eastail:
	MOVQ BX, AX
	ANDQ $-16, AX
	SUBQ AX, DX // x elements left
	ANDQ $15, BX // bias lanes left
	MOVL $1, R10

easrest:
	TESTQ   DX, DX
	JLE     easdone
	MOVL    $0xffff, R8
	MOVL    $0xff, R9
	CMPQ    DX, $16
	CMOVQLT R9, R8
	KMOVW   R8, K3
	SHLXQ   BX, R10, R9
	DECQ    R9
	KMOVW   R9, K4
	VMOVUPS.Z (SI), K3, Z0
	VADDPS  (DI), Z0, K4, Z0
	VSUBPS  Z8, Z0, Z0
	EXPZ0
	VMOVUPS Z1, K3, (SI)
	XORL    BX, BX
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, DX
	JMP     easrest

easdone:
	VZEROUPPER
	RET

// func expSubSumAVX512(x *float32, n int, shift float32) float64
//
// Sets x[i] = e^(x[i]-shift) for i < n, n a positive multiple of 8, and
// returns their sum, formed exactly as expSubSumAVX2 forms it (Y9 the
// float64 partial sums, Z8 the shift).
TEXT ·expSubSumAVX512(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), DX
	LOADEXP16
	VBROADCASTSS shift+16(FP), Z8
	VXORPD       Y9, Y9, Y9
	MOVQ         DX, CX
	SHRQ         $4, CX
	JZ           esstail

essloop:
	EXPSUB16
	ESSSUM
	ADDQ    $64, SI
	DECQ    CX
	JNZ     essloop

esstail:
	TESTQ        $8, DX
	JZ           essdone
	EXPSUB8
	VEXTRACTF128 $1, Y1, X3
	VADDPS       X3, X1, X3
	VCVTPS2PD    X3, Y3
	VADDPD       Y3, Y9, Y9

essdone:
	VEXTRACTF128 $1, Y9, X6
	VADDPD       X6, X9, X9
	VUNPCKHPD    X9, X9, X6
	VADDSD       X6, X9, X9
	VZEROUPPER
	MOVSD        X9, ret+24(FP)
	RET

// HMAX16 sets the low lane of X2 to the maximum of the 16 lanes of Z2, using
// Z3.
#define HMAX16 \
	VEXTRACTF64X4 $1, Z2, Y3 \
	VMAXPS        Y3, Y2, Y2 \
	VEXTRACTF128  $1, Y2, X3 \
	VMAXPS        X3, X2, X2 \
	VPERMILPS     $0x4e, X2, X3 \
	VMAXPS        X3, X2, X2 \
	VPERMILPS     $0xb1, X2, X3 \
	VMAXPS        X3, X2, X2

// func addMaxAVX512(x, b *float32, n int) float32
//
// Sets x[i] += b[i] for i < n, n > 0, and returns the maximum of the updated
// x[:n]: running maxima in Z2 and Z3, the last n mod 16 elements under the
// mask K1 (masked-off lanes read as -Inf + 0).
TEXT ·addMaxAVX512(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), DI
	MOVQ         b+8(FP), SI
	MOVQ         n+16(FP), DX
	VBROADCASTSS zNegInf<>(SB), Z2
	VMOVAPS      Z2, Z3
	MOVQ         DX, CX
	SHRQ         $5, CX
	JZ           am16

amloop:
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VADDPS  (SI), Z0, Z0
	VADDPS  64(SI), Z1, Z1
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMAXPS  Z0, Z2, Z2
	VMAXPS  Z1, Z3, Z3
	ADDQ    $128, SI
	ADDQ    $128, DI
	DECQ    CX
	JNZ     amloop

am16:
	TESTQ   $16, DX
	JZ      amtail
	VMOVUPS (DI), Z0
	VADDPS  (SI), Z0, Z0
	VMOVUPS Z0, (DI)
	VMAXPS  Z0, Z2, Z2
	ADDQ    $64, SI
	ADDQ    $64, DI

amtail:
	ANDQ      $15, DX
	JZ        amdone
	TAILMASK(DX)
	VBROADCASTSS zNegInf<>(SB), Z0
	VMOVUPS   (DI), K1, Z0
	VMOVUPS.Z (SI), K1, Z1
	VADDPS    Z1, Z0, Z0
	VMOVUPS   Z0, K1, (DI)
	VMAXPS    Z0, Z2, Z2

amdone:
	VMAXPS Z3, Z2, Z2
	HMAX16
	VZEROUPPER
	MOVSS  X2, ret+24(FP)
	RET

// ELEMENTWISE16 sets dst[i] = a[i] OP b[i] for i < n, n = DX > 0, with
// dst, a and b at DI, SI and R8: 32 elements a step, then 16, then the last
// n mod 16 under the mask K1 (masked-off lanes are neither read nor
// written); then it returns. Its labels are local to the function that
// expands it.
#define ELEMENTWISE16(OP) \
	MOVQ DX, CX \
	SHRQ $5, CX \
	JZ   ew16 \
ewloop: \
	VMOVUPS (SI), Z0 \
	VMOVUPS 64(SI), Z1 \
	OP      (R8), Z0, Z0 \
	OP      64(R8), Z1, Z1 \
	VMOVUPS Z0, (DI) \
	VMOVUPS Z1, 64(DI) \
	ADDQ    $128, SI \
	ADDQ    $128, R8 \
	ADDQ    $128, DI \
	DECQ    CX \
	JNZ     ewloop \
ew16: \
	TESTQ   $16, DX \
	JZ      ewtail \
	VMOVUPS (SI), Z0 \
	OP      (R8), Z0, Z0 \
	VMOVUPS Z0, (DI) \
	ADDQ    $64, SI \
	ADDQ    $64, R8 \
	ADDQ    $64, DI \
ewtail: \
	ANDQ      $15, DX \
	JZ        ewdone \
	TAILMASK(DX) \
	VMOVUPS.Z (SI), K1, Z0 \
	VMOVUPS.Z (R8), K1, Z1 \
	OP        Z1, Z0, Z0 \
	VMOVUPS   Z0, K1, (DI) \
ewdone: \
	VZEROUPPER \
	RET

// func addAVX512(dst, a, b *float32, n int)
//
// Sets dst[i] = a[i] + b[i] for i < n, n > 0 (ELEMENTWISE16).
TEXT ·addAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), R8
	MOVQ n+24(FP), DX
	ELEMENTWISE16(VADDPS)

// func maxAVX512(x *float32, n int) float32
//
// Returns the maximum of x[:n], n > 0: running maxima in Z2 and Z3, the last
// n mod 16 elements under the mask K1 (masked-off lanes read as -Inf).
TEXT ·maxAVX512(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), DX
	VBROADCASTSS zNegInf<>(SB), Z2
	VMOVAPS      Z2, Z3
	MOVQ         DX, CX
	SHRQ         $5, CX
	JZ           mx16

mxloop:
	VMAXPS (SI), Z2, Z2
	VMAXPS 64(SI), Z3, Z3
	ADDQ   $128, SI
	DECQ   CX
	JNZ    mxloop

mx16:
	TESTQ  $16, DX
	JZ     mxtail
	VMAXPS (SI), Z2, Z2
	ADDQ   $64, SI

mxtail:
	ANDQ    $15, DX
	JZ      mxdone
	TAILMASK(DX)
	VBROADCASTSS zNegInf<>(SB), Z0
	VMOVUPS (SI), K1, Z0
	VMAXPS  Z0, Z2, Z2

mxdone:
	VMAXPS Z3, Z2, Z2
	HMAX16
	VZEROUPPER
	MOVSS  X2, ret+16(FP)
	RET

// func scaleAVX512(x *float32, n int, s float32)
//
// Sets x[i] *= s for i < n, n > 0; the last n mod 16 elements under the mask
// K1.
TEXT ·scaleAVX512(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), DX
	VBROADCASTSS s+16(FP), Z2
	MOVQ         DX, CX
	SHRQ         $5, CX
	JZ           sc16

scloop:
	VMULPS  (DI), Z2, Z0
	VMULPS  64(DI), Z2, Z1
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ    $128, DI
	DECQ    CX
	JNZ     scloop

sc16:
	TESTQ   $16, DX
	JZ      sctail
	VMULPS  (DI), Z2, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI

sctail:
	ANDQ      $15, DX
	JZ        scdone
	TAILMASK(DX)
	VMOVUPS.Z (DI), K1, Z0
	VMULPS    Z0, Z2, Z0
	VMOVUPS   Z0, K1, (DI)

scdone:
	VZEROUPPER
	RET

// GELU16 sets Z5 = GELU(Z0) as geluAVX2 does; Z0 is clamped first.
#define GELU16 \
	VMAXPS Z0, Z9, Z0 \
	HALFERFC16(Z0, Z3, Z4, Z1, Z2, Z5) \
	CDF16(Z0, Z4, Z5) \
	VMULPS Z0, Z5, Z5

// func geluAVX512(dst, x *float32, n int)
//
// Sets dst[i] = GELU(x[i]) for i < n, n a positive multiple of 8, with the
// operations of geluAVX2.
TEXT ·geluAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), DX
	LOADEXP16
	LOADERF16
	MOVQ DX, CX
	SHRQ $4, CX
	JZ   gelutail

geluloop:
	VMOVUPS (SI), Z0
	GELU16
	VMOVUPS Z5, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     geluloop

gelutail:
	TESTQ     $8, DX
	JZ        geludone
	MOVL      $0xff, AX
	KMOVW     AX, K1
	VMOVUPS.Z (SI), K1, Z0
	GELU16
	VMOVUPS   Z5, K1, (DI)

geludone:
	VZEROUPPER
	RET

// GELUPHI16 sets XC to the x in Z0 (clamped below to -MaxFloat32 already)
// clamped above to MaxFloat32, and Z5 = Φ(XC), Z3 = e^(-XC²/2) and Z4 =
// erfc(|XC|/√2)/2, using Z1 and Z2: GELUPHI of kernel_amd64.s on 16 lanes.
#define GELUPHI16(XC) \
	VMINPS Z0, Z8, XC \
	HALFERFC16(XC, Z3, Z4, Z1, Z2, Z5) \
	CDF16(XC, Z4, Z5)

// GELUDERIV16 turns Z5 = Φ(XC) into GELU'(XC) from Z3 of GELUPHI16, as
// GELUDERIV does.
#define GELUDERIV16(XC) \
	VMULPS      Z3, XC, Z3 \
	VFMADD231PS Z10, Z3, Z5

// GELUGRAD16 sets Z5 = Z6·GELU'(Z0) as geluGradAVX2 does; Z0 is clamped
// first.
#define GELUGRAD16 \
	VMAXPS Z0, Z9, Z0 \
	GELUPHI16(Z0) \
	GELUDERIV16(Z0) \
	VMULPS Z6, Z5, Z5

// func geluGradAVX512(dst, x, dy *float32, n int)
//
// Sets dst[i] = dy[i]·GELU'(x[i]) for i < n, n a positive multiple of 8,
// with the operations of geluGradAVX2.
TEXT ·geluGradAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ dy+16(FP), R8
	MOVQ n+24(FP), DX
	LOADEXP16
	LOADERF16
	MOVQ DX, CX
	SHRQ $4, CX
	JZ   ggtail

ggloop:
	VMOVUPS (SI), Z0
	VMOVUPS (R8), Z6
	GELUGRAD16
	VMOVUPS Z5, (DI)
	ADDQ    $64, SI
	ADDQ    $64, R8
	ADDQ    $64, DI
	DECQ    CX
	JNZ     ggloop

ggtail:
	TESTQ     $8, DX
	JZ        ggdone
	MOVL      $0xff, AX
	KMOVW     AX, K1
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z (R8), K1, Z6
	GELUGRAD16
	VMOVUPS   Z5, K1, (DI)

ggdone:
	VZEROUPPER
	RET

// GELUBOTH16 sets Z6 = GELU(Z0) as GELU16 does and Z5 = GELU'(Z0) as
// GELUGRAD16 does before its product with dy. Both take Φ of x clamped to
// ±MaxFloat32 (Z7): GELU16 clamps only below, which differs at +Inf alone,
// where Φ is exactly 1 either way (e^(-x²/2) is 0 and 1/(1 + p|x|) finite).
#define GELUBOTH16 \
	VMAXPS Z0, Z9, Z0 \
	GELUPHI16(Z7) \
	VMULPS Z0, Z5, Z6 \
	GELUDERIV16(Z7)

// func geluBothAVX512(h, d, x *float32, n int)
//
// Sets h[i] = GELU(x[i]) with the bits of geluAVX512 and d[i] = GELU'(x[i])
// with those of geluGradAVX512 before its product with dy, for i < n, n a
// positive multiple of 8. d may be x.
TEXT ·geluBothAVX512(SB), NOSPLIT, $0-32
	MOVQ h+0(FP), DI
	MOVQ d+8(FP), R8
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), DX
	LOADEXP16
	LOADERF16
	MOVQ DX, CX
	SHRQ $4, CX
	JZ   gbtail

gbloop:
	VMOVUPS (SI), Z0
	GELUBOTH16
	VMOVUPS Z6, (DI)
	VMOVUPS Z5, (R8)
	ADDQ    $64, SI
	ADDQ    $64, DI
	ADDQ    $64, R8
	DECQ    CX
	JNZ     gbloop

gbtail:
	TESTQ     $8, DX
	JZ        gbdone
	MOVL      $0xff, AX
	KMOVW     AX, K1
	VMOVUPS.Z (SI), K1, Z0
	GELUBOTH16
	VMOVUPS   Z6, K1, (DI)
	VMOVUPS   Z5, K1, (R8)

gbdone:
	VZEROUPPER
	RET

// func mulAVX512(dst, a, b *float32, n int)
//
// Sets dst[i] = a[i]·b[i] for i < n, n > 0 (ELEMENTWISE16).
TEXT ·mulAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), R8
	MOVQ n+24(FP), DX
	ELEMENTWISE16(VMULPS)

// SUM16 adds the 16 float32 at SI, as float64, to the partial sums Z0
// (lanes 0-7) and Z1 (lanes 8-15), with Z2 and Z3 as scratch, and advances
// SI past them.
#define SUM16 SUM16P(SI, Z0, Z1, Z2, Z3)

// SUM16P is SUM16 on the 16 float32 at P into A0 and A1, with T0 and T1 as
// scratch.
#define SUM16P(P, A0, A1, T0, T1) \
	VCVTPS2PD (P), T0 \
	VCVTPS2PD 32(P), T1 \
	VADDPD    T0, A0, A0 \
	VADDPD    T1, A1, A1 \
	ADDQ      $64, P

// SQDEV16 adds d*d, d = float64(x) - mean (mean in M), for the 16 float32
// x at SI to the partial sums A0 (lanes 0-7) and A1 (lanes 8-15), with T0
// and T1 as scratch, and advances SI past them.
#define SQDEV16(M, T0, T1, A0, A1) SQDEV16P(SI, M, T0, T1, A0, A1)

// SQDEV16P is SQDEV16 on the 16 float32 at P.
#define SQDEV16P(P, M, T0, T1, A0, A1) \
	VCVTPS2PD (P), T0 \
	VCVTPS2PD 32(P), T1 \
	VSUBPD    M, T0, T0 \
	VSUBPD    M, T1, T1 \
	VMULPD    T0, T0, T0 \
	VMULPD    T1, T1, T1 \
	VADDPD    T0, A0, A0 \
	VADDPD    T1, A1, A1 \
	ADDQ      $64, P

// func sumLanesAVX512(x *float32, n int, acc *[16]float64)
//
// Adds float64(x[i]) to acc[i mod 16] for i < n, n a positive multiple of
// 16; the partial sums live in Z0 (lanes 0-7) and Z1 (8-15).
TEXT ·sumLanesAVX512(SB), NOSPLIT, $0-24
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	MOVQ    acc+16(FP), DI
	VMOVUPD (DI), Z0
	VMOVUPD 64(DI), Z1
	SHRQ    $4, CX

slzloop:
	SUM16
	DECQ CX
	JNZ  slzloop

	VMOVUPD Z0, (DI)
	VMOVUPD Z1, 64(DI)
	VZEROUPPER
	RET

// func sqDevLanesAVX512(x *float32, n int, mean float64, acc *[16]float64)
//
// Adds d*d, d = float64(x[i]) - mean, to acc[i mod 16] for i < n, n a
// positive multiple of 16; partial sums in Z0-Z1, mean in Z8.
TEXT ·sqDevLanesAVX512(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSD mean+16(FP), Z8
	MOVQ         acc+24(FP), DI
	VMOVUPD      (DI), Z0
	VMOVUPD      64(DI), Z1
	SHRQ         $4, CX

sdzloop:
	SQDEV16(Z8, Z2, Z3, Z0, Z1)
	DECQ CX
	JNZ  sdzloop

	VMOVUPD Z0, (DI)
	VMOVUPD Z1, 64(DI)
	VZEROUPPER
	RET

// NORM16 sets the 16 elements at byte offset BX of out (register OUT) to
// (x-mean)*rstd*gamma + beta, x at X, gamma at R8 and beta at R9, mean in
// Z6 and rstd in Z7, each operation rounded; it advances BX past them.
#define NORM16(X, OUT) \
	NORM16M(X, OUT, Z6, Z7, Z0) \
	ADDQ    $64, BX

// NORM16M is NORM16 with the mean and rstd (float32, broadcast) in M and R
// and T as scratch, without advancing BX.
#define NORM16M(X, OUT, M, R, T) \
	VMOVUPS (X)(BX*1), T \
	VSUBPS  M, T, T \
	VMULPS  R, T, T \
	VMULPS  (R8)(BX*1), T, T \
	VADDPS  (R9)(BX*1), T, T \
	VMOVUPS T, (OUT)(BX*1)

// func normalizeAVX512(out, x, gamma, beta *float32, n int, mean, rstd float32)
//
// Sets out[i] = (x[i]-mean)*rstd*gamma[i] + beta[i] for i < n, n > 0, each
// operation rounded; the last n mod 16 elements under the mask K1. BX is
// the byte offset of the current 16 elements.
TEXT ·normalizeAVX512(SB), NOSPLIT, $0-48
	MOVQ         out+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         gamma+16(FP), R8
	MOVQ         beta+24(FP), R9
	MOVQ         n+32(FP), DX
	VBROADCASTSS mean+40(FP), Z6
	VBROADCASTSS rstd+44(FP), Z7
	XORQ         BX, BX
	MOVQ         DX, CX
	SHRQ         $4, CX
	JZ           nmztail

nmzloop:
	NORM16(SI, DI)
	DECQ CX
	JNZ  nmzloop

nmztail:
	ANDQ      $15, DX
	JZ        nmzdone
	TAILMASK(DX)
	VMOVUPS.Z (SI)(BX*1), K1, Z0
	VMOVUPS.Z (R8)(BX*1), K1, Z1
	VMOVUPS.Z (R9)(BX*1), K1, Z2
	VSUBPS    Z6, Z0, Z0
	VMULPS    Z7, Z0, Z0
	VMULPS    Z1, Z0, Z0
	VADDPS    Z2, Z0, Z0
	VMOVUPS   Z0, K1, (DI)(BX*1)

nmzdone:
	VZEROUPPER
	RET

// LNGS8 is LNGS4 of kernel_amd64.s on 8 lanes: for the 8 elements at byte
// offset off of the float32 arrays (2*off of the float64 ones), with Z12
// mean and Z13 rstd, it updates dGamma and dBeta and adds to the partial
// sums SG and SGX. Its three parts: LNGXH8 sets Z4 = xh; LNGGG8 updates
// dGamma and dBeta and sets Z5 = dy*gamma; LNGSUM8 adds to the sums.
#define LNGXH8(off) \
	VCVTPS2PD off(SI), Z4 \
	VSUBPD    Z12, Z4, Z4 \
	VMULPD    Z13, Z4, Z4

#define LNGGG8(off) \
	VCVTPS2PD off(DX), Z5 \
	VMULPD    Z4, Z5, Z6 \
	VADDPD    2*off(R8), Z6, Z6 \
	VMOVUPD   Z6, 2*off(R8) \
	VADDPD    2*off(R9), Z5, Z7 \
	VMOVUPD   Z7, 2*off(R9) \
	VCVTPS2PD off(R10), Z6 \
	VMULPD    Z6, Z5, Z5

#define LNGSUM8(SG, SGX) \
	VADDPD Z5, SG, SG \
	VMULPD Z4, Z5, Z5 \
	VADDPD Z5, SGX, SGX

#define LNGS8(off, SG, SGX) \
	LNGXH8(off) \
	LNGGG8(off) \
	LNGSUM8(SG, SGX)

// LNGS16 is LNGS8 on 16 elements, the partial sums in Z0-Z1 (sg) and Z2-Z3
// (sgx), followed by advancing the pointers SI (x), DX (dy), R10 (gamma),
// R8 (dGamma) and R9 (dBeta) past them.
#define LNGS16 \
	LNGS8(0, Z0, Z2) \
	LNGS8(32, Z1, Z3) \
	ADDQ $64, SI \
	ADDQ $64, DX \
	ADDQ $64, R10 \
	ADDQ $128, R8 \
	ADDQ $128, R9

// func lnGradSumsAVX512(x, dy, gamma *float32, n int, mean, rstd float64, dGamma, dBeta *float64, acc *[32]float64)
//
// lnGradSumsAVX2 with the partial sums in Z0-Z1 (sg) and Z2-Z3 (sgx); n is
// a positive multiple of 16.
TEXT ·lnGradSumsAVX512(SB), NOSPLIT, $0-72
	MOVQ         x+0(FP), SI
	MOVQ         dy+8(FP), DX
	MOVQ         gamma+16(FP), R10
	MOVQ         n+24(FP), CX
	VBROADCASTSD mean+32(FP), Z12
	VBROADCASTSD rstd+40(FP), Z13
	MOVQ         dGamma+48(FP), R8
	MOVQ         dBeta+56(FP), R9
	MOVQ         acc+64(FP), DI
	VMOVUPD      (DI), Z0
	VMOVUPD      64(DI), Z1
	VMOVUPD      128(DI), Z2
	VMOVUPD      192(DI), Z3
	SHRQ         $4, CX

lgszloop:
	LNGS16
	DECQ CX
	JNZ  lgszloop

	VMOVUPD Z0, (DI)
	VMOVUPD Z1, 64(DI)
	VMOVUPD Z2, 128(DI)
	VMOVUPD Z3, 192(DI)
	VZEROUPPER
	RET

// LNGX8 is LNGX4 of kernel_amd64.s on 8 lanes: Y0-Y2 hold x, dy and gamma
// (float32), Z12-Z15 mean, rstd, mg and mgx; the 8 results are left in Y1.
#define LNGX8 \
	VCVTPS2PD Y0, Z0 \
	VSUBPD    Z12, Z0, Z0 \
	VMULPD    Z13, Z0, Z0 \
	VCVTPS2PD Y1, Z1 \
	VCVTPS2PD Y2, Z2 \
	VMULPD    Z2, Z1, Z1 \
	VSUBPD    Z14, Z1, Z1 \
	VMULPD    Z15, Z0, Z0 \
	VSUBPD    Z0, Z1, Z1 \
	VMULPD    Z1, Z13, Z1 \
	VCVTPD2PS Z1, Y1

// LNGX8STEP is LNGX8 on the 8 elements at byte offset I (a register) of x
// (SI), dy (R9) and gamma (R8), storing the results at the same offset of
// dx (DI) and advancing I past them.
#define LNGX8STEP(I) \
	VMOVUPS (SI)(I*1), Y0 \
	VMOVUPS (R9)(I*1), Y1 \
	VMOVUPS (R8)(I*1), Y2 \
	LNGX8 \
	VMOVUPS Y1, (DI)(I*1) \
	ADDQ    $32, I

// func lnGradXAVX512(dx, x, dy, gamma *float32, n int, mean, rstd, mg, mgx float64)
//
// lnGradXAVX2 for any n > 0, 8 elements at a time (float64 lanes); the last
// n mod 8 elements are loaded and stored under the mask K1.
TEXT ·lnGradXAVX512(SB), NOSPLIT, $0-72
	MOVQ         dx+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         dy+16(FP), R9
	MOVQ         gamma+24(FP), R8
	MOVQ         n+32(FP), DX
	VBROADCASTSD mean+40(FP), Z12
	VBROADCASTSD rstd+48(FP), Z13
	VBROADCASTSD mg+56(FP), Z14
	VBROADCASTSD mgx+64(FP), Z15
	XORQ         BX, BX
	MOVQ         DX, CX
	SHRQ         $3, CX
	JZ           lgxztail

lgxzloop:
	LNGX8STEP(BX)
	DECQ CX
	JNZ  lgxzloop

lgxztail:
	ANDQ      $7, DX
	JZ        lgxzdone
	TAILMASK(DX)
	VMOVUPS.Z (SI)(BX*1), K1, Z0
	VMOVUPS.Z (R9)(BX*1), K1, Z1
	VMOVUPS.Z (R8)(BX*1), K1, Z2
	LNGX8
	VMOVUPS   Z1, K1, (DI)(BX*1)

lgxzdone:
	VZEROUPPER
	RET

// ADAMW16 is the AdamW step of adamWAVX2 on 16 lanes: Z0 g, Z1 m, Z2 v and
// Z3 w in, the updated m, v and w in Z1, Z2 and Z3 (Z4, Z5 temporaries).
#define ADAMW16 \
	VMULPS  Z1, Z8, Z1 \
	VMULPS  Z0, Z9, Z4 \
	VADDPS  Z4, Z1, Z1 \
	VMULPS  Z2, Z10, Z2 \
	VMULPS  Z0, Z11, Z4 \
	VMULPS  Z0, Z4, Z4 \
	VADDPS  Z4, Z2, Z2 \
	VSQRTPS Z2, Z5 \
	VMULPS  Z15, Z5, Z5 \
	VADDPS  Z12, Z5, Z5 \
	VMULPS  Z14, Z1, Z4 \
	VDIVPS  Z5, Z4, Z4 \
	VMULPS  Z3, Z13, Z3 \
	VSUBPS  Z4, Z3, Z3

// func adamWAVX512(w, grad, m, v *float32, n int, k *adamWK)
//
// One AdamW step for i < n, n > 0, with the operations of adamWGo, each
// rounded; constants in Z8-Z15 as Y8-Y15 of adamWAVX2, the last n mod 16
// elements under the mask K1.
TEXT ·adamWAVX512(SB), NOSPLIT, $0-48
	MOVQ         w+0(FP), DI
	MOVQ         grad+8(FP), SI
	MOVQ         m+16(FP), R8
	MOVQ         v+24(FP), R9
	MOVQ         n+32(FP), DX
	MOVQ         k+40(FP), AX
	VBROADCASTSS 0(AX), Z8
	VBROADCASTSS 4(AX), Z9
	VBROADCASTSS 8(AX), Z10
	VBROADCASTSS 12(AX), Z11
	VBROADCASTSS 16(AX), Z12
	VBROADCASTSS 20(AX), Z13
	VBROADCASTSS 24(AX), Z14
	VBROADCASTSS 28(AX), Z15
	XORQ         BX, BX
	MOVQ         DX, CX
	SHRQ         $4, CX
	JZ           awztail

awzloop:
	VMOVUPS (SI)(BX*1), Z0
	VMOVUPS (R8)(BX*1), Z1
	VMOVUPS (R9)(BX*1), Z2
	VMOVUPS (DI)(BX*1), Z3
	ADAMW16
	VMOVUPS Z1, (R8)(BX*1)
	VMOVUPS Z2, (R9)(BX*1)
	VMOVUPS Z3, (DI)(BX*1)
	ADDQ    $64, BX
	DECQ    CX
	JNZ     awzloop

awztail:
	ANDQ      $15, DX
	JZ        awzdone
	TAILMASK(DX)
	VMOVUPS.Z (SI)(BX*1), K1, Z0
	VMOVUPS.Z (R8)(BX*1), K1, Z1
	VMOVUPS.Z (R9)(BX*1), K1, Z2
	VMOVUPS.Z (DI)(BX*1), K1, Z3
	ADAMW16
	VMOVUPS   Z1, K1, (R8)(BX*1)
	VMOVUPS   Z2, K1, (R9)(BX*1)
	VMOVUPS   Z3, K1, (DI)(BX*1)

awzdone:
	VZEROUPPER
	RET

// func softmaxGradAVX512(p, dp *float32, n int, d float32)
//
// Sets p[i] = p[i]·(dp[i] - d) for i < n, n > 0, the last n mod 16 elements
// under the mask K1, with MXCSR's flush-to-zero and denormals-are-zero bits
// set (the frame's two words hold the caller's MXCSR and the flushing one;
// see SoftmaxGrad).
TEXT ·softmaxGradAVX512(SB), NOSPLIT, $8-28
	FLUSHDENORMALS
	MOVQ         p+0(FP), DI
	MOVQ         dp+8(FP), SI
	MOVQ         n+16(FP), DX
	VBROADCASTSS d+24(FP), Z2
	MOVQ         DX, CX
	SHRQ         $4, CX
	JZ           sgtail

sgloop:
	VMOVUPS (SI), Z0
	VSUBPS  Z2, Z0, Z0
	VMULPS  (DI), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	ADDQ    $64, SI
	DECQ    CX
	JNZ     sgloop

sgtail:
	ANDQ      $15, DX
	JZ        sgdone
	TAILMASK(DX)
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z (DI), K1, Z1
	VSUBPS    Z2, Z0, Z0
	VMULPS    Z1, Z0, Z0
	VMOVUPS   Z0, K1, (DI)

sgdone:
	RESTOREMXCSR
	VZEROUPPER
	RET

// LANESUM reduces the partial sums in ZA (lanes 0-7) and ZB (lanes 8-15)
// to XA as reduceLanes does: s = lanes 0-7 + lanes 8-15, t = s[0:4] +
// s[4:8], then (t0+t2) + (t1+t3). YB and XB are clobbered.
#define LANESUM(ZA, ZB, YA, YB, XA, XB) \
	VADDPD        ZB, ZA, ZA \
	VEXTRACTF64X4 $1, ZA, YB \
	VADDPD        YB, YA, YA \
	VEXTRACTF128  $1, YA, XB \
	VADDPD        XB, XA, XA \
	VPERMILPD     $1, XA, XB \
	VADDSD        XB, XA, XA

// LNGK8 is LNGS8 that also keeps the 8 elements' xh and dy*gamma (float64)
// at 4*off(DI) and 4*off+64(DI) for the second pass; LNGK16 is LNGS16 on
// it, advancing DI by 256 as well.
#define LNGK8(off, SG, SGX) \
	LNGXH8(off) \
	VMOVUPD Z4, 4*off(DI) \
	LNGGG8(off) \
	VMOVUPD Z5, 4*off+64(DI) \
	LNGSUM8(SG, SGX)

#define LNGK16 \
	LNGK8(0, Z0, Z2) \
	LNGK8(32, Z1, Z3) \
	ADDQ $64, SI \
	ADDQ $64, DX \
	ADDQ $64, R10 \
	ADDQ $128, R8 \
	ADDQ $128, R9 \
	ADDQ $256, DI

// func lnGradRowsAVX512(dx, x, dy, gamma *float32, rows, d int, stats, dGamma, dBeta *float64)
//
// The LayerNorm backward of rows rows of d elements (d a positive multiple
// of 16, at most lnGradRowsMaxD; see LayerNormGradRows): for each row, the
// first pass of lnGradSumsAVX512 with zeroed partial sums, the sums reduced
// as reduceLanes does, divided by d, and the second pass of lnGradXAVX512,
// without leaving the assembly between rows. Row r's mean and rstd are
// stats[2r] and stats[2r+1]. The first pass keeps each element's xh and
// dy*gamma, the float64 values the second pass would compute again, in the
// frame (16 bytes an element): the second pass then loads two values and
// does four operations where it converted three inputs and did eight (the
// row's first pass is 14 operations and three conversions). And row r's
// second pass runs after row r+1's first pass (two halves of the frame,
// by the parity of the rows left): the second pass waits for its row's
// sums to be reduced and divided, the next row's first pass does not.
// Measured on an Intel Xeon (family 6, model 207),
// BenchmarkLayerNormGradRows, rows of 128 and 256 in cache: the kept
// values 1.18x and 1.35x faster, the order of the passes another 1.17x and
// 1.08x. The results are the same bits. Register use: AX and BX the rows of x and dy
// of the first pass, R14 the row of dx of the second, R11 the row length
// in bytes (float32), R12 the rows left for the first pass, R13 their
// statistics, X8 float64(d), DI the kept values (first pass), SI (second
// pass); Z14, Z15 and Z16 the means and rstd of the row waiting for its
// second pass.
TEXT ·lnGradRowsAVX512(SB), $16384-72
	MOVQ       dx+0(FP), R14
	MOVQ       x+8(FP), AX
	MOVQ       dy+16(FP), BX
	MOVQ       rows+32(FP), R12
	MOVQ       d+40(FP), R11
	VCVTSI2SDQ R11, X8, X8
	SHLQ       $2, R11
	MOVQ       stats+48(FP), R13
	TESTQ      R12, R12
	JZ         lgrdone

lgrrow:
	TESTQ R12, R12
	JZ    lgrsecond // every first pass done: the last row's second pass

	// Prefetch the rows of x and dy four rows ahead, a line at a time
	// (the row is a whole number of lines long). x was written by the
	// forward pass and comes from beyond L2; its rows cross a 4 KiB page
	// every 8 rows of 128, where the hardware's prefetch stops. Measured
	// on an Intel Xeon (family 6, model 207), the tiny model's training
	// steps with and without, alternating in one process: the
	// LayerNormGrad ops 1.04x and 1.07x faster (medians of 60 sets of 2
	// steps, two runs; 8 rows ahead: 1.05x and 1.07x).
	LEAQ (AX)(R11*4), SI
	LEAQ (BX)(R11*4), DX
	MOVQ R11, CX
	SHRQ $6, CX

lgrpf:
	PREFETCHT0 (SI)
	PREFETCHT0 (DX)
	ADDQ       $64, SI
	ADDQ       $64, DX
	DECQ       CX
	JNZ        lgrpf

	// First pass: dGamma, dBeta, the partial sums sg (Z0, Z1) and sgx
	// (Z2, Z3), and xh and dy*gamma kept in the frame's half R12 mod 2.
	MOVQ         AX, SI
	MOVQ         BX, DX
	MOVQ         R12, DI
	ANDQ         $1, DI
	SHLQ         $13, DI
	ADDQ         SP, DI
	MOVQ         gamma+24(FP), R10
	MOVQ         dGamma+56(FP), R8
	MOVQ         dBeta+64(FP), R9
	VBROADCASTSD (R13), Z12
	VBROADCASTSD 8(R13), Z13
	VPXORQ       Z0, Z0, Z0
	VPXORQ       Z1, Z1, Z1
	VPXORQ       Z2, Z2, Z2
	VPXORQ       Z3, Z3, Z3
	MOVQ         R11, CX
	SHRQ         $6, CX

lgrsums:
	LNGK16
	DECQ CX
	JNZ  lgrsums

lgrsecond:
	CMPQ R12, rows+32(FP)
	JEQ  lgrreduce // the first row: no second pass waits

	// The previous row's second pass: dx = rstd*((dy*gamma - mg) -
	// xh*mgx), 8 elements at a time, the operations of LNGX8 on the
	// values kept in the frame's other half.
	LEAQ 1(R12), SI
	ANDQ $1, SI
	SHLQ $13, SI
	ADDQ SP, SI
	XORQ DX, DX
	MOVQ R11, CX
	SHRQ $5, CX

lgrx:
	VMOVUPD   64(SI), Z10
	VSUBPD    Z14, Z10, Z10
	VMULPD    (SI), Z15, Z11
	VSUBPD    Z11, Z10, Z10
	VMULPD    Z10, Z16, Z10
	VCVTPD2PS Z10, Y10
	VMOVUPS   Y10, (R14)(DX*1)
	ADDQ      $32, DX
	ADDQ      $128, SI
	DECQ      CX
	JNZ       lgrx

	ADDQ  R11, R14
	TESTQ R12, R12
	JZ    lgrdone

lgrreduce:
	// reduceLanes on both: s = lanes 0-7 + lanes 8-15, t = s[0:4] +
	// s[4:8], then (t0+t2) + (t1+t3); then the means, sg/d and sgx/d,
	// and rstd, kept for the row's second pass.
	LANESUM(Z0, Z1, Y0, Y1, X0, X1)
	LANESUM(Z2, Z3, Y2, Y3, X2, X3)
	VDIVSD       X8, X0, X0
	VDIVSD       X8, X2, X2
	VBROADCASTSD X0, Z14
	VBROADCASTSD X2, Z15
	VMOVAPD      Z13, Z16
	ADDQ         R11, AX
	ADDQ         R11, BX
	ADDQ         $16, R13
	DECQ         R12
	JMP          lgrrow

lgrdone:
	VZEROUPPER
	RET

// func lnRowsAVX512(out, x, gamma, beta *float32, rows, d int, eps float64, stats *float64)
//
// LayerNorm's forward on rows rows of d elements (d a positive multiple of
// 16; see LayerNormRows): for each row the two passes of sumLanesAVX512
// and sqDevLanesAVX512 from zero, each reduced as reduceLanes does, mean =
// sum/d and rstd = 1/sqrt(sqDev/d + eps) in float64 (stored to stats[2r],
// stats[2r+1] unless stats is nil), then normalizeAVX512 with both
// rounded to float32. Rows go two at a time, a last odd one alone: one row
// at a time, each row's chain of reductions, divisions and square root held
// the next row back. Measured on an Intel Xeon (family 6, model 207), in
// one process, the two ways alternating (5,000 pairs of 20 calls on 4,096
// elements): rows of 128 1.14x, of 256 1.12-1.19x faster. Register use: AX
// and R14 the rows of x and out, R11 the row length in bytes, R12 rows
// left, R13 the statistics, X8 float64(d), X9 eps, X10 1.0.
TEXT ·lnRowsAVX512(SB), NOSPLIT, $0-64
	MOVQ       out+0(FP), R14
	MOVQ       x+8(FP), AX
	MOVQ       rows+32(FP), R12
	MOVQ       d+40(FP), R11
	VCVTSI2SDQ R11, X8, X8
	SHLQ       $2, R11
	VMOVSD     eps+48(FP), X9
	MOVQ       $0x3ff0000000000000, DX
	VMOVQ      DX, X10
	MOVQ       stats+56(FP), R13
	TESTQ      R12, R12
	JZ         lnrdone

lnrrow:
	CMPQ R12, $2
	JLT  lnrone

	// Two rows at a time, the second at DI (x) and R10 (out) with its
	// partial sums, statistics and broadcasts in Z11-Z18: each row's
	// operations are those of one row alone, in the same order, but the
	// two rows' chains of reductions, divisions and square roots overlap
	// (one row at a time, each waited for its own).
	LEAQ   (AX)(R11*1), DI
	MOVQ   AX, SI
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z11, Z11, Z11
	VPXORQ Z12, Z12, Z12
	MOVQ   R11, CX
	SHRQ   $6, CX

lnr2sum:
	SUM16P(SI, Z0, Z1, Z2, Z3)
	SUM16P(DI, Z11, Z12, Z13, Z14)
	DECQ CX
	JNZ  lnr2sum

	LANESUM(Z0, Z1, Y0, Y1, X0, X1)
	LANESUM(Z11, Z12, Y11, Y12, X11, X12)
	VDIVSD       X8, X0, X0
	VDIVSD       X8, X11, X11
	VBROADCASTSD X0, Z4
	VBROADCASTSD X11, Z15

	LEAQ   (AX)(R11*1), DI
	MOVQ   AX, SI
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z12, Z12, Z12
	VPXORQ Z13, Z13, Z13
	MOVQ   R11, CX
	SHRQ   $6, CX

lnr2dev:
	SQDEV16P(SI, Z4, Z5, Z6, Z1, Z2)
	SQDEV16P(DI, Z15, Z16, Z17, Z12, Z13)
	DECQ CX
	JNZ  lnr2dev

	LANESUM(Z1, Z2, Y1, Y2, X1, X2)
	LANESUM(Z12, Z13, Y12, Y13, X12, X13)
	VDIVSD  X8, X1, X1
	VDIVSD  X8, X12, X12
	VADDSD  X9, X1, X1
	VADDSD  X9, X12, X12
	VSQRTSD X1, X1, X1
	VSQRTSD X12, X12, X12
	VDIVSD  X1, X10, X3
	VDIVSD  X12, X10, X14
	TESTQ   R13, R13
	JZ      lnr2norm
	VMOVSD  X0, (R13)
	VMOVSD  X3, 8(R13)
	VMOVSD  X11, 16(R13)
	VMOVSD  X14, 24(R13)
	ADDQ    $32, R13

lnr2norm:
	VCVTSD2SS    X0, X0, X0
	VCVTSD2SS    X3, X3, X3
	VCVTSD2SS    X11, X11, X11
	VCVTSD2SS    X14, X14, X14
	VBROADCASTSS X0, Z6
	VBROADCASTSS X3, Z7
	VBROADCASTSS X11, Z17
	VBROADCASTSS X14, Z18
	MOVQ         gamma+16(FP), R8
	MOVQ         beta+24(FP), R9
	LEAQ         (AX)(R11*1), DI
	LEAQ         (R14)(R11*1), R10
	XORQ         BX, BX
	MOVQ         R11, CX
	SHRQ         $6, CX

lnr2normloop:
	NORM16M(AX, R14, Z6, Z7, Z0)
	NORM16M(DI, R10, Z17, Z18, Z16)
	ADDQ $64, BX
	DECQ CX
	JNZ  lnr2normloop

	LEAQ (AX)(R11*2), AX
	LEAQ (R14)(R11*2), R14
	SUBQ $2, R12
	JNZ  lnrrow
	JMP  lnrdone

lnrone:
	// The mean.
	MOVQ   AX, SI
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	MOVQ   R11, CX
	SHRQ   $6, CX

lnrsum:
	SUM16
	DECQ CX
	JNZ  lnrsum

	LANESUM(Z0, Z1, Y0, Y1, X0, X1)
	VDIVSD       X8, X0, X0
	VBROADCASTSD X0, Z4

	// The squared deviations, and rstd in X3.
	MOVQ   AX, SI
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	MOVQ   R11, CX
	SHRQ   $6, CX

lnrdev:
	SQDEV16(Z4, Z5, Z6, Z1, Z2)
	DECQ CX
	JNZ  lnrdev

	LANESUM(Z1, Z2, Y1, Y2, X1, X2)
	VDIVSD  X8, X1, X1
	VADDSD  X9, X1, X1
	VSQRTSD X1, X1, X1
	VDIVSD  X1, X10, X3
	TESTQ   R13, R13
	JZ      lnrnorm
	VMOVSD  X0, (R13)
	VMOVSD  X3, 8(R13)
	ADDQ    $16, R13

lnrnorm:
	// out = (x - mean)*rstd*gamma + beta in float32.
	VCVTSD2SS    X0, X0, X0
	VCVTSD2SS    X3, X3, X3
	VBROADCASTSS X0, Z6
	VBROADCASTSS X3, Z7
	MOVQ         gamma+16(FP), R8
	MOVQ         beta+24(FP), R9
	XORQ         BX, BX
	MOVQ         R11, CX
	SHRQ         $6, CX

lnrnormloop:
	NORM16(AX, R14)
	DECQ CX
	JNZ  lnrnormloop

	ADDQ R11, AX
	ADDQ R11, R14
	DECQ R12
	JNZ  lnrrow

lnrdone:
	VZEROUPPER
	RET
