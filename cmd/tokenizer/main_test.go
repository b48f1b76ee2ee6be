package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/data/bpe"
)

// runCmd runs the command with stdin and returns its exit code, stdout and
// stderr.
func runCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var o, e bytes.Buffer
	code := run(args, strings.NewReader(stdin), &o, &e)
	return code, o.String(), e.String()
}

// corpusText is a small corpus with odd bytes in it.
var corpusText = strings.Repeat("Light is refracted by the prism; it's 1704.\n\tColours  differ\r\n", 200) + "\xff\xfe end  "

// --train trains on the training split only: the file is the tokenizer
// bpe.Train makes from the first 90% of the corpus; --encode and --decode
// go through it and back to the same bytes.
func TestTrainEncodeDecode(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.txt")
	os.WriteFile(corpus, []byte(corpusText), 0o644)
	tokPath := filepath.Join(dir, "tok.json")
	code, _, stderr := runCmd(t, "", "--train", corpus, "--vocab", "290", "--val-frac", "0.1", "--out", tokPath)
	if code != 0 {
		t.Fatalf("--train exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "wrote "+tokPath) || !strings.Contains(stderr, "290 tokens") {
		t.Errorf("stderr: %s", stderr)
	}
	split, _, _ := data.Split([]byte(corpusText), 0.1)
	want, err := bpe.Train(split, 290, bpe.TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := bpe.Load(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	if got.Hash() != want.Hash() {
		t.Fatal("the written tokenizer is not the one trained on the training split")
	}

	text := "Light \xff\x00 is refracted\r\n 光  "
	textPath := filepath.Join(dir, "text.txt")
	os.WriteFile(textPath, []byte(text), 0o644)
	idsPath := filepath.Join(dir, "text.ids")
	if code, _, stderr := runCmd(t, "", "--tokenizer", tokPath, "--encode", textPath, "--out", idsPath); code != 0 {
		t.Fatalf("--encode exit %d: %s", code, stderr)
	}
	written, _ := os.ReadFile(idsPath)
	var wantIDs []string
	for _, id := range want.Encode([]byte(text)) {
		wantIDs = append(wantIDs, strconv.Itoa(int(id)))
	}
	if string(written) != strings.Join(wantIDs, " ")+"\n" {
		t.Errorf("--encode wrote %q, want %q", written, strings.Join(wantIDs, " ")+"\n")
	}
	// The same from standard input to standard output.
	code, stdout, stderr := runCmd(t, text, "--tokenizer", tokPath, "--encode", "-")
	if code != 0 || stdout != string(written) {
		t.Errorf("--encode -: exit %d, %q: %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "29 bytes") {
		t.Errorf("--encode stderr: %s", stderr)
	}
	code, stdout, stderr = runCmd(t, "", "--tokenizer", tokPath, "--decode", idsPath)
	if code != 0 || stdout != text {
		t.Errorf("--decode: exit %d, %q, want %q: %s", code, stdout, text, stderr)
	}
	// The byte tokenizer by name.
	code, stdout, _ = runCmd(t, "AB\xff", "--tokenizer", "bytes", "--encode", "-")
	if code != 0 || stdout != "65 66 255\n" {
		t.Errorf("bytes: exit %d, %q", code, stdout)
	}
	code, stdout, _ = runCmd(t, " 65\n66  255 ", "--tokenizer", "bytes", "--decode", "-")
	if code != 0 || stdout != "AB\xff" {
		t.Errorf("bytes decode: exit %d, %q", code, stdout)
	}
}

// An existing --out is kept without --force, replaced with it.
func TestTrainOutExists(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.txt")
	os.WriteFile(corpus, []byte(corpusText), 0o644)
	out := filepath.Join(dir, "tokenizer.json")
	os.WriteFile(out, []byte("keep me"), 0o644)
	code, _, stderr := runCmd(t, "", "--train", corpus, "--vocab", "260", "--out", out)
	if code != 1 || !strings.Contains(stderr, "exists; give --force") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "keep me" {
		t.Errorf("the existing file changed: %q", b)
	}
	if code, _, stderr := runCmd(t, "", "--train", corpus, "--vocab", "260", "--out", out, "--force"); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, stderr)
	}
	if tok, err := bpe.Load(out); err != nil || tok.VocabSize() != 260 {
		t.Errorf("after --force: %v, %v", tok, err)
	}
}

func TestInfo(t *testing.T) {
	code, stdout, _ := runCmd(t, "", "--info", "--tokenizer", "bytes")
	if code != 0 || !strings.Contains(stdout, "kind:    bytes\ntokens:  256\n") || !strings.Contains(stdout, (data.ByteTokenizer{}).Hash()) {
		t.Errorf("exit %d: %s", code, stdout)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "t.json")
	tok, _ := bpe.Train([]byte(corpusText), 280, bpe.TrainOptions{Pattern: bpe.Llama3})
	tok.Save(path)
	code, stdout, _ = runCmd(t, "", "--info", "--tokenizer", path)
	for _, want := range []string{"kind:    bpe", "tokens:  280", "pattern: llama3", "hash:    " + tok.Hash()} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("exit %d: %q lacks %q", code, stdout, want)
		}
	}
}

