package data

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestByteTokenizerRoundTrip(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	r := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(r.UintN(256))
	}
	tests := []struct {
		name string
		text []byte
	}{
		{"empty", []byte{}},
		{"ascii", []byte("Opticks, or a Treatise")},
		{"utf8", []byte("héllo, 世界")},
		{"all bytes", all},
		{"random", random},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids := ByteTokenizer{}.Encode(tt.text)
			if len(ids) != len(tt.text) {
				t.Fatalf("len(Encode) = %d, want %d", len(ids), len(tt.text))
			}
			for i, id := range ids {
				if id != uint32(tt.text[i]) {
					t.Fatalf("Encode[%d] = %d, want %d", i, id, tt.text[i])
				}
				if id >= VocabSize {
					t.Fatalf("Encode[%d] = %d outside vocab", i, id)
				}
			}
			got, err := ByteTokenizer{}.Decode(ids)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !bytes.Equal(got, tt.text) {
				t.Fatalf("round trip mismatch: got %q, want %q", got, tt.text)
			}
		})
	}
}

func TestDecodeError(t *testing.T) {
	tests := []struct {
		name string
		ids  []uint32
		want []string
	}{
		{"too large", []uint32{65, 66, 256}, []string{"256", "index 2"}},
		{"far too large", []uint32{1 << 31}, []string{"2147483648", "index 0"}},
		{"first bad reported", []uint32{0, 1000, 5000}, []string{"1000", "index 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ByteTokenizer{}.Decode(tt.ids)
			if err == nil {
				t.Fatalf("Decode(%v) = %q, want error", tt.ids, got)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func ExampleByteTokenizer() {
	ids := ByteTokenizer{}.Encode([]byte("Light"))
	fmt.Println(ids)
	text, err := ByteTokenizer{}.Decode(ids)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(text))
	_, err = ByteTokenizer{}.Decode([]uint32{72, 300})
	fmt.Println(err)
	// Output:
	// [76 105 103 104 116]
	// Light
	// decode: token 300 at index 1 is outside 0..255
}
