//go:build amd64 && !purego

#include "textflag.h"
#include "mxcsr_amd64.h"

// SPLAT defines a read-only 32-byte vector with the 32-bit value bits in
// all 8 lanes, for use as a memory operand or register load.
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

// Exponential: see the constants in portable.go.
SPLAT(expMagic<>, $0x4b400000)    // 1.5·2^23
SPLAT(expLog2e<>, $0x3fb8aa3b)    // log2(e)
SPLAT(expNegLn2Hi<>, $0xbf317200) // -0.693145751953125
SPLAT(expNegLn2Lo<>, $0xb5bfbe8e) // -1.42860682e-6
SPLAT(expC2<>, $0x3f000000)       // 1/2
SPLAT(expC3<>, $0x3e2aaaab)       // 1/6
SPLAT(expC4<>, $0x3d2aaaab)       // 1/24
SPLAT(expC5<>, $0x3c088889)       // 1/120
SPLAT(expC6<>, $0x3ab60b61)       // 1/720
SPLAT(expLo<>, $0xc2aeac4f)       // -87.33654
SPLAT(expHi<>, $0x42b17217)       // 88.72283
SPLAT(one<>, $0x3f800000)         // 1
SPLAT(posInf<>, $0x7f800000)      // +Inf
SPLAT(negInf<>, $0xff800000)      // -Inf
SPLAT(posMax<>, $0x7f7fffff)      // math.MaxFloat32
SPLAT(negMax<>, $0xff7fffff)      // -math.MaxFloat32
SPLAT(negHalf<>, $0xbf000000)     // -0.5
SPLAT(absMask<>, $0x7fffffff)     // clears the sign bit

// GELU: see the constants in portable.go.
SPLAT(erfP<>, $0x3e6d3388)       // 0.3275911/√2
SPLAT(erfB1<>, $0x3e027906)      // 0.254829592/2
SPLAT(erfB2<>, $0xbe11a98e)      // -0.284496736/2
SPLAT(erfB3<>, $0x3f35f0e3)      // 1.421413741/2
SPLAT(erfB4<>, $0xbf3a00e3)      // -1.453152027/2
SPLAT(erfB5<>, $0x3f07dc22)      // 1.061405429/2
SPLAT(invSqrt2Pi<>, $0x3ecc422a) // 1/√(2π)

// LOADEXPCONSTS loads the register constants used by EXPCORE: Y8-Y11 hold the
// polynomial coefficients 1/120, 1/24, 1/6, 1/2, Y12 holds 1, Y13 -ln2Hi,
// Y14 log2(e) and Y15 the rounding constant 1.5·2^23.
#define LOADEXPCONSTS \
	VMOVUPS expC5<>(SB), Y8 \
	VMOVUPS expC4<>(SB), Y9 \
	VMOVUPS expC3<>(SB), Y10 \
	VMOVUPS expC2<>(SB), Y11 \
	VMOVUPS one<>(SB), Y12 \
	VMOVUPS expNegLn2Hi<>(SB), Y13 \
	VMOVUPS expLog2e<>(SB), Y14 \
	VMOVUPS expMagic<>(SB), Y15

// EXPCORE sets P = e^X for X in [expLo, expHi] (anything elsewhere), with
// temporaries T and R; X is preserved. T = X·log2(e) + 1.5·2^23 rounds
// X·log2(e) to an integer k and holds it in the low mantissa bits of T (the
// bits of T are those of 1.5·2^23 plus k); R = X - k·ln2 with ln2 in two
// parts; P = the degree-6 Taylor polynomial of e^R; and k is added to the
// exponent field of P: T<<23 = k<<23, since the bits of 1.5·2^23 all shift
// out.
#define EXPCORE(X, P, T, R) EXPCOREC(X, P, T, R, Y8, Y9)

// EXPCOREC is EXPCORE with the coefficients 1/120 and 1/24 taken from the
// operands C5 and C4 (registers or memory) instead of Y8 and Y9.
#define EXPCOREC(X, P, T, R, C5, C4) \
	VMOVAPS     Y15, T \
	VFMADD231PS Y14, X, T \
	VSUBPS      Y15, T, P \
	VMOVAPS     X, R \
	VFMADD231PS Y13, P, R \
	VFMADD231PS expNegLn2Lo<>(SB), P, R \
	VMOVUPS     expC6<>(SB), P \
	VFMADD213PS C5, R, P \
	VFMADD213PS C4, R, P \
	VFMADD213PS Y10, R, P \
	VFMADD213PS Y11, R, P \
	VFMADD213PS Y12, R, P \
	VFMADD213PS Y12, R, P \
	VPSLLD      $23, T, T \
	VPADDD      T, P, P

