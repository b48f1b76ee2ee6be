package position

import (
	"fmt"
	"math"
)

// ExtensionTarget is what CheckFactor knows of the model an extension is
// applied to: for a RotaryExtension, the head width, the training length
// and the base of the rotary frequencies; for a SlopeExtension, the trained
// slopes.
type ExtensionTarget struct {
	DHead, TrainLen int
	Base            float64
	Slopes          []float32
}

// smallestNormal32 is the smallest normal float32, 2^-126: below it a
// float32 keeps fewer bits of precision (a subnormal), and then none (0).
const smallestNormal32 = 0x1p-126

// CheckFactor reports why extension e cannot be applied to the target at
// factor F, or nil if it can. F must be a finite number of at least 1, and
// every number the extension derives from it must be a normal float32, the
// precision of the model's arithmetic: the frequencies theta'_k and the
// scale of a RotaryExtension, the slopes of a SlopeExtension. That bounds F
// from above, and the error names the bound:
//
//   - pi divides every frequency by F, and the slowest, base^(-(d-2)/d),
//     leaves float32's normal range at F = base^(-(d-2)/d)·2^126: about
//     2.7e34 at d = 16 and base 10000;
//   - ntk multiplies the base by F^(d/(d-2)), which gives the slowest pair
//     the same frequency as pi's, so the same bound (past F^(d/(d-2)) =
//     1.8e308/base the base itself leaves float64, and the frequencies
//     become 0);
//   - yarn divides the frequencies of the pairs that turn less than Alpha
//     times over the training length by F, as pi does, with pi's bound when
//     it has such pairs; its scale 0.1 ln F + 1 is finite for every finite F
//     (70 at F = 1e300);
//   - interp divides every slope by F: the smallest slope m leaves float32's
//     normal range at F = m·2^126, 3.3e35 for ALiBi's 2^-8.
//
// A registered extension is held to the same rule: the bound is searched
// for, by bisection on F, and named if the extension's numbers only leave
// the range as F grows.
func CheckFactor(e Extension, t ExtensionTarget, factor float64) error {
	if math.IsNaN(factor) || math.IsInf(factor, 0) {
		return fmt.Errorf("extension factor %v is not a finite number", factor)
	}
	if factor < 1 {
		return fmt.Errorf("extension factor %v: want at least 1", factor)
	}
	why := outOfRange(e, t, factor)
	if why == "" {
		return nil
	}
	err := fmt.Sprintf("extension factor %g is too large for %s on this model: %s", factor, e.Name(), why)
	if outOfRange(e, t, 1) == "" {
		err += fmt.Sprintf("; the factor can be at most %s", floorDigits(largestFactor(e, t, factor)))
	}
	return fmt.Errorf("%s", err)
}

// outOfRange says which number of extension e at factor F is not a normal
// float32, or returns "" if all are.
func outOfRange(e Extension, t ExtensionTarget, f float64) string {
	normal := func(v float64) bool {
		return !math.IsNaN(v) && math.Abs(v) >= smallestNormal32 && math.Abs(v) <= math.MaxFloat32
	}
	switch x := e.(type) {
	case RotaryExtension:
		theta, scale := x.Rotary(t.DHead, t.TrainLen, t.Base, f)
		for k, th := range theta {
			if !normal(th) {
				return fmt.Sprintf("the frequency of pair %d would be %.3g, outside float32's normal range", k, th)
			}
		}
		if !normal(scale) {
			return fmt.Sprintf("the scale of the queries and keys would be %.3g, outside float32's normal range", scale)
		}
	case SlopeExtension:
		for h, m := range x.Slopes(t.Slopes, f) {
			if t.Slopes[h] != 0 && !normal(float64(m)) {
				return fmt.Sprintf("the slope of head %d would be %.3g, outside float32's normal range", h, m)
			}
		}
	}
	return ""
}

// largestFactor returns the largest factor in [1, above) at which e's
// numbers are in range, by bisection over the float64 values between them
// (ordered as their bit patterns are), given that they are at 1 and are not
// at above.
func largestFactor(e Extension, t ExtensionTarget, above float64) float64 {
	lo, hi := math.Float64bits(1), math.Float64bits(above)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if outOfRange(e, t, math.Float64frombits(mid)) == "" {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Float64frombits(lo)
}

// floorDigits writes v with three significant digits, rounded down, so that
// the value written is itself within a bound of v.
func floorDigits(v float64) string {
	if v < 1000 {
		return fmt.Sprintf("%g", math.Floor(v*100)/100)
	}
	p := math.Pow(10, math.Floor(math.Log10(v))-2)
	return fmt.Sprintf("%.3g", math.Floor(v/p)*p)
}
