package eval

import (
	"math"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/model"
)

// Every scheme: the statistics do not depend on how windows are batched,
// count exactly the queries past L, and stay within their bounds.
func TestAttentionStats(t *testing.T) {
	tokens := stream(150) // 149 targets: windows of 32, 32, 32, 32, 21
	for _, pos := range model.Schemes() {
		t.Run(pos, func(t *testing.T) {
			m := testModel(t, pos) // train_len 8
			one, err := AttentionStats(m, tokens, Options{Len: 32, BatchTokens: 1})
			if err != nil {
				t.Fatal(err)
			}
			many, err := AttentionStats(m, tokens, Options{Len: 32, BatchTokens: 96})
			if err != nil {
				t.Fatal(err)
			}
			if want := 4*(32-8) + (21 - 8); one.Queries != want || many.Queries != want || one.Windows != 5 {
				t.Fatalf("queries %d and %d in %d windows, want %d in 5", one.Queries, many.Queries, one.Windows, want)
			}
			if len(one.Layers) != 2 || len(one.Layers[0]) != 2 {
				t.Fatalf("layers %v", one.Layers)
			}
			for l := range one.Layers {
				for h, a := range one.Layers[l] {
					b := many.Layers[l][h]
					if math.Abs(a.Distance-b.Distance) > 1e-9*a.Distance || math.Abs(a.Entropy-b.Entropy) > 1e-9 || math.Abs(a.PastL-b.PastL) > 1e-9 {
						t.Errorf("layer %d head %d: %+v batched one by one, %+v three at a time", l, h, a, b)
					}
					// Queries at positions 8..31 see 9..32 keys.
					if !(a.Distance >= 0 && a.Distance <= 31 && a.Entropy >= 0 && a.Entropy <= math.Log(32) && a.PastL >= 0 && a.PastL <= 1) {
						t.Errorf("layer %d head %d out of bounds: %+v", l, h, a)
					}
				}
			}
			at8, err := AttentionStats(m, tokens, Options{Len: 8})
			if err != nil {
				t.Fatal(err)
			}
			if at8.Queries != 0 || len(at8.Layers) != 0 {
				t.Errorf("at L: %d queries past L, layers %v; want none", at8.Queries, at8.Layers)
			}
		})
	}
}

// With uniform attention (a model whose attention weights are zero, so all
// scores are 0 and no bias), a query at position i attends keys 0..i
// equally: mean distance i/2, entropy ln(i+1), share past L (i-L+1)/(i+1).
func TestAttentionStatsUniform(t *testing.T) {
	m := testModel(t, "none")
	for _, name := range m.Weights.Names {
		if strings.Contains(name, "attn.qkv.weight") || strings.Contains(name, "attn.qkv.bias") {
			clear(m.Weights.Data(name))
		}
	}
	res, err := AttentionStats(m, stream(33), Options{Len: 32})
	if err != nil {
		t.Fatal(err)
	}
	var dist, ent, past float64
	for i := 8; i < 32; i++ {
		dist += float64(i) / 2
		ent += math.Log(float64(i + 1))
		past += float64(i-8+1) / float64(i+1)
	}
	n := 24.0
	for l := range res.Layers {
		for h, s := range res.Layers[l] {
			if math.Abs(s.Distance-dist/n) > 1e-4 || math.Abs(s.Entropy-ent/n) > 1e-5 || math.Abs(s.PastL-past/n) > 1e-6 {
				t.Errorf("layer %d head %d: %+v, want distance %.5f entropy %.6f share %.6f", l, h, s, dist/n, ent/n, past/n)
			}
		}
	}
}