// EXPSPECIAL fixes P = EXPCORE(X) outside [expLo, expHi]: 0 where X < expLo
// (including -Inf), X + Inf where !(X <= expHi), which is +Inf above expHi
// and NaN for NaN. T and R are temporaries.
#define EXPSPECIAL(X, P, T, R) \
	VCMPPS    $1, expLo<>(SB), X, R \
	VANDNPS   P, R, P \
	VCMPPS    $6, expHi<>(SB), X, R \
	VADDPS    posInf<>(SB), X, T \
	VBLENDVPS R, T, P, P

// HALFERFC sets H = erfc(|X|/√2)/2 and E = e^(-X²/2) (0 where -X²/2 < expLo)
// by Abramowitz and Stegun 7.1.26; A, T and R are temporaries. It needs the
// EXPCORE register constants. H is NaN where X is NaN.
#define HALFERFC(X, E, H, A, T, R) \
	VMULPS      negHalf<>(SB), X, A \
	VMULPS      X, A, A \
	EXPCORE(A, E, T, R) \
	VCMPPS      $1, expLo<>(SB), A, R \
	VANDNPS     E, R, E \
	VANDPS      absMask<>(SB), X, A \
	VFMADD132PS erfP<>(SB), Y12, A \
	VDIVPS      A, Y12, T \
	VMOVUPS     erfB5<>(SB), H \
	VFMADD213PS erfB4<>(SB), T, H \
	VFMADD213PS erfB3<>(SB), T, H \
	VFMADD213PS erfB2<>(SB), T, H \
	VFMADD213PS erfB1<>(SB), T, H \
	VMULPS      T, H, H \
	VMULPS      E, H, H

// HMAXPS sets the low lane of X to the maximum of the 4 lanes of X, using T.
#define HMAXPS(X, T) \
	VPERMILPS $0x4e, X, T \
	VMAXPS    T, X, X \
	VPERMILPS $0xb1, X, T \
	VMAXPS    T, X, X

// func expAVX2(dst, x *float32, n int)
//
// Sets dst[i] = e^x[i] for i < n, n a positive multiple of 8. (Unrolling by
// two measured no faster.)
TEXT ·expAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	LOADEXPCONSTS
	SHRQ $3, CX

exploop:
	VMOVUPS (SI), Y0
	EXPCORE(Y0, Y1, Y2, Y3)
	EXPSPECIAL(Y0, Y1, Y2, Y3)
	VMOVUPS Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     exploop

	VZEROUPPER
	RET

// func expSubSumAVX2(x *float32, n int, shift float32) float64
//
// Sets x[i] = e^(x[i]-shift) for i < n, n a positive multiple of 8, and
// returns the sum of the results. Two vectors per iteration, with c5 and c4
// from memory to free registers for shift (Y8) and the float64 accumulator
// (Y9). The 16 results are added in float32 in pairs, vector 1 + vector 2
// and then lanes 0-3 + lanes 4-7 (two roundings of at most 2^-24 relative
// each for positive terms), and the 4 sums are accumulated in float64; this
// was measurably faster than converting all 16 results to float64.
TEXT ·expSubSumAVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	LOADEXPCONSTS
	VBROADCASTSS shift+16(FP), Y8
	VXORPD       Y9, Y9, Y9
	SHRQ         $3, CX
	MOVQ         CX, DX
	SHRQ         $1, DX
	JZ           esstail

essloop:
	VMOVUPS      (SI), Y0
	VMOVUPS      32(SI), Y4
	VSUBPS       Y8, Y0, Y0
	VSUBPS       Y8, Y4, Y4
	EXPCOREC(Y0, Y1, Y2, Y3, expC5<>(SB), expC4<>(SB))
	EXPCOREC(Y4, Y5, Y6, Y7, expC5<>(SB), expC4<>(SB))
	EXPSPECIAL(Y0, Y1, Y2, Y3)
	EXPSPECIAL(Y4, Y5, Y6, Y7)
	VMOVUPS      Y1, (SI)
	VMOVUPS      Y5, 32(SI)
	VADDPS       Y5, Y1, Y1
	VEXTRACTF128 $1, Y1, X3
	VADDPS       X3, X1, X3
	VCVTPS2PD    X3, Y3
	VADDPD       Y3, Y9, Y9
	ADDQ         $64, SI
	DECQ         DX
	JNZ          essloop

