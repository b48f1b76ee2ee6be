//go:build amd64 && !purego

#include "textflag.h"

// The natural logarithm of float64 lanes with the operations of Go's own
// math.Log on amd64 (its assembly, archLog in the math package), one lane
// for each of its scalar instructions, in the same order and without fused
// multiply-adds, so that each lane's result has the same bits for a
// positive normal finite input. The other inputs (zero, negative,
// subnormal, infinite, NaN) give unspecified lanes, which Log64 redoes
// with math.Log.

// CONST8 defines a read-only 8-byte constant, loaded with VPBROADCASTQ.
#define CONST8(name, bits) \
	DATA name+0(SB)/8, bits \
	GLOBL name(SB), RODATA|NOPTR, $8

CONST8(lgMant<>, $0x000fffffffffffff)   // the mantissa bits
CONST8(lgHalf<>, $0x3fe0000000000000)   // 0.5: the exponent of frexp's fraction
CONST8(lgExp<>, $0x7ff)                 // the exponent bits, shifted down
CONST8(lgBias<>, $0x3fe)                // frexp's exponent bias
CONST8(lgHSqrt2<>, $0x3fe6a09e667f3bcd) // √2/2
CONST8(lgOne<>, $0x3ff0000000000000)    // 1
CONST8(lgTwo<>, $0x4000000000000000)    // 2
CONST8(lgLn2Hi<>, $0x3fe62e42fee00000)
CONST8(lgLn2Lo<>, $0x3dea39ef35793c76)
CONST8(lgL1<>, $0x3fe5555555555593)
CONST8(lgL2<>, $0x3fd999999997fa04)
CONST8(lgL3<>, $0x3fd2492494229359)
CONST8(lgL4<>, $0x3fcc71c51d8e78af)
CONST8(lgL5<>, $0x3fc7466496cb03de)
CONST8(lgL6<>, $0x3fc39a09d078c69f)
CONST8(lgL7<>, $0x3fc2f112df3e5244)

// func logAVX512(dst, x *float64, n int)
//
// dst[i] = log(x[i]) for i < n, n a positive multiple of 8, 8 lanes at a
// time. Each step below names archLog's operation it repeats:
//
//	f1, k := frexp(x); if f1 <= √2/2 { k -= 1; f1 *= 2 }; f := f1 - 1
//	s := f / (2 + f); s2 := s*s; s4 := s2*s2
//	t1 := s2 * (L1 + s4*(L3+s4*(L5+s4*L7))); t2 := s4 * (L2 + s4*(L4+s4*L6))
//	R := t1 + t2; hfsq := 0.5*f*f
//	return k*Ln2Hi - ((hfsq - (s*(hfsq+R) + k*Ln2Lo)) - f)
//
// (f1 *= 2 is f1 + f1 here, and k -= 1 a masked subtraction: both exact,
// as archLog's multiplication by 1 or 2 and subtraction of 0 or 1 are.)
TEXT ·logAVX512(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	SHRQ         $3, CX
	VPBROADCASTQ lgMant<>(SB), Z16
	VPBROADCASTQ lgHalf<>(SB), Z17
	VPBROADCASTQ lgExp<>(SB), Z18
	VPBROADCASTQ lgBias<>(SB), Z19
	VPBROADCASTQ lgHSqrt2<>(SB), Z20
	VPBROADCASTQ lgOne<>(SB), Z21
	VPBROADCASTQ lgTwo<>(SB), Z22
	VPBROADCASTQ lgLn2Hi<>(SB), Z23
	VPBROADCASTQ lgLn2Lo<>(SB), Z24
	VPBROADCASTQ lgL1<>(SB), Z25
	VPBROADCASTQ lgL2<>(SB), Z26
	VPBROADCASTQ lgL3<>(SB), Z27
	VPBROADCASTQ lgL4<>(SB), Z28
	VPBROADCASTQ lgL5<>(SB), Z29
	VPBROADCASTQ lgL6<>(SB), Z30
	VPBROADCASTQ lgL7<>(SB), Z31

lgloop:
	VMOVUPD   (SI), Z0
	VPANDQ    Z16, Z0, Z2      // frexp: the fraction f1 in [0.5, 1)
	VPORQ     Z17, Z2, Z2
	VPSRLQ    $52, Z0, Z1      // and the exponent k, as a float64
	VPANDQ    Z18, Z1, Z1
	VPSUBQ    Z19, Z1, Z1
	VPMOVQD   Z1, Y1
	VCVTDQ2PD Y1, Z1
	VCMPPD    $2, Z20, Z2, K1  // f1 <= √2/2
	VSUBPD    Z21, Z1, K1, Z1  // k -= 1
	VADDPD    Z2, Z2, K1, Z2   // f1 *= 2
	VSUBPD    Z21, Z2, Z2      // f = f1 - 1
	VADDPD    Z22, Z2, Z3      // s = f / (2 + f)
	VDIVPD    Z3, Z2, Z3
	VMULPD    Z3, Z3, Z4       // s2
	VMULPD    Z4, Z4, Z5       // s4
	VMULPD    Z31, Z5, Z6      // t1
	VADDPD    Z29, Z6, Z6
	VMULPD    Z5, Z6, Z6
	VADDPD    Z27, Z6, Z6
	VMULPD    Z5, Z6, Z6
	VADDPD    Z25, Z6, Z6
	VMULPD    Z6, Z4, Z4
	VMULPD    Z30, Z5, Z6      // t2
	VADDPD    Z28, Z6, Z6
	VMULPD    Z5, Z6, Z6
	VADDPD    Z26, Z6, Z6
	VMULPD    Z6, Z5, Z5
	VADDPD    Z5, Z4, Z4       // R
	VMULPD    Z17, Z2, Z0      // hfsq = 0.5*f*f
	VMULPD    Z2, Z0, Z0
	VADDPD    Z0, Z4, Z4       // hfsq + R
	VMULPD    Z4, Z3, Z3       // s*(hfsq+R)
	VMULPD    Z24, Z1, Z4      // k*Ln2Lo
	VADDPD    Z4, Z3, Z3
	VSUBPD    Z3, Z0, Z0       // hfsq - (...)
	VSUBPD    Z2, Z0, Z0       // (...) - f
	VMULPD    Z23, Z1, Z1      // k*Ln2Hi
	VSUBPD    Z0, Z1, Z1
	VMOVUPD   Z1, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	DECQ      CX
	JNZ       lgloop
	VZEROUPPER
	RET
