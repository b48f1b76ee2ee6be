package layers

import "math"

// exp32 is exp(x) in float32 arithmetic, within about 3e-7 relative error of
// math.Exp: range reduction x = k ln2 + r with |r| <= ln2/2, then a degree-6
// polynomial for e^r. It returns 0 below the smallest normal float32 result
// (so the -1e9 mask gives exactly 0) and +Inf above the largest.
func exp32(x float32) float32 {
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693145751953125
		ln2lo = 1.42860682030941723212e-6
	)
	if x < -87.33654 {
		return 0
	}
	if x > 88.72283 {
		return float32(math.Inf(1))
	}
	t := x * log2e // round half away from zero: |r| <= ln2/2 either way
	if t < 0 {
		t -= 0.5
	} else {
		t += 0.5
	}
	k := float32(int32(t))
	r := x - k*ln2hi - k*ln2lo
	p := 1 + r*(1+r*(0.5+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720))))))
	return math.Float32frombits(uint32(int32(k)+127)<<23) * p
}

// erf32 is erf(x) in float32, within 6e-7 absolute error (5.3e-7 measured):
// Abramowitz and Stegun 7.1.26 (1.5e-7 in exact arithmetic) with exp32 for
// the exponential. In GELU, 0.5x(1+erf), that is an error of at most
// 3e-7|x|, below float32 resolution of the result.
func erf32(x float32) float32 {
	sign := float32(1)
	if x < 0 {
		sign, x = -1, -x
	}
	t := 1 / (1 + 0.3275911*x)
	y := 1 - t*(0.254829592+t*(-0.284496736+t*(1.421413741+t*(-1.453152027+t*1.061405429))))*exp32(-x*x)
	return sign * y
}