esstail:
	ANDQ         $1, CX
	JZ           essdone
	VMOVUPS      (SI), Y0
	VSUBPS       Y8, Y0, Y0
	EXPCOREC(Y0, Y1, Y2, Y3, expC5<>(SB), expC4<>(SB))
	EXPSPECIAL(Y0, Y1, Y2, Y3)
	VMOVUPS      Y1, (SI)
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

// func addMaxAVX2(x, b *float32, n int) float32
//
// Sets x[i] += b[i] for i < n, n a positive multiple of 8, and returns the
// maximum of the updated x[:n].
TEXT ·addMaxAVX2(SB), NOSPLIT, $0-28
	MOVQ    x+0(FP), DI
	MOVQ    b+8(FP), SI
	MOVQ    n+16(FP), CX
	VMOVUPS negInf<>(SB), Y2
	VMOVAPS Y2, Y3
	SHRQ    $3, CX
	MOVQ    CX, DX
	SHRQ    $1, DX
	JZ      amtail

amloop:
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VADDPS  (SI), Y0, Y0
	VADDPS  32(SI), Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMAXPS  Y0, Y2, Y2
	VMAXPS  Y1, Y3, Y3
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    DX
	JNZ     amloop

amtail:
	ANDQ    $1, CX
	JZ      amdone
	VMOVUPS (DI), Y0
	VADDPS  (SI), Y0, Y0
	VMOVUPS Y0, (DI)
	VMAXPS  Y0, Y2, Y2

amdone:
	VMAXPS       Y3, Y2, Y2
	VEXTRACTF128 $1, Y2, X3
	VMAXPS       X3, X2, X2
	HMAXPS(X2, X3)
	VZEROUPPER
	MOVSS        X2, ret+24(FP)
	RET

// ELEMENTWISE8 sets dst[i] = a[i] OP b[i] for i < n, n = CX = R8 a positive
// multiple of 8, with dst, a and b at DI, SI and DX: 16
// elements a step, then the last 8 if n mod 16 is 8; then it returns. Its
// labels are local to the function that expands it.
#define ELEMENTWISE8(OP) \
	SHRQ $4, CX \
	JZ   ewtail \
ewloop: \
	VMOVUPS (SI), Y0 \
	VMOVUPS 32(SI), Y1 \
	OP      (DX), Y0, Y0 \
	OP      32(DX), Y1, Y1 \
	VMOVUPS Y0, (DI) \
	VMOVUPS Y1, 32(DI) \
	ADDQ    $64, SI \
	ADDQ    $64, DX \
	ADDQ    $64, DI \
	DECQ    CX \
	JNZ     ewloop \
ewtail: \
	TESTQ   $8, R8 \
	JZ      ewdone \
	VMOVUPS (SI), Y0 \
	OP      (DX), Y0, Y0 \
	VMOVUPS Y0, (DI) \
ewdone: \
	VZEROUPPER \
	RET

// func addAVX2(dst, a, b *float32, n int)
//
// Sets dst[i] = a[i] + b[i] for i < n, n a positive multiple of 8
// (ELEMENTWISE8).
TEXT ·addAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ CX, R8
	ELEMENTWISE8(VADDPS)

// func maxAVX2(x *float32, n int) float32
//
// Returns the maximum of x[:n], n a positive multiple of 8.
TEXT ·maxAVX2(SB), NOSPLIT, $0-20
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS negInf<>(SB), Y2
	VMOVAPS Y2, Y3
	SHRQ    $3, CX
	MOVQ    CX, DX
	SHRQ    $1, DX
	JZ      mxtail

mxloop:
	VMAXPS (SI), Y2, Y2
	VMAXPS 32(SI), Y3, Y3
	ADDQ   $64, SI
	DECQ   DX
	JNZ    mxloop

mxtail:
	ANDQ   $1, CX
	JZ     mxdone
	VMAXPS (SI), Y2, Y2

mxdone:
	VMAXPS       Y3, Y2, Y2
	VEXTRACTF128 $1, Y2, X3
	VMAXPS       X3, X2, X2
	HMAXPS(X2, X3)
	VZEROUPPER
	MOVSS        X2, ret+16(FP)
	RET

