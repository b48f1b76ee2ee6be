package data

import (
	"fmt"
	"io"

	"github.com/alibi-go/alibi/data/bpe"
)

// ByteTokenizerName names the byte tokenizer where a tokenizer is given by
// name or path (see [LoadTokenizer]).
const ByteTokenizerName = "bytes"

// Tokenizer turns text into token ids and back. Every text encodes, and
// decoding its ids gives back its bytes exactly, valid UTF-8 or not.
// Implementations are safe for concurrent use.
type Tokenizer interface {
	// Kind is "bytes" for [ByteTokenizer] and "bpe" for a byte-level BPE.
	Kind() string
	// String describes the tokenizer in a few words.
	String() string
	// Encode returns the ids of text.
	Encode(text []byte) []uint32
	// Decode returns the bytes that ids stand for, or an error naming the
	// first id outside the vocabulary.
	Decode(ids []uint32) ([]byte, error)
	// Token returns the bytes of one id; ok is false outside the vocabulary.
	Token(id uint32) (b []byte, ok bool)
	// VocabSize is one more than the largest id: the rows of a model's
	// embedding.
	VocabSize() int
	// Hash is the hex SHA-256 of what decides the ids: equal hashes encode
	// every text alike, so a checkpoint names its tokenizer by it.
	Hash() string
	// WriteJSON writes the tokenizer as a Hugging Face tokenizer.json.
	WriteJSON(w io.Writer) error
	// Save writes the tokenizer.json to a file, atomically.
	Save(path string) error
}

// ByteTokenizer is the byte tokenizer: the id of a byte is its value, so
// there are [VocabSize] ids and one token per byte.
type ByteTokenizer struct{}

var (
	_ Tokenizer = ByteTokenizer{}
	_ Tokenizer = (*bpe.Tokenizer)(nil)
)

// Kind is "bytes".
func (ByteTokenizer) Kind() string { return ByteTokenizerName }

// String is "bytes (256 tokens)".
func (ByteTokenizer) String() string {
	return fmt.Sprintf("%s (%d tokens)", ByteTokenizerName, VocabSize)
}

// Encode returns one id per byte, its value.
func (ByteTokenizer) Encode(text []byte) []uint32 {
	ids := make([]uint32, len(text))
	for i, b := range text {
		ids[i] = uint32(b)
	}
	return ids
}

// Decode returns the bytes whose values are ids, or an error naming the
// first id above 255 and its index.
func (ByteTokenizer) Decode(ids []uint32) ([]byte, error) {
	out := make([]byte, len(ids))
	for i, id := range ids {
		if id >= VocabSize {
			return nil, fmt.Errorf("decode: token %d at index %d is outside 0..%d", id, i, VocabSize-1)
		}
		out[i] = byte(id)
	}
	return out, nil
}

// Token returns the byte of value id.
func (ByteTokenizer) Token(id uint32) ([]byte, bool) {
	if id >= VocabSize {
		return nil, false
	}
	return []byte{byte(id)}, true
}

// VocabSize is 256.
func (ByteTokenizer) VocabSize() int { return VocabSize }

// Hash is the hash of a byte-level BPE without merges whose ids are the
// byte values, which encodes alike.
func (ByteTokenizer) Hash() string { return bpe.Bytes().Hash() }

// WriteJSON writes the byte tokenizer as a tokenizer.json: a byte-level BPE
// with the 256 byte tokens at their values and no merges, which Hugging
// Face's libraries load and encode alike, and [LoadTokenizer] reads back as
// the byte tokenizer.
func (ByteTokenizer) WriteJSON(w io.Writer) error { return bpe.Bytes().WriteJSON(w) }

// Save writes the tokenizer.json of WriteJSON to path, atomically.
func (ByteTokenizer) Save(path string) error { return bpe.Bytes().Save(path) }

// LoadTokenizer returns the tokenizer that spec names: [ByteTokenizerName]
// for the byte tokenizer, else the path of a Hugging Face tokenizer.json of
// the byte-level BPE kind (see [bpe.ReadJSON]; other kinds are refused). A
// tokenizer.json that encodes as the byte tokenizer (no merges, no added
// tokens, each byte at its value) gives the byte tokenizer.
func LoadTokenizer(spec string) (Tokenizer, error) {
	if spec == ByteTokenizerName {
		return ByteTokenizer{}, nil
	}
	t, err := bpe.Load(spec)
	if err != nil {
		return nil, err
	}
	if t.IsBytes() {
		return ByteTokenizer{}, nil
	}
	return t, nil
}
