package train

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/model"
)

const tokModel = "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1}\n"

// data.tokenizer decides model.vocab: derived when left out, refused in one
// line when given otherwise; a bad spec is refused in one line too.
func TestTokenizerConfig(t *testing.T) {
	for _, c := range []struct {
		yaml, wantErr string
		vocab         int
		tokenizer     string
	}{
		{tokModel, "", 256, "bytes"},
		{tokModel + "data: {tokenizer: bytes}\n", "", 256, "bytes"},
		{tokModel + "data: {tokenizer: \"bpe:1024\"}\n", "", 1024, "bpe:1024"},
		{strings.Replace(tokModel, "d_model: 8,", "d_model: 8, vocab: 1024,", 1) + "data: {tokenizer: \"bpe:1024\"}\n", "", 1024, "bpe:1024"},
		{strings.Replace(tokModel, "d_model: 8,", "d_model: 8, vocab: 256,", 1) + "data: {tokenizer: \"bpe:1024\"}\n",
			"model.vocab is 256 but data.tokenizer bpe:1024 has 1024 tokens: leave model.vocab out, it is the tokenizer's", 0, ""},
		{strings.Replace(tokModel, "d_model: 8,", "d_model: 8, vocab: 300,", 1),
			"model.vocab is 300 but data.tokenizer bytes has 256 tokens", 0, ""},
		{tokModel + "data: {tokenizer: \"bpe:12\"}\n", "data.tokenizer: tokenizer \"bpe:12\": bpe:N wants a vocabulary size N in 256..", 0, ""},
		{strings.Replace(tokModel, "train_len: 4", "train_len: 128", 1) + "data: {tokenizer: \"bpe:1024\", passkey: 0.1}\n", "", 1024, "bpe:1024"},
		{tokModel + "data: {tokenizer: some/tokenizer.json}\n", "", 0, "some/tokenizer.json"},
	} {
		cfg, err := ParseConfig([]byte(c.yaml))
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: %v, want one line containing %q", c.yaml, err, c.wantErr)
			}
			continue
		}
		if err != nil || cfg.Model.Vocab != c.vocab || cfg.Data.Tokenizer != c.tokenizer {
			t.Errorf("%q: vocab %d, tokenizer %q, %v; want %d and %q", c.yaml, cfg.Model.Vocab, cfg.Data.Tokenizer, err, c.vocab, c.tokenizer)
		}
	}
}

