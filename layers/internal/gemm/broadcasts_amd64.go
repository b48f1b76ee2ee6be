//go:build amd64 && !purego

package gemm

import (
	"sync"
	"time"
	"unsafe"
)

var broadcastsOnce sync.Once

// chooseBroadcasts sets packedBroadcasts where the register form runs the
// kernel at least 4% faster: each form is timed on 2 slivers of 8 rows by
// 256 k steps against one B sliver, all in L1 (1 MFLOP a call), in five
// alternating rounds of four calls, the fastest round of each counting, so
// that an interruption of one round does not decide. About half a
// millisecond, once a process, on the AVX-512 path only.
func chooseBroadcasts() {
	broadcastsOnce.Do(func() {
		if Active() != AVX512 {
			return
		}
		const nsl, kc, calls = 2, 256, 4
		a, b, c := make([]float32, nsl*8*kc), make([]float32, kc*32), make([]float32, nsl*8*32)
		for i := range a {
			a[i] = 1
		}
		for i := range b {
			b[i] = 0.5
		}
		pf := uintptr(unsafe.Pointer(&b[0]))
		var best [2]time.Duration
		for r := range 5 {
			for i, reg := range []bool{false, true} {
				packedBroadcasts = reg
				start := time.Now()
				for range calls {
					kernel8x32(nsl, kc, &a[0], 1, 8, 8*kc, &b[0], 32, &c[0], 32, 1, 0, 8, 0xffffffff, nil, pf)
				}
				if d := time.Since(start); r == 0 || d < best[i] {
					best[i] = d
				}
			}
		}
		packedBroadcasts = best[1]*100 < best[0]*96
	})
}
