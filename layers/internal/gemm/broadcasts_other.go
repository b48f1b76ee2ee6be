//go:build !amd64 || purego

package gemm

// chooseBroadcasts has nothing to choose on builds without the assembly
// kernels.
func chooseBroadcasts() {}
