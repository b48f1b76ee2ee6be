package gemm

import (
	"math"
	"testing"
	"time"
)

// TestPeak checks the peak measurement on every supported path: a positive,
// finite rate, and on the assembly paths several times the scalar Go loop's
// (16-lane FMAs on AVX-512 and 8-lane on AVX2 against one multiply-add at a
// time: a flop count off by a factor of the vector width shows).
func TestPeak(t *testing.T) {
	rate := map[Path]float64{}
	for _, p := range Paths {
		if !p.Supported() {
			continue
		}
		// The best of five short runs: a busy machine that takes the core
		// away during one run does not make the vector path look scalar.
		prev := setPath(p)
		for range 5 {
			rate[p] = max(rate[p], Peak(1, 20*time.Millisecond))
		}
		setPath(prev)
		if r := rate[p]; !(r > 0) || math.IsInf(r, 0) {
			t.Fatalf("%v: peak %v GFLOP/s", p, r)
		}
	}
	for p, min := range map[Path]float64{AVX2: 3, AVX512: 6} {
		if r, ok := rate[p]; ok && r < min*rate[Portable] {
			t.Errorf("%v: peak %.1f GFLOP/s, under %gx the portable loop's %.1f", p, r, min, rate[Portable])
		}
	}
}