// func scaleAVX2(x *float32, n int, s float32)
//
// Sets x[i] *= s for i < n, n a positive multiple of 8.
TEXT ·scaleAVX2(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS s+16(FP), Y2
	SHRQ         $3, CX
	MOVQ         CX, DX
	SHRQ         $1, DX
	JZ           sctail

scloop:
	VMULPS  (DI), Y2, Y0
	VMULPS  32(DI), Y2, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, DI
	DECQ    DX
	JNZ     scloop

sctail:
	ANDQ    $1, CX
	JZ      scdone
	VMULPS  (DI), Y2, Y0
	VMOVUPS Y0, (DI)

scdone:
	VZEROUPPER
	RET

// func geluAVX2(dst, x *float32, n int)
//
// Sets dst[i] = x[i]·Φ(x[i]) for i < n, n a positive multiple of 8, with
// Φ(x) = h for x < 0 and 1 - h for x >= 0 (selected by the sign bit), where
// h = erfc(|x|/√2)/2. x is first clamped to >= -MaxFloat32 (NaN kept) so
// that GELU(-Inf) = -MaxFloat32·0 = -0 rather than NaN.
TEXT ·geluAVX2(SB), NOSPLIT, $0-24
	MOVQ    dst+0(FP), DI
	MOVQ    x+8(FP), SI
	MOVQ    n+16(FP), CX
	LOADEXPCONSTS
	VMOVUPS negMax<>(SB), Y7
	SHRQ    $3, CX

geluloop:
	VMOVUPS   (SI), Y0
	VMAXPS    Y0, Y7, Y0
	HALFERFC(Y0, Y3, Y4, Y1, Y2, Y5)
	VSUBPS    Y4, Y12, Y5
	VBLENDVPS Y0, Y4, Y5, Y5
	VMULPS    Y0, Y5, Y5
	VMOVUPS   Y5, (DI)
	ADDQ      $32, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       geluloop

	VZEROUPPER
	RET

// GELUPHI clamps the x in Y0 to ±MaxFloat32 in place (Y7 -MaxFloat32, Y6
// MaxFloat32: x·e^(-x²/2) is then 0 rather than NaN at ±Inf) and sets Y5 =
// Φ(x), Y3 = e^(-x²/2) and Y4 = erfc(|x|/√2)/2, using Y1 and Y2 (HALFERFC).
#define GELUPHI \
	VMAXPS    Y0, Y7, Y0 \
	VMINPS    Y0, Y6, Y0 \
	HALFERFC(Y0, Y3, Y4, Y1, Y2, Y5) \
	VSUBPS    Y4, Y12, Y5 \
	VBLENDVPS Y0, Y4, Y5, Y5

// GELUDERIV turns Y5 = Φ(x) into GELU'(x) = Φ(x) + x·e^(-x²/2)/√(2π),
// from the clamped x in Y0 and Y3 = e^(-x²/2) of GELUPHI (Y3 clobbered).
#define GELUDERIV \
	VMULPS      Y3, Y0, Y3 \
	VFMADD231PS invSqrt2Pi<>(SB), Y3, Y5

// func geluGradAVX2(dst, x, dy *float32, n int)
//
// Sets dst[i] = dy[i]·(Φ(x[i]) + x[i]·e^(-x[i]²/2)/√(2π)) for i < n, n a
// positive multiple of 8. x is first clamped to ±MaxFloat32 (NaN kept) so
// that the x·e^(-x²/2) term is 0 rather than NaN for x = ±Inf.
TEXT ·geluGradAVX2(SB), NOSPLIT, $0-32
	MOVQ    dst+0(FP), DI
	MOVQ    x+8(FP), SI
	MOVQ    dy+16(FP), DX
	MOVQ    n+24(FP), CX
	LOADEXPCONSTS
	VMOVUPS negMax<>(SB), Y7
	VMOVUPS posMax<>(SB), Y6
	SHRQ    $3, CX

ggloop:
	VMOVUPS (SI), Y0
	GELUPHI
	GELUDERIV
	VMULPS  (DX), Y5, Y5
	VMOVUPS Y5, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     ggloop

	VZEROUPPER
	RET

// func geluBothAVX2(h, d, x *float32, n int)
//
// Sets h[i] = GELU(x[i]) with the bits of geluAVX2 and d[i] = GELU'(x[i])
// with those of geluGradAVX2 before its product with dy, for i < n, n a
// positive multiple of 8; d may be x. Φ is taken of x clamped to
// ±MaxFloat32, as geluGradAVX2 does; geluAVX2 clamps only below, which
// differs at +Inf alone, where Φ is exactly 1 either way. GELU multiplies Φ
// by x clamped below only, read again.
TEXT ·geluBothAVX2(SB), NOSPLIT, $0-32
	MOVQ    h+0(FP), DI
	MOVQ    d+8(FP), DX
	MOVQ    x+16(FP), SI
	MOVQ    n+24(FP), CX
	LOADEXPCONSTS
	VMOVUPS negMax<>(SB), Y7
	VMOVUPS posMax<>(SB), Y6
	SHRQ    $3, CX

gbloop:
	VMOVUPS (SI), Y0
	GELUPHI
	VMAXPS  (SI), Y7, Y1
	VMULPS  Y1, Y5, Y4
	GELUDERIV
	VMOVUPS Y4, (DI)
	VMOVUPS Y5, (DX)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     gbloop

	VZEROUPPER
	RET

// func mulAVX2(dst, a, b *float32, n int)
//
// Sets dst[i] = a[i]·b[i] for i < n, n a positive multiple of 8
// (ELEMENTWISE8).
TEXT ·mulAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ CX, R8
	ELEMENTWISE8(VMULPS)

// func sumLanesAVX2(x *float32, n int, acc *[16]float64)
//
// Adds float64(x[i]) to acc[i mod 16] for i < n, n a positive multiple of
// 16. The 16 partial sums live in Y0-Y3 (lanes 0-3, 4-7, 8-11, 12-15).
TEXT ·sumLanesAVX2(SB), NOSPLIT, $0-24
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	MOVQ    acc+16(FP), DI
	VMOVUPD (DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	SHRQ    $4, CX

slloop:
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VCVTPS2PD 32(SI), Y6
	VCVTPS2PD 48(SI), Y7
	VADDPD    Y4, Y0, Y0
	VADDPD    Y5, Y1, Y1
	VADDPD    Y6, Y2, Y2
	VADDPD    Y7, Y3, Y3
	ADDQ      $64, SI
	DECQ      CX
	JNZ       slloop

	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VZEROUPPER
	RET

// func sqDevLanesAVX2(x *float32, n int, mean float64, acc *[16]float64)
//
// Adds d*d, d = float64(x[i]) - mean, to acc[i mod 16] for i < n, n a
// positive multiple of 16; partial sums in Y0-Y3, mean in Y8.
TEXT ·sqDevLanesAVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSD mean+16(FP), Y8
	MOVQ         acc+24(FP), DI
	VMOVUPD      (DI), Y0
	VMOVUPD      32(DI), Y1
	VMOVUPD      64(DI), Y2
	VMOVUPD      96(DI), Y3
	SHRQ         $4, CX

sdloop:
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VCVTPS2PD 32(SI), Y6
	VCVTPS2PD 48(SI), Y7
	VSUBPD    Y8, Y4, Y4
	VSUBPD    Y8, Y5, Y5
	VSUBPD    Y8, Y6, Y6
	VSUBPD    Y8, Y7, Y7
	VMULPD    Y4, Y4, Y4
	VMULPD    Y5, Y5, Y5
	VMULPD    Y6, Y6, Y6
	VMULPD    Y7, Y7, Y7
	VADDPD    Y4, Y0, Y0
	VADDPD    Y5, Y1, Y1
	VADDPD    Y6, Y2, Y2
	VADDPD    Y7, Y3, Y3
	ADDQ      $64, SI
	DECQ      CX
	JNZ       sdloop

	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VZEROUPPER
	RET

// func normalizeAVX2(out, x, gamma, beta *float32, n int, mean, rstd float32)
//
// Sets out[i] = (x[i]-mean)*rstd*gamma[i] + beta[i] for i < n, n a positive
// multiple of 8, each operation rounded (no fused multiply-add). BX is the
// byte offset of the current 8 elements.
TEXT ·normalizeAVX2(SB), NOSPLIT, $0-48
	MOVQ         out+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         gamma+16(FP), R8
	MOVQ         beta+24(FP), R9
	MOVQ         n+32(FP), CX
	VBROADCASTSS mean+40(FP), Y6
	VBROADCASTSS rstd+44(FP), Y7
	SHLQ         $2, CX
	XORQ         BX, BX

nmloop:
	VMOVUPS (SI)(BX*1), Y0
	VSUBPS  Y6, Y0, Y0
	VMULPS  Y7, Y0, Y0
	VMULPS  (R8)(BX*1), Y0, Y0
	VADDPS  (R9)(BX*1), Y0, Y0
	VMOVUPS Y0, (DI)(BX*1)
	ADDQ    $32, BX
	CMPQ    BX, CX
	JNE     nmloop

	VZEROUPPER
	RET

// func lnGradSumsAVX2(x, dy, gamma *float32, n int, mean, rstd float64, dGamma, dBeta *float64, acc *[32]float64)
//
// For i < n, n a positive multiple of 16, with xh = (float64(x[i]) - mean)
// * rstd and g = float64(dy[i]): dGamma[i] += g*xh, dBeta[i] += g, and
// g*gamma[i] and (g*gamma[i])*xh are added to acc[i mod 16] and
// acc[16 + i mod 16]. Partial sums: Y0-Y3 (sg) and Y8-Y11 (sgx); Y12 mean,
// Y13 rstd. LNGS4 handles 4 elements (one group of 4 lanes) at byte offset
// off of the float32 arrays (2*off of the float64 ones).
#define LNGS4(off, SG, SGX) \
	VCVTPS2PD off(SI), Y4 \
	VSUBPD    Y12, Y4, Y4 \
	VMULPD    Y13, Y4, Y4 \
	VCVTPS2PD off(DX), Y5 \
	VMULPD    Y4, Y5, Y6 \
	VADDPD    2*off(R8), Y6, Y6 \
	VMOVUPD   Y6, 2*off(R8) \
	VADDPD    2*off(R9), Y5, Y7 \
	VMOVUPD   Y7, 2*off(R9) \
	VCVTPS2PD off(R10), Y6 \
	VMULPD    Y6, Y5, Y5 \
	VADDPD    Y5, SG, SG \
	VMULPD    Y4, Y5, Y5 \
	VADDPD    Y5, SGX, SGX

TEXT ·lnGradSumsAVX2(SB), NOSPLIT, $0-72
	MOVQ         x+0(FP), SI
	MOVQ         dy+8(FP), DX
	MOVQ         gamma+16(FP), R10
	MOVQ         n+24(FP), CX
	VBROADCASTSD mean+32(FP), Y12
	VBROADCASTSD rstd+40(FP), Y13
	MOVQ         dGamma+48(FP), R8
	MOVQ         dBeta+56(FP), R9
	MOVQ         acc+64(FP), DI
	VMOVUPD      (DI), Y0
	VMOVUPD      32(DI), Y1
	VMOVUPD      64(DI), Y2
	VMOVUPD      96(DI), Y3
	VMOVUPD      128(DI), Y8
	VMOVUPD      160(DI), Y9
	VMOVUPD      192(DI), Y10
	VMOVUPD      224(DI), Y11
	SHRQ         $4, CX

lgsloop:
	LNGS4(0, Y0, Y8)
	LNGS4(16, Y1, Y9)
	LNGS4(32, Y2, Y10)
	LNGS4(48, Y3, Y11)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, R10
	ADDQ $128, R8
	ADDQ $128, R9
	DECQ CX
	JNZ  lgsloop

	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VMOVUPD Y8, 128(DI)
	VMOVUPD Y9, 160(DI)
	VMOVUPD Y10, 192(DI)
	VMOVUPD Y11, 224(DI)
	VZEROUPPER
	RET

// func lnGradXAVX2(dx, x, dy, gamma *float32, n int, mean, rstd, mg, mgx float64)
//
// Sets dx[i] = float32(rstd * ((g*gamma[i] - mg) - xh*mgx)) for i < n, n a
// positive multiple of 8, with xh and g as in lnGradSumsAVX2, 4 elements at
// a time in float64 (Y12 mean, Y13 rstd, Y14 mg, Y15 mgx).
#define LNGX4(off) \
	VCVTPS2PD  off(SI), Y0 \
	VSUBPD     Y12, Y0, Y0 \
	VMULPD     Y13, Y0, Y0 \
	VCVTPS2PD  off(DX), Y1 \
	VCVTPS2PD  off(R8), Y2 \
	VMULPD     Y2, Y1, Y1 \
	VSUBPD     Y14, Y1, Y1 \
	VMULPD     Y15, Y0, Y0 \
	VSUBPD     Y0, Y1, Y1 \
	VMULPD     Y1, Y13, Y1 \
	VCVTPD2PSY Y1, X1 \
	VMOVUPS    X1, off(DI)

TEXT ·lnGradXAVX2(SB), NOSPLIT, $0-72
	MOVQ         dx+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         dy+16(FP), DX
	MOVQ         gamma+24(FP), R8
	MOVQ         n+32(FP), CX
	VBROADCASTSD mean+40(FP), Y12
	VBROADCASTSD rstd+48(FP), Y13
	VBROADCASTSD mg+56(FP), Y14
	VBROADCASTSD mgx+64(FP), Y15
	SHRQ         $3, CX

lgxloop:
	LNGX4(0)
	LNGX4(16)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, R8
	ADDQ $32, DI
	DECQ CX
	JNZ  lgxloop

	VZEROUPPER
	RET

// func adamWAVX2(w, grad, m, v *float32, n int, k *adamWK)
//
// One AdamW step for i < n, n a positive multiple of 8, with the operations
// of adamWGo, each rounded. Constants: Y8 b1, Y9 1-b1, Y10 b2, Y11 1-b2, Y12
// eps, Y13 shrink, Y14 step size, Y15 1/sqrt(1-b2^t). BX is the byte offset
// of the current 8 elements.
TEXT ·adamWAVX2(SB), NOSPLIT, $0-48
	MOVQ         w+0(FP), DI
	MOVQ         grad+8(FP), SI
	MOVQ         m+16(FP), R8
	MOVQ         v+24(FP), R9
	MOVQ         n+32(FP), CX
	MOVQ         k+40(FP), AX
	VBROADCASTSS 0(AX), Y8
	VBROADCASTSS 4(AX), Y9
	VBROADCASTSS 8(AX), Y10
	VBROADCASTSS 12(AX), Y11
	VBROADCASTSS 16(AX), Y12
	VBROADCASTSS 20(AX), Y13
	VBROADCASTSS 24(AX), Y14
	VBROADCASTSS 28(AX), Y15
	SHLQ         $2, CX
	XORQ         BX, BX

awloop:
	VMOVUPS (SI)(BX*1), Y0 // g
	VMULPS  (R8)(BX*1), Y8, Y1
	VMULPS  Y0, Y9, Y4
	VADDPS  Y4, Y1, Y1     // m = b1*m + (1-b1)*g
	VMOVUPS Y1, (R8)(BX*1)
	VMULPS  (R9)(BX*1), Y10, Y2
	VMULPS  Y0, Y11, Y4
	VMULPS  Y0, Y4, Y4
	VADDPS  Y4, Y2, Y2     // v = b2*v + ((1-b2)*g)*g
	VMOVUPS Y2, (R9)(BX*1)
	VSQRTPS Y2, Y2
	VMULPS  Y15, Y2, Y2
	VADDPS  Y12, Y2, Y2    // denominator
	VMULPS  Y14, Y1, Y1
	VDIVPS  Y2, Y1, Y1     // step*m / denominator
	VMULPS  (DI)(BX*1), Y13, Y3
	VSUBPS  Y1, Y3, Y3     // w*shrink - step*m/denominator
	VMOVUPS Y3, (DI)(BX*1)
	ADDQ    $32, BX
	CMPQ    BX, CX
	JNE     awloop

	VZEROUPPER
	RET

// func softmaxGradAVX2(p, dp *float32, n int, d float32)
//
// Sets p[i] = p[i]·(dp[i] - d) for i < n, n a positive multiple of 8, under
// MXCSR's flush-to-zero and denormals-are-zero bits (see
// softmaxGradAVX512).
TEXT ·softmaxGradAVX2(SB), NOSPLIT, $8-28
	FLUSHDENORMALS
	MOVQ         p+0(FP), DI
	MOVQ         dp+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS d+24(FP), Y2
	SHRQ         $3, CX

sgloop:
	VMOVUPS (SI), Y0
	VSUBPS  Y2, Y0, Y0
	VMULPS  (DI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	DECQ    CX
	JNZ     sgloop

	RESTOREMXCSR
	VZEROUPPER
	RET

// D4REDUCE leaves (s0+s1)+(s2+s3) of the four partial sums in S in its
// lane 0 (T scratch): the end of Dot4.
#define D4REDUCE(S, T) \
	VSHUFPS  $0xb1, S, S, T \
	VADDPS   T, S, S \
	VMOVHLPS S, S, T \
	VADDSS   T, S, S

// func dot4AVX(a, b *float32, n int) float32
//
// Returns the sum of a[i]·b[i] for i < n (n > 0) in the order of Dot4: four
// partial sums in the lanes of X0 (lane j the products of the elements
// i = j mod 4 of the first n&^3), the rest added to lane 0, then
// (s0+s1)+(s2+s3); each product and sum rounded on its own.
TEXT ·dot4AVX(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS X0, X0, X0
	MOVQ   CX, DX
	SHRQ   $2, DX
	JZ     d4tail

d4loop:
	VMOVUPS (SI), X1
	VMULPS  (DI), X1, X1
	VADDPS  X1, X0, X0
	ADDQ    $16, SI
	ADDQ    $16, DI
	DECQ    DX
	JNZ     d4loop

d4tail:
	ANDQ $3, CX
	JZ   d4sum

d4one:
	VMOVSS (SI), X1
	VMULSS (DI), X1, X1
	VADDSS X1, X0, X0
	ADDQ   $4, SI
	ADDQ   $4, DI
	DECQ   CX
	JNZ    d4one

d4sum:
	D4REDUCE(X0, X1)
	VMOVSS X0, ret+24(FP)
	RET

// D4STEP adds the products of the 4 elements at byte offset BX of the rows
// at A and B to the four partial sums in S (T scratch): one step of Dot4.
#define D4STEP(A, B, S, T) \
	VMOVUPS (A)(BX*1), T \
	VMULPS  (B)(BX*1), T, T \
	VADDPS  T, S, S

// D4SUM stores D4REDUCE of the partial sums in S (T scratch) at off(DX).
#define D4SUM(S, T, off) \
	D4REDUCE(S, T) \
	VMOVSS S, off(DX)

// func dot4RowsAVX(d, a *float32, lda int, b *float32, ldb, rows, n int)
//
// Sets d[r] = dot4AVX(a + r*lda, b + r*ldb, n) for r < rows, rows a
// positive multiple of 4 and n a positive multiple of 4 (strides in
// elements): four rows at a time, each row's four partial sums in its own
// register (X0-X3), so that the rows' chains of additions overlap; each
// row's sums are formed as dot4AVX forms them. Register use: SI, R8, R10,
// R11 the four rows of a, DI, R12, R13, R14 those of b, BX the byte offset
// in the rows, CX the steps left, AX the groups of rows left, DX d.
TEXT ·dot4RowsAVX(SB), NOSPLIT, $0-56
	MOVQ d+0(FP), DX
	MOVQ a+8(FP), SI
	MOVQ b+24(FP), DI
	MOVQ rows+40(FP), AX
	SHRQ $2, AX

d4rgroup:
	MOVQ lda+16(FP), CX
	SHLQ $2, CX
	LEAQ (SI)(CX*1), R8
	LEAQ (SI)(CX*2), R10
	LEAQ (R8)(CX*2), R11
	MOVQ ldb+32(FP), CX
	SHLQ $2, CX
	LEAQ (DI)(CX*1), R12
	LEAQ (DI)(CX*2), R13
	LEAQ (R12)(CX*2), R14
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X2, X2, X2
	VXORPS X3, X3, X3
	XORQ   BX, BX
	MOVQ   n+48(FP), CX
	SHRQ   $2, CX

d4rloop:
	D4STEP(SI, DI, X0, X4)
	D4STEP(R8, R12, X1, X5)
	D4STEP(R10, R13, X2, X6)
	D4STEP(R11, R14, X3, X7)
	ADDQ $16, BX
	DECQ CX
	JNZ  d4rloop

	D4SUM(X0, X4, 0)
	D4SUM(X1, X5, 4)
	D4SUM(X2, X6, 8)
	D4SUM(X3, X7, 12)
	ADDQ $16, DX
	MOVQ lda+16(FP), CX
	SHLQ $4, CX
	ADDQ CX, SI
	MOVQ ldb+32(FP), CX
	SHLQ $4, CX
	ADDQ CX, DI
	DECQ AX
	JNZ  d4rgroup
	RET
