package model_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/train"
)

// Load the newest checkpoint of a training run and continue a prompt
// greedily. The example first trains a micro ALiBi model for a few steps;
// a real program would open the run directory of cmd/train.
func ExampleModel_Generate() {
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

	c, _, err := model.LatestCheckpoint(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	m, err := c.Model()
	if err != nil {
		log.Fatal(err)
	}
	prompt := []byte("The light ")
	gens, _, err := m.Generate([][]byte{prompt}, model.GenerateOptions{Tokens: 24, Sampling: model.Greedy}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d tokens: %q\n", gens[0].Tokens, string(prompt)+string(gens[0].Text))
	// Output:
	// 24 tokens: "The light the the the the the the "
}
