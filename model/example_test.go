package model_test

import (
	"context"
	"fmt"
	"log"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

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

// Score one batch of your own ids and targets with a graph without
// gradients: LossValue is the mean negative log-likelihood of the targets,
// in nats, the same as a training graph's loss on the same input. An
// untrained model predicts nearly uniform bytes: a loss close to ln 256.
func ExampleGraph_LossValue() {
	m, err := model.New(model.Config{Vocab: 256, DModel: 32, NLayers: 2, NHeads: 4, DFF: 64, Pos: model.PosALiBi, TrainLen: 16, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	text := []byte("Of the Refraction of Light")
	n := len(text) - 1 // each byte after the first is a target
	ids, targets := make([]int, n), make([]int, n)
	for i := range n {
		ids[i], targets[i] = int(text[i]), int(text[i+1])
	}
	g, err := m.NewGraph(1, n, false) // one sequence of n tokens
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	if err := g.Execute(ids, targets); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d targets: loss %.4f nats, ln 256 = %.4f\n", n, g.LossValue(), math.Log(256))
	fmt.Println("logits:", len(g.LogitsData()), "=", n, "x", m.Config.Vocab)
	// Output:
	// 25 targets: loss 5.5252 nats, ln 256 = 5.5452
	// logits: 6400 = 25 x 256
}

// Find where a training step's time goes, by the clock: time every op of
// the graph by kind over a few runs. The times depend on the machine; the
// kinds are the graph's: print times[kind] for each to see them.
func ExampleGraph_TimeOps() {
	m, err := model.New(model.Config{Vocab: 256, DModel: 32, NLayers: 2, NHeads: 4, DFF: 64, Pos: model.PosALiBi, TrainLen: 16, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	g, err := m.NewGraph(2, 16, true)
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	ids, targets := make([]int, 32), make([]int, 32)
	for i := range ids {
		ids[i], targets[i] = 'a'+i%26, 'a'+(i+1)%26
	}
	times := model.OpTimes{}
	g.TimeOps(times)
	for range 3 {
		if err := g.Execute(ids, targets); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(strings.Join(slices.Sorted(maps.Keys(times)), " "))
	// Output:
	// Add Attention AttentionGrad BiasGrad CrossEntropy CrossEntropyGrad Embedding EmbeddingGrad LayerNorm LayerNormGrad Linear LinearGrad MLP MLPGrad
}
