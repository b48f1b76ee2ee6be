package bpe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/alibi-go/alibi/model/osutil"
)

// WriteJSON writes the tokenizer as a Hugging Face tokenizer.json: a BPE
// model with the vocabulary in id order and the merges as "left right"
// strings, GPT-2's byte-level pre-tokenizer (or Llama 3's Split before it)
// and decoder, no normalizer and no post-processor. Hugging Face's libraries
// load it and encode as [Tokenizer.Encode] does; [ReadJSON] reads it back to
// a tokenizer of the same [Tokenizer.Hash].
func (t *Tokenizer) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	str := func(s string) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(s) // a string always encodes
		return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	}
	fmt.Fprintf(bw, "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n  \"added_tokens\": [")
	for i, a := range t.added {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(bw, "%s\n    {\"id\": %d, \"content\": %s, \"single_word\": false, \"lstrip\": false, \"rstrip\": false, \"normalized\": %v, \"special\": %v}",
			sep, a.ID, str(a.Content), a.Normalized, a.Special)
	}
	if len(t.added) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("],\n  \"normalizer\": null,\n")
	const byteLevel = `{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": %v}`
	switch t.pattern {
	case GPT2:
		fmt.Fprintf(bw, "  \"pre_tokenizer\": "+byteLevel+",\n", true)
	case Llama3:
		fmt.Fprintf(bw, "  \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\": %s}, \"behavior\": \"Isolated\", \"invert\": false}, "+byteLevel+"]},\n",
			str(llama3Regex), false)
	}
	bw.WriteString("  \"post_processor\": null,\n")
	fmt.Fprintf(bw, "  \"decoder\": "+byteLevel+",\n", true)
	fmt.Fprintf(bw, "  \"model\": {\n    \"type\": \"BPE\",\n    \"dropout\": null,\n    \"unk_token\": null,\n    \"continuing_subword_prefix\": null,\n"+
		"    \"end_of_word_suffix\": null,\n    \"fuse_unk\": false,\n    \"byte_fallback\": false,\n    \"ignore_merges\": %v,\n    \"vocab\": {", t.ignoreMerges)
	first := true
	for id, b := range t.tokens {
		if b == nil || !t.inModel[id] {
			continue
		}
		sep := ","
		if first {
			sep, first = "", false
		}
		fmt.Fprintf(bw, "%s\n      %s: %d", sep, str(bl.encode(b)), id)
	}
	bw.WriteString("\n    },\n    \"merges\": [")
	for i, m := range t.merges {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(bw, "%s\n      %s", sep, str(bl.encode(t.tokens[m.Left])+" "+bl.encode(t.tokens[m.Right])))
	}
	if len(t.merges) > 0 {
		bw.WriteString("\n    ")
	}
	bw.WriteString("]\n  }\n}\n")
	return bw.Flush()
}

// Save writes the tokenizer.json to path atomically: path holds either its
// old contents or the whole new file.
func (t *Tokenizer) Save(path string) error {
	var b bytes.Buffer
	if err := t.WriteJSON(&b); err != nil {
		return fmt.Errorf("save tokenizer %s: %w", path, err)
	}
	if err := osutil.WriteFileAtomic(path, b.Bytes()); err != nil {
		return fmt.Errorf("save tokenizer %s: %w", path, err)
	}
	return nil
}
