package model

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/alibi-go/alibi/data"
)

// pairTokenizer is a tokenizer of 256 ids in which every token is two
// bytes, its id and '|': a stand-in for a BPE whose tokens hold several
// bytes each.
type pairTokenizer struct{}

func (pairTokenizer) Kind() string   { return "pairs" }
func (pairTokenizer) String() string { return "pairs (256 tokens)" }
func (pairTokenizer) Encode(text []byte) []uint32 {
	return data.ByteTokenizer{}.Encode(text)
}
func (p pairTokenizer) Decode(ids []uint32) ([]byte, error) {
	var out []byte
	for i, id := range ids {
		b, ok := p.Token(id)
		if !ok {
			return nil, fmt.Errorf("token %d at %d", id, i)
		}
		out = append(out, b...)
	}
	return out, nil
}
func (pairTokenizer) Token(id uint32) ([]byte, bool) {
	if id >= 256 {
		return nil, false
	}
	return []byte{byte(id), '|'}, true
}
func (pairTokenizer) VocabSize() int              { return 256 }
func (pairTokenizer) Hash() string                { return "pairs" }
func (pairTokenizer) WriteJSON(w io.Writer) error { return fmt.Errorf("not written") }
func (pairTokenizer) Save(path string) error      { return fmt.Errorf("not saved") }

// A stop string that ends inside a token of several bytes ends the
// generation too: neither it nor what follows it in the token is output.
func TestGenerateStopInsideToken(t *testing.T) {
	m := decodeModel(t, PosALiBi)
	prompt := [][]byte{[]byte("The")}
	opt := GenerateOptions{Tokens: 12, Sampling: Greedy, Tokenizer: pairTokenizer{}}
	free, _, err := m.Generate(prompt, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := free[0].Text
	// "|" and the next token's byte: it ends in the middle of that token.
	stop := text[5:7]
	cut := bytes.Index(text, stop)
	opt.Stop = stop
	var emitted []byte
	got, _, err := m.Generate(prompt, opt, func(_ int, b []byte) { emitted = append(emitted, b...) })
	if err != nil {
		t.Fatal(err)
	}
	g := got[0]
	if !g.Stopped || !bytes.Equal(g.Text, text[:cut]) || !bytes.Equal(emitted, g.Text) || g.Tokens != (cut+len(stop)+1)/2 {
		t.Fatalf("stop %q in %q: %+v, emitted %q; want the %d bytes before it, stopped after %d tokens", stop, text, g, emitted, cut, (cut+len(stop)+1)/2)
	}
}
