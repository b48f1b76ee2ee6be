// The C tile's stores, shared by the kernels of kernel_amd64.s (AVX512_BF16)
// and emulated_amd64.s (AVX-512F): the 8 rows' accumulators are Z0..Z15
// (row i in Z(2i), Z(2i+1)), alpha is in Z30, beta in Z31, the bias (when
// there is one) in Z28 and Z29, the columns to store in K1 and K2, ldc in
// bytes in R8, and the row being stored at R9.

// PREFETCHROW prefetches the C row at R9 (128 B: three cache lines when it
// is not aligned) and advances R9 by ldc (R8 bytes).
#define PREFETCHROW \
	PREFETCHT0 (R9) \
	PREFETCHT0 64(R9) \
	PREFETCHT0 124(R9) \
	ADDQ       R8, R9

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
