package data

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/data/bpe"
)

// The byte tokenizer gives the ids of Encode, as uint32, and decodes any
// bytes back.
func TestByteTokenizer(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	text := make([]byte, 5000)
	for i := range text {
		text[i] = byte(r.UintN(256))
	}
	var tok Tokenizer = ByteTokenizer{}
	ids := tok.Encode(text)
	for i, b := range text {
		if ids[i] != uint32(b) {
			t.Fatalf("id %d: %d, the byte is %d", i, ids[i], b)
		}
	}
	back, err := tok.Decode(ids)
	if err != nil || !bytes.Equal(back, text) {
		t.Fatalf("round trip: %v", err)
	}
	if _, err := tok.Decode([]uint32{1, 256}); err == nil || !strings.Contains(err.Error(), "token 256 at index 1") {
		t.Errorf("Decode(256): %v", err)
	}
	if b, ok := tok.Token(200); !ok || !bytes.Equal(b, []byte{200}) {
		t.Errorf("Token(200) = %v, %v", b, ok)
	}
	if _, ok := tok.Token(256); ok {
		t.Error("Token(256) exists")
	}
	if tok.VocabSize() != 256 || tok.Kind() != "bytes" {
		t.Errorf("VocabSize %d, Kind %q", tok.VocabSize(), tok.Kind())
	}
}

// The byte tokenizer's tokenizer.json is a BPE without merges that encodes
// as it does; read back it is the byte tokenizer again, of the same hash.
func TestByteTokenizerJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := (ByteTokenizer{}).Save(path); err != nil {
		t.Fatal(err)
	}
	raw, err := bpe.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	text := []byte("Light \xff\x00 光\r\n  ")
	if got := raw.Encode(text); !slices.Equal(got, (ByteTokenizer{}).Encode(text)) {
		t.Errorf("the written BPE encodes %q as %v", text, got)
	}
	tok, err := LoadTokenizer(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tok.(ByteTokenizer); !ok {
		t.Errorf("LoadTokenizer of the byte tokenizer's file gave %v", tok)
	}
	if (ByteTokenizer{}).Hash() != raw.Hash() || len(raw.Hash()) != 64 {
		t.Errorf("hashes %s and %s", ByteTokenizer{}.Hash(), raw.Hash())
	}
}

// LoadTokenizer: "bytes", a BPE's tokenizer.json, and a refused kind.
func TestLoadTokenizer(t *testing.T) {
	tok, err := LoadTokenizer("bytes")
	if err != nil || tok.Kind() != "bytes" {
		t.Fatalf("LoadTokenizer(bytes) = %v, %v", tok, err)
	}
	corpus, err := DefaultCorpus()
	if err != nil {
		t.Fatal(err)
	}
	trained, err := bpe.Train(corpus[:100000], 500, bpe.TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "tokenizer.json")
	if err := trained.Save(path); err != nil {
		t.Fatal(err)
	}
	tok, err = LoadTokenizer(path)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Kind() != "bpe" || tok.VocabSize() != 500 || tok.Hash() != trained.Hash() || tok.Hash() == (ByteTokenizer{}).Hash() {
		t.Errorf("loaded %v (hash %s)", tok, tok.Hash())
	}
	unigram := filepath.Join(dir, "unigram.json")
	os.WriteFile(unigram, []byte(`{"model": {"type": "Unigram", "vocab": [["a", -1.0]]}}`), 0o644)
	_, err = LoadTokenizer(unigram)
	if err == nil || !strings.Contains(err.Error(), `model type "Unigram" is not supported`) || !strings.Contains(err.Error(), "unigram.json") {
		t.Errorf("Unigram: %v", err)
	}
	if _, err := LoadTokenizer(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file loaded")
	}
}
