package bf16

import (
	"sync"
	"time"
)

// Words of one 16 x 16-pair tile.
const tileWords = TileRows * 2 * TilePairs

// TilePeak measures, for about d on threads goroutines, the tile unit's
// bfloat16 throughput in GFLOP/s: TDPBF16PS on tiles held in the tile
// registers, four independent accumulators (the tile product's 2 x 2
// block), no memory traffic: the most AMX can do right now, the
// denominator of a bf16 step's fraction of it. It returns 0 at once where
// HasAMX is false.
func TilePeak(threads int, d time.Duration) float64 {
	if !HasAMX() {
		return 0
	}
	var a, b [2 * tileWords]uint16
	for i := range a {
		a[i], b[i] = 0x3f80, 0x3c00 // 1 and 2^-7: sums that stay finite
	}
	var wg sync.WaitGroup
	flops := make([]float64, max(1, threads))
	start := time.Now()
	for t := range flops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(start) < d {
				flops[t] += tilePeakLoop(&a, &b)
			}
		}()
	}
	wg.Wait()
	var total float64
	for _, f := range flops {
		total += f
	}
	return total / time.Since(start).Seconds() / 1e9
}
