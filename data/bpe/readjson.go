package bpe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"unicode/utf8"
)

// maxID bounds the ids a tokenizer.json may use.
const maxID = 1 << 22

// bl is the byte-level mapping (an immutable table).
var bl = newByteLevel()

// fileJSON is a tokenizer.json, with the parts that come in several kinds
// left raw.
type fileJSON struct {
	Truncation    json.RawMessage `json:"truncation"`
	Padding       json.RawMessage `json:"padding"`
	AddedTokens   []addedJSON     `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	RawModel      json.RawMessage `json:"model"`
	Model         *modelJSON      `json:"-"`
}

type addedJSON struct {
	ID         *uint32 `json:"id"`
	Content    string  `json:"content"`
	SingleWord bool    `json:"single_word"`
	LStrip     bool    `json:"lstrip"`
	RStrip     bool    `json:"rstrip"`
	Normalized *bool   `json:"normalized"`
	Special    bool    `json:"special"`
}

type modelJSON struct {
	Dropout                 *float64          `json:"dropout"`
	ContinuingSubwordPrefix *string           `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string           `json:"end_of_word_suffix"`
	ByteFallback            bool              `json:"byte_fallback"`
	IgnoreMerges            bool              `json:"ignore_merges"`
	Vocab                   map[string]uint32 `json:"vocab"`
	Merges                  json.RawMessage   `json:"merges"`
}

// componentJSON is a normalizer, pre-tokenizer, post-processor or decoder.
type componentJSON struct {
	Type           string            `json:"type"`
	AddPrefixSpace *bool             `json:"add_prefix_space"`
	UseRegex       *bool             `json:"use_regex"`
	Pretokenizers  []json.RawMessage `json:"pretokenizers"`
	Processors     []json.RawMessage `json:"processors"`
	Normalizers    []json.RawMessage `json:"normalizers"`
	Pattern        *struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Behavior string `json:"behavior"`
	Invert   bool   `json:"invert"`
}

// Load reads a tokenizer.json file (see [ReadJSON]).
func Load(path string) (*Tokenizer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	t, err := ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	return t, nil
}

// unwrapPath drops the path from an os error whose message repeats it.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// ReadJSON reads a Hugging Face tokenizer.json of the byte-level BPE kind
// and uses it as is. It accepts a BPE model over GPT-2's byte-level alphabet
// (merges as "left right" strings or [left, right] pairs, ignore_merges
// honoured), no normalizer, and as pre-tokenizer either ByteLevel with
// use_regex (GPT-2's pattern) or a Sequence of a Split by GPT-2's or Llama
// 3's pattern and a ByteLevel without use_regex; added tokens matched as
// they are (no single_word, lstrip or rstrip); a ByteLevel decoder; any
// post-processor that only adds special tokens (not applied: Encode is
// add_special_tokens false). Anything else would change the ids or lose
// bytes, and is refused in a one-line error that names it.
func ReadJSON(r io.Reader) (*Tokenizer, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var f fileJSON
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %s", jsonProblem(err, raw, ""))
	}
	if isNull(f.RawModel) {
		return nil, errors.New("not a tokenizer.json: no model")
	}
	var kind struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(f.RawModel, &kind); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %s", jsonProblem(err, f.RawModel, "model"))
	}
	if kind.Type != "BPE" { // other models' vocabularies do not even parse as BPE's
		return nil, fmt.Errorf("model type %q is not supported: only byte-level BPE is (not Unigram, WordPiece or WordLevel)", kind.Type)
	}
	f.Model = new(modelJSON)
	if err := json.Unmarshal(f.RawModel, f.Model); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %s", jsonProblem(err, f.RawModel, "model"))
	}
	if err := checkFile(&f); err != nil {
		return nil, err
	}
	pattern, err := readPreTokenizer(f.PreTokenizer)
	if err != nil {
		return nil, err
	}
	return buildFromJSON(&f, pattern)
}

