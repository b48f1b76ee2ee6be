// FLUSHDENORMALS and RESTOREMXCSR are gemm's (layers/internal/gemm/
// mxcsr_amd64.h, which says why and how): set MXCSR's flush-to-zero and
// denormals-are-zero bits, keeping the caller's MXCSR in the frame's two
// local words (a frame of 8 bytes), and put it back on the way out. The
// copy is here because Go's build cache tracks only the headers in a
// package's own directory.
#define FLUSHDENORMALS \
	STMXCSR mxcsr-8(SP) \
	MOVL    mxcsr-8(SP), AX \
	ORL     $0x8040, AX \
	MOVL    AX, ftz-4(SP) \
	LDMXCSR ftz-4(SP)

#define RESTOREMXCSR LDMXCSR mxcsr-8(SP)
