//go:build amd64 && !purego

package simd

func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// l1DataWays reads the level-1 data cache's associativity from the
// deterministic cache parameters: CPUID leaf 4 on Intel, leaf 0x8000001D
// on AMD (the same layout: EAX bits 4-0 the cache type, 1 for data, bits
// 7-5 the level; EBX bits 31-22 the ways less one). 0 when neither leaf is
// there.
func l1DataWays() int {
	maxLeaf, _, _, _ := cpuid(0, 0)
	maxExt, _, _, _ := cpuid(0x80000000, 0)
	for _, leaf := range []uint32{4, 0x8000001D} {
		if (leaf < 0x80000000 && leaf > maxLeaf) || (leaf >= 0x80000000 && leaf > maxExt) {
			continue
		}
		for sub := uint32(0); sub < 16; sub++ {
			eax, ebx, _, _ := cpuid(leaf, sub)
			typ, level := eax&0x1f, (eax>>5)&7
			if typ == 0 {
				break
			}
			if typ == 1 && level == 1 {
				return int(ebx>>22) + 1
			}
		}
	}
	return 0
}
