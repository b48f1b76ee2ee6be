package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/cmd/internal/clitest"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/train"
)

// A BPE run is scored in its own tokens, with bits per byte in the table
// and the JSON; a checkpoint given the tokenizer of another run is refused
// in one line, and so is a BPE checkpoint outside its run directory without
// --tokenizer.
func TestEvalBPERun(t *testing.T) {
	text := "a small corpus for evaluation, with words that repeat. "
	bpeRun, _ := clitest.MicroRun(t, text, 60, func(c *train.Config) {
		c.Train.Batch, c.Train.Steps, c.Train.LR, c.Train.MinLR, c.Train.Warmup = 2, 4, 1e-3, 1e-4, 1
		c.Data.Tokenizer, c.Model.Vocab = "bpe:280", 0
	})
	byteRun, _ := trainedRun(t)
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	var out, errb bytes.Buffer
	if code := command([]string{"--run", bpeRun, "--lens", "16,32", "--json", jsonPath}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "bits per byte (the same scale for every tokenizer):") {
		t.Errorf("no bits-per-byte table:\n%s", out.String())
	}
	var rep struct {
		Runs []struct {
			Tokenizer string `json:"tokenizer"`
			Results   []struct {
				PPL         float64 `json:"ppl"`
				BitsPerByte float64 `json:"bits_per_byte"`
				Tokens      int     `json:"tokens"`
				Bytes       int64   `json:"bytes"`
			} `json:"results"`
		} `json:"runs"`
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Runs[0]
	if !strings.HasPrefix(r.Tokenizer, "byte-level BPE, 280 tokens") {
		t.Errorf("tokenizer %q", r.Tokenizer)
	}
	for _, x := range r.Results {
		if x.Bytes <= int64(x.Tokens) || math.Abs(x.BitsPerByte-math.Log2(x.PPL)*float64(x.Tokens)/float64(x.Bytes)) > 1e-9 {
			t.Errorf("result %+v: bits per byte is not log2(ppl) x tokens / bytes", x)
		}
	}
	oneLine := func(args []string, want string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := command(args, &out, &errb)
		if code != 1 || !strings.Contains(errb.String(), want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want one line containing %q", args, code, errb.String(), want)
		}
	}
	oneLine([]string{"--run", byteRun, "--tokenizer", filepath.Join(bpeRun, model.TokenizerFile)}, "its ids are not the ones the model learned")
	oneLine([]string{"--run", bpeRun, "--tokenizer", filepath.Join(t.TempDir(), "none.json")}, "--tokenizer: ")
	// The BPE checkpoint copied out of its run needs --tokenizer.
	cs, err := model.Checkpoints(bpeRun)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(cs[len(cs)-1])
	if err != nil {
		t.Fatal(err)
	}
	lone := filepath.Join(t.TempDir(), "lone.safetensors")
	if err := os.WriteFile(lone, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	oneLine([]string{"--checkpoint", lone, "--data", filepath.Join(filepath.Dir(bpeRun), "corpus.txt")}, "give the run's tokenizer.json with --tokenizer")
	out.Reset()
	errb.Reset()
	if code := command([]string{"--checkpoint", lone, "--tokenizer", filepath.Join(bpeRun, model.TokenizerFile), "--data", filepath.Join(filepath.Dir(bpeRun), "corpus.txt"), "--lens", "16"}, &out, &errb); code != 0 {
		t.Errorf("with --tokenizer: exit %d, %s", code, errb.String())
	}
}