// A run given a tokenizer.json uses it as is: its vocabulary is the file's,
// its run directory gets the same tokenizer, its checkpoints name its hash;
// a size that differs from model.vocab is refused before training.
func TestTrainWithTokenizerFile(t *testing.T) {
	text, err := data.DefaultCorpus()
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := data.ParseTokenizerSpec("bpe:300")
	tok, err := spec.Make(text[:100000], nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := tok.Save(path); err != nil {
		t.Fatal(err)
	}
	cfg := microConfig(t, model.PosALiBi, 4)
	cfg.Data.Tokenizer, cfg.Model.Vocab = path, 0
	sum, err := Train(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	saved, err := data.LoadTokenizer(filepath.Join(cfg.Out, model.TokenizerFile))
	if err != nil || saved.Hash() != tok.Hash() || sum.TokenizerHash != tok.Hash() {
		t.Fatalf("run tokenizer %v (%v), summary %s; want hash %s", saved, err, sum.TokenizerHash, tok.Hash())
	}
	c, err := model.LoadCheckpoint(sum.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if c.Meta[model.MetaTokenizer] != tok.Hash() {
		t.Errorf("checkpoint names %q", c.Meta[model.MetaTokenizer])
	}
	m, err := c.Model()
	if err != nil || m.Config.Vocab != 300 {
		t.Fatalf("checkpoint vocabulary %v, %v", m, err)
	}
	cfg.Out, cfg.Model.Vocab = filepath.Join(t.TempDir(), "other"), 512
	if _, err := Train(context.Background(), cfg, Options{}); err == nil || !strings.Contains(err.Error(), "model.vocab is 512 but the tokenizer") {
		t.Errorf("vocab 512 with a 300-token file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.Out, model.CheckpointDir)); err == nil {
		t.Error("the refused run wrote checkpoints")
	}
}

// tiny-bpe.yaml is tiny.yaml with a BPE of 1024 tokens (the vocabulary
// derived from it) and 1000 steps.
func TestTinyBPEConfig(t *testing.T) {
	tiny, err := LoadConfig("../configs/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadConfig("../configs/tiny-bpe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if b.Data.Tokenizer != "bpe:1024" || b.Model.Vocab != 1024 || b.Train.Steps != 1000 {
		t.Errorf("tiny-bpe: tokenizer %q, vocab %d, %d steps", b.Data.Tokenizer, b.Model.Vocab, b.Train.Steps)
	}
	b.Data.Tokenizer, b.Model.Vocab, b.Name, b.Train.Steps, b.Train.EvalEvery = tiny.Data.Tokenizer, tiny.Model.Vocab, tiny.Name, tiny.Train.Steps, tiny.Train.EvalEvery
	if err := CheckResume(tiny, b); err != nil {
		t.Errorf("tiny-bpe differs from tiny beyond its tokenizer and budget: %v", err)
	}
}

// A BPE run can mix passkey episodes into training, in its tokens; a
// window too short for one is refused in one line before training.
func TestTrainBPEWithPasskey(t *testing.T) {
	cfg := microConfig(t, model.PosALiBi, 4)
	cfg.Data.Corpus = "builtin:opticks"
	cfg.Data.Tokenizer, cfg.Model.Vocab, cfg.Data.Passkey = "bpe:512", 0, 0.5
	cfg.Model.TrainLen, cfg.Train.EvalTokens = 96, 512
	if _, err := Train(context.Background(), cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	cfg.Out, cfg.Model.TrainLen = filepath.Join(t.TempDir(), "short"), 32
	_, err := Train(context.Background(), cfg, Options{})
	if err == nil || !strings.Contains(err.Error(), "data.passkey: sampler: a passkey episode needs windows of at least") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a 32-token window: %v", err)
	}
}

// A data.tokenizer that is no spec is refused in one line that names the
// valid forms (and the one meant), and one naming a file that is not there
// before the run directory is made. A relative path in a config file is
// the config file's.
func TestTokenizerSpecErrors(t *testing.T) {
	specs := map[string]string{
		"byte":    `data.tokenizer: tokenizer "byte" is not bytes, bpe:N (N in 256..`,
		"Bytes":   "; for the byte tokenizer write bytes",
		"bpe":     "; a BPE needs its size, as in bpe:1024",
		"BPE:512": "; write bpe:512",
		"512":     "; for a BPE of that many tokens write bpe:512",
	}
	for spec, want := range specs {
		_, err := ParseConfig([]byte(tokModel + "data: {tokenizer: \"" + spec + "\"}\n"))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "or the path of a tokenizer.json") {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
	tmp := t.TempDir()
	cfg := microConfig(t, model.PosALiBi, 4)
	cfg.Data.Tokenizer, cfg.Model.Vocab = filepath.Join(tmp, "missing.json"), 0
	cfg.Out = filepath.Join(tmp, "run")
	_, err := Train(context.Background(), cfg, Options{})
	if err == nil || !strings.Contains(err.Error(), "missing.json: no such file or directory (data.tokenizer is bytes, bpe:N") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := os.Stat(cfg.Out); err == nil {
		t.Errorf("the run directory was made for a run that cannot start")
	}

	// configs/x.yaml naming tok.json reads configs/tok.json, whatever the
	// working directory.
	dir := filepath.Join(tmp, "configs")
	os.MkdirAll(dir, 0o777)
	tok := filepath.Join(dir, "tok.json")
	if err := (data.ByteTokenizer{}).Save(tok); err != nil {
		t.Fatal(err)
	}
	yamlPath := filepath.Join(dir, "x.yaml")
	os.WriteFile(yamlPath, []byte(tokModel+"data: {tokenizer: tok.json}\n"), 0o644)
	got, err := LoadConfig(yamlPath)
	if err != nil || got.Data.Tokenizer != tok {
		t.Errorf("relative tokenizer: %q, %v; want %q", got.Data.Tokenizer, err, tok)
	}
}

// Resuming a BPE run whose tokenizer.json was replaced by a smaller BPE
// says so, not that the training split ran out of pairs.
func TestResumeReplacedTokenizer(t *testing.T) {
	cfg := microConfig(t, model.PosALiBi, 10)
	text, err := data.DefaultCorpus()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(cfg.Data.Corpus, text[:60000], 0o644)
	cfg.Data.Tokenizer, cfg.Model.Vocab = "bpe:300", 0
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := Train(context.Background(), cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	other, err := data.TokenizerSpec{Kind: "bpe", Vocab: 280}.Make(text[:50000], nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Save(filepath.Join(cfg.RunDir(), model.TokenizerFile)); err != nil {
		t.Fatal(err)
	}
	cfg.Train.Steps = 20
	_, err = Train(context.Background(), cfg, Options{Resume: true})
	if err == nil || !strings.Contains(err.Error(), "not the tokenizer of 300 tokens the run was trained with (data.tokenizer bpe:300): it was replaced") || strings.Contains(err.Error(), "no pair left") {
		t.Errorf("resume: %v", err)
	}
}