// jsonProblem says what encoding/json found wrong with raw in the file's
// terms: where the JSON is malformed (line and column), or which key holds
// a value of the wrong kind and what a tokenizer.json has there. within
// names the key raw is the value of ("" for the whole file).
func jsonProblem(err error, raw []byte, within string) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := 1, 1
		for _, c := range raw[:min(int(syn.Offset), len(raw))] {
			if c == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		return fmt.Sprintf("malformed JSON at line %d, column %d: %v", line, col, syn)
	case errors.As(err, &typ):
		key := typ.Field
		if within != "" {
			key = strings.TrimSuffix(within+"."+key, ".")
		}
		want := "another kind of value"
		switch typ.Type.Kind() {
		case reflect.Struct, reflect.Map:
			want = "an object"
		case reflect.Slice, reflect.Array:
			want = "an array"
		case reflect.String:
			want = "a string"
		case reflect.Bool:
			want = "true or false"
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			want = "a non-negative integer"
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			want = "an integer"
		case reflect.Float32, reflect.Float64:
			want = "a number"
		}
		if key == "" {
			return fmt.Sprintf("the file is a JSON %s, where a tokenizer.json is %s", typ.Value, want)
		}
		return fmt.Sprintf("%s is a JSON %s, where a tokenizer.json has %s", key, typ.Value, want)
	}
	return err.Error()
}

// checkFile refuses the parts of a tokenizer.json that this package cannot
// honour exactly, except the pre-tokenizer.
func checkFile(f *fileJSON) error {
	m := f.Model
	switch {
	case m.Dropout != nil && *m.Dropout != 0:
		return fmt.Errorf("model dropout %v is not supported: it makes encoding random", *m.Dropout)
	case m.ByteFallback:
		return errors.New("model byte_fallback is not supported: byte-level BPE encodes every byte without it")
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "":
		return fmt.Errorf("model continuing_subword_prefix %q is not supported", *m.ContinuingSubwordPrefix)
	case m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return fmt.Errorf("model end_of_word_suffix %q is not supported", *m.EndOfWordSuffix)
	case !isNull(f.Truncation):
		return errors.New("truncation is not supported: it would cut the ids (set it to null)")
	case !isNull(f.Padding):
		return errors.New("padding is not supported: it would add ids (set it to null)")
	}
	if !isNull(f.Normalizer) {
		var c componentJSON
		if err := json.Unmarshal(f.Normalizer, &c); err != nil {
			return fmt.Errorf("normalizer: %v", err)
		}
		if c.Type != "Sequence" || len(c.Normalizers) > 0 {
			return fmt.Errorf("normalizer %s is not supported: it would change the text before encoding (only null is)", describe(f.Normalizer))
		}
	}
	if err := checkPostProcessor(f.PostProcessor); err != nil {
		return err
	}
	var dec componentJSON
	if isNull(f.Decoder) {
		return errors.New("decoder null is not supported: only ByteLevel gives back the bytes")
	}
	if err := json.Unmarshal(f.Decoder, &dec); err != nil {
		return fmt.Errorf("decoder: %v", err)
	}
	if dec.Type != "ByteLevel" {
		return fmt.Errorf("decoder %s is not supported: only ByteLevel gives back the bytes", describe(f.Decoder))
	}
	return nil
}

// checkPostProcessor accepts the post-processors that only add special
// tokens around a sequence (not applied, as add_special_tokens false).
func checkPostProcessor(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	var c componentJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("post_processor: %v", err)
	}
	switch c.Type {
	case "ByteLevel", "TemplateProcessing", "RobertaProcessing", "BertProcessing":
		return nil
	case "Sequence":
		for _, p := range c.Processors {
			if err := checkPostProcessor(p); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("post_processor %s is not supported", describe(raw))
}

// readPreTokenizer returns the pattern that a supported pre-tokenizer
// splits by.
func readPreTokenizer(raw json.RawMessage) (Pattern, error) {
	if isNull(raw) {
		return 0, errors.New("pre_tokenizer null is not supported: only ByteLevel (GPT-2's pattern) or a Split by GPT-2's or Llama 3's pattern then ByteLevel is")
	}
	var c componentJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return 0, fmt.Errorf("pre_tokenizer: %v", err)
	}
	switch c.Type {
	case "ByteLevel":
		if err := checkByteLevel(c, true); err != nil {
			return 0, err
		}
		return GPT2, nil
	case "Sequence":
		if len(c.Pretokenizers) == 1 {
			return readPreTokenizer(c.Pretokenizers[0])
		}
		if len(c.Pretokenizers) == 2 {
			var split, byteLevel componentJSON
			if json.Unmarshal(c.Pretokenizers[0], &split) == nil && json.Unmarshal(c.Pretokenizers[1], &byteLevel) == nil &&
				split.Type == "Split" && byteLevel.Type == "ByteLevel" {
				p, err := readSplit(split)
				if err != nil {
					return 0, err
				}
				return p, checkByteLevel(byteLevel, false)
			}
		}
	}
	return 0, fmt.Errorf("pre_tokenizer %s is not supported: only ByteLevel (GPT-2's pattern) or a Split by GPT-2's or Llama 3's pattern then ByteLevel is", describe(raw))
}

