package data

import (
	"strings"
	"testing"

	"github.com/alibi-go/alibi/data/bpe"
)

func TestParseTokenizerSpec(t *testing.T) {
	for _, c := range []struct {
		in   string
		want TokenizerSpec
	}{
		{"", TokenizerSpec{Kind: "bytes"}},
		{"bytes", TokenizerSpec{Kind: "bytes"}},
		{"bpe:1024", TokenizerSpec{Kind: "bpe", Vocab: 1024}},
		{"bpe:256", TokenizerSpec{Kind: "bpe", Vocab: 256}},
		{"runs/x/tokenizer.json", TokenizerSpec{Kind: "file", Path: "runs/x/tokenizer.json"}},
	} {
		got, err := ParseTokenizerSpec(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseTokenizerSpec(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"bpe:", "bpe:255", "bpe:x", "bpe:-3", "bpe:99999999"} {
		_, err := ParseTokenizerSpec(in)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "bpe:N") {
			t.Errorf("ParseTokenizerSpec(%q): %v, want a one-line error about bpe:N", in, err)
		}
	}
}

// CoveredBytes counts one byte a byte token and each BPE token's length, so
// that a whole text's ids cover exactly its bytes.
func TestCoveredBytes(t *testing.T) {
	text := []byte(strings.Repeat("the quick brown fox jumps over the lazy dog. ", 20) + "\xff\xfe invalid")
	if n := CoveredBytes(ByteTokenizer{}, ByteTokenizer{}.Encode(text)); n != int64(len(text)) {
		t.Errorf("bytes: %d, want %d", n, len(text))
	}
	tok, err := bpe.Train(text, 300, bpe.TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids := tok.Encode(text)
	if len(ids) >= len(text)/2 {
		t.Fatalf("%d bytes gave %d tokens: too few merges for this test", len(text), len(ids))
	}
	if n := CoveredBytes(tok, ids); n != int64(len(text)) {
		t.Errorf("bpe: %d bytes covered, want %d", n, len(text))
	}
	if n := CoveredBytes(tok, ids[1:]); n != int64(len(text))-int64(len(mustToken(t, tok, ids[0]))) {
		t.Errorf("bpe without its first token: %d bytes covered", n)
	}
}

// Make trains a BPE on the text it is given, the same for the same text,
// and the byte tokenizer for bytes; Accepts tells them apart.
func TestTokenizerSpecMake(t *testing.T) {
	text := []byte(strings.Repeat("abracadabra, abracadabra. ", 30))
	spec, _ := ParseTokenizerSpec("bpe:270")
	a, err := spec.Make(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := spec.Make(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash() != b.Hash() || a.Kind() != "bpe" || a.VocabSize() > 270 {
		t.Errorf("bpe:270 made %v (hash %s) then %v (hash %s)", a, a.Hash(), b, b.Hash())
	}
	by, _ := ParseTokenizerSpec("bytes")
	bt, err := by.Make(text, nil)
	if err != nil || bt.Kind() != "bytes" {
		t.Fatalf("bytes made %v, %v", bt, err)
	}
	if !spec.Accepts(a) || spec.Accepts(bt) || !by.Accepts(bt) || by.Accepts(a) {
		t.Error("Accepts confuses the byte tokenizer and a BPE")
	}
	small, _ := ParseTokenizerSpec("bpe:260")
	if small.Accepts(a) && a.VocabSize() > 260 {
		t.Error("bpe:260 accepts a BPE of more tokens")
	}
}

func mustToken(t *testing.T, tok Tokenizer, id uint32) []byte {
	t.Helper()
	b, ok := tok.Token(id)
	if !ok {
		t.Fatalf("id %d has no token", id)
	}
	return b
}
