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

// expShift sets x[i] = exp(x[i] - shift).
func expShift[T float](x []T, shift T) {
	if x32, ok := any(x).([]float32); ok {
		vmath.ExpSubSum(x32, float32(shift))
		return
	}
	for i, v := range x {
		x[i] = T(math.Exp(float64(v - shift)))
	}
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

// dot returns sum_i a[i]*b[i], with four partial sums so that the
// additions do not wait on each other (vmath.Dot4 for float32).
func dot[T float](a, b []T) T {
	if a32, ok := any(a).([]float32); ok {
		return T(vmath.Dot4(a32, any(b).([]float32)))
	}
	b = b[:len(a)]
	var s0, s1, s2, s3 T
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}
