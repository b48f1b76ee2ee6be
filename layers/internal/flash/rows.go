package flash

import (
	"math"

	"github.com/alibi-go/alibi/layers/internal/vmath"
)

// Row kernels: float32 with the vmath kernels, float64 in plain Go.

// expShiftSum sets x[i] = exp(x[i] - shift) and returns the sum of the
// results (accumulated in float64).
func expShiftSum[T float](x []T, shift T) float64 {
	if x32, ok := any(x).([]float32); ok {
		return float64(vmath.ExpSubSum(x32, float32(shift)))
	}
	var sum float64
	for i, v := range x {
		e := math.Exp(float64(v - shift))
		x[i] = T(e)
		sum += e
	}
	return sum
}

// scaleRow sets x[i] *= s.
func scaleRow[T float](x []T, s T) {
	if x32, ok := any(x).([]float32); ok {
		vmath.Scale(x32, float32(s))
		return
	}
	for i := range x {
		x[i] *= s
	}
}
