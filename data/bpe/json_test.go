package bpe

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// withAdded reads the GPT-2-style file, which has an added token.
func withAdded(t testing.TB) *Tokenizer {
	t.Helper()
	tok, err := ReadJSON(bytes.NewReader(MarshalFile(t, GPT2StyleFile(false))))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// tokenStrings are the bytes of each id of ids.
func tokenStrings(tok *Tokenizer, ids []uint32) []string {
	var out []string
	for _, id := range ids {
		b, _ := tok.Token(id)
		out = append(out, string(b))
	}
	return out
}

// The GPT-2-style file encodes as worked out by hand from its merges.
func TestReadJSONGPT2Style(t *testing.T) {
	tok := withAdded(t)
	if tok.VocabSize() != 256+len(gpt2StyleMerges)+1 {
		t.Errorf("VocabSize %d", tok.VocabSize())
	}
	text := "the cat and<|endoftext|>ring"
	got := tokenStrings(tok, tok.Encode([]byte(text)))
	// "the": t+h has no merge, h+e does (rank 2): t, he. " cat": Ġ+c (13),
	// then a+t (9): " c", "at". " and": Ġ+a (1), then n+d has none, "Ġa"+n
	// (25), then "Ġan"+d (34). The added token is cut out first; "ring":
	// r+i none, i+n (3), n+g none, in+g (22): r, ing.
	want := []string{"t", "he", " c", "at", " and", "<|endoftext|>", "r", "ing"}
	if !slices.Equal(got, want) {
		t.Errorf("Encode(%q) = %q, want %q", text, got, want)
	}
	ids := tok.Encode([]byte("<|endoftext|>"))
	if len(ids) != 1 || ids[0] != uint32(256+len(gpt2StyleMerges)) {
		t.Errorf("the added token encodes to %v", ids)
	}
	// GPT-2's ids are not the byte values: "!" is 0.
	if ids := tok.Encode([]byte("!")); !slices.Equal(ids, []uint32{0}) {
		t.Errorf("Encode(!) = %v", ids)
	}
}

// Merges as strings and as pairs read alike.
func TestReadJSONMergePairs(t *testing.T) {
	a := withAdded(t)
	b, err := ReadJSON(bytes.NewReader(MarshalFile(t, GPT2StyleFile(true))))
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash() != b.Hash() {
		t.Error("merges as pairs give another tokenizer than as strings")
	}
}

// A merge listed twice takes its last rank, as in Hugging Face's libraries:
// with "h e" moved behind "e r", "her" merges e+r first.
func TestReadJSONDuplicateMergeLastWins(t *testing.T) {
	file := GPT2StyleFile(false)
	model := file["model"].(map[string]any)
	model["merges"] = append(model["merges"].([]any), "h e")
	tok, err := ReadJSON(bytes.NewReader(MarshalFile(t, file)))
	if err != nil {
		t.Fatal(err)
	}
	if got := tokenStrings(tok, tok.Encode([]byte("her"))); !slices.Equal(got, []string{"h", "er"}) {
		t.Errorf("her = %q, want h, er", got)
	}
	if got := tokenStrings(withAdded(t), withAdded(t).Encode([]byte("her"))); !slices.Equal(got, []string{"he", "r"}) {
		t.Errorf("without the duplicate, her = %q, want he, r", got)
	}
}

// With ignore_merges, a piece that is a token is taken whole.
func TestReadJSONIgnoreMerges(t *testing.T) {
	file := GPT2StyleFile(false)
	model := file["model"].(map[string]any)
	vocab := model["vocab"].(map[string]any)
	vocab["Ġlight"] = len(vocab) + 1 // after <|endoftext|>; no merge makes it
	off, err := ReadJSON(bytes.NewReader(MarshalFile(t, file)))
	if err != nil {
		t.Fatal(err)
	}
	model["ignore_merges"] = true
	on, err := ReadJSON(bytes.NewReader(MarshalFile(t, file)))
	if err != nil {
		t.Fatal(err)
	}
	text := []byte("the light")
	if got := tokenStrings(off, off.Encode(text)); !slices.Equal(got, []string{"t", "he", " ", "l", "i", "g", "h", "t"}) {
		t.Errorf("without ignore_merges: %q", got)
	}
	if got := tokenStrings(on, on.Encode(text)); !slices.Equal(got, []string{"t", "he", " light"}) {
		t.Errorf("with ignore_merges: %q", got)
	}
	if on.Hash() == off.Hash() {
		t.Error("ignore_merges does not change the hash")
	}
}

// Written and read back, a tokenizer has the same hash and ids, and writes
// the same file again.
func TestWriteReadJSON(t *testing.T) {
	sample := []byte(opticsSample + " it's 1704\r\n\t<|endoftext|> 光 \xff  ")
	for _, tok := range []*Tokenizer{Bytes(), trained(t, opticsSample, 400, GPT2), trained(t, opticsSample, 400, Llama3), withAdded(t)} {
		var first bytes.Buffer
		if err := tok.WriteJSON(&first); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(first.Bytes()) {
			t.Fatalf("%v: WriteJSON wrote invalid JSON", tok)
		}
		back, err := ReadJSON(bytes.NewReader(first.Bytes()))
		if err != nil {
			t.Fatalf("%v: %v", tok, err)
		}
		if back.Hash() != tok.Hash() {
			t.Errorf("%v: hash changed in the round trip", tok)
		}
		if !slices.Equal(back.Encode(sample), tok.Encode(sample)) {
			t.Errorf("%v: ids changed in the round trip", tok)
		}
		var second bytes.Buffer
		back.WriteJSON(&second)
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Errorf("%v: written again, the file differs", tok)
		}
	}
	// The hash does not depend on the spelling: trained tokenizers are
	// written with a vocabulary in id order, the GPT-2-style map in key order.
	var b bytes.Buffer
	withAdded(t).WriteJSON(&b)
	if !strings.Contains(b.String(), `"<|endoftext|>"`) || !strings.Contains(b.String(), `"Ġt he"`) {
		t.Errorf("the written file lacks the added token or a merge: %.300s", b.String())
	}
}

