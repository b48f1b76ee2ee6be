package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An experiment on BPE tokens: its runs train their BPE, the report gives
// bits per byte with each length in bytes of context, names the tokenizer,
// and with --beside sets a byte-level experiment's schemes beside its own.
func TestExperimentBPE(t *testing.T) {
	cfg, out := setup(t)
	text := strings.Repeat("a little text to train on, and a little more text to learn. ", 60)
	corpus := filepath.Join(filepath.Dir(cfg), "corpus.txt")
	if err := os.WriteFile(corpus, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	byteArgs := []string{"--config", cfg, "--pos", "alibi,sinusoidal", "--out", out + "-bytes", "--mults", "1,2,16"}
	if code := command(byteArgs, &o, &e); code != 0 {
		t.Fatalf("byte-level: exit %d: %s", code, e.String())
	}
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	bpeCfg := filepath.Join(filepath.Dir(cfg), "micro-bpe.yaml")
	y := strings.Replace(strings.Replace(string(b), "vocab: 256, ", "", 1), "val_frac: 0.2}", "val_frac: 0.2, tokenizer: \"bpe:280\"}", 1)
	if err := os.WriteFile(bpeCfg, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Reset()
	e.Reset()
	args := []string{"--config", bpeCfg, "--pos", "alibi,sinusoidal", "--out", out, "--mults", "1,2", "--beside", filepath.Join(out+"-bytes", "report.json")}
	if code := command(args, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	md := o.String()
	for _, want := range []string{"Validation perplexity per token (data.tokenizer bpe:280)", "## Bits per byte",
		"| eval length (bytes of context): bits per byte | alibi | alibi, report.json at equal bytes | sinusoidal | sinusoidal, report.json at equal bytes |",
		"Tokenizer: byte-level BPE, 280 tokens", "Model: vocab 280", "--beside " + filepath.Join(out+"-bytes", "report.json")} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	var rep struct {
		Runs []struct {
			Tokenizer string `json:"tokenizer"`
			Results   []struct {
				Len    int   `json:"len"`
				Tokens int   `json:"tokens"`
				Bytes  int64 `json:"bytes"`
			} `json:"results"`
		} `json:"runs"`
		Schemes []struct {
			Lengths []struct {
				Len          int     `json:"len"`
				ContextBytes float64 `json:"context_bytes"`
				MeanBPB      float64 `json:"mean_bits_per_byte"`
			} `json:"lengths"`
		} `json:"schemes"`
	}
	b, err = os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Runs {
		if !strings.HasPrefix(r.Tokenizer, "byte-level BPE, 280 tokens") {
			t.Errorf("run tokenizer %q", r.Tokenizer)
		}
		for _, x := range r.Results {
			if x.Bytes < int64(2*x.Tokens) {
				t.Errorf("at %d: %d tokens stand for %d bytes", x.Len, x.Tokens, x.Bytes)
			}
		}
	}
	for _, st := range rep.Schemes[0].Lengths {
		if st.ContextBytes < float64(2*st.Len) || !(st.MeanBPB > 0) {
			t.Errorf("length %d: %g bytes of context, %g bits per byte", st.Len, st.ContextBytes, st.MeanBPB)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "alibi", "tokenizer.json")); err != nil {
		t.Errorf("the run has no tokenizer.json: %v", err)
	}
	e.Reset()
	if code := command(append(args[:len(args)-1], filepath.Join(out, "nothing.json")), &o, &e); code == 0 || !strings.Contains(e.String(), "--beside: ") {
		t.Errorf("a missing --beside file: exit %d, %s", code, e.String())
	}
}
