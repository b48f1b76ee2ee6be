package layers

import (
	"github.com/alibi-go/alibi/layers/layerstest"
	"github.com/alibi-go/alibi/layers/position"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// cachedAttention is an attention op over a key/value cache, for q new rows
// of batch selected sequences, whose input rows can be rewritten between
// runs.
type cachedAttention struct {
	in  []float32
	out *G.Node
	vm  G.VM
}

func newCachedAttention(t *testing.T, cache *KVCache, scheme position.BiasScheme, slopes []float32, batch, q, heads, d int) *cachedAttention {
	t.Helper()
	g := G.NewGraph()
	c := &cachedAttention{in: make([]float32, batch*q*3*d)}
	x := G.NewTensor(g, G.Float32, 2, G.WithShape(batch*q, 3*d), G.WithValue(tensor.New(tensor.WithShape(batch*q, 3*d), tensor.WithBacking(c.in))), G.WithName("qkv"))
	var p *G.Node
	if scheme != nil {
		p = G.NewTensor(g, G.Float32, 1, G.WithShape(heads), G.WithValue(tensor.New(tensor.WithShape(heads), tensor.WithBacking(slopes))), G.WithName("slopes"))
	}
	c.out = G.Must(Attention(x, p, AttentionConfig{Heads: heads, QueryLen: q, PositionBias: scheme, Cache: cache}))
	c.vm = G.NewTapeMachine(g)
	t.Cleanup(func() { c.vm.Close() })
	return c
}

// run attends from rows (batch*q rows of width 3d) and returns the output.
func (c *cachedAttention) run(t *testing.T, rows []float32) []float32 {
	t.Helper()
	copy(c.in, rows)
	c.vm.Reset()
	if err := c.vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	return c.out.Value().Data().([]float32)
}

// Attention over a cache, a chunk or a token at a time, gives the rows of
// attention over the whole sequence: prefill in chunks of 7 (k > q), then
// single tokens, with ALiBi and without a bias; and sequences of different
// lengths, decoded together, each get their own rows.
func TestCachedAttentionEqualsFull(t *testing.T) {
	const heads, dHead, tlen = 4, 8, 61
	d := heads * dHead
	slopes := position.AlibiSlopes(heads)
	for _, scheme := range []position.BiasScheme{position.AlibiScheme{}, nil} {
		rng := rand.New(rand.NewPCG(4, 5))
		// Three sequences of their own lengths.
		lens := []int{tlen, 33, 9}
		seqs := make([][]float32, len(lens))
		full := make([][]float32, len(lens))
		for b, n := range lens {
			seqs[b] = randF32(rng, 1, n*3*d)
			var params *tensor.Dense
			if scheme != nil {
				params = tensor.New(tensor.WithShape(heads), tensor.WithBacking(slopes))
			}
			full[b], _ = attentionRun(t, tensor.New(tensor.WithShape(n, 3*d), tensor.WithBacking(seqs[b])), params, AttentionConfig{Heads: heads, QueryLen: n, PositionBias: scheme}, nil)
		}
		pos := NewPositions(len(lens))
		cache := NewKVCache(pos, heads, d)
		check := func(b, from int, got []float32, rows int) {
			t.Helper()
			want := full[b][from*d : (from+rows)*d]
			if e := layerstest.RelErr(got[:rows*d], want); !(e <= 1e-5) {
				t.Fatalf("%v: sequence %d rows %d..%d: error %.3g against the full pass", scheme, b, from, from+rows-1, e)
			}
		}
		// Prefill each sequence alone, in chunks of 7, up to 4 tokens before
		// its end (the shortest has 9).
		chunk := newCachedAttention(t, cache, scheme, slopes, 1, 7, heads, d)
		for b, n := range lens {
			pos.Select(b)
			for pos.Lengths[b]+7 <= n-4 {
				from := pos.Lengths[b]
				check(b, from, chunk.run(t, seqs[b][from*3*d:(from+7)*3*d]), 7)
				pos.Advance(7)
			}
		}
		// Then one token per step for all three together, while each lasts.
		step := map[int]*cachedAttention{}
		for {
			var live []int
			for b, n := range lens {
				if pos.Lengths[b] < n {
					live = append(live, b)
				}
			}
			if len(live) == 0 {
				break
			}
			if step[len(live)] == nil {
				step[len(live)] = newCachedAttention(t, cache, scheme, slopes, len(live), 1, heads, d)
			}
			pos.Select(live...)
			var rows []float32
			for _, b := range live {
				at := pos.Lengths[b]
				rows = append(rows, seqs[b][at*3*d:(at+1)*3*d]...)
			}
			out := step[len(live)].run(t, rows)
			for r, b := range live {
				check(b, pos.Lengths[b], out[r*d:], 1)
			}
			pos.Advance(1)
		}
		if cache.Bytes() < 2*4*d*tlen {
			t.Fatalf("cache holds %d bytes, less than the longest sequence's keys and values", cache.Bytes())
		}
	}
}
