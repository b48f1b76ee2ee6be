package gguf

import (
	"fmt"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/data/bpe"
)

// llama.cpp's token types (tokenizer.ggml.token_type).
const (
	tokenNormal      int32 = 1
	tokenControl     int32 = 3
	tokenUserDefined int32 = 4
)

// preTokenizers are llama.cpp's names of the project's pre-tokenization
// patterns (tokenizer.ggml.pre), and whether llama.cpp takes a piece that
// is in the vocabulary whole under that name (ignore_merges): GPT-2's is
// "gpt-2", Llama 3's "llama-bpe", which llama.cpp always reads with
// ignore_merges.
var preTokenizers = map[bpe.Pattern]struct {
	name         string
	ignoreMerges bool
}{
	bpe.GPT2:   {"gpt-2", false},
	bpe.Llama3: {"llama-bpe", true},
}

// vocabulary returns the tokenizer's metadata in llama.cpp's "gpt2"
// (byte-level BPE) form: the tokens by id in GPT-2's byte-level spelling,
// the merges in rank order as "left right", the pre-tokenizer's name, and
// the added tokens as control (special) or user-defined tokens. The byte
// tokenizer is 256 byte tokens and no merges. A tokenizer llama.cpp would
// encode otherwise is refused: one whose ignore_merges is not what
// llama.cpp reads for its pattern, unless the merges make every token of
// its vocabulary from its bytes (then ignore_merges changes no id).
func vocabulary(t data.Tokenizer) ([]KV, error) {
	var b *bpe.Tokenizer
	switch t := t.(type) {
	case data.ByteTokenizer:
		b = bpe.Bytes()
	case *bpe.Tokenizer:
		b = t
	default:
		return nil, fmt.Errorf("tokenizer %v: only the byte tokenizer and byte-level BPEs have a GGUF form", t)
	}
	pre, ok := preTokenizers[b.Pattern()]
	if !ok {
		return nil, fmt.Errorf("tokenizer %v: its pattern %v has no pre-tokenizer llama.cpp knows", t, b.Pattern())
	}
	if b.IgnoresMerges() != pre.ignoreMerges && !b.MergesMakeEveryToken() {
		return nil, fmt.Errorf("tokenizer %v: llama.cpp's %s pre-tokenizer %s, and this tokenizer %s (ignore_merges %v): llama.cpp would encode some texts to other ids",
			t, pre.name, takes(pre.ignoreMerges), takes(b.IgnoresMerges()), b.IgnoresMerges())
	}
	added := map[uint32]bpe.AddedToken{}
	for _, a := range b.AddedTokens() {
		added[a.ID] = a
	}
	n := b.VocabSize()
	tokens := make([]string, n)
	types := make([]int32, n)
	for id := range tokens {
		if a, ok := added[uint32(id)]; ok {
			tokens[id], types[id] = a.Content, tokenUserDefined
			if a.Special {
				types[id] = tokenControl
			}
			continue
		}
		raw, ok := b.Token(uint32(id))
		if !ok {
			return nil, fmt.Errorf("tokenizer %v: no token has id %d, and a GGUF vocabulary lists every id", t, id)
		}
		tokens[id], types[id] = bpe.ByteLevelName(raw), tokenNormal
	}
	merges := make([]string, 0, len(b.Merges()))
	for _, m := range b.Merges() {
		merges = append(merges, tokens[m.Left]+" "+tokens[m.Right])
	}
	return []KV{
		{"tokenizer.ggml.model", "gpt2"},
		{"tokenizer.ggml.pre", pre.name},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.merges", merges},
		{"tokenizer.ggml.add_bos_token", false},
		{"tokenizer.ggml.add_eos_token", false},
	}, nil
}

// takes says in words what ignore_merges does.
func takes(ignoreMerges bool) string {
	if ignoreMerges {
		return "takes a piece that is a token whole"
	}
	return "merges every piece from its bytes"
}
