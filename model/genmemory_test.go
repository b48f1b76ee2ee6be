package model

import (
	"testing"
)

// GenerateBytes counts every sequence's cache at its final length, twice
// (storage that doubles), with the keys before rotation under dynamic-ntk
// and the forget gates' sums under FoX, and the largest graph: it covers
// what Generate's cache then holds.
func TestGenerateBytesCoversCache(t *testing.T) {
	const d, layers, heads = 32, 2, 4 // decodeModel's
	for _, c := range []struct {
		pos, extend string
		perToken    int // floats a token adds to a layer's cache
	}{
		{PosALiBi, "", 2 * d},
		{PosRoPE, "dynamic-ntk", 3 * d},
		{"fox", "", 2*d + heads},
	} {
		m := decodeModel(t, c.pos)
		if err := m.Extend(c.extend, 0); err != nil {
			t.Fatal(err)
		}
		prompts := [][]byte{[]byte("a short prompt"), make([]byte, 70)}
		opt := GenerateOptions{Tokens: 40, Sampling: Sampling{Temperature: 0, TopP: 1}, Chunk: 16}
		lens := []int{len(prompts[0]), len(prompts[1])}
		need := m.GenerateBytes(lens, opt)
		graph := max(m.EvalGraphBytes(1, 16), m.EvalGraphBytes(2, 1))
		var cache, text int64
		for _, n := range lens {
			cache += 2 * int64(n+opt.Tokens) * layers * int64(c.perToken) * 4
			text += 2 * int64(opt.Tokens)
		}
		if graph <= 0 || need != cache+text+graph {
			t.Errorf("%s%s: GenerateBytes %d, want cache %d + text %d + graph %d", c.pos, c.extend, need, cache, text, graph)
		}
		_, stats, err := m.Generate(prompts, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if int64(stats.CacheBytes) > cache || int64(stats.CacheBytes) < cache/4 {
			t.Errorf("%s%s: the cache holds %d bytes, the estimate %d", c.pos, c.extend, stats.CacheBytes, cache)
		}
	}
	// A need past int64 saturates instead of wrapping around.
	m := decodeModel(t, PosALiBi)
	if need := m.GenerateBytes([]int{5}, GenerateOptions{Tokens: 1 << 62}); need != 1<<63-1 {
		t.Errorf("GenerateBytes of 2^62 tokens = %d, want math.MaxInt64", need)
	}
}
