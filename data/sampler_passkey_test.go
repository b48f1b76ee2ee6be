package data

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// rowText is a row's length+1 tokens: its inputs and its last target.
func rowText(x, y []int, row, length int) []byte {
	out := make([]byte, 0, length+1)
	for _, v := range x[row*length : (row+1)*length] {
		out = append(out, byte(v))
	}
	return append(out, byte(y[(row+1)*length-1]))
}

// parseEpisode reports whether text is a passkey episode as MixPasskey lays
// it out (prompt, answer, plain text), with its key, the offset of its
// statement and the end of its answer.
func parseEpisode(text []byte) (key string, before, end int, ok bool) {
	q := bytes.Index(text, []byte(PasskeyQuestion))
	if q < 0 || q+len(PasskeyQuestion)+PasskeyDigits > len(text) {
		return "", 0, 0, false
	}
	end = q + len(PasskeyQuestion) + PasskeyDigits
	key = string(text[end-PasskeyDigits : end])
	before = bytes.Index(text[:q], passkeyStatement([]byte(key)))
	return key, before, end, before >= 0
}

func TestMixPasskeyRows(t *testing.T) {
	text := []byte(strings.Repeat("Light is propagated in rays; the rays are refracted. ", 400))
	const length, batch = 128, 8
	for _, frac := range []float64{0.1, 0.5, 0.9} {
		t.Run(fmt.Sprint(frac), func(t *testing.T) {
			s, err := NewSampler(ByteTokenizer{}.Encode(text), length, batch, 7)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.MixPasskey(frac, ByteTokenizer{}); err != nil {
				t.Fatal(err)
			}
			episodes, rows := 0, 0
			befores, ends := map[int]bool{}, map[int]bool{}
			for range 200 {
				x, y := s.Batch()
				for r := range batch {
					rows++
					row := rowText(x, y, r, length)
					key, before, end, ok := parseEpisode(row)
					if !ok {
						if !bytes.Contains(text, row) {
							t.Fatalf("row %q is neither an episode nor a slice of the text", row)
						}
						continue
					}
					episodes++
					befores[before] = true
					ends[end] = true
					// The key: twice in the statement, never elsewhere before the answer.
					if got := bytes.Count(row[:end-PasskeyDigits], []byte(key)); got != 2 {
						t.Fatalf("key %s occurs %d times before the answer, want 2: %q", key, got, row)
					}
					if !bytes.Contains(text, row[:before]) || !bytes.Contains(text, row[end:]) {
						t.Fatalf("filler before the statement or text after the answer is not a slice of the text: %q", row)
					}
				}
			}
			got := float64(episodes) / float64(rows)
			// 1600 Bernoulli draws: 5 standard deviations.
			sd := 5 * math.Sqrt(frac*(1-frac)/float64(rows))
			if got < frac-sd || got > frac+sd {
				t.Errorf("%d of %d rows are episodes (%.3f), want %.2f ± %.3f", episodes, rows, got, frac, sd)
			}
			// The statement's offset ranges over 0..length+1-PasskeyWindowMin,
			// and the answer's end over PasskeyWindowMin..length+1.
			room := length + 1 - PasskeyWindowMin
			if !befores[0] || len(befores) < room/2 {
				t.Errorf("statement offsets: %d distinct in 0..%d, 0 seen %v", len(befores), room, befores[0])
			}
			for b := range befores {
				if b < 0 || b > room {
					t.Errorf("statement offset %d outside 0..%d", b, room)
				}
			}
			if frac >= 0.5 && (!ends[PasskeyWindowMin] || !ends[length+1] || len(ends) < room/2) {
				t.Errorf("answer ends %d distinct in %d..%d, ends seen %v %v", len(ends), PasskeyWindowMin, length+1, ends[PasskeyWindowMin], ends[length+1])
			}
		})
	}
}

func TestMixPasskeyZeroIsPlain(t *testing.T) {
	text := []byte(strings.Repeat("abcdefghij0123456789", 50))
	a, _ := NewSampler(ByteTokenizer{}.Encode(text), 120, 4, 3)
	b, _ := NewSampler(ByteTokenizer{}.Encode(text), 120, 4, 3)
	if err := b.MixPasskey(0, ByteTokenizer{}); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		xa, ya := a.Batch()
		xb, yb := b.Batch()
		if !slices.Equal(xa, xb) || !slices.Equal(ya, yb) {
			t.Fatal("MixPasskey(0, ByteTokenizer{}) changed the batches")
		}
	}
}

func TestMixPasskeyResume(t *testing.T) {
	text := []byte(strings.Repeat("Of the Refractions of Light. ", 300))
	a, _ := NewSampler(ByteTokenizer{}.Encode(text), 128, 4, 11)
	_ = a.MixPasskey(0.5, ByteTokenizer{})
	for range 5 {
		a.Batch()
	}
	state, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewSampler(ByteTokenizer{}.Encode(text), 128, 4, 99)
	_ = b.MixPasskey(0.5, ByteTokenizer{})
	if err := b.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		xa, ya := a.Batch()
		xb, yb := b.Batch()
		if !slices.Equal(xa, xb) || !slices.Equal(ya, yb) {
			t.Fatal("a restored sampler drew other batches")
		}
	}
}

func TestMixPasskeyErrors(t *testing.T) {
	text := []byte(strings.Repeat("x", 1000))
	for _, c := range []struct {
		length int
		frac   float64
		want   string
	}{
		{128, -0.1, "not in [0, 1)"},
		{128, 1, "not in [0, 1)"},
		{128, math.NaN(), "not in [0, 1)"},
		{PasskeyWindowMin - 2, 0.1, "at least 100 tokens"},
	} {
		s, err := NewSampler(ByteTokenizer{}.Encode(text), c.length, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.MixPasskey(c.frac, ByteTokenizer{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("MixPasskey(%v) at length %d: %v, want %q", c.frac, c.length, err, c.want)
		}
	}
	s, _ := NewSampler(ByteTokenizer{}.Encode(text), PasskeyWindowMin-2, 1, 1)
	if err := s.MixPasskey(0, ByteTokenizer{}); err != nil {
		t.Errorf("MixPasskey(0, ByteTokenizer{}) on a short window: %v", err)
	}
}