// Save replaces a file atomically and Load reads it; Load names the path in
// its errors.
func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tokenizer.json")
	os.WriteFile(path, []byte("old"), 0o644)
	tok := trained(t, opticsSample, 300, GPT2)
	if err := tok.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Hash() != tok.Hash() {
		t.Error("Load(Save) changed the hash")
	}
	if err := tok.Save(filepath.Join(dir, "missing", "t.json")); err == nil {
		t.Error("Save into a missing directory succeeded")
	}
	_, err = Load(filepath.Join(dir, "none.json"))
	if err == nil || !strings.Contains(err.Error(), "none.json") || strings.Count(err.Error(), "none.json") != 1 {
		t.Errorf("Load of a missing file: %v", err)
	}
}

// Kinds that cannot be honoured exactly are refused in one line that names
// what is not supported.
func TestReadJSONRefuses(t *testing.T) {
	model := func(f map[string]any) map[string]any { return f["model"].(map[string]any) }
	tests := []struct {
		name   string
		change func(map[string]any)
		want   string
	}{
		{"unigram", func(f map[string]any) { model(f)["type"] = "Unigram" }, `model type "Unigram" is not supported`},
		{"wordpiece", func(f map[string]any) { model(f)["type"] = "WordPiece" }, `model type "WordPiece" is not supported`},
		{"normalizer", func(f map[string]any) { f["normalizer"] = map[string]any{"type": "NFC"} }, "normalizer NFC is not supported"},
		{"byte fallback", func(f map[string]any) { model(f)["byte_fallback"] = true }, "byte_fallback is not supported"},
		{"dropout", func(f map[string]any) { model(f)["dropout"] = 0.1 }, "dropout 0.1 is not supported"},
		{"subword prefix", func(f map[string]any) { model(f)["continuing_subword_prefix"] = "##" }, `continuing_subword_prefix "##"`},
		{"metaspace", func(f map[string]any) { f["pre_tokenizer"] = map[string]any{"type": "Metaspace"} }, "pre_tokenizer Metaspace is not supported"},
		{"no pre-tokenizer", func(f map[string]any) { f["pre_tokenizer"] = nil }, "pre_tokenizer null is not supported"},
		{"other split pattern", func(f map[string]any) {
			f["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `\s+`}, "behavior": "Isolated", "invert": false},
				map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}}}
		}, `Split pattern "\\s+" is not supported`},
		{"merged split", func(f map[string]any) {
			f["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Split", "pattern": map[string]any{"Regex": llama3Regex}, "behavior": "MergedWithPrevious", "invert": false},
				map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}}}
		}, `Split behavior "MergedWithPrevious"`},
		{"prefix space", func(f map[string]any) {
			f["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "add_prefix_space": true, "use_regex": true}
		}, "add_prefix_space true is not supported"},
		{"byte level without regex", func(f map[string]any) {
			f["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}
		}, "use_regex false and no Split"},
		{"lstrip", func(f map[string]any) { f["added_tokens"].([]any)[0].(map[string]any)["lstrip"] = true }, "lstrip or rstrip is not supported"},
		{"added token on another token's id", func(f map[string]any) {
			f["added_tokens"] = append(f["added_tokens"].([]any), map[string]any{"id": 0, "content": "<x>", "special": true})
		}, `added token "<x>" has id 0, which the vocabulary gives to "!"`},
		{"added token decoding otherwise", func(f map[string]any) {
			f["added_tokens"] = append(f["added_tokens"].([]any), map[string]any{"id": 1000, "content": "é", "special": true})
		}, `added token "é" is not supported`},
		{"wordpiece decoder", func(f map[string]any) { f["decoder"] = map[string]any{"type": "WordPiece"} }, "decoder WordPiece is not supported"},
		{"truncation", func(f map[string]any) { f["truncation"] = map[string]any{"max_length": 512} }, "truncation is not supported"},
		{"post-processor", func(f map[string]any) { f["post_processor"] = map[string]any{"type": "Mystery"} }, "post_processor Mystery is not supported"},
		{"missing byte", func(f map[string]any) { delete(model(f)["vocab"].(map[string]any), "Ā") }, "no token for the bytes 0x00"},
		{"merge of unknown tokens", func(f map[string]any) {
			model(f)["merges"] = append(model(f)["merges"].([]any), "Ġan x")
		}, `"Ġanx" is not in the vocabulary`},
		{"not byte-level", func(f map[string]any) { model(f)["vocab"].(map[string]any)["日本"] = 5000 }, `vocabulary token "日本" is not byte-level text`},
		{"same id twice", func(f map[string]any) { model(f)["vocab"].(map[string]any)["Ġthe"] = 3 }, "vocabulary gives id 3 to both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := GPT2StyleFile(false)
			tt.change(file)
			_, err := ReadJSON(bytes.NewReader(MarshalFile(t, file)))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
	if _, err := ReadJSON(strings.NewReader("{not json")); err == nil || !strings.Contains(err.Error(), "not a tokenizer.json") {
		t.Errorf("not JSON: %v", err)
	}
}

// Llama 3's pre-tokenizer, as its tokenizer.json spells it, reads as the
// Llama3 pattern; the inverted Removed spelling (OpenAI's cl100k as
// converted) too.
func TestReadJSONLlama3PreTokenizer(t *testing.T) {
	for _, split := range []map[string]any{
		{"type": "Split", "pattern": map[string]any{"Regex": llama3Regex}, "behavior": "Isolated", "invert": false},
		{"type": "Split", "pattern": map[string]any{"Regex": llama3Regex}, "behavior": "Removed", "invert": true},
	} {
		file := GPT2StyleFile(false)
		file["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{split,
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}}}
		tok, err := ReadJSON(bytes.NewReader(MarshalFile(t, file)))
		if err != nil {
			t.Fatal(err)
		}
		if tok.Pattern() != Llama3 {
			t.Errorf("pattern %v, want llama3", tok.Pattern())
		}
	}
}

// A malformed or mistyped tokenizer.json is refused in the file's terms:
// where the JSON breaks, or which key holds the wrong kind of value; never
// in Go's (a "Go value of type bpe.fileJSON").
func TestReadJSONProblemsInFileTerms(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"[1, 2]", "the file is a JSON array, where a tokenizer.json is an object"},
		{"{\n  \"model\": {\"type\": \"BPE\",\n  \"vocab\": {\"a\": [1]}}}", `model.vocab is a JSON array, where a tokenizer.json has a non-negative integer`},
		{"{\n  \"model\": {\"type\": \"BPE\", \n  \"vocab\": {\"a\": -3}}}", `model.vocab is a JSON number -3, where a tokenizer.json has a non-negative integer`},
		{"{\n  \"version\": \"1.0\",\n  \"model\": {oops}}", "malformed JSON at line 3, column"},
	} {
		_, err := ReadJSON(strings.NewReader(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "Go value") {
			t.Errorf("%q: %v, want %q", c.file, err, c.want)
		}
	}
}
