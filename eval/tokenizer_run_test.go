package eval_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/data/bpe"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/train"
)

// trainMicro trains configs/micro.yaml for steps into a temporary run
// directory, with data.tokenizer set to tokenizer ("" keeps the config's).
func trainMicro(t *testing.T, steps int, tokenizer string) (train.Config, *train.Summary) {
	t.Helper()
	cfg, err := train.LoadConfig(filepath.Join("..", "configs", "micro.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if tokenizer != "" {
		cfg.Data.Tokenizer, cfg.Model.Vocab = tokenizer, 0
	}
	cfg.Train.Steps, cfg.Out = steps, filepath.Join(t.TempDir(), "micro")
	sum, err := train.Train(context.Background(), cfg, train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, sum
}

// A byte-tokenizer run is the run it was before runs had tokenizers: the
// micro config trained for 200 steps has the validation perplexity and the
// greedy continuation that the code before tokenizers gave (recorded on
// the AVX-512 kernels: other kernel paths sum in another order).
func TestByteRunUnchanged(t *testing.T) {
	if k := layers.Kernels(layers.FP32); k != "avx512" {
		t.Skipf("the figures were recorded on the avx512 kernels; this machine runs %s", k)
	}
	cfg, sum := trainMicro(t, 200, "")
	if sum.ValPPL != 13.76201277385712 || sum.ValLoss != 2.6219120989775844 {
		t.Errorf("val_ppl %.17g, val_loss %.17g; want 13.76201277385712 and 2.6219120989775844", sum.ValPPL, sum.ValLoss)
	}
	if want := math.Log2(sum.ValPPL); math.Abs(sum.ValBitsPerByte-want) > 1e-12 {
		t.Errorf("val_bits_per_byte %.17g, want log2(val_ppl) %.17g", sum.ValBitsPerByte, want)
	}
	if sum.TokenizerHash != (data.ByteTokenizer{}).Hash() || sum.BytesPerToken != 1 {
		t.Errorf("summary names tokenizer %q (%s), %g bytes a token", sum.Tokenizer, sum.TokenizerHash, sum.BytesPerToken)
	}
	r, err := eval.OpenRun(cfg.Out, nil)
	if err != nil {
		t.Fatal(err)
	}
	gens, _, err := r.Model.Generate([][]byte{[]byte("Light is")}, model.GenerateOptions{Tokens: 40, Sampling: model.Greedy, Tokenizer: r.Tokenizer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(gens[0].Text), strings.Repeat(" the", 10); got != want {
		t.Errorf("greedy continuation %q, want %q", got, want)
	}
	gens, _, err = r.Model.Generate([][]byte{[]byte("Light is")}, model.GenerateOptions{Tokens: 40, Sampling: model.Sampling{Temperature: 0.8, TopP: 1}, Seed: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(gens[0].Text), "en ind the Iaromptin pe Bithe ofs tanrth"; got != want {
		t.Errorf("sampled continuation %q, want %q", got, want)
	}
}

// A BPE run trains its tokenizer on the training split, writes it beside
// its checkpoints, names it in each, and is scored and continued with it.
func TestBPERunEndToEnd(t *testing.T) {
	cfg, sum := trainMicro(t, 20, "bpe:320")
	tok, err := data.LoadTokenizer(filepath.Join(cfg.Out, model.TokenizerFile))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Kind() != "bpe" || tok.VocabSize() != 320 || sum.TokenizerHash != tok.Hash() {
		t.Fatalf("the run's tokenizer.json is %v (hash %s); the summary names %s", tok, tok.Hash(), sum.TokenizerHash)
	}
	corpus, err := data.LoadCorpus(cfg.Data.Corpus)
	if err != nil {
		t.Fatal(err)
	}
	trainText, valText, err := data.Split(corpus.Bytes, cfg.Data.ValFrac)
	if err != nil {
		t.Fatal(err)
	}
	again, err := bpe.Train(trainText, 320, bpe.TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Hash() != tok.Hash() {
		t.Errorf("the run's BPE is not the one trained on the training split alone")
	}
	c, err := model.LoadCheckpoint(sum.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if c.Meta[model.MetaTokenizer] != tok.Hash() {
		t.Errorf("checkpoint names tokenizer %q, want %q", c.Meta[model.MetaTokenizer], tok.Hash())
	}
	r, err := eval.OpenRun(cfg.Out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Tokenizer == nil || r.Tokenizer.Hash() != tok.Hash() || r.Model.Config.Vocab != 320 {
		t.Fatalf("opened with tokenizer %v and vocabulary %d", r.Tokenizer, r.Model.Config.Vocab)
	}
	val, err := r.ValidationTokens(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := tok.Encode(valText); len(val) != len(want) || len(val) >= len(valText)*3/4 {
		t.Fatalf("%d validation tokens for %d bytes; the tokenizer gives %d", len(val), len(valText), len(want))
	}
	res, err := eval.Perplexity(r.Model, val, eval.Options{Len: cfg.Model.TrainLen, Tokenizer: r.Tokenizer})
	if err != nil {
		t.Fatal(err)
	}
	if res.PPL != sum.ValPPL || res.BitsPerByte != sum.ValBitsPerByte {
		t.Errorf("scored again: ppl %v, %v bits per byte; the summary has %v and %v", res.PPL, res.BitsPerByte, sum.ValPPL, sum.ValBitsPerByte)
	}
	if bpt := float64(res.Bytes) / float64(res.Tokens); bpt < 1.5 || sum.BytesPerToken != bpt {
		t.Errorf("%g bytes a token (summary %g)", bpt, sum.BytesPerToken)
	}
	var emitted []byte
	gens, _, err := r.Model.Generate([][]byte{[]byte("Light is")}, model.GenerateOptions{Tokens: 12, Sampling: model.Sampling{Temperature: 1, TopP: 1}, Seed: 5, Tokenizer: r.Tokenizer},
		func(_ int, b []byte) { emitted = append(emitted, b...) })
	if err != nil {
		t.Fatal(err)
	}
	g := gens[0]
	if g.Tokens != 12 || g.PromptTokens != len(tok.Encode([]byte("Light is"))) || string(emitted) != string(g.Text) || len(g.Text) < 12 {
		t.Errorf("generated %d tokens after a prompt of %d: %q (emitted %q)", g.Tokens, g.PromptTokens, g.Text, emitted)
	}
	// Continued with --resume, the run keeps its tokenizer.json.
	cfg.Train.Steps = 30
	if _, err := train.Train(context.Background(), cfg, train.Options{Resume: true}); err != nil {
		t.Fatal(err)
	}
	if again, err := data.LoadTokenizer(filepath.Join(cfg.Out, model.TokenizerFile)); err != nil || again.Hash() != tok.Hash() {
		t.Errorf("after resuming the run's tokenizer is %v, %v", again, err)
	}
}

// A checkpoint is refused, in one line, with a tokenizer that is not the
// one it names: a byte run's with a BPE, a BPE run's with another BPE or
// with its tokenizer.json replaced; a resumed run refuses a replaced
// tokenizer.json too.
func TestOtherTokenizerRefused(t *testing.T) {
	byteCfg, _ := trainMicro(t, 10, "")
	bpeCfg, _ := trainMicro(t, 10, "bpe:300")
	text, err := data.DefaultCorpus()
	if err != nil {
		t.Fatal(err)
	}
	// A BPE of the same size, trained on other text (the validation split):
	// only the hash tells it from the run's.
	other, err := bpe.Train(text[len(text)-60000:], 300, bpe.TrainOptions{})
	if err != nil || other.VocabSize() != 300 {
		t.Fatalf("other BPE: %v, %v", other, err)
	}
	oneLine := func(what string, err error, want string) {
		t.Helper()
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want one line containing %q", what, err, want)
		}
	}
	r, err := eval.OpenRun(byteCfg.Out, nil)
	if err != nil {
		t.Fatal(err)
	}
	oneLine("a byte run given a BPE", r.UseTokenizer(other, "other.json"), "was trained with tokenizer")
	r, err = eval.OpenRun(bpeCfg.Out, nil)
	if err != nil {
		t.Fatal(err)
	}
	oneLine("a BPE run given another BPE", r.UseTokenizer(other, "other.json"), "its ids are not the ones the model learned")
	oneLine("a BPE run given the byte tokenizer", r.UseTokenizer(data.ByteTokenizer{}, "bytes"), "was trained with tokenizer")
	if err := other.Save(filepath.Join(bpeCfg.Out, model.TokenizerFile)); err != nil {
		t.Fatal(err)
	}
	_, err = eval.OpenRun(bpeCfg.Out, nil)
	oneLine("a BPE run whose tokenizer.json was replaced", err, "was trained with tokenizer")
	bpeCfg.Train.Steps = 20
	_, err = train.Train(context.Background(), bpeCfg, train.Options{Resume: true})
	oneLine("resuming a run whose tokenizer.json was replaced", err, "the tokenizer changed")
	if err := os.Remove(filepath.Join(bpeCfg.Out, model.TokenizerFile)); err != nil {
		t.Fatal(err)
	}
	r, err = eval.OpenRun(bpeCfg.Out, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.ValidationTokens(nil)
	oneLine("a BPE run without its tokenizer.json", err, "give the run's tokenizer.json with --tokenizer")
}

// A checkpoint written before runs had tokenizers names none and its run
// directory holds no tokenizer.json: it is a byte run, opened, scored and
// resumed as one, with the same numbers as when it named the byte
// tokenizer.
func TestCheckpointWithoutTokenizerIsBytes(t *testing.T) {
	cfg, sum := trainMicro(t, 10, "")
	r, err := eval.OpenRun(cfg.Out, nil)
	if err != nil {
		t.Fatal(err)
	}
	val, err := r.ValidationTokens(nil)
	if err != nil {
		t.Fatal(err)
	}
	before, err := eval.Perplexity(r.Model, val, eval.Options{Len: cfg.Model.TrainLen, Tokenizer: r.Tokenizer})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := model.Checkpoints(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range cs {
		c, err := model.LoadCheckpoint(path)
		if err != nil {
			t.Fatal(err)
		}
		delete(c.Meta, model.MetaTokenizer)
		if err := model.SaveCheckpoint(path, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(cfg.Out, model.TokenizerFile)); err != nil {
		t.Fatal(err)
	}
	r, err = eval.OpenRun(cfg.Out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Tokenizer == nil || r.Tokenizer.Kind() != data.ByteTokenizerName || r.TokenizerHash != (data.ByteTokenizer{}).Hash() {
		t.Fatalf("an old checkpoint opened with tokenizer %v (%s)", r.Tokenizer, r.TokenizerHash)
	}
	after, err := eval.Perplexity(r.Model, val, eval.Options{Len: cfg.Model.TrainLen, Tokenizer: r.Tokenizer})
	if err != nil {
		t.Fatal(err)
	}
	if after.PPL != before.PPL || after.PPL != sum.ValPPL || after.BitsPerByte != before.BitsPerByte {
		t.Errorf("ppl %v, %v bits per byte; before %v, %v", after.PPL, after.BitsPerByte, before.PPL, before.BitsPerByte)
	}
	cfg.Train.Steps = 14
	if _, err := train.Train(context.Background(), cfg, train.Options{Resume: true}); err != nil {
		t.Fatalf("resuming an old byte run: %v", err)
	}
	if tok, err := data.LoadTokenizer(filepath.Join(cfg.Out, model.TokenizerFile)); err != nil || tok.Kind() != data.ByteTokenizerName {
		t.Errorf("the resumed run's tokenizer.json: %v, %v", tok, err)
	}
}
