//go:build linux && amd64 && !purego

package bf16

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// tileCase is one tile product: C's rows, columns and A's pairs, with
// C, A and packed B.
type tileCase struct {
	m, n, kp int
	c        []float32
	a, bp    []uint16
}

// randomTile draws a tile product whose values include the edges of the
// arithmetic when edges is set: bfloat16 denormals, signed zeros,
// infinities, large and tiny magnitudes whose sums cancel or fall below
// the smallest normal.
func randomTile(r *rand.Rand, m, n, kp int, edges bool) tileCase {
	t := tileCase{m: m, n: n, kp: kp, c: make([]float32, m*n), a: make([]uint16, m*2*kp), bp: make([]uint16, kp*2*n)}
	word := func() uint16 {
		if edges {
			switch r.IntN(12) {
			case 0:
				return uint16(r.IntN(0x80)) | uint16(r.IntN(2))<<15 // a denormal or zero
			case 1:
				return 0x7f80 | uint16(r.IntN(2))<<15 // an infinity
			case 2:
				return uint16(0x0080+r.IntN(0x300)) | uint16(r.IntN(2))<<15 // near the smallest normal
			}
		}
		return Round(float32(r.NormFloat64() * math.Exp2(float64(r.IntN(20)-10))))
	}
	for i := range t.a {
		t.a[i] = word()
	}
	for i := range t.bp {
		t.bp[i] = word()
	}
	for i := range t.c {
		t.c[i] = float32(r.NormFloat64())
		if edges && r.IntN(8) == 0 {
			t.c[i] = math.Float32frombits(uint32(r.IntN(0x800000)) | uint32(r.IntN(2))<<31) // a denormal accumulator
		}
	}
	return t
}

// The instruction gives TileDot's bits, for every shape of tile and on the
// edges of the arithmetic (NaNs aside, whose payloads are not compared:
// both must be NaN).
func TestTileDotIsTDPBF16PS(t *testing.T) {
	if !HasAMX() {
		t.Skip("this CPU or kernel has no AMX-BF16 tiles: the instruction is not checked here (TileDot's own tests still run)")
	}
	r := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{{16, 16, 16}, {1, 1, 1}, {16, 1, 16}, {1, 16, 16}, {7, 13, 5}, {16, 16, 1}, {3, 16, 9}}
	for s := 0; s < 200; s++ {
		shapes = append(shapes, [3]int{1 + r.IntN(16), 1 + r.IntN(16), 1 + r.IntN(16)})
	}
	for _, edges := range []bool{false, true} {
		for _, sh := range shapes {
			tc := randomTile(r, sh[0], sh[1], sh[2], edges)
			want := append([]float32(nil), tc.c...)
			TileDot(tc.m, tc.n, tc.kp, want, tc.n, tc.a, 2*tc.kp, tc.bp, 2*tc.n)
			got := append([]float32(nil), tc.c...)
			TileDotAMX(tc.m, tc.n, tc.kp, got, tc.n, tc.a, 2*tc.kp, tc.bp, 2*tc.n)
			for i := range got {
				g, w := math.Float32bits(got[i]), math.Float32bits(want[i])
				if g != w && !(got[i] != got[i] && want[i] != want[i]) {
					t.Fatalf("%dx%dx%d (edges %v), element %d: TDPBF16PS gives %g (%#08x), TileDot %g (%#08x); C was %g (%#08x)",
						tc.m, tc.n, tc.kp, edges, i, got[i], g, want[i], w, tc.c[i], math.Float32bits(tc.c[i]))
				}
			}
		}
	}
}

// Every combination of the arithmetic's edge values, in a product of two
// pairs: signed zeros, denormals, the smallest normal, sums that round
// across it, infinities (inf - inf is NaN) and overflow.
func TestTileDotEdgesAreTDPBF16PS(t *testing.T) {
	if !HasAMX() {
		t.Skip("this CPU or kernel has no AMX-BF16 tiles: the instruction is not checked here")
	}
	edges := []uint16{0x0000, 0x8000, 0x0001, 0x807f, 0x0080, 0x8080, 0x0081, 0x3f80, 0xbf80, 0x3f81, 0x1f80, 0x9f80, 0x7f80, 0xff80, 0x7f7f, 0xff7f, 0x2000, 0xa000}
	accs := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0x1p-126, -0x1p-126, math.Float32frombits(1), math.Float32frombits(0x807fffff),
		float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, 0x1p-60}
	r := rand.New(rand.NewPCG(5, 6))
	for s := 0; s < 200000; s++ {
		a := []uint16{edges[r.IntN(len(edges))], edges[r.IntN(len(edges))], edges[r.IntN(len(edges))], edges[r.IntN(len(edges))]}
		b := []uint16{edges[r.IntN(len(edges))], edges[r.IntN(len(edges))], edges[r.IntN(len(edges))], edges[r.IntN(len(edges))]}
		c := []float32{accs[r.IntN(len(accs))]}
		want, got := []float32{c[0]}, []float32{c[0]}
		TileDot(1, 1, 2, want, 1, a, 4, b, 2)
		TileDotAMX(1, 1, 2, got, 1, a, 4, b, 2)
		if math.Float32bits(got[0]) != math.Float32bits(want[0]) && !(got[0] != got[0] && want[0] != want[0]) {
			t.Fatalf("A %04x, B %04x, C %g (%#08x): TDPBF16PS %g (%#08x), TileDot %g (%#08x)", a, b, c[0], math.Float32bits(c[0]),
				got[0], math.Float32bits(got[0]), want[0], math.Float32bits(want[0]))
		}
	}
}

// The case that tells the instruction from Intel's pseudo-code: 1 + 2^-24
// + 2^-24, with the two 2^-24 in the odd steps, is 1 + 2^-23 on the tile
// unit (one product at a time would give 1).
func TestTDPBF16PSSumsEvenAndOddApart(t *testing.T) {
	if !HasAMX() {
		t.Skip("this CPU or kernel has no AMX-BF16 tiles")
	}
	got := []float32{0}
	TileDotAMX(1, 1, 2, got, 1, []uint16{0x3f80, 0x3380, 0, 0x3380}, 4, []uint16{0x3f80, 0x3f80, 0x3f80, 0x3f80}, 2)
	if b := math.Float32bits(got[0]); b != 0x3f800001 {
		t.Errorf("TDPBF16PS gives %g (%#08x), want 1 + 2^-23", got[0], b)
	}
}

// The tile peak runs and gives a positive rate where AMX is, and 0
// elsewhere (its speed is BenchmarkTilePeak's and cmd/bench's business).
func TestTilePeak(t *testing.T) {
	p := TilePeak(1, 20*time.Millisecond)
	if !HasAMX() {
		if p != 0 {
			t.Fatalf("TilePeak = %v without AMX", p)
		}
		t.Skip("no AMX tiles here")
	}
	if !(p > 0) {
		t.Fatalf("TilePeak = %v", p)
	}
	t.Logf("tile peak on one goroutine: %.0f GFLOP/s", p)
}
