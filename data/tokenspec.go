package data

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/alibi-go/alibi/data/bpe"
)

// TokenizerSpec is a run's tokenizer as a config names it: "bytes" (or
// empty, the default), "bpe:N" for a byte-level BPE of N tokens trained on
// the run's training split, or the path of a Hugging Face tokenizer.json.
type TokenizerSpec struct {
	// Kind is "bytes", "bpe" or "file".
	Kind string
	// Vocab is N of "bpe:N".
	Vocab int
	// Path is the tokenizer.json of a "file" spec.
	Path string
}

// ParseTokenizerSpec reads a tokenizer spec (see [TokenizerSpec]); the
// error is one line naming what is wrong.
func ParseTokenizerSpec(s string) (TokenizerSpec, error) {
	switch {
	case s == "" || s == ByteTokenizerName:
		return TokenizerSpec{Kind: ByteTokenizerName}, nil
	case strings.HasPrefix(s, "bpe:"):
		n, err := strconv.Atoi(strings.TrimPrefix(s, "bpe:"))
		if err != nil || n < bpe.MinVocab || n > bpe.MaxVocab {
			return TokenizerSpec{}, fmt.Errorf("tokenizer %q: bpe:N wants a vocabulary size N in %d..%d", s, bpe.MinVocab, bpe.MaxVocab)
		}
		return TokenizerSpec{Kind: "bpe", Vocab: n}, nil
	}
	if !looksLikePath(s) {
		hint := ""
		switch lower := strings.ToLower(s); {
		case lower == "byte" || lower == ByteTokenizerName:
			hint = "; for the byte tokenizer write bytes"
		case lower == "bpe":
			hint = "; a BPE needs its size, as in bpe:1024"
		case strings.HasPrefix(lower, "bpe:"):
			hint = "; write bpe:" + s[len("bpe:"):]
		default:
			if _, err := strconv.Atoi(s); err == nil {
				hint = "; for a BPE of that many tokens write bpe:" + s
			}
		}
		return TokenizerSpec{}, fmt.Errorf("tokenizer %q is not bytes, bpe:N (N in %d..%d) or the path of a tokenizer.json%s", s, bpe.MinVocab, bpe.MaxVocab, hint)
	}
	return TokenizerSpec{Kind: "file", Path: s}, nil
}

// looksLikePath reports whether a spec that is neither bytes nor bpe:N is
// meant as a file: a path with a directory, a name ending in .json, or a
// file that exists.
func looksLikePath(s string) bool {
	if strings.ContainsRune(s, '/') || strings.ContainsRune(s, filepath.Separator) || strings.HasSuffix(strings.ToLower(s), ".json") {
		return true
	}
	_, err := os.Stat(s)
	return err == nil
}

// Make returns the spec's tokenizer: the byte tokenizer, a BPE trained on
// trainText (the training split only; deterministic for a text and size),
// or the tokenizer.json read from its path. progress, if not nil, is told
// how BPE training goes (bpe.TrainOptions.Progress).
func (s TokenizerSpec) Make(trainText []byte, progress func(stage string, done, total int64)) (Tokenizer, error) {
	switch s.Kind {
	case ByteTokenizerName:
		return ByteTokenizer{}, nil
	case "bpe":
		t, err := bpe.Train(trainText, s.Vocab, bpe.TrainOptions{Progress: progress})
		if err != nil {
			return nil, fmt.Errorf("tokenizer bpe:%d: %w", s.Vocab, err)
		}
		return t, nil
	}
	return LoadTokenizer(s.Path)
}

// Accepts reports whether t can be the tokenizer the spec makes: the byte
// tokenizer for "bytes", a BPE of at most N tokens for "bpe:N" (training
// stops early on a text with no pair left to merge), any tokenizer for a
// file (whose hash the caller compares).
func (s TokenizerSpec) Accepts(t Tokenizer) bool {
	switch s.Kind {
	case ByteTokenizerName:
		return t.Kind() == ByteTokenizerName
	case "bpe":
		return t.Kind() == "bpe" && t.VocabSize() <= s.Vocab
	}
	return true
}

// CoveredBytes is the number of bytes the tokens ids stand for: one per
// token for the byte tokenizer; the length of each token's bytes for a BPE.
// An id outside the vocabulary counts nothing.
func CoveredBytes(t Tokenizer, ids []uint32) int64 {
	if t == nil || t.Kind() == ByteTokenizerName {
		return int64(len(ids))
	}
	var n int64
	for _, id := range ids {
		b, _ := t.Token(id)
		n += int64(len(b))
	}
	return n
}
