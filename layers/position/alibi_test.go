package position

import (
	"math"
	"testing"
)

func pow2(e float64) float32 { return float32(math.Pow(2, e)) }

func TestAlibiSlopes(t *testing.T) {
	tests := []struct {
		n    int
		want []float32
	}{
		{1, []float32{pow2(-8)}},
		{2, []float32{pow2(-4), pow2(-8)}},
		{8, []float32{0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625}},
		// 12 heads: the 8-head slopes, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5
		// (every other slope of the 16-head sequence 2^-0.5, 2^-1, ...).
		{12, []float32{pow2(-1), pow2(-2), pow2(-3), pow2(-4), pow2(-5), pow2(-6), pow2(-7), pow2(-8),
			pow2(-0.5), pow2(-1.5), pow2(-2.5), pow2(-3.5)}},
		// 6 heads: the 4-head slopes 2^-2..2^-8, then 2^-1, 2^-3 from the 8-head sequence.
		{6, []float32{pow2(-2), pow2(-4), pow2(-6), pow2(-8), pow2(-1), pow2(-3)}},
		{4, []float32{pow2(-2), pow2(-4), pow2(-6), pow2(-8)}},
	}
	for _, tc := range tests {
		got := AlibiSlopes(tc.n)
		if len(got) != len(tc.want) {
			t.Fatalf("n=%d: got %d slopes, want %d", tc.n, len(got), len(tc.want))
		}
		for i := range got {
			if math.Abs(float64(got[i]-tc.want[i])) > 1e-7*float64(tc.want[i]) {
				t.Errorf("n=%d slope %d = %g, want %g", tc.n, i, got[i], tc.want[i])
			}
		}
	}
}

func TestAlibiSlopesPanicsOnZero(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("AlibiSlopes(0) did not panic")
		}
	}()
	AlibiSlopes(0)
}

func TestAlibiBiasCausal(t *testing.T) {
	slopes := []float32{0.5, 0.125}
	const n = 6
	b := AlibiBias(slopes, n, n, 0, true)
	if s := b.Shape(); s[0] != 2 || s[1] != n || s[2] != n {
		t.Fatalf("shape %v", s)
	}
	data := b.Data().([]float32)
	for h, m := range slopes {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				got := data[(h*n+i)*n+j]
				var want float32
				switch {
				case j > i:
					want = -1e9
				case j == i:
					want = 0
				default:
					want = -m * float32(i-j)
				}
				if got != want {
					t.Errorf("head %d (%d,%d) = %g, want %g", h, i, j, got, want)
				}
			}
		}
	}
}

// A query block with an offset must equal the matching rows of the full
// matrix: the bias is a true (query, key) outer difference.
func TestAlibiBiasOffsetRows(t *testing.T) {
	slopes := AlibiSlopes(4)
	for _, causal := range []bool{true, false} {
		const k = 9
		full := AlibiBias(slopes, k, k, 0, causal).Data().([]float32)
		for q := 1; q <= k; q++ {
			part := AlibiBias(slopes, q, k, k-q, causal).Data().([]float32)
			for h := range slopes {
				for i := 0; i < q; i++ {
					for j := 0; j < k; j++ {
						got := part[(h*q+i)*k+j]
						want := full[(h*k+(k-q+i))*k+j]
						if got != want {
							t.Fatalf("causal=%v q=%d head %d row %d col %d: %g, want %g", causal, q, h, i, j, got, want)
						}
					}
				}
			}
		}
	}
	// The broken "same axis" construction gives a constant column; ours varies.
	one := AlibiBias([]float32{1}, 3, 3, 0, false).Data().([]float32)
	if one[0*3+0] == one[1*3+0] {
		t.Errorf("column 0 is constant: %v", one)
	}
}

func TestAlibiBiasNonCausalSymmetric(t *testing.T) {
	slopes := AlibiSlopes(3)
	const n = 7
	d := AlibiBias(slopes, n, n, 0, false).Data().([]float32)
	for h, m := range slopes {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				a, b := d[(h*n+i)*n+j], d[(h*n+j)*n+i]
				if a != b {
					t.Fatalf("head %d not symmetric at (%d,%d): %g vs %g", h, i, j, a, b)
				}
				if want := -m * float32(abs(i-j)); a != want {
					t.Fatalf("head %d (%d,%d) = %g, want %g", h, i, j, a, want)
				}
			}
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestCausalMask(t *testing.T) {
	m := CausalMask(3, 5, 2).Data().([]float32)
	want := []float32{
		0, 0, 0, -1e9, -1e9,
		0, 0, 0, 0, -1e9,
		0, 0, 0, 0, 0,
	}
	for i := range want {
		if m[i] != want[i] || math.Signbit(float64(m[i])) != math.Signbit(float64(want[i])) {
			t.Fatalf("mask = %v, want %v", m, want)
		}
	}
}

// With d = 2 or 3 there is one frequency, 1 (the fairseq formula's
// log(10000)/(d/2-1) would divide by zero): the columns are sin p and cos p,
// and an odd d's last column is 0.
func TestSinusoidalTableNarrow(t *testing.T) {
	for _, d := range []int{2, 3} {
		tab := SinusoidalTable(3, d).Data().([]float32)
		for p := 0; p < 3; p++ {
			want := []float64{math.Sin(float64(p)), math.Cos(float64(p)), 0}[:d]
			for k, w := range want {
				if got := float64(tab[p*d+k]); math.Abs(got-w) > 1e-7 || math.IsNaN(got) {
					t.Errorf("d=%d p=%d column %d: %g, want %g", d, p, k, got, w)
				}
			}
		}
	}
}

func TestSinusoidalTable(t *testing.T) {
	const d = 8
	tab := SinusoidalTable(5, d).Data().([]float32)
	for p := 0; p < 5; p++ {
		for k := 0; k < d/2; k++ {
			f := math.Pow(10000, -float64(k)/float64(d/2-1))
			if got, want := float64(tab[p*d+k]), math.Sin(float64(p)*f); math.Abs(got-want) > 1e-6 {
				t.Errorf("sin p=%d k=%d: %g want %g", p, k, got, want)
			}
			if got, want := float64(tab[p*d+d/2+k]), math.Cos(float64(p)*f); math.Abs(got-want) > 1e-6 {
				t.Errorf("cos p=%d k=%d: %g want %g", p, k, got, want)
			}
		}
	}
}