// checkByteLevel checks a ByteLevel pre-tokenizer: no prefix space, and
// use_regex as the place it is in wants (true when it splits by itself).
func checkByteLevel(c componentJSON, regex bool) error {
	if c.AddPrefixSpace == nil {
		return errors.New("pre_tokenizer ByteLevel has no add_prefix_space")
	}
	if *c.AddPrefixSpace {
		return errors.New("pre_tokenizer ByteLevel with add_prefix_space true is not supported: decoding would not give back the text's bytes")
	}
	useRegex := c.UseRegex == nil || *c.UseRegex // Hugging Face's default is true
	if useRegex != regex {
		if regex {
			return errors.New("pre_tokenizer ByteLevel with use_regex false and no Split before it is not supported")
		}
		return errors.New("pre_tokenizer Split then ByteLevel with use_regex true is not supported")
	}
	return nil
}

// readSplit returns the pattern of a Split pre-tokenizer, which must be one
// this package implements, keeping each match as a piece.
func readSplit(c componentJSON) (Pattern, error) {
	if c.Pattern == nil || c.Pattern.Regex == nil {
		return 0, errors.New("pre_tokenizer Split without a Regex pattern is not supported")
	}
	var p Pattern
	switch *c.Pattern.Regex {
	case gpt2Regex:
		p = GPT2
	case llama3Regex:
		p = Llama3
	default:
		return 0, fmt.Errorf("pre_tokenizer Split pattern %q is not supported: only GPT-2's and Llama 3's are", *c.Pattern.Regex)
	}
	// Both patterns match every character, so keeping the matches alone
	// (Isolated) and dropping what is between them (inverted Removed) agree.
	if !(c.Behavior == "Isolated" || (c.Behavior == "Removed" && c.Invert)) {
		return 0, fmt.Errorf("pre_tokenizer Split behavior %q with invert %v is not supported", c.Behavior, c.Invert)
	}
	return p, nil
}

// buildFromJSON makes the tokenizer from the model and the added tokens.
func buildFromJSON(f *fileJSON, pattern Pattern) (*Tokenizer, error) {
	m := f.Model
	size := 0
	for name, id := range m.Vocab {
		if id >= maxID {
			return nil, fmt.Errorf("vocabulary token %q has id %d, above the largest supported, %d", name, id, maxID-1)
		}
		size = max(size, int(id)+1)
	}
	for _, a := range f.AddedTokens {
		if a.ID == nil {
			return nil, fmt.Errorf("added token %q has no id", a.Content)
		}
		if *a.ID >= maxID {
			return nil, fmt.Errorf("added token %q has id %d, above the largest supported, %d", a.Content, *a.ID, maxID-1)
		}
		size = max(size, int(*a.ID)+1)
	}
	tokens := make([][]byte, size)
	names := make([]string, size)
	inModel := make([]bool, size)
	for name, id := range m.Vocab {
		if inModel[id] {
			a, b := names[id], name
			if a > b {
				a, b = b, a
			}
			return nil, fmt.Errorf("vocabulary gives id %d to both %q and %q", id, a, b)
		}
		b, ok := bl.decode(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("vocabulary token %q is not byte-level text (each character one of GPT-2's 256 byte characters)", name)
		}
		tokens[id], names[id], inModel[id] = b, name, true
	}
	added, err := readAdded(f.AddedTokens, tokens, names, inModel)
	if err != nil {
		return nil, err
	}
	merges, err := readMerges(m.Merges, m.Vocab)
	if err != nil {
		return nil, err
	}
	return newTokenizer(pattern, tokens, inModel, merges, m.IgnoreMerges, added)
}

