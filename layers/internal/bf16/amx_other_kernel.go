//go:build !linux || !amd64 || purego

package bf16

// tileBlocksAMXAt is not reached on this build: HasAMX is false.
func tileBlocksAMXAt([]float32, int, []uint16, []uint16, int) {
	panic("bf16: no AMX on this build")
}

// tileBlocks2x2AMX is not reached on this build: HasAMX is false.
func tileBlocks2x2AMX([]float32, int, []uint16, []uint16, []uint16, []uint16, int) {
	panic("bf16: no AMX on this build")
}
