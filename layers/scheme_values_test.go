package layers

import (
	"github.com/alibi-go/alibi/layers/position"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// kernelRow returns the biases the kernel bias of scheme (for params, in
// float64 and float32) adds for head h to the keys j0..pos of the query at
// pos: out[x] is the bias of the key j0+x, at distance pos-j0-x.
func kernelRow(scheme position.BiasScheme, params []float64, heads, kLen, h, pos, j0 int) (b64 []float64, b32 []float32) {
	b64 = make([]float64, pos-j0+1)
	scheme.Bias64(params, heads, kLen).Add(h, pos, j0, b64)
	b32 = make([]float32, pos-j0+1)
	scheme.Bias32(convertTo[float32](params), heads, kLen).Add(h, pos, j0, b32)
	return b64, b32
}

// biasValue is an expected bias: head h, query at pos, key at distance d.
type biasValue struct {
	h, pos, d int
	want      float64
}

// checkValues compares the kernel's biases with the expected ones, in
// float64 to 1e-12 and float32 to 1e-6 (absolute, with |want| <= 3), for
// whole rows (j0 = 0) and for rows starting at the key itself (j0 = pos-d:
// the first and farthest key of a tile).
func checkValues(t *testing.T, scheme position.BiasScheme, params []float64, heads, kLen int, values []biasValue) {
	t.Helper()
	for _, v := range values {
		for _, j0 := range []int{0, v.pos - v.d} {
			b64, b32 := kernelRow(scheme, params, heads, kLen, v.h, v.pos, j0)
			x := v.pos - v.d - j0
			if math.Abs(b64[x]-v.want) > 1e-12 || math.Abs(float64(b32[x])-v.want) > 1e-6 {
				t.Errorf("%s head %d, query %d, distance %d (row from key %d): bias %.15g (float32 %.8g), want %.15g",
					scheme.Name(), v.h, v.pos, v.d, j0, b64[x], b32[x], v.want)
			}
		}
	}
}

// The T5 bucket of every distance 0..2000 equals the exact integer rule
// (bucket >= 16 + k iff n^16 >= 16^16 * 8^k, no floating point); 0..15 are
// their own buckets, from 128 on the last; distance 0 and negative
// distances give bucket 0. Other settings (8 buckets up to 20) follow the
// general exact rule too.
func TestT5Bucket(t *testing.T) {
	for n := 0; n <= 2000; n++ {
		if got, want := (position.T5Scheme{}).Bucket(n), exactT5Bucket(n, 32, 128); got != want {
			t.Errorf("bucket(%d) = %d, exact %d", n, got, want)
		}
		if got, want := (position.T5Scheme{Buckets: 8, MaxDistance: 20}).Bucket(n), exactT5Bucket(n, 8, 20); got != want {
			t.Errorf("8 buckets up to 20: bucket(%d) = %d, exact %d", n, got, want)
		}
	}
	for _, tc := range []struct{ n, want int }{
		{-5, 0}, {0, 0}, {1, 1}, {15, 15},
		{16, 16}, {17, 16}, // 16 + floor(16 log(17/16)/log 8) = 16 + floor(0.466)
		{20, 17},  // floor(16 log 1.25 / log 8) = floor(1.717)
		{32, 21},  // floor(16/3)
		{45, 23},  // floor(16 log 2.8125 / log 8) = floor(7.957)
		{64, 26},  // floor(32/3)
		{127, 31}, // floor(15.94)
		{128, 31}, {129, 31}, {100000, 31},
	} {
		if got := (position.T5Scheme{}).Bucket(tc.n); got != tc.want {
			t.Errorf("bucket(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

// The kernel's T5 bias of head h at distance d is table[bucket(d)][h]: with
// table[b][h] = 100 b + h every bias names its bucket.
func TestT5Values(t *testing.T) {
	const heads = 3
	p := make([]float64, position.T5Buckets*heads)
	for b := 0; b < position.T5Buckets; b++ {
		for h := 0; h < heads; h++ {
			p[b*heads+h] = float64(100*b + h)
		}
	}
	for _, kLen := range []int{1, 40, 300} {
		for h := 0; h < heads; h++ {
			pos := kLen - 1
			b64, _ := kernelRow(position.T5Scheme{}, p, heads, kLen, h, pos, 0)
			for x, got := range b64 {
				if want := float64(100*exactT5Bucket(pos-x, 32, 128) + h); got != want {
					t.Fatalf("keys %d, head %d, distance %d: bias %g, want %g", kLen, h, pos-x, got, want)
				}
			}
		}
	}
}

// KERPLE biases at known distances: r1 = (0.5, 1.5), r2 = (2, 0.25).
func TestKerpleValues(t *testing.T) {
	p := []float64{0.5, 1.5, 2, 0.25}
	checkValues(t, position.KerpleScheme{}, p, 2, 40, []biasValue{
		{0, 5, 0, 0},                     // -0.5 log(1) = 0
		{1, 5, 0, 0},                     // -1.5 log(1) = 0
		{0, 5, 1, -0.5493061443340549},   // -0.5 log(1 + 2*1) = -0.5 log 3
		{0, 30, 10, -1.5222612188617115}, // -0.5 log(1 + 2*10) = -0.5 log 21
		{1, 4, 4, -1.0397207708399179},   // -1.5 log(1 + 0.25*4) = -1.5 log 2
		{1, 39, 12, -2.0794415416798357}, // -1.5 log(1 + 0.25*12) = -1.5 log 4
	})
}

// FIRE biases at known positions, with c = 1, L = 3 and a two-unit MLP
// (the other units have W1 = b1 = W2 = 0): z0 = relu(u), z1 = relu(1 - 2u),
//
//	head 0: f0(u) = 2 z0 + 3 z1 - 1,  head 1: f1(u) = -z0 + 0.5,
//
// u = log(1 + d) / log(1 + max(3, i)). Rows up to 3 use the tables, rows
// beyond compute the bias per key; with min for max row 7 would give
// u(d=3) = 1 and f0 = 1 instead of 1/3.
func TestFireValues(t *testing.T) {
	const heads = 2
	lay := position.NewFireLayout(heads)
	p := make([]float64, position.FireParamLen(heads))
	p[lay.W1+0], p[lay.B1+0] = 1, 0
	p[lay.W1+1], p[lay.B1+1] = -2, 1
	p[lay.W2+0*heads+0], p[lay.W2+1*heads+0], p[lay.B2+0] = 2, 3, -1
	p[lay.W2+0*heads+1], p[lay.W2+1*heads+1], p[lay.B2+1] = -1, 0, 0.5
	p[lay.C], p[lay.L] = 1, 3
	checkValues(t, position.FireScheme{}, p, heads, 12, []biasValue{
		// Row 2 (<= L): u = log(1+d)/log 4.
		{0, 2, 0, 2},                   // u = 0: 0 + 3 - 1
		{1, 2, 0, 0.5},                 // -0 + 0.5
		{0, 2, 1, 0},                   // u = log 2/log 4 = 1/2: 1 + 0 - 1
		{1, 2, 1, 0},                   // -1/2 + 0.5
		{0, 2, 2, 0.5849625007211563},  // u = log 3/log 4 = 0.79248: 2u - 1
		{1, 2, 2, -0.2924812503605781}, // -u + 0.5
		// Row 3 (= L): u = log(1+d)/log 4.
		{0, 3, 3, 1}, // u = 1: 2 - 1
		// Row 7 (> L): u = log(1+d)/log 8.
		{0, 7, 0, 2},                    // u = 0
		{0, 7, 1, 2.0 / 3},              // u = 1/3: 2/3 + 3(1/3) - 1
		{1, 7, 1, 1.0 / 6},              // -1/3 + 1/2
		{0, 7, 2, 0.05664166714743768},  // u = log 3/log 8 = 0.52832: 2u - 1
		{1, 7, 2, -0.02832083357371884}, // -u + 0.5
		{0, 7, 3, 1.0 / 3},              // u = 2/3: 4/3 - 1
		{1, 7, 3, -1.0 / 6},             // -2/3 + 1/2
		{0, 7, 7, 1},                    // u = 1
		{1, 11, 11, -0.5},               // u = 1 (row 11, log 12 / log 12)
		{0, 11, 1, 2*math.Log(2)/math.Log(12) + 3*(1-2*math.Log(2)/math.Log(12)) - 1}, // u = log 2/log 12 < 1/2
	})
}

// Projections clamp, leave valid values bit-identical, and map NaN to the
// floor; the inits have the documented ranges and layout and are
// reproducible from the seed.
func TestProjectAndInit(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, tc := range []struct {
		in, want float32
	}{{-1, 0.01}, {0, 0.01}, {0.005, 0.01}, {nan, 0.01}, {0.01, 0.01}, {0.7, 0.7}, {3, 3}, {inf, inf}} {
		p := []float32{tc.in}
		position.KerpleScheme{}.Project(p)
		if math.Float32bits(p[0]) != math.Float32bits(tc.want) {
			t.Errorf("KERPLE Project(%g) = %g, want %g", tc.in, p[0], tc.want)
		}
	}
	for _, tc := range []struct{ c, l, wantC, wantL float32 }{
		{0.1, 128, 0.1, 128}, {-0.5, 0.5, 1e-3, 1}, {0, -3, 1e-3, 1}, {nan, nan, 1e-3, 1}, {2e-3, 1, 2e-3, 1},
	} {
		p := []float32{0.3, -0.2, tc.c, tc.l}
		position.FireScheme{}.Project(p)
		if p[0] != 0.3 || p[1] != -0.2 || p[2] != tc.wantC || p[3] != tc.wantL {
			t.Errorf("FIRE Project(c %g, L %g) = %v, want MLP unchanged, c %g, L %g", tc.c, tc.l, p, tc.wantC, tc.wantL)
		}
	}
	var _ position.Projector = position.KerpleScheme{}
	var _ position.Projector = position.FireScheme{}
	if _, ok := any(position.T5Scheme{}).(position.Projector); ok {
		t.Error("T5Scheme is a position.Projector; its table is unconstrained")
	}

	const heads = 8
	k := position.KerpleInit(rand.New(rand.NewPCG(1, 2)), heads)
	if len(k) != 2*heads || !slices.Equal(k, position.KerpleInit(rand.New(rand.NewPCG(1, 2)), heads)) {
		t.Fatalf("KerpleInit: %d values or not reproducible", len(k))
	}
	for h := 0; h < heads; h++ {
		if r1, r2 := k[h], k[heads+h]; !(r1 >= position.KerpleMin && r1 < 2 && r2 >= position.KerpleMin && r2 < 1) {
			t.Errorf("KerpleInit head %d: r1 %g, r2 %g outside [0.01, 2) and [0.01, 1)", h, r1, r2)
		}
	}

	f := position.FireScheme{}.Init(rand.New(rand.NewPCG(3, 4)), heads, 128)
	lay := position.NewFireLayout(heads)
	if len(f) != position.FireParamLen(heads) || len(f) != 32*10+8+2 || !slices.Equal(f, position.FireScheme{}.Init(rand.New(rand.NewPCG(3, 4)), heads, 128)) {
		t.Fatalf("FireInit: %d values (want %d) or not reproducible", len(f), position.FireParamLen(heads))
	}
	if lay.C != len(f)-2 || lay.L != len(f)-1 || lay.B2 != lay.W2+position.FireWidth*heads || lay.W2 != 2*position.FireWidth {
		t.Errorf("layout %+v for %d values", lay, len(f))
	}
	if f[lay.C] != position.FireInitC || f[lay.L] != 128 {
		t.Errorf("FireInit: c %g, L %g, want %g, 128", f[lay.C], f[lay.L], float32(position.FireInitC))
	}
	s := float32(1 / math.Sqrt(position.FireWidth))
	for i, v := range f[:lay.C] {
		bound := float32(1)
		if i >= lay.W2 {
			bound = s
		}
		if !(v > -bound && v < bound) || v == 0 {
			t.Errorf("FireInit parameter %d = %g, want within (-%g, %g), not 0", i, v, bound, bound)
		}
	}
}

// The kernel bias is reused while the parameters stay and the length
// suffices, grows by doubling for longer calls, and is rebuilt for new
// parameters.
func TestSchemeBiasReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	for _, sc := range []schemeCase{t5Case(rng, 2), kerpleCase(rng, 2), fireCase(rng, 2, 6.5)} {
		p := convertTo[float32](sc.params)
		var cache biasMemo[float32]
		kept := func() *memoEntry[float32] { return cache.last }
		cache.bias(sc.scheme, p, 2, 10)
		first := kept()
		if cache.bias(sc.scheme, p, 2, 7); kept() != first || first.n != 10 {
			t.Errorf("%v: a shorter call rebuilt the bias", sc)
		}
		cache.bias(sc.scheme, p, 2, 11)
		if grown := kept(); grown == first || grown.n != 20 {
			t.Errorf("%v: 11 keys after 10: %d keys, want a new bias for 20", sc, grown.n)
		}
		grown := kept()
		if cache.bias(sc.scheme, p, 2, 20); kept() != grown {
			t.Errorf("%v: 20 keys after growing to 20 rebuilt the bias", sc)
		}
		p[0] += 0.5
		if cache.bias(sc.scheme, p, 2, 12); kept() == grown || kept().n != 12 {
			t.Errorf("%v: new parameters: %d keys, want a new bias for 12", sc, kept().n)
		}
	}
}
