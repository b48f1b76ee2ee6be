package data

import (
	"slices"
	"strings"
	"testing"
)

// byteSeq returns the token stream 0, 1, ..., 255, 0, 1, ... of n tokens.
func byteSeq(n int) []byte {
	s := make([]byte, n)
	for i := range s {
		s[i] = byte(i)
	}
	return s
}

func TestNewSamplerErrors(t *testing.T) {
	tests := []struct {
		name          string
		n, len, batch int
		want          string
	}{
		{"too short", 8, 8, 1, "corpus of 8 tokens is shorter than one window of 8+1"},
		{"empty", 0, 1, 1, "corpus of 0 tokens"},
		{"zero length", 10, 0, 1, "length 0"},
		{"negative batch", 10, 2, -3, "batch size -3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSampler(ByteTokenizer{}.Encode(byteSeq(tt.n)), tt.len, tt.batch, 1)
			if err == nil {
				t.Fatalf("NewSampler = %v, want error", s)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func mustSampler(t *testing.T, tokens []byte, length, batch int, seed uint64) *Sampler {
	t.Helper()
	s, err := NewSampler(ByteTokenizer{}.Encode(tokens), length, batch, seed)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func draw(s *Sampler, k int) [][]int {
	var out [][]int
	for range k {
		x, y := s.Batch()
		out = append(out, x, y)
	}
	return out
}

func TestSamplerDeterminism(t *testing.T) {
	tokens := byteSeq(1000)
	a := draw(mustSampler(t, tokens, 16, 4, 42), 20)
	b := draw(mustSampler(t, tokens, 16, 4, 42), 20)
	c := draw(mustSampler(t, tokens, 16, 4, 43), 20)
	if !slices.EqualFunc(a, b, slices.Equal) {
		t.Error("same seed gave different batches")
	}
	if slices.EqualFunc(a, c, slices.Equal) {
		t.Error("different seeds gave identical batches")
	}
}

func TestSamplerWindows(t *testing.T) {
	tests := []struct {
		n, length, batch int
		allStarts        bool // expect every possible start to be drawn
	}{
		{2, 1, 3, true},   // one possible start
		{10, 4, 5, true},  // six possible starts, including 5 = n-length-1
		{11, 10, 2, true}, // starts 0 and 1
		{500, 32, 8, false},
	}
	for _, tt := range tests {
		tokens := byteSeq(tt.n)
		s := mustSampler(t, tokens, tt.length, tt.batch, 7)
		starts := tt.n - tt.length
		seen := make([]bool, starts)
		const batches = 200
		for range batches {
			x, y := s.Batch()
			if len(x) != tt.batch*tt.length || len(y) != len(x) {
				t.Fatalf("batch sizes %d, %d", len(x), len(y))
			}
			for r := range tt.batch {
				xr := x[r*tt.length : (r+1)*tt.length]
				yr := y[r*tt.length : (r+1)*tt.length]
				// Token i is byte i%256: a window is a run of consecutive
				// values mod 256, and y is x shifted by one.
				start := xr[0]
				if tt.n <= 256 {
					if start > tt.n-tt.length-1 {
						t.Fatalf("n=%d length=%d: start %d out of [0, %d]", tt.n, tt.length, start, tt.n-tt.length-1)
					}
					seen[start] = true
				}
				for i := range xr {
					if xr[i] != (start+i)%256 {
						t.Fatalf("x row %v is not a contiguous window", xr)
					}
					if yr[i] != (xr[i]+1)%256 {
						t.Fatalf("y row %v is not x row %v shifted by one", yr, xr)
					}
				}
			}
		}
		if got := s.Batches(); got != batches {
			t.Errorf("Batches() = %d, want %d", got, batches)
		}
		for st, ok := range seen {
			if tt.allStarts && !ok {
				t.Errorf("n=%d length=%d: start %d never drawn in %d batches", tt.n, tt.length, st, batches)
			}
		}
	}
}

func TestSamplerNextPanicsOnBadLength(t *testing.T) {
	s := mustSampler(t, byteSeq(20), 4, 2, 1)
	defer func() {
		if recover() == nil {
			t.Error("Next with wrong slice lengths did not panic")
		}
	}()
	s.Next(make([]int, 8), make([]int, 7))
}

func TestSamplerResume(t *testing.T) {
	tokens := byteSeq(300)
	const before, after = 7, 25
	ref := mustSampler(t, tokens, 8, 3, 99)
	want := draw(ref, before+after)[2*before:]

	s := mustSampler(t, tokens, 8, 3, 99)
	draw(s, before)
	state, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// Drawing more from the original must not affect the saved state.
	draw(s, 3)

	// Restore into a sampler with a different seed and history.
	r := mustSampler(t, tokens, 8, 3, 12345)
	draw(r, 2)
	if err := r.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	if got := r.Batches(); got != before {
		t.Errorf("restored Batches() = %d, want %d", got, before)
	}
	got := draw(r, after)
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Error("restored sampler did not continue the uninterrupted sequence")
	}
	if r.Batches() != before+after {
		t.Errorf("Batches() = %d, want %d", r.Batches(), before+after)
	}
}

func TestSamplerUnmarshalGarbage(t *testing.T) {
	tokens := byteSeq(100)
	good, err := mustSampler(t, tokens, 8, 2, 5).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	otherCfg, err := mustSampler(t, tokens, 9, 2, 5).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	flipMagic := slices.Clone(good)
	flipMagic[0] ^= 0xff
	badPCG := slices.Clone(good)
	badPCG[samplerHeaderLen] ^= 0xff
	negative := slices.Clone(good)
	negative[len(samplerMagic)+24] = 0x80
	tests := []struct {
		name string
		data []byte
	}{
		{"nil", nil},
		{"short", []byte("abc")},
		{"text", []byte(strings.Repeat("garbage ", 20))},
		{"bad magic", flipMagic},
		{"truncated", good[:len(good)-1]},
		{"header only", good[:samplerHeaderLen]},
		{"trailing bytes", append(slices.Clone(good), 0)},
		{"bad generator state", badPCG},
		{"negative counter", negative},
		{"other config", otherCfg},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustSampler(t, tokens, 8, 2, 5)
			ref := mustSampler(t, tokens, 8, 2, 5)
			if err := s.UnmarshalBinary(tt.data); err == nil {
				t.Fatal("UnmarshalBinary accepted garbage")
			}
			// A failed restore leaves the sampler unchanged.
			if !slices.EqualFunc(draw(s, 3), draw(ref, 3), slices.Equal) || s.Batches() != 3 {
				t.Error("failed UnmarshalBinary changed the sampler")
			}
		})
	}
	var zero Sampler
	if err := zero.UnmarshalBinary(good); err == nil {
		t.Error("UnmarshalBinary on a zero Sampler did not fail")
	}
	if _, err := zero.MarshalBinary(); err == nil {
		t.Error("MarshalBinary on a zero Sampler did not fail")
	}
}
