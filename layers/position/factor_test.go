package position

import (
	"math"
	"strings"
	"testing"
)

// Factors that are not finite, or below 1, are refused for every extension.
func TestCheckFactorFiniteAtLeastOne(t *testing.T) {
	rope := ExtensionTarget{DHead: 16, TrainLen: 128, Base: 10000}
	alibi := ExtensionTarget{Slopes: []float32{0.5, 0x1p-8}}
	for _, name := range []string{"pi", "ntk", "yarn", "interp"} {
		e, err := LookupExtension(name)
		if err != nil {
			t.Fatal(err)
		}
		target := rope
		if name == "interp" {
			target = alibi
		}
		for _, f := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
			if err := CheckFactor(e, target, f); err == nil || !strings.Contains(err.Error(), "is not a finite number") {
				t.Errorf("%s at %v: %v", name, f, err)
			}
		}
		for _, f := range []float64{0.5, 0, -2} {
			if err := CheckFactor(e, target, f); err == nil || !strings.Contains(err.Error(), "want at least 1") {
				t.Errorf("%s at %v: %v", name, f, err)
			}
		}
		for _, f := range []float64{1, 2, 1e6} {
			if err := CheckFactor(e, target, f); err != nil {
				t.Errorf("%s at %v: %v", name, f, err)
			}
		}
		if err := CheckFactor(e, target, 1e300); err == nil || !strings.Contains(err.Error(), "extension factor 1e+300 is too large for "+name) {
			t.Errorf("%s at 1e300: %v", name, err)
		}
	}
}

// The largest factor is where the math says the extension's numbers leave
// float32's normal range: pi, ntk and yarn (whose slowest pairs are
// interpolated as pi's) at the slowest frequency base^(-(d-2)/d) times
// 2^126, interp at the smallest slope times 2^126. Just below it the factor
// is accepted, just above it refused, and the error names it.
func TestCheckFactorBound(t *testing.T) {
	rope := ExtensionTarget{DHead: 16, TrainLen: 128, Base: 10000}
	slowest := math.Pow(10000, -14.0/16)
	for _, c := range []struct {
		name   string
		target ExtensionTarget
		bound  float64
		text   string
	}{
		{"pi", rope, slowest * 0x1p126, "at most 2.69e+34"},
		{"ntk", rope, slowest * 0x1p126, "at most 2.69e+34"},
		{"yarn", rope, slowest * 0x1p126, "at most 2.69e+34"},
		{"interp", ExtensionTarget{Slopes: []float32{0.5, 0.25, 0x1p-8}}, 0x1p118, "at most 3.32e+35"},
	} {
		e, err := LookupExtension(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckFactor(e, c.target, c.bound*(1-1e-6)); err != nil {
			t.Errorf("%s just below %g: %v", c.name, c.bound, err)
		}
		err = CheckFactor(e, c.target, c.bound*(1+1e-6))
		if err == nil || !strings.Contains(err.Error(), c.text) || !strings.Contains(err.Error(), "outside float32's normal range") {
			t.Errorf("%s just above %g: %v; want one containing %q", c.name, c.bound, err, c.text)
		}
	}
	// interp's bound is exact: 2^-8 / 2^118 is float32's smallest normal,
	// and a factor that rounds the slope below it is refused.
	interp, _ := LookupExtension("interp")
	slopes := ExtensionTarget{Slopes: []float32{0x1p-8}}
	if err := CheckFactor(interp, slopes, 0x1p118); err != nil {
		t.Errorf("interp at 2^118: %v", err)
	}
	if err := CheckFactor(interp, slopes, 0x1p118*(1+0x1p-20)); err == nil {
		t.Error("interp just above 2^118 was accepted")
	}
}

// The bound is written rounded down, so that the factor it names is
// accepted.
func TestFloorDigits(t *testing.T) {
	for v, want := range map[float64]string{2.6999e34: "2.69e+34", 3.3231e35: "3.32e+35", 1234.9: "1.23e+03", 17.459: "17.45", 1: "1"} {
		if got := floorDigits(v); got != want {
			t.Errorf("floorDigits(%g) = %q, want %q", v, got, want)
		}
	}
}
