package eval

import (
	"fmt"
	"testing"

	"github.com/alibi-go/alibi/model"
)

// BenchmarkPerplexity evaluates the tiny model's shape (random weights) on
// 32K tokens with non-overlapping windows and reports tokens/s.
func BenchmarkPerplexity(b *testing.B) {
	m, err := model.New(model.Config{Vocab: 256, DModel: 128, NLayers: 4, NHeads: 4, DFF: 512, Pos: model.PosALiBi, TrainLen: 128, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	toks := stream(32769)
	for _, l := range []int{128, 512, 2048} {
		b.Run(fmt.Sprintf("len=%d", l), func(b *testing.B) {
			var scored int
			for i := 0; i < b.N; i++ {
				r, err := Perplexity(m, toks, Options{Len: l})
				if err != nil {
					b.Fatal(err)
				}
				scored += r.Tokens
			}
			b.ReportMetric(float64(scored)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkStride1 scores 1024 tokens of the tiny model's shape (random
// weights) with sliding windows of stride 1 (each window after the first
// scores one token) and reports scored tokens/s.
func BenchmarkStride1(b *testing.B) {
	m, err := model.New(model.Config{Vocab: 256, DModel: 128, NLayers: 4, NHeads: 4, DFF: 512, Pos: model.PosALiBi, TrainLen: 128, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range []int{128, 512} {
		toks := stream(l + 1025) // the first window, then 1024 one-token windows
		b.Run(fmt.Sprintf("len=%d", l), func(b *testing.B) {
			var scored int
			for i := 0; i < b.N; i++ {
				r, err := Perplexity(m, toks, Options{Len: l, Stride: 1})
				if err != nil {
					b.Fatal(err)
				}
				scored += r.Tokens
			}
			b.ReportMetric(float64(scored)/b.Elapsed().Seconds(), "scored-tokens/s")
		})
	}
}

// BenchmarkExtensions evaluates the tiny model's shape (random weights) at
// 4x its training length, plain and under every evaluation-time extension
// of its scheme, and reports tokens/s: what an extension costs.
func BenchmarkExtensions(b *testing.B) {
	toks := stream(8193)
	for _, c := range []struct{ pos, method string }{
		{model.PosRoPE, ""}, {model.PosRoPE, "pi"}, {model.PosRoPE, "ntk"}, {model.PosRoPE, "dynamic-ntk"}, {model.PosRoPE, "yarn"},
		{model.PosALiBi, ""}, {model.PosALiBi, "interp"},
	} {
		m, err := model.New(model.Config{Vocab: 256, DModel: 128, NLayers: 4, NHeads: 4, DFF: 512, Pos: c.pos, TrainLen: 128, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Extend(c.method, 0); err != nil {
			b.Fatal(err)
		}
		name := c.pos
		if c.method != "" {
			name += "+" + c.method
		}
		b.Run(name, func(b *testing.B) {
			var scored int
			for i := 0; i < b.N; i++ {
				r, err := Perplexity(m, toks, Options{Len: 512})
				if err != nil {
					b.Fatal(err)
				}
				scored += r.Tokens
			}
			b.ReportMetric(float64(scored)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
