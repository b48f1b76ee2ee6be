package position

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// The extensions' frequencies and scales against values worked out from the
// papers' formulas in Python (float64; head width 32, base 10000, training
// length 128): PI theta_k/F; NTK the frequencies of base·F^(32/30); YaRN
// r_k = 128·theta_k/(2π), gamma = clamp((r_k - 1)/31, 0, 1),
// (1-gamma)·theta_k/F + gamma·theta_k, and the scale 0.1 ln F + 1.
func TestRotaryExtensionsAgainstFormulas(t *testing.T) {
	for _, c := range []struct {
		factor    float64
		pi, ntk   [3]float64 // k = 0, 5, 15
		yarn      [6]float64 // k = 0, 1, 2, 3, 5, 15
		yarnScale float64
	}{
		{2, [3]float64{0.5, 0.028117066259517456, 8.891397050194613e-05}, [3]float64{1, 0.04463306055861757, 8.891397050194613e-05},
			[6]float64{0.8124489147703646, 0.3760061113723357, 0.18587122987228064, 0.09643632492022908, 0.028249118823625657, 8.891397050194613e-05}, 1.0693147180559945},
		{4, [3]float64{0.25, 0.014058533129758728, 4.445698525097307e-05}, [3]float64{1, 0.035425283641654946, 4.4456985250973074e-05},
			[6]float64{0.7186733721555468, 0.282838504463329, 0.12069296180000197, 0.05574051687839747, 0.01425661197592103, 4.445698525097307e-05}, 1.138629436111989},
		{16, [3]float64{0.0625, 0.003514633282439682, 1.1114246312743267e-05}, [3]float64{1, 0.022316530279308786, 1.1114246312743267e-05},
			[6]float64{0.6483417151944336, 0.21296279928157397, 0.07180926074579297, 0.025218660847023767, 0.00376223184014256, 1.1114246312743267e-05}, 1.2772588722239782},
	} {
		check := func(name string, got []float64, ks []int, want []float64) {
			t.Helper()
			if len(got) != 16 {
				t.Fatalf("%s F=%g: %d frequencies, want 16", name, c.factor, len(got))
			}
			for i, k := range ks {
				if math.Abs(got[k]-want[i]) > 1e-12*want[i] {
					t.Errorf("%s F=%g: theta_%d = %.17g, want %.17g", name, c.factor, k, got[k], want[i])
				}
			}
		}
		pi, s := RopePI{}.Rotary(32, 128, 10000, c.factor)
		check("pi", pi, []int{0, 5, 15}, c.pi[:])
		if s != 1 {
			t.Errorf("pi F=%g: scale %g, want 1", c.factor, s)
		}
		ntk, s := RopeNTK{}.Rotary(32, 128, 10000, c.factor)
		check("ntk", ntk, []int{0, 5, 15}, c.ntk[:])
		if s != 1 {
			t.Errorf("ntk F=%g: scale %g, want 1", c.factor, s)
		}
		yarn, s := RopeYaRN{Alpha: 1, Beta: 32}.Rotary(32, 128, 10000, c.factor)
		check("yarn", yarn, []int{0, 1, 2, 3, 5, 15}, c.yarn[:])
		if math.Abs(s-c.yarnScale) > 1e-15 {
			t.Errorf("yarn F=%g: scale %.17g, want %.17g", c.factor, s, c.yarnScale)
		}
	}
}

// At factor 1 every extension is the plain scheme, bit for bit.
func TestExtensionsAtFactorOne(t *testing.T) {
	plain := RopeTheta(32, 10000)
	for _, e := range []RotaryExtension{RopePI{}, RopeNTK{}, RopeYaRN{Alpha: 1, Beta: 32}} {
		theta, s := e.Rotary(32, 128, 10000, 1)
		if s != 1 {
			t.Errorf("%s: scale %v at factor 1", e.Name(), s)
		}
		for k := range plain {
			if math.Float64bits(theta[k]) != math.Float64bits(plain[k]) {
				t.Errorf("%s: theta_%d = %v at factor 1, plain %v", e.Name(), k, theta[k], plain[k])
			}
		}
	}
	slopes := AlibiSlopes(4)
	got := AlibiInterp{}.Slopes(slopes, 1)
	for h := range slopes {
		if math.Float32bits(got[h]) != math.Float32bits(slopes[h]) {
			t.Errorf("interp: slope %d = %v at factor 1, plain %v", h, got[h], slopes[h])
		}
	}
	if got := (AlibiInterp{}).Slopes(slopes, 4); got[0] != 1.0/16 || got[3] != 1.0/1024 {
		t.Errorf("interp at 4: slopes %v, want 1/16 ... 1/1024", got)
	}
}

func TestExtensionRegistry(t *testing.T) {
	if got := strings.Join(ExtensionsFor("rope"), ","); got != "pi,ntk,dynamic-ntk,yarn" {
		t.Errorf("rope's extensions: %s", got)
	}
	if got := strings.Join(ExtensionsFor("alibi"), ","); got != "interp" {
		t.Errorf("alibi's extensions: %s", got)
	}
	if _, err := LookupExtension("bogus"); !errors.Is(err, ErrUnknownExtension) {
		t.Errorf("bogus: %v", err)
	}
	for _, c := range []struct{ scheme, name, want string }{
		{"alibi", "yarn", "extension yarn applies to rope runs, not alibi; for alibi use interp"},
		{"rope", "interp", "extension interp applies to alibi runs, not rope; for rope use pi, ntk, dynamic-ntk, yarn"},
		{"sinusoidal", "pi", "extension pi applies to rope runs, not sinusoidal; no extension applies to sinusoidal"},
	} {
		_, err := ExtensionFor(c.scheme, c.name)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s with %s: %v, want %q", c.scheme, c.name, err, c.want)
		}
	}
	if e, err := ExtensionFor("rope", "yarn"); err != nil || e.Name() != "yarn" {
		t.Errorf("rope with yarn: %v, %v", e, err)
	}
	if err := RegisterExtension(RopePI{}); err == nil {
		t.Error("registering pi twice: no error")
	}
}

// Dynamic NTK is NTK at the factor of the current length, max(1, n/L).
func TestDynamicNTK(t *testing.T) {
	var e Extension = RopeDynamicNTK{}
	if _, ok := e.(DynamicExtension); !ok || e.Name() != "dynamic-ntk" || e.Scheme() != "rope" {
		t.Fatalf("%T: not a dynamic rope extension named dynamic-ntk", e)
	}
	for _, c := range []struct {
		n    int
		want float64
	}{{1, 1}, {128, 1}, {129, 129.0 / 128}, {512, 4}} {
		f := DynamicFactor(c.n, 128)
		if f != c.want {
			t.Errorf("factor at %d: %v, want %v", c.n, f, c.want)
		}
		got, _ := RopeDynamicNTK{}.Rotary(32, 128, 10000, f)
		want, _ := RopeNTK{}.Rotary(32, 128, 10000, f)
		for k := range want {
			if got[k] != want[k] {
				t.Errorf("n %d: theta_%d %v, ntk %v", c.n, k, got[k], want[k])
			}
		}
	}
}
