// Package bpe is a byte-level byte-pair-encoding tokenizer: trained on a
// corpus, or read from a Hugging Face tokenizer.json of the byte-level BPE kind
// (GPT-2, RoBERTa, Llama 3), and written as one.
//
// Merges are over bytes, so any bytes, valid UTF-8 or not, encode, and decode
// back exactly. Encoding gives the ids that Hugging Face's tokenizers give
// for the same tokenizer.json and text (encode with add_special_tokens
// false): the text is cut at added tokens, then into pieces by the
// tokenizer's [Pattern], and each piece's bytes are merged pair by pair, the
// pair of lowest merge rank first (leftmost among equals), until no adjacent
// pair has a merge.
package bpe

import (
	"fmt"
	"strings"
	"sync"
)

// Merge is one merge rule: the adjacent tokens Left and Right become Result.
type Merge struct {
	Left, Right, Result uint32
}

// AddedToken is a token matched in the text as is, before the pattern splits
// it (special tokens such as "<|endoftext|>"): where its content occurs, the
// text encodes to its id.
type AddedToken struct {
	ID      uint32
	Content string
	Special bool // tokenizer.json's "special"
	// Normalized is tokenizer.json's "normalized": such tokens are matched
	// after the others, in the text between them (no normalizer runs).
	Normalized bool
}

// Tokenizer is a byte-level BPE. It is safe for concurrent use.
type Tokenizer struct {
	pattern      Pattern
	tokens       [][]byte // each id's bytes; nil for an id no token has
	inModel      []bool   // whether an id is in the model's vocabulary (not only an added token)
	byteID       [256]uint32
	merges       []Merge          // in rank order, as trained or read
	rank         map[uint64]merge // a pair's rank and result; a pair listed twice takes its last rank, as Hugging Face's do
	ignoreMerges bool
	whole        map[string]uint32 // with ignoreMerges: the vocabulary by bytes
	added        []AddedToken
	addedFirst   *trie // the added tokens that are not normalized, matched first
	addedThen    *trie // the normalized ones, matched in the text between
	hash         string
	encoders     sync.Pool // of *encoder, whose caches outlive one Encode
}

// merge is a pair's rank and the token it makes.
type merge struct{ rank, result uint32 }

// pairKey packs a pair of ids into a map key.
func pairKey(left, right uint32) uint64 { return uint64(left)<<32 | uint64(right) }

// Kind is "bpe".
func (t *Tokenizer) Kind() string { return "bpe" }

// String describes the tokenizer in a few words.
func (t *Tokenizer) String() string {
	s := fmt.Sprintf("byte-level BPE, %d tokens, %d merges, %s pattern", t.VocabSize(), len(t.merges), t.pattern)
	if len(t.added) > 0 {
		s += fmt.Sprintf(", %d added tokens", len(t.added))
	}
	return s
}

// VocabSize is one more than the largest id.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// Pattern is the rule that splits text into pieces before the merges.
func (t *Tokenizer) Pattern() Pattern { return t.pattern }

// Merges returns the merge rules in rank order.
func (t *Tokenizer) Merges() []Merge { return append([]Merge(nil), t.merges...) }

// IgnoresMerges reports whether a piece that is a token of the vocabulary
// as a whole is taken whole before any merge (tokenizer.json's
// ignore_merges, which Llama 3's tokenizer sets).
func (t *Tokenizer) IgnoresMerges() bool { return t.ignoreMerges }

// AddedTokens returns the added tokens.
func (t *Tokenizer) AddedTokens() []AddedToken { return append([]AddedToken(nil), t.added...) }

// Token returns the bytes that id stands for; ok is false for an id that no
// token has.
func (t *Tokenizer) Token(id uint32) (b []byte, ok bool) {
	if int64(id) >= int64(len(t.tokens)) || t.tokens[id] == nil {
		return nil, false
	}
	return t.tokens[id], true
}

