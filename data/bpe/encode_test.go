package bpe

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// trained returns a tokenizer trained on text.
func trained(t testing.TB, text string, vocab int, p Pattern) *Tokenizer {
	t.Helper()
	tok, err := Train([]byte(text), vocab, TrainOptions{Pattern: p})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Ids worked out by hand with the merges of TestTrainByHand: a+b 256, _+ab
// 257, ab+ab 258, _ab+ab 259.
func TestEncodeByHand(t *testing.T) {
	tok := trained(t, "abab abab ab", 300, GPT2)
	for _, tt := range []struct {
		text string
		want []uint32
	}{
		{"abab ab abab", []uint32{258, 257, 259}},
		{"ababab", []uint32{258, 256}}, // the leftmost ab+ab first
		{"ba", []uint32{'b', 'a'}},
		{" a b", []uint32{' ', 'a', ' ', 'b'}},
		{"ab\xff", []uint32{256, 255}},
		{"", nil},
	} {
		got := tok.Encode([]byte(tt.text))
		if !slices.Equal(got, tt.want) {
			t.Errorf("Encode(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// referenceMerge merges a piece by the definition, over byte strings: the
// adjacent pair with the lowest rank, leftmost among equals, until none has
// a rank.
func referenceMerge(tok *Tokenizer, piece []byte) []string {
	rank := map[[2]string]int{}
	for r, m := range tok.Merges() {
		rank[[2]string{string(tok.tokens[m.Left]), string(tok.tokens[m.Right])}] = r
	}
	var sym []string
	for _, b := range piece {
		sym = append(sym, string([]byte{b}))
	}
	for {
		best, bestRank := -1, 0
		for k := 0; k+1 < len(sym); k++ {
			if r, ok := rank[[2]string{sym[k], sym[k+1]}]; ok && (best < 0 || r < bestRank) {
				best, bestRank = k, r
			}
		}
		if best < 0 {
			return sym
		}
		sym = slices.Replace(sym, best, best+2, sym[best]+sym[best+1])
	}
}

// Both ways of merging a piece agree with the definition, on pieces long
// and short.
func TestMergeScanAndHeap(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var corpus strings.Builder
	for i := 0; i < 20000; i++ {
		corpus.WriteByte("aabbbc"[r.IntN(6)])
		if r.IntN(40) == 0 {
			corpus.WriteByte(' ')
		}
	}
	tok := trained(t, corpus.String(), 400, GPT2)
	e := newEncoder(tok)
	for n := 0; n < 300; n++ {
		piece := make([]byte, 1+r.IntN(400))
		for i := range piece {
			piece[i] = "aabbbc"[r.IntN(6)]
		}
		want := referenceMerge(tok, piece)
		for name, merge := range map[string]func([]uint32) []uint32{"scan": e.mergeScan, "heap": e.mergeHeap} {
			sym := make([]uint32, len(piece))
			for i, b := range piece {
				sym[i] = tok.byteID[b]
			}
			var got []string
			for _, id := range merge(sym) {
				got = append(got, string(tok.tokens[id]))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s merge of %q = %q, want %q", name, piece, got, want)
			}
		}
	}
}

// A long text, encoded in parallel chunks, gets the ids of one pass over it.
func TestEncodeParallelMatchesOnePass(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two processors")
	}
	r := rand.New(rand.NewPCG(9, 10))
	var b strings.Builder
	words := []string{"light", " Light", "\n", "\nprism", "  ", "\t", "1704", "'s", ".\n\n", "é", "\r\n", "colours", " 光"}
	for b.Len() < 4*parallelMin {
		b.WriteString(words[r.IntN(len(words))])
	}
	text := []byte(b.String())
	for _, p := range []Pattern{GPT2, Llama3} {
		tok := trained(t, b.String()[:100000], 500, p)
		if len(tok.units(text)) < 4 {
			t.Fatalf("%s: only %d units", p, len(tok.units(text)))
		}
		got := tok.Encode(text)
		want := newEncoder(tok).unit(text, span{start: 0, end: len(text), limit: len(text)}, nil)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: parallel encoding differs from one pass", p)
		}
	}
}

// Every tokenizer kind decodes the ids of random bytes, invalid UTF-8
// included, back to them.
func TestEncodeDecodeRoundTripRandomBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, tok := range []*Tokenizer{Bytes(), trained(t, opticsSample, 400, GPT2), trained(t, opticsSample, 400, Llama3), withAdded(t)} {
		for n := 0; n < 300; n++ {
			text := make([]byte, r.IntN(3000))
			for i := range text {
				switch r.IntN(4) {
				case 0:
					text[i] = byte(r.UintN(256))
				case 1:
					text[i] = " \n\t\r"[r.IntN(4)]
				default:
					text[i] = opticsSample[r.IntN(len(opticsSample))]
				}
			}
			if n%10 == 0 {
				text = append(text, "<|endoftext|>"...)
			}
			ids := tok.Encode(text)
			back, err := tok.Decode(ids)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back, text) {
				t.Fatalf("%v: round trip of %q gave %q", tok, text, back)
			}
			for _, id := range ids {
				if int(id) >= tok.VocabSize() {
					t.Fatalf("id %d outside the vocabulary of %d", id, tok.VocabSize())
				}
			}
		}
	}
}

func TestDecodeUnknownID(t *testing.T) {
	tok := trained(t, "abab abab ab", 300, GPT2)
	_, err := tok.Decode([]uint32{97, 259, 260})
	if err == nil || !strings.Contains(err.Error(), "token 260 at index 2") {
		t.Errorf("Decode error %v", err)
	}
	if b, ok := tok.Token(259); !ok || string(b) != " abab" {
		t.Errorf("Token(259) = %q, %v", b, ok)
	}
}
