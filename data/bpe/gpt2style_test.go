package bpe

import (
	"encoding/json"
	"testing"
)

// gpt2StyleMerges are the first merges of GPT-2's own tokenizer.json.
var gpt2StyleMerges = []string{"Ġ t", "Ġ a", "h e", "i n", "r e", "o n", "Ġt he", "e r", "Ġ s", "a t", "Ġ w", "Ġ o",
	"e n", "Ġ c", "i t", "i s", "a n", "o r", "e s", "Ġ b", "e d", "Ġ f", "in g", "Ġ p", "o u", "Ġa n", "a l", "a r",
	"Ġt o", "Ġ m", "Ġo f", "Ġ in", "Ġ d", "Ġ h", "Ġan d"}

// GPT2StyleFile returns a tokenizer.json laid out as GPT-2's: the 256 byte
// characters as ids 0-255 in GPT-2's order (the printable bytes first, then
// the others), then one token per merge, then "<|endoftext|>", which is also
// a special added token; ByteLevel pre-tokenizer, post-processor and
// decoder. The merges are GPT-2's first, as "left right" strings, or
// [left, right] pairs when pairs is true. It is a map, to be changed before
// json.Marshal.
func GPT2StyleFile(pairs bool) map[string]any {
	vocab := map[string]any{}
	id := 0
	for pass := 0; pass < 2; pass++ {
		for b := 0; b < 256; b++ {
			printable := (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255)
			if printable == (pass == 0) {
				vocab[string(bl.char[b])] = id
				id++
			}
		}
	}
	var merges []any
	for _, m := range gpt2StyleMerges {
		var left, right string
		for i := 0; i < len(m); i++ {
			if m[i] == ' ' {
				left, right = m[:i], m[i+1:]
			}
		}
		vocab[left+right] = id
		id++
		if pairs {
			merges = append(merges, []any{left, right})
		} else {
			merges = append(merges, m)
		}
	}
	vocab["<|endoftext|>"] = id
	byteLevel := func(prefix, trim bool) map[string]any {
		return map[string]any{"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": trim, "use_regex": true}
	}
	return map[string]any{
		"version": "1.0", "truncation": nil, "padding": nil,
		"added_tokens": []any{map[string]any{"id": id, "content": "<|endoftext|>", "single_word": false, "lstrip": false,
			"rstrip": false, "normalized": false, "special": true}},
		"normalizer":     nil,
		"pre_tokenizer":  byteLevel(false, true),
		"post_processor": byteLevel(true, false),
		"decoder":        byteLevel(true, true),
		"model": map[string]any{"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": "",
			"end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false, "vocab": vocab, "merges": merges},
	}
}

// MarshalFile is json.Marshal for a test's tokenizer.json map.
func MarshalFile(t testing.TB, file map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
