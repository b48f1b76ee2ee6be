package train_test

import (
	"context"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"

	"github.com/alibi-go/alibi/train"
)

// Train a micro ALiBi model for 100 steps on the built-in corpus (Newton's
// Opticks) and look at its run directory. ParseConfig fills every key the
// YAML leaves out with its default (see the package documentation); Train
// writes the resolved config, checkpoints, metrics and the summary it
// returns. cmd/train is this call with a progress display.
func ExampleTrain() {
	tmp, err := os.MkdirTemp("", "alibi-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)

	cfg, err := train.ParseConfig([]byte(`
model: {d_model: 32, n_layers: 2, n_heads: 4, d_ff: 64, pos: alibi, train_len: 32, seed: 1}
train: {batch: 4, steps: 100, lr: 3.0e-3, warmup: 2, checkpoint_every: 50, eval_tokens: 256, final_eval_tokens: 1024}
`))
	if err != nil {
		log.Fatal(err)
	}
	cfg.Out = filepath.Join(tmp, "micro")
	sum, err := train.Train(context.Background(), cfg, train.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, L = %d, %d parameters: %d steps, %d tokens\n", sum.Pos, sum.TrainLen, sum.Params, sum.Steps, sum.Tokens)
	fmt.Printf("validation perplexity %.2f (uniform bytes: 256)\n", sum.ValPPL)

	err = filepath.WalkDir(cfg.Out, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(cfg.Out, path)
			fmt.Println(filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// alibi, L = 32, 33536 parameters: 100 steps, 12800 tokens
	// validation perplexity 18.59 (uniform bytes: 256)
	// checkpoints/step-00000050.safetensors
	// checkpoints/step-00000100.safetensors
	// config.yaml
	// metrics.jsonl
	// run.lock
	// summary.json
	// tokenizer.json
}
