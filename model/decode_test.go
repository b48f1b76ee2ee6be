package model

import (
	"bytes"
	"fmt"
	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/layers/layerstest"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// decodeModel is a small model with random weights far from the
// initialisation, so that every position matters.
func decodeModel(t *testing.T, pos string) *Model {
	t.Helper()
	m, err := New(Config{Vocab: 256, DModel: 32, NLayers: 2, NHeads: 4, DFF: 64, Pos: pos, TrainLen: 16, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	perturbWeights(m.Weights, rand.New(rand.NewPCG(6, 7)))
	m.Project() // KERPLE's and FIRE's parameters back into their domain
	return m
}

// fullLogits runs one sequence through an ordinary (uncached) graph: row t
// of the result is the logits of the prefix ids[:t+1] (the model is causal).
func fullLogits(t *testing.T, m *Model, ids []int) []float32 {
	t.Helper()
	g, err := m.NewGraph(1, len(ids), false)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Execute(ids, nil); err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), g.LogitsData()...)
}

// The cached path's logits at every step equal the full forward pass over
// the same prefix (float32, 1e-5 relative), for all seven schemes: one prefill
// then single steps, chunked prefill with chunks of 7 (k > q), and runs of
// steps past 4x train_len. This is the regression test for the known ALiBi
// cache bugs: no bias at all during incremental decoding (fairseq), a bias
// built over the query length that vanishes for one query (keras-hub
// Falcon), both index vectors on one axis (MLX-Swift), a bias not shifted by
// k - q (x-transformers): each changes these logits.
func TestCachedLogitsEqualFullPass(t *testing.T) {
	const n = 90 // more than 5x train_len
	rng := rand.New(rand.NewPCG(8, 9))
	ids := randomTokens(rng, n, 256)
	for _, pos := range Schemes() {
		cachedEqualsFull(t, decodeModel(t, pos), pos, ids)
	}
	// With bfloat16 products too: a row's product does not depend on the
	// rows beside it.
	for _, pos := range []string{PosALiBi, PosRoPE} {
		m := decodeModel(t, pos)
		m.Precision = layers.BF16
		cachedEqualsFull(t, m, pos+" bf16", ids)
	}
}

// cachedEqualsFull checks that decoding ids through m's cache, in three
// plans of prefill and steps, gives the logits of the full pass over every
// prefix.
func cachedEqualsFull(t *testing.T, m *Model, name string, ids []int) {
	t.Helper()
	n := len(ids)
	want := fullLogits(t, m, ids)
	// With bfloat16 products, a last-bit difference between the cached and
	// the full pass's float32 attention (their products sum in different
	// orders on the portable path) can move an input of a product across a
	// bfloat16 rounding boundary: 2^-8 of that input. Seen: 7e-4.
	tol := 1e-5
	if m.Precision == layers.BF16 {
		tol = 5e-3
	}
	for _, plan := range []struct {
		name  string
		first int // prefill this many tokens at once
		chunk int // then chunks of this many, while they fit
	}{
		{"prefill 10, then single steps", 10, 1},
		{"chunks of 7, then single steps", 7, 7},
		{"single steps from the start", 1, 1},
	} {
		t.Run(name+"/"+plan.name, func(t *testing.T) {
			c := m.NewCache(1)
			graphs := map[int]*Graph{}
			defer func() {
				for _, g := range graphs {
					g.Close()
				}
			}()
			at, q := 0, plan.first
			for at < n {
				q = min(q, n-at)
				g := graphs[q]
				if g == nil {
					var err error
					if g, err = m.NewDecodeGraph(c, q); err != nil {
						t.Fatal(err)
					}
					graphs[q] = g
				}
				if err := g.Execute(ids[at:at+q], nil); err != nil {
					t.Fatal(err)
				}
				got := g.LogitsData()
				for i := 0; i < q; i++ {
					if e := layerstest.RelErr(got[i*256:(i+1)*256], want[(at+i)*256:(at+i+1)*256]); !(e <= tol) {
						t.Fatalf("position %d (run of %d at %d): logits error %.3g against the full pass", at+i, q, at, e)
					}
				}
				at += q
				if at+plan.chunk > n-40 { // the last 40 tokens one by one, past 4x train_len
					q = 1
				} else {
					q = plan.chunk
				}
			}
			if c.Positions.Lengths[0] != n {
				t.Fatalf("the cache holds %d positions, want %d", c.Positions.Lengths[0], n)
			}
		})
	}
}

// greedyByRecomputation decodes greedily by running the whole context
// through an uncached graph for every token.
func greedyByRecomputation(t *testing.T, m *Model, prompt []byte, tokens int) []byte {
	t.Helper()
	ids := make([]int, len(prompt))
	for i, b := range prompt {
		ids[i] = int(b)
	}
	var out []byte
	for len(out) < tokens {
		l := fullLogits(t, m, ids)
		next := argmax(l[len(l)-256:])
		out = append(out, byte(next))
		ids = append(ids, next)
	}
	return out
}

// Greedy decoding with the cache gives the bytes of greedy decoding by
// recomputing the full pass for every token, past 4x train_len.
func TestGreedyCachedEqualsRecomputation(t *testing.T) {
	for _, pos := range Schemes() {
		m := decodeModel(t, pos)
		prompt := []byte("Light is")
		gens, _, err := m.Generate([][]byte{prompt}, GenerateOptions{Tokens: 70, Sampling: Greedy, Chunk: 3}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := greedyByRecomputation(t, m, prompt, 70)
		if !bytes.Equal(gens[0].Text, want) {
			t.Errorf("%s: cached greedy %q, recomputed %q", pos, gens[0].Text, want)
		}
		if g := gens[0]; g.PromptTokens != 8 || g.Tokens != 70 || g.Context != 78 {
			t.Errorf("%s: %+v", pos, g)
		}
	}
}

// A batch of prompts of lengths 1, 5 and 40 gives each prompt exactly the
// bytes it gets decoded alone, greedy and sampled: positions are counted
// per sequence, so there is no padding to shift them (BLOOM's left-padding
// bug).
func TestBatchEqualsAlone(t *testing.T) {
	prompts := [][]byte{[]byte("A"), []byte("Light"), []byte(strings.Repeat("of the refraction ", 3)[:40])}
	for _, pos := range Schemes() {
		m := decodeModel(t, pos)
		for _, s := range []Sampling{Greedy, {Temperature: 0.9, TopK: 20, TopP: 0.95}} {
			opt := GenerateOptions{Tokens: 30, Sampling: s, Seed: 3, Chunk: 7}
			batch, _, err := m.Generate(prompts, opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range prompts {
				alone, _, err := m.Generate([][]byte{p}, opt, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(batch[i].Text, alone[0].Text) {
					t.Errorf("%s %+v prompt %d: batch %q, alone %q", pos, s, i, batch[i].Text, alone[0].Text)
				}
			}
		}
	}
}

// One decoding step of 6 sequences, more rows than the matrix products'
// small-M path takes (4), gives each sequence the logits, bit for bit, of
// its step alone, where every product has one row: the tiled and the
// small-M paths give a row the same bits.
func TestWideBatchStepEqualsAlone(t *testing.T) {
	const seqs = 6
	rng := rand.New(rand.NewPCG(33, 34))
	m := decodeModel(t, PosALiBi)
	batch, alone := m.NewCache(seqs), m.NewCache(seqs)
	next := make([]int, seqs)
	for b := 0; b < seqs; b++ {
		prompt := randomTokens(rng, 3+2*b, 256)
		for _, c := range []*Cache{batch, alone} {
			c.Positions.Select(b)
			g, err := m.NewDecodeGraph(c, len(prompt))
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Execute(prompt, nil); err != nil {
				t.Fatal(err)
			}
			g.Close()
		}
		next[b] = rng.IntN(256)
	}
	batch.Positions.SelectAll()
	g, err := m.NewDecodeGraph(batch, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Execute(next, nil); err != nil {
		t.Fatal(err)
	}
	all := g.LogitsData()
	alone.Positions.Select(0)
	one, err := m.NewDecodeGraph(alone, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	for b := 0; b < seqs; b++ {
		alone.Positions.Select(b)
		if err := one.Execute(next[b:b+1], nil); err != nil {
			t.Fatal(err)
		}
		got := one.LogitsData()
		for j, v := range got {
			if w := all[b*256+j]; math.Float32bits(v) != math.Float32bits(w) {
				t.Fatalf("sequence %d: logit %d alone %v, in the batch of %d %v", b, j, v, seqs, w)
			}
		}
	}
}

// Top-k 1 and top-p 1e-6 give the greedy bytes; one seed gives one output,
// twice; another seed another.
func TestGenerateSampling(t *testing.T) {
	m := decodeModel(t, PosALiBi)
	prompt := [][]byte{[]byte("The")}
	gen := func(s Sampling, seed uint64) string {
		g, _, err := m.Generate(prompt, GenerateOptions{Tokens: 40, Sampling: s, Seed: seed}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(g[0].Text)
	}
	greedy := gen(Greedy, 1)
	if k1 := gen(Sampling{Temperature: 1, TopK: 1, TopP: 1}, 7); k1 != greedy {
		t.Errorf("top-k 1 gave %q, greedy %q", k1, greedy)
	}
	if p0 := gen(Sampling{Temperature: 1, TopP: 1e-6}, 7); p0 != greedy {
		t.Errorf("top-p 1e-6 gave %q, greedy %q", p0, greedy)
	}
	s := Sampling{Temperature: 1, TopP: 1}
	if a, b := gen(s, 11), gen(s, 11); a != b {
		t.Errorf("one seed gave %q and %q", a, b)
	}
	if a, c := gen(s, 11), gen(s, 12); a == c {
		t.Errorf("seeds 11 and 12 gave the same %q", a)
	}
}

// A stop string ends the generation and is not part of the output; the
// emitted pieces add up to the output, and bytes that might start the stop
// string are held back until they cannot.
func TestGenerateStop(t *testing.T) {
	m := decodeModel(t, PosALiBi)
	prompt := [][]byte{[]byte("The")}
	free, _, err := m.Generate(prompt, GenerateOptions{Tokens: 60, Sampling: Greedy}, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := free[0].Text
	// A stop string taken from the middle of the free output.
	stop := text[20:23]
	cut := bytes.Index(text, stop)
	var emitted []byte
	got, _, err := m.Generate(prompt, GenerateOptions{Tokens: 60, Sampling: Greedy, Stop: stop}, func(p int, b []byte) {
		if p != 0 {
			t.Errorf("emit for prompt %d", p)
		}
		emitted = append(emitted, b...)
		if bytes.Contains(emitted, stop) {
			t.Errorf("the stop string %q was emitted: %q", stop, emitted)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	g := got[0]
	if !g.Stopped || !bytes.Equal(g.Text, text[:cut]) || !bytes.Equal(emitted, g.Text) || g.Tokens != cut+len(stop) {
		t.Fatalf("stop %q: %+v, emitted %q; want the text before %d", stop, g, emitted, cut)
	}
	for _, tc := range []struct {
		text, stop string
		held       int
	}{{"abc", "cde", 1}, {"abcd", "cde", 2}, {"abc", "xyz", 0}, {"a", "ab", 1}, {"ab", "", 0}} {
		if h := heldBack([]byte(tc.text), []byte(tc.stop)); h != tc.held {
			t.Errorf("heldBack(%q, %q) = %d, want %d", tc.text, tc.stop, h, tc.held)
		}
	}
}

func TestGenerateRejects(t *testing.T) {
	m := decodeModel(t, PosNone)
	for _, tc := range []struct {
		prompts [][]byte
		opt     GenerateOptions
		want    string
	}{
		{nil, GenerateOptions{Tokens: 1, Sampling: Greedy}, "no prompt"},
		{[][]byte{[]byte("a"), {}}, GenerateOptions{Tokens: 1, Sampling: Greedy}, "prompt 2 is empty"},
		{[][]byte{[]byte("a")}, GenerateOptions{Tokens: 0, Sampling: Greedy}, "at least 1"},
		{[][]byte{[]byte("a")}, GenerateOptions{Tokens: 1, Sampling: Sampling{Temperature: -1, TopP: 1}}, "temperature"},
	} {
		if _, _, err := m.Generate(tc.prompts, tc.opt, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.want, err)
		}
	}
}

// BenchmarkDecodeScaling reports the time per generated token at contexts
// 512 to 4096: it should grow linearly with the context, not
// quadratically. The ALiBi distance tables are grown by doubling, never
// rebuilt whole per token (gpt-neox's bug), and each step attends once over
// the cache: O(k) bias and attention work per token.
func BenchmarkDecodeScaling(b *testing.B) {
	m, err := New(Config{Vocab: 256, DModel: 128, NLayers: 4, NHeads: 4, DFF: 512, Pos: PosALiBi, TrainLen: 128, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	for _, ctx := range []int{512, 1024, 2048, 4096} {
		b.Run(fmt.Sprintf("context=%d", ctx), func(b *testing.B) {
			prompt := bytes.Repeat([]byte("x"), ctx)
			for b.Loop() {
				_, st, err := m.Generate([][]byte{prompt}, GenerateOptions{Tokens: 64, Sampling: Greedy, Chunk: 256}, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(st.DecodeSeconds/float64(st.DecodeTokens)*1e6, "µs/token")
			}
		})
	}
}

// tinyConfig of the benchmarks: the tiny model's shape (random weights).
var benchTiny = Config{Vocab: 256, DModel: 128, NLayers: 4, NHeads: 4, DFF: 512, Pos: PosALiBi, TrainLen: 128, Seed: 1}

// BenchmarkDecode reports the tiny model's generated tokens/s, batch 1, at
// contexts 128, 1024 and 8192 (a prompt of that length, then 128 tokens
// generated one at a time with the cache).
func BenchmarkDecode(b *testing.B) {
	m, err := New(benchTiny)
	if err != nil {
		b.Fatal(err)
	}
	for _, ctx := range []int{128, 1024, 8192} {
		b.Run(fmt.Sprintf("context=%d", ctx), func(b *testing.B) {
			prompt := bytes.Repeat([]byte("Light is "), ctx/9+1)[:ctx]
			var tokens int
			var secs float64
			for b.Loop() {
				_, st, err := m.Generate([][]byte{prompt}, GenerateOptions{Tokens: 128, Sampling: Greedy, Chunk: 256}, nil)
				if err != nil {
					b.Fatal(err)
				}
				tokens += st.DecodeTokens
				secs += st.DecodeSeconds
			}
			b.ReportMetric(float64(tokens)/secs, "tokens/s")
		})
	}
}

// BenchmarkPrefill reports the tokens/s of prefilling a 1024-byte prompt
// (chunks of 256) on the tiny model.
func BenchmarkPrefill(b *testing.B) {
	m, err := New(benchTiny)
	if err != nil {
		b.Fatal(err)
	}
	prompt := bytes.Repeat([]byte("Light is "), 114)[:1024]
	var tokens int
	var secs float64
	for b.Loop() {
		_, st, err := m.Generate([][]byte{prompt}, GenerateOptions{Tokens: 1, Sampling: Greedy, Chunk: 256}, nil)
		if err != nil {
			b.Fatal(err)
		}
		tokens += st.PrefillTokens
		secs += st.PrefillSeconds
	}
	b.ReportMetric(float64(tokens)/secs, "tokens/s")
}

// BenchmarkRecomputeFull is the alternative to the cache: one token at
// context 1024 by running the whole context through an uncached graph (as
// greedy decoding without a cache does), for comparison with
// BenchmarkDecode's context=1024.
func BenchmarkRecomputeFull(b *testing.B) {
	m, err := New(benchTiny)
	if err != nil {
		b.Fatal(err)
	}
	g, err := m.NewGraph(1, 1024, false)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	ids := make([]int, 1024)
	for b.Loop() {
		if err := g.Execute(ids, nil); err != nil {
			b.Fatal(err)
		}
		argmax(g.LogitsData()[1023*256:])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}
