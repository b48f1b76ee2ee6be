package gemm

// packedBroadcasts makes kernel8x32's loop for packed A (rsa = 1) broadcast
// each A value into a register for its two multiply-adds (QSTEP) instead of
// folding the broadcast into each (PSTEP): the same operations in the same
// order, the same bits. Which is faster depends on the processor (the folded
// form was measured faster on an Intel Xeon of family 6, model 207; on one
// of model 167 the register form runs the kernel alone 9-11% faster and
// the tiny training step 1-2%), so chooseBroadcasts
// measures both once, before the first product; the assembly reads it as a
// byte.
var packedBroadcasts bool
