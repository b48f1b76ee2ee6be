// The C tile's stores, shared by the kernels of kernel_amd64.s (AVX512_BF16)
// and emulated_amd64.s (AVX-512F), whose row stores amx_amd64.s's tile
// strip uses too (its rows loaded from scratch into Z0, Z1): the 8 rows' accumulators are Z0..Z15
// (row i in Z(2i), Z(2i+1)), alpha is in Z30, beta in Z31, the bias (when
// there is one) in Z28 and Z29, the columns to store in K1 and K2, ldc in
// bytes in R8, and the row being stored at R9. The fp32 kernel
// (layers/internal/gemm/kernel512_amd64.s) has its own STORE8 of the same
// shape: Go's build cache tracks only the headers in a package's own
// directory, so a header shared across packages could go stale.

// PREFETCHROW prefetches the C row at R9 (128 B: three cache lines when it
// is not aligned) and advances R9 by ldc (R8 bytes).
#define PREFETCHROW \
	PREFETCHT0 (R9) \
	PREFETCHT0 64(R9) \
	PREFETCHT0 124(R9) \
	ADDQ       R8, R9

// TILESTART begins a tile: it prefetches the C tile at DX, 8 rows of 128 B
// (three cache lines when a row is not aligned) ldc (R8 bytes) apart, so
// that its stores do not wait on memory, and zeroes the accumulators
// Z0-Z15. R9 is left past the tile.
#define TILESTART \
	MOVQ DX, R9 \
	PREFETCHROW \
	PREFETCHROW \
	PREFETCHROW \
	PREFETCHROW \
	PREFETCHROW \
	PREFETCHROW \
	PREFETCHROW \
	PREFETCHROW \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	VPXORD Z2, Z2, Z2 \
	VPXORD Z3, Z3, Z3 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z5, Z5, Z5 \
	VPXORD Z6, Z6, Z6 \
	VPXORD Z7, Z7, Z7 \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11 \
	VPXORD Z12, Z12, Z12 \
	VPXORD Z13, Z13, Z13 \
	VPXORD Z14, Z14, Z14 \
	VPXORD Z15, Z15, Z15

// STOREZ stores one row, Z0_ and Z1_, as alpha*acc to the C row at R9
// (the columns in K1 and K2) and advances R9 by ldc (R8 bytes).
#define STOREZ(Z0_, Z1_) \
	VMULPS  Z30, Z0_, Z0_ \
	VMULPS  Z30, Z1_, Z1_ \
	VMOVUPS Z0_, K1, (R9) \
	VMOVUPS Z1_, K2, 64(R9) \
	ADDQ    R8, R9

// STOREA stores one row as alpha*acc + bias (Z28, Z29), the sum rounded
// as the copied bias times beta 1 would be.
#define STOREA(Z0_, Z1_) \
	VMULPS  Z30, Z0_, Z0_ \
	VMULPS  Z30, Z1_, Z1_ \
	VADDPS  Z28, Z0_, Z0_ \
	VADDPS  Z29, Z1_, Z1_ \
	VMOVUPS Z0_, K1, (R9) \
	VMOVUPS Z1_, K2, 64(R9) \
	ADDQ    R8, R9

// STOREB is STOREZ for C = alpha*acc + beta*C, each product rounded before
// the sum (no fused multiply-add, as in the portable kernel).
#define STOREB(Z0_, Z1_) \
	VMULPS    Z30, Z0_, Z0_ \
	VMULPS    Z30, Z1_, Z1_ \
	VMOVUPS.Z (R9), K1, Z20 \
	VMOVUPS.Z 64(R9), K2, Z21 \
	VMULPS    Z31, Z20, Z20 \
	VMULPS    Z31, Z21, Z21 \
	VADDPS    Z20, Z0_, Z0_ \
	VADDPS    Z21, Z1_, Z1_ \
	VMOVUPS   Z0_, K1, (R9) \
	VMOVUPS   Z1_, K2, 64(R9) \
	ADDQ      R8, R9

// STORE8 stores the tile's rows with ST, leaving for next after BX rows.
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

// TRANSPOSE8STORE transposes the 8 x 8 words in Y0-Y7 (line i in Yi) and
// stores word q of every line at DI + q*ldd bytes (R11 = ldd bytes, R10 =
// 3*ldd bytes), with Y8-Y15 and R12 as scratch: the last step of the pair
// packing along k (alongAsm, alongEmuAsm), as gemm's transpose8 does it.
#define TRANSPOSE8STORE \
	VUNPCKLPS Y1, Y0, Y8 \
	VUNPCKHPS Y1, Y0, Y9 \
	VUNPCKLPS Y3, Y2, Y10 \
	VUNPCKHPS Y3, Y2, Y11 \
	VUNPCKLPS Y5, Y4, Y12 \
	VUNPCKHPS Y5, Y4, Y13 \
	VUNPCKLPS Y7, Y6, Y14 \
	VUNPCKHPS Y7, Y6, Y15 \
	VSHUFPS $0x44, Y10, Y8, Y0 \
	VSHUFPS $0xEE, Y10, Y8, Y1 \
	VSHUFPS $0x44, Y11, Y9, Y2 \
	VSHUFPS $0xEE, Y11, Y9, Y3 \
	VSHUFPS $0x44, Y14, Y12, Y4 \
	VSHUFPS $0xEE, Y14, Y12, Y5 \
	VSHUFPS $0x44, Y15, Y13, Y6 \
	VSHUFPS $0xEE, Y15, Y13, Y7 \
	VPERM2F128 $0x20, Y4, Y0, Y8 \
	VPERM2F128 $0x20, Y5, Y1, Y9 \
	VPERM2F128 $0x20, Y6, Y2, Y10 \
	VPERM2F128 $0x20, Y7, Y3, Y11 \
	VPERM2F128 $0x31, Y4, Y0, Y12 \
	VPERM2F128 $0x31, Y5, Y1, Y13 \
	VPERM2F128 $0x31, Y6, Y2, Y14 \
	VPERM2F128 $0x31, Y7, Y3, Y15 \
	LEAQ    (DI)(R11*4), R12 \
	VMOVUPS Y8, (DI) \
	VMOVUPS Y9, (DI)(R11*1) \
	VMOVUPS Y10, (DI)(R11*2) \
	VMOVUPS Y11, (DI)(R10*1) \
	VMOVUPS Y12, (R12) \
	VMOVUPS Y13, (R12)(R11*1) \
	VMOVUPS Y14, (R12)(R11*2) \
	VMOVUPS Y15, (R12)(R10*1)
