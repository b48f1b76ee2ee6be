package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/cmd/internal/clitest"
	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/train"
)

// A BPE run continues a prompt in its tokens: the prompt's tokens are the
// tokenizer's, stdout is the bytes of the generated tokens, each token
// emitted as it is chosen; another run's tokenizer is refused in one line.
func TestGenerateBPERun(t *testing.T) {
	run, _ := clitest.MicroRun(t, "Light is refracted by the prism, and the prism refracts the light. ", 40, func(c *train.Config) {
		c.Train.Batch, c.Train.Steps, c.Train.LR, c.Train.MinLR, c.Train.Warmup = 4, 30, 1e-2, 1e-3, 2
		c.Data.Tokenizer, c.Model.Vocab = "bpe:280", 0
	})
	tr, err := eval.OpenRun(run, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := data.LoadTokenizer(filepath.Join(run, model.TokenizerFile))
	if err != nil {
		t.Fatal(err)
	}
	var pieces [][]byte
	want, _, err := tr.Model.Generate([][]byte{[]byte("Light is")}, model.GenerateOptions{Tokens: 12,
		Sampling: model.Sampling{Temperature: 1, TopP: 1}, Seed: 3, Tokenizer: tok}, func(_ int, b []byte) { pieces = append(pieces, b) })
	if err != nil {
		t.Fatal(err)
	}
	promptTokens := len(tok.Encode([]byte("Light is")))
	if len(pieces) != 12 || promptTokens >= len("Light is") || len(want[0].Text) <= 12 {
		t.Fatalf("%d pieces emitted for 12 tokens (%q), a prompt of %d tokens", len(pieces), want[0].Text, promptTokens)
	}
	jsonPath := filepath.Join(t.TempDir(), "out.json")
	var o, e bytes.Buffer
	if code := command([]string{"--run", run, "--prompt", "Light is", "--tokens", "12", "--temperature", "1", "--seed", "3", "--json", jsonPath}, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	if o.String() != string(want[0].Text) {
		t.Errorf("stdout %q, want %q", o.String(), want[0].Text)
	}
	var recs []record
	b, _ := os.ReadFile(jsonPath)
	if err := json.Unmarshal(b, &recs); err != nil || len(recs) != 1 || recs[0].PromptTokens != promptTokens || recs[0].Tokens != 12 {
		t.Errorf("json %s: %v", b, err)
	}
	other := trainedRun(t)
	e.Reset()
	code := command([]string{"--run", other, "--prompt", "Light", "--tokenizer", filepath.Join(run, model.TokenizerFile)}, &o, &e)
	if code != 1 || !strings.Contains(e.String(), "was trained with tokenizer") || strings.Count(e.String(), "\n") != 1 {
		t.Errorf("another run's tokenizer: exit %d, %q", code, e.String())
	}
}
