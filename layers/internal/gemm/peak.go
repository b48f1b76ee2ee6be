package gemm

import (
	"sync"
	"time"
)

// Peak returns the floating-point throughput, in GFLOP/s, of the active
// path's FMA loop (independent fused multiply-adds on registers, no memory
// traffic) on threads goroutines for about d: what the machine's cores can
// do at most on this path right now, the denominator of a "fraction of
// peak". On a shared or virtual machine it moves with the load from other
// programs, so a fraction is best taken against a peak measured close in
// time. The portable path's loop is scalar Go (Go does not fuse its
// multiply-adds on amd64, so each counts 2 operations all the same).
func Peak(threads int, d time.Duration) float64 {
	return runPeak(Active(), max(1, threads), d)
}

// peakIters is the number of iterations of one call of an FMA loop.
const peakIters = 1 << 14

// peakLoop runs one call of the FMA loop of path p and returns its number of
// floating-point operations, and for the portable loop its result (which
// the caller keeps, so that the loop is not optimised away). The portable
// loop is scalar Go: 12 independent multiply-add chains.
func peakLoop(p Path, x float32) (float64, float32) {
	switch p {
	case AVX2:
		fmaPeakAVX2(peakIters)
		return peakIters * 192, x
	case AVX512:
		fmaPeakAVX512(peakIters)
		return peakIters * 768, x
	}
	return peakIters * 24, peakGo(peakIters, x)
}

// peakGo runs n iterations of 12 independent float32 multiply-adds, in
// local variables so that they stay in registers.
func peakGo(n int, x float32) float32 {
	a0, a1, a2, a3, a4, a5 := x, x+1, x+2, x+3, x+4, x+5
	a6, a7, a8, a9, a10, a11 := x+6, x+7, x+8, x+9, x+10, x+11
	const m, c = 0.999, 1e-3
	for range n {
		a0, a1, a2, a3, a4, a5 = a0*m+c, a1*m+c, a2*m+c, a3*m+c, a4*m+c, a5*m+c
		a6, a7, a8, a9, a10, a11 = a6*m+c, a7*m+c, a8*m+c, a9*m+c, a10*m+c, a11*m+c
	}
	return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11
}

// runPeak runs the FMA loop of path p on threads goroutines for about d and
// returns the aggregate GFLOP/s.
func runPeak(p Path, threads int, d time.Duration) float64 {
	var wg sync.WaitGroup
	flops := make([]float64, threads)
	sinks := make([]float32, threads)
	start := time.Now()
	for t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(start) < d {
				f, x := peakLoop(p, sinks[t])
				flops[t] += f
				sinks[t] = x
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