// Decode returns the bytes that ids stand for, or an error naming the first
// id that no token has and its index.
func (t *Tokenizer) Decode(ids []uint32) ([]byte, error) {
	n := 0
	for i, id := range ids {
		b, ok := t.Token(id)
		if !ok {
			return nil, fmt.Errorf("decode: token %d at index %d is not in the vocabulary of %d tokens", id, i, len(t.tokens))
		}
		n += len(b)
	}
	out := make([]byte, 0, n)
	for _, id := range ids {
		out = append(out, t.tokens[id]...)
	}
	return out, nil
}

// Hash is the hex SHA-256 of what decides the tokenizer's ids and bytes: its
// tokens' bytes by id, its merges, pattern and added tokens, not how a
// tokenizer.json spells them. Two tokenizers with the same hash give every
// text the same ids; a checkpoint names its tokenizer by it.
func (t *Tokenizer) Hash() string { return t.hash }

// newTokenizer assembles a tokenizer from its parts and checks them: tokens
// indexed by id (nil where no token has the id), each byte a token of its
// own, merges whose parts and results are tokens, and added tokens with ids
// of their own. inModel says which ids the model's vocabulary lists.
func newTokenizer(pattern Pattern, tokens [][]byte, inModel []bool, merges []Merge, ignoreMerges bool, added []AddedToken) (*Tokenizer, error) {
	if pattern != GPT2 && pattern != Llama3 {
		return nil, fmt.Errorf("unknown pattern %v", pattern)
	}
	t := &Tokenizer{pattern: pattern, tokens: tokens, inModel: inModel, merges: merges, ignoreMerges: ignoreMerges, added: added,
		rank: make(map[uint64]merge, len(merges))}
	var have [256]bool
	for id, b := range tokens {
		if len(b) == 1 && inModel[id] && !have[b[0]] {
			t.byteID[b[0]], have[b[0]] = uint32(id), true
		}
	}
	var missing []string
	for b, ok := range have {
		if !ok {
			missing = append(missing, fmt.Sprintf("%#02x", b))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the vocabulary has no token for the bytes %s: not every text could be encoded", strings.Join(missing, " "))
	}
	for r, m := range merges {
		for _, id := range []uint32{m.Left, m.Right, m.Result} {
			if int64(id) >= int64(len(tokens)) || !inModel[id] {
				return nil, fmt.Errorf("merge %d (%d %d -> %d) names id %d, which is not in the vocabulary", r, m.Left, m.Right, m.Result, id)
			}
		}
		if string(tokens[m.Left])+string(tokens[m.Right]) != string(tokens[m.Result]) {
			return nil, fmt.Errorf("merge %d: %q and %q do not make %q", r, tokens[m.Left], tokens[m.Right], tokens[m.Result])
		}
		t.rank[pairKey(m.Left, m.Right)] = merge{rank: uint32(r), result: m.Result}
	}
	if ignoreMerges {
		t.whole = make(map[string]uint32, len(tokens))
		for id, b := range tokens {
			if b != nil && inModel[id] {
				t.whole[string(b)] = uint32(id)
			}
		}
	}
	var first, then []AddedToken
	for _, a := range added {
		if a.Normalized {
			then = append(then, a)
		} else {
			first = append(first, a)
		}
	}
	t.addedFirst, t.addedThen = newTrie(first), newTrie(then)
	t.hash = t.computeHash()
	return t, nil
}

// Bytes returns the byte tokenizer as a BPE without merges: the id of a byte
// is its value. Its [Tokenizer.Hash] is the byte tokenizer's.
func Bytes() *Tokenizer {
	tokens := make([][]byte, MinVocab)
	inModel := make([]bool, MinVocab)
	for b := range tokens {
		tokens[b], inModel[b] = []byte{byte(b)}, true
	}
	t, err := newTokenizer(GPT2, tokens, inModel, nil, false, nil)
	if err != nil {
		panic("bpe: the byte tokenizer does not build: " + err.Error()) // a bug, not bad input
	}
	return t
}

// IsBytes reports whether t encodes every text as the byte tokenizer does:
// no merges, no added tokens, and each byte's id its value.
func (t *Tokenizer) IsBytes() bool { return t.hash == Bytes().hash }
