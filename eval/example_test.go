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

// Load a trained checkpoint and score a string: its perplexity is the
// exponential of the mean negative log-likelihood of each byte after the
// first, given the bytes before it. The example first trains a micro ALiBi
// model for a few steps; a real program would open the run directory of
// cmd/train.
func ExamplePerplexity() {
	tmp, err := os.MkdirTemp("", "alibi-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "micro")

	cfg, err := train.ParseConfig([]byte(`
model: {d_model: 32, n_layers: 2, n_heads: 4, d_ff: 64, pos: alibi, train_len: 32, seed: 1}
train: {batch: 4, steps: 300, lr: 3.0e-3, warmup: 2, eval_tokens: 256, final_eval_tokens: 256}
`))
	if err != nil {
		log.Fatal(err)
	}
	cfg.Out = dir
	if _, err := train.Train(context.Background(), cfg, train.Options{}); err != nil {
		log.Fatal(err)
	}

	// The newest good checkpoint of the run.
	run, err := eval.OpenRun(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	// The run's tokenizer (here the byte tokenizer, one token a byte)
	// encodes the text; one window as long as it scores every token after
	// the first.
	ids := run.Tokenizer.Encode([]byte("Light is refracted at the surface of the glass."))
	res, err := eval.Perplexity(run.Model, ids, eval.Options{Len: len(ids) - 1, Tokenizer: run.Tokenizer})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d bytes scored: %.3f nats per byte, perplexity %.4f\n", res.Tokens, res.NatsPerToken, res.PPL)
	// Output:
	// 46 bytes scored: 2.272 nats per byte, perplexity 9.6945
}
