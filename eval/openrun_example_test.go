package eval_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/train"
)

// Open a run directory and measure its perplexity at 1x, 2x and 4x its
// training length on the validation split of its own corpus, as cmd/eval
// does by default. OpenRun loads the newest checkpoint that loads cleanly
// (the callback hears of each newer one it skips). The example first
// trains a micro ALiBi model for a few steps.
func ExampleOpenRun() {
	tmp, err := os.MkdirTemp("", "alibi-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	cfg, err := train.ParseConfig([]byte(`
model: {d_model: 32, n_layers: 2, n_heads: 4, d_ff: 64, pos: alibi, train_len: 32, seed: 1}
train: {batch: 4, steps: 300, lr: 3.0e-3, warmup: 2, eval_tokens: 256, final_eval_tokens: 256}
`))
	if err != nil {
		log.Fatal(err)
	}
	cfg.Out = filepath.Join(tmp, "micro")
	if _, err := train.Train(context.Background(), cfg, train.Options{}); err != nil {
		log.Fatal(err)
	}

	run, err := eval.OpenRun(cfg.Out, func(err error) { log.Printf("skipped: %v", err) })
	if err != nil {
		log.Fatal(err)
	}
	val, err := run.ValidationTokens(nil) // the last val_frac of the run's corpus
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, trained at L = %d, checkpoint %s\n", run.Model.Config.Pos, run.Model.Config.TrainLen, filepath.Base(run.Weights.Checkpoint))
	for _, mult := range []int{1, 2, 4} {
		n := mult * run.Model.Config.TrainLen
		res, err := eval.Perplexity(run.Model, val, eval.Options{Len: n, MaxTokens: 8192})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("length %3d: perplexity %.2f over %d tokens in %d windows\n", n, res.PPL, res.Tokens, res.Windows)
	}
	// Output:
	// alibi, trained at L = 32, checkpoint step-00000300.safetensors
	// length  32: perplexity 12.32 over 8192 tokens in 256 windows
	// length  64: perplexity 12.34 over 8192 tokens in 128 windows
	// length 128: perplexity 12.34 over 8192 tokens in 64 windows
}