// Bad input: one line on stderr, exit 1 (2 for flags that do not go
// together), and nothing written.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.txt")
	os.WriteFile(corpus, []byte(corpusText), 0o644)
	unigram := filepath.Join(dir, "unigram.json")
	os.WriteFile(unigram, []byte(`{"model": {"type": "Unigram", "vocab": [["a", 0.0]]}}`), 0o644)
	ids := filepath.Join(dir, "ids.txt")
	os.WriteFile(ids, []byte("1 2 x3"), 0o644)
	big := filepath.Join(dir, "big.txt")
	os.WriteFile(big, []byte("1 999"), 0o644)
	out := filepath.Join(dir, "out.json")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "give exactly one of"},
		{[]string{"--train", corpus, "--info"}, 2, "give exactly one of"},
		{[]string{"--train", corpus, "--tokenizer", "bytes"}, 2, "--tokenizer is for --encode"},
		{[]string{"--encode", "-", "--vocab", "300"}, 2, "--vocab is for --train"},
		{[]string{"--info", "--out", out}, 2, "--out is for"},
		{[]string{"--encode", "-", "--force"}, 2, "--force needs --out"},
		{[]string{"--train", corpus, "--vocab", "100", "--out", out}, 1, "--vocab 100: want 256.."},
		{[]string{"--train", corpus, "--val-frac", "1", "--out", out}, 1, "--val-frac 1: want a fraction in [0, 1)"},
		{[]string{"--train", corpus, "--pattern", "bert", "--out", out}, 1, `--pattern "bert": want gpt2 or llama3`},
		{[]string{"--train", filepath.Join(dir, "none"), "--out", out}, 1, "no such file"},
		{[]string{"--train", corpus, "--out", filepath.Join(dir, "no", "t.json")}, 1, "does not exist"},
		{[]string{"--info", "--tokenizer", unigram}, 1, `model type "Unigram" is not supported`},
		{[]string{"--decode", ids, "--tokenizer", "bytes"}, 1, `word 3, "x3", is not a token id`},
		{[]string{"--decode", big, "--tokenizer", "bytes"}, 1, "token 999 at index 1 is outside 0..255"},
		{[]string{"--encode", filepath.Join(dir, "none"), "--tokenizer", "bytes"}, 1, "no such file"},
		{[]string{"stray"}, 2, `unexpected argument "stray"`},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCmd(t, "", tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr, tt.code, tt.want)
		}
		if lines := strings.Count(strings.TrimSuffix(stderr, "\n"), "\n"); lines != 0 && tt.code == 1 {
			t.Errorf("%q: %d lines on stderr: %q", tt.args, lines+1, stderr)
		}
		if stdout != "" {
			t.Errorf("%q: stdout %q", tt.args, stdout)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused command wrote --out")
	}
	if code, _, stderr := runCmd(t, "", "--help"); code != 0 || !strings.Contains(stderr, "--train") {
		t.Errorf("--help: exit %d, %q", code, stderr)
	}
}
