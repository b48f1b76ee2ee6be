package layers

import (
	"math"
	"testing"
)

func TestExp32(t *testing.T) {
	for x := -87.0; x <= 88; x += 0.001 {
		got, want := float64(exp32(float32(x))), math.Exp(float64(float32(x)))
		if math.Abs(got-want) > 4e-7*want {
			t.Fatalf("exp32(%g) = %g, want %g", x, got, want)
		}
	}
	for _, x := range []float32{-1e9, -100, -87.4} {
		if exp32(x) != 0 {
			t.Errorf("exp32(%g) = %g, want 0", x, exp32(x))
		}
	}
	if !math.IsInf(float64(exp32(89)), 1) {
		t.Error("exp32(89) is not +Inf")
	}
}

func TestErf32(t *testing.T) {
	for x := -6.0; x <= 6; x += 0.00001 {
		got, want := float64(erf32(float32(x))), math.Erf(float64(float32(x)))
		if math.Abs(got-want) > 6e-7 {
			t.Fatalf("erf32(%g) = %.9g, want %.9g", x, got, want)
		}
	}
}
