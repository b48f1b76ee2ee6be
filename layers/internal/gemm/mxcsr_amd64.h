// The matrix kernels run with MXCSR's flush-to-zero (bit 15) and
// denormals-are-zero (bit 6) bits set: a subnormal operand reads as zero and
// a result that would be subnormal is stored as zero (with its sign). On
// Intel cores every multiply-add that reads or produces a subnormal number
// takes a microcode assist of about a hundred cycles; a training step meets
// them in the attention's backward pass, whose probabilities and score
// gradients reach below 2^-126 for distant keys (measured: a product with
// subnormal inputs at 0.7 GFLOP/s against 126 with normal ones, on a Xeon
// of family 6, model 207).
//
// (vmath has a copy: Go's build cache tracks only the headers in a
// package's own directory.)
//
// FLUSHDENORMALS saves the caller's MXCSR in the frame's two local words
// (the function needs a frame of 8 bytes) and sets both bits; RESTOREMXCSR,
// on every way out, puts the caller's back. Nothing else on the thread sees
// the bits: Go does not preempt assembly asynchronously, and a signal
// handler starts with the default MXCSR (Linux saves the interrupted one and
// restores it on return). FLUSHDENORMALS uses AX, so it comes before the
// arguments are loaded.
#define FLUSHDENORMALS \
	STMXCSR mxcsr-8(SP) \
	MOVL    mxcsr-8(SP), AX \
	ORL     $0x8040, AX \
	MOVL    AX, ftz-4(SP) \
	LDMXCSR ftz-4(SP)

#define RESTOREMXCSR LDMXCSR mxcsr-8(SP)
