package gguf_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model/gguf"
	"github.com/alibi-go/alibi/train"
)

// Export a trained run as a GGUF file for llama.cpp: open the run as every
// command does (its final checkpoint and its tokenizer), then write the
// file. cmd/export is this call with its checks of the output path.
func ExampleExport() {
	tmp, err := os.MkdirTemp("", "alibi-gguf-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	cfg, err := train.ParseConfig([]byte(`
model: {d_model: 32, n_layers: 2, n_heads: 4, d_ff: 64, pos: alibi, train_len: 32, seed: 1}
train: {batch: 4, steps: 20, lr: 3.0e-3, warmup: 2, checkpoint_every: 20, eval_tokens: 256, final_eval_tokens: 256}
`))
	if err != nil {
		log.Fatal(err)
	}
	cfg.Out = filepath.Join(tmp, "micro")
	if _, err := train.Train(context.Background(), cfg, train.Options{}); err != nil {
		log.Fatal(err)
	}

	run, err := eval.OpenRun(cfg.Out, nil)
	if err != nil {
		log.Fatal(err)
	}
	tok, err := run.RunTokenizer()
	if err != nil {
		log.Fatal(err)
	}
	var file bytes.Buffer // an *os.File in practice
	s, err := gguf.Export(&file, gguf.Source{Model: run.Model, Tokenizer: tok, Name: "micro", Checkpoint: run.Weights.Checkpoint,
		Step: run.Weights.Step, Steps: run.Weights.Steps, Finished: run.Weights.Final(), Meta: run.Meta}, gguf.Options{Type: gguf.F32})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, %v, %d tensors, context %d\n", s.Architecture, s.Type, s.Tensors, s.Context)
	for _, note := range s.Notes {
		fmt.Println(note)
	}

	f, err := gguf.Read(&file)
	if err != nil {
		log.Fatal(err)
	}
	for _, key := range []string{"general.architecture", "mpt.attention.head_count", "tokenizer.ggml.pre", "alibi_go.scheme", "alibi_go.step", "alibi_go.finished"} {
		v, _ := f.Lookup(key)
		fmt.Printf("%s = %v\n", key, v)
	}
	// Output:
	// mpt, f32, 28 tensors, context 32
	// ALiBi as mpt with max_alibi_bias 8, which gives the model's 4 slopes
	// general.architecture = mpt
	// mpt.attention.head_count = 4
	// tokenizer.ggml.pre = gpt-2
	// alibi_go.scheme = alibi
	// alibi_go.step = 20
	// alibi_go.finished = true
}
