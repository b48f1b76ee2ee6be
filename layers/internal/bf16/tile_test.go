package bf16

import (
	"math"
	"testing"
)

// TileDot on cases worked by hand: the even and odd steps summed apart
// (which Intel's pseudo-code, adding one product at a time, would round
// away), a product below the smallest normal flushed, signed zeros,
// infinities, denormal inputs read as zeros.
func TestTileDotHandWorked(t *testing.T) {
	const one, tiny = 0x3f80, 0x3380 // 1 and 2^-24
	negZero := float32(math.Copysign(0, -1))
	for _, c := range []struct {
		name string
		a, b []uint16 // two pairs each; b unpacked is b itself for one column
		c    float32
		want uint32
	}{
		// Even: 1 + 0; odd: 2^-24 + 2^-24 = 2^-23; 1 + 2^-23 is a float32.
		// One product at a time: 1 + 2^-24 ties to 1, and so again.
		{"even and odd apart", []uint16{one, tiny, 0, tiny}, []uint16{one, one, one, one}, 0, 0x3f800001},
		// (1 - 2^-8) · 2^-126 is below 2^-126: a zero.
		{"product below the smallest normal", []uint16{0x3f7f, 0, 0, 0}, []uint16{0x0080, 0, 0, 0}, 0, 0},
		// Even steps 2^-125 · 1 and -1.5 · 2^-126: their sum, 2^-127, is
		// below the smallest normal, a +0 (a denormal would keep it).
		{"sum below the smallest normal", []uint16{0x0100, 0, 0xbfc0, 0}, []uint16{one, 0, 0x0080, 0}, 0, 0},
		// The same sum added to C = 2^-126: 2^-126 + 0, where the unflushed
		// sum would give 1.5 * 2^-126, a normal float32.
		{"flushed sum into C", []uint16{0x0100, 0, 0xbfc0, 0}, []uint16{one, 0, 0x0080, 0}, 0x1p-126, 0x00800000},
		// -0 · 1 twice in each lane: the lanes start at +0, so +0; -0 + +0 = +0.
		{"negative zeros", []uint16{0x8000, 0x8000, 0x8000, 0x8000}, []uint16{one, one, one, one}, negZero, 0},
		// A denormal C reads as zero: -denormal + 1·1 = 1.
		{"denormal accumulator", []uint16{one, 0, 0, 0}, []uint16{one, 0, 0, 0}, math.Float32frombits(0x80000001), 0x3f800000},
		// +inf in the even lane, -inf in the odd one: NaN.
		{"inf - inf", []uint16{0x7f80, 0xff80, 0, 0}, []uint16{one, one, 0, 0}, 1, 0x7fc00000},
		{"inf", []uint16{0x7f80, 0, 0, 0}, []uint16{one, 0, 0, 0}, -5, 0x7f800000},
		// A denormal input is a zero: 2^-133 · max stays out.
		{"denormal input", []uint16{0x0001, 0, 0, 0}, []uint16{0x7f7f, 0, 0, 0}, 2, 0x40000000},
		// Overflow: max · 2 is +inf.
		{"overflow", []uint16{0x7f7f, 0, 0, 0}, []uint16{0x4000, 0, 0, 0}, 0, 0x7f800000},
	} {
		got := []float32{c.c}
		TileDot(1, 1, 2, got, 1, c.a, 4, c.b, 2)
		g := math.Float32bits(got[0])
		if g != c.want && !(c.want == 0x7fc00000 && got[0] != got[0]) {
			t.Errorf("%s: %g (%#08x), want %#08x", c.name, got[0], g, c.want)
		}
	}
}

// PackTileB lays B out as the instruction reads it, and TileDot then
// computes the product of the unpacked matrices.
func TestPackTileB(t *testing.T) {
	b := []uint16{1, 2, 3, 4, 5, 6, 7, 8, 9} // 3 x 3
	got := make([]uint16, 2*6)
	PackTileB(got, b, 3, 3, 3)
	want := []uint16{1, 4, 2, 5, 3, 6, 7, 0, 8, 0, 9, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("packed %v, want %v", got, want)
		}
	}
}
