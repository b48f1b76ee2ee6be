package position

import (
	"math"
	"testing"
)

// At L = 1024 (head 32, base 10000) the fastest pairs turn more than
// Beta = 32 times over L (r_0 = 1024/(2 pi) = 162.97, r_1 = 91.65, r_2 = 51.54):
// gamma clamps to 1 and they keep theta_k exactly, at any factor.
func TestYaRNRampClampsAtOne(t *testing.T) {
	theta, _ := RopeYaRN{Alpha: 1, Beta: 32}.Rotary(32, 1024, 10000, 4)
	plain := RopeTheta(32, 10000)
	for k := 0; k < 3; k++ {
		if theta[k] != plain[k] {
			t.Errorf("theta_%d = %.17g, want theta_%d = %.17g", k, theta[k], k, plain[k])
		}
	}
	if want := 0.16484126053715648; math.Abs(theta[3]-want) > 1e-12*want {
		t.Errorf("theta_3 = %.17g, want %.17g", theta[3], want)
	}
}

// The registered yarn is YaRN's alpha = 1, beta = 32.
func TestRegisteredYaRNParameters(t *testing.T) {
	e, err := LookupExtension("yarn")
	if err != nil {
		t.Fatal(err)
	}
	if y, ok := e.(RopeYaRN); !ok || y.Alpha != 1 || y.Beta != 32 {
		t.Fatalf("registered yarn %#v, want RopeYaRN{Alpha: 1, Beta: 32}", e)
	}
	theta, _ := e.(RotaryExtension).Rotary(32, 128, 10000, 2)
	if want := 0.3760061113723357; math.Abs(theta[1]-want) > 1e-12 {
		t.Errorf("registered yarn theta_1 at F=2, L=128: %.17g, want %.17g", theta[1], want)
	}
}