// readAdded checks the added tokens and enters their bytes in tokens.
func readAdded(list []addedJSON, tokens [][]byte, names []string, inModel []bool) ([]AddedToken, error) {
	var added []AddedToken
	seen := map[string]bool{}
	for _, a := range list {
		id := *a.ID
		switch {
		case a.Content == "":
			return nil, fmt.Errorf("added token %d has no content", id)
		case !utf8.ValidString(a.Content):
			return nil, fmt.Errorf("added token %d is not valid UTF-8", id)
		case a.SingleWord || a.LStrip || a.RStrip:
			return nil, fmt.Errorf("added token %q with single_word, lstrip or rstrip is not supported: it changes the text around it", a.Content)
		case seen[a.Content]:
			return nil, fmt.Errorf("added token %q is listed twice", a.Content)
		case inModel[id] && names[id] != a.Content:
			return nil, fmt.Errorf("added token %q has id %d, which the vocabulary gives to %q", a.Content, id, names[id])
		case tokens[id] != nil && !inModel[id]:
			return nil, fmt.Errorf("added tokens %q and %q have the same id %d", string(tokens[id]), a.Content, id)
		}
		seen[a.Content] = true
		// Hugging Face's ByteLevel decoder maps a token's characters back to
		// bytes when all are byte characters, else takes its UTF-8: decoding
		// gives back the text only if that is the content's UTF-8.
		b, ok := bl.decode(a.Content)
		if !ok {
			b = []byte(a.Content)
		}
		if !bytes.Equal(b, []byte(a.Content)) {
			return nil, fmt.Errorf("added token %q is not supported: it would decode to other bytes than it matches", a.Content)
		}
		tokens[id] = b
		normalized := !a.Special // Hugging Face's default
		if a.Normalized != nil {
			normalized = *a.Normalized
		}
		added = append(added, AddedToken{ID: id, Content: a.Content, Special: a.Special, Normalized: normalized})
	}
	return added, nil
}

// readMerges reads merges written as "left right" strings or as [left,
// right] pairs; the result of each is the vocabulary's token for the two
// names joined.
func readMerges(raw json.RawMessage, vocab map[string]uint32) ([]Merge, error) {
	if isNull(raw) {
		return nil, nil
	}
	var pairs [][2]string
	var lines []string
	if err := json.Unmarshal(raw, &lines); err == nil {
		pairs = make([][2]string, len(lines))
		for i, l := range lines {
			left, right, ok := strings.Cut(l, " ")
			if !ok || strings.Contains(right, " ") {
				return nil, fmt.Errorf("merge %d %q is not two tokens separated by one space", i, l)
			}
			pairs[i] = [2]string{left, right}
		}
	} else if err := json.Unmarshal(raw, &pairs); err != nil {
		return nil, errors.New("model merges are neither \"left right\" strings nor [left, right] pairs")
	}
	merges := make([]Merge, len(pairs))
	for i, p := range pairs {
		ids := [3]uint32{}
		for k, name := range [3]string{p[0], p[1], p[0] + p[1]} {
			id, ok := vocab[name]
			if !ok {
				return nil, fmt.Errorf("merge %d (%q %q): %q is not in the vocabulary", i, p[0], p[1], name)
			}
			ids[k] = id
		}
		merges[i] = Merge{Left: ids[0], Right: ids[1], Result: ids[2]}
	}
	return merges, nil
}

// isNull reports whether a raw JSON value is absent or null.
func isNull(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) == 0 || string(s) == "null"
}

// describe names a component by its type, or shows it when it has none.
func describe(raw json.RawMessage) string {
	var c componentJSON
	if json.Unmarshal(raw, &c) == nil && c.Type != "" {
		return c.Type
	}
	s := string(bytes.TrimSpace(raw))
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return s
}
