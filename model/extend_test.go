package model

import (
	"bytes"
	"fmt"
	"math"

	"github.com/alibi-go/alibi/layers/layerstest"
	"math/rand/v2"
	"strings"
	"testing"
)

// extendCases are the built-in extensions with the scheme each applies to.
var extendCases = []struct{ pos, method string }{
	{PosRoPE, "pi"}, {PosRoPE, "ntk"}, {PosRoPE, "yarn"}, {PosALiBi, "interp"},
}

// sameLogits fails unless the two models' logits over ids (one sequence)
// are equal bit for bit, or, with differ, unless they differ.
func sameLogits(t *testing.T, a, b *Model, ids []int, differ bool) {
	t.Helper()
	x, y := fullLogits(t, a, ids), fullLogits(t, b, ids)
	same := true
	for i := range x {
		if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
			same = false
			if !differ {
				t.Fatalf("logit %d: %v against %v", i, x[i], y[i])
			}
		}
	}
	if differ && same {
		t.Fatal("the logits are equal bit for bit; want them to differ")
	}
}

// At factor 1 every extension is the plain model bit for bit, at a length
// below the vocabulary and at one above it (the folded first layer); at
// factor 4 it is not.
func TestExtendFactorOneIsPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range extendCases {
		plain := decodeModel(t, c.pos)
		ext := decodeModel(t, c.pos)
		for _, n := range []int{40, 300} {
			ids := randomTokens(rng, n, 256)
			if err := ext.Extend(c.method, 1); err != nil {
				t.Fatal(err)
			}
			sameLogits(t, plain, ext, ids, false)
			if err := ext.Extend(c.method, 4); err != nil {
				t.Fatal(err)
			}
			sameLogits(t, plain, ext, ids, true)
		}
	}
}

// Without a factor, a graph takes its length over the training length (at
// least 1): a graph of 64 tokens of a model trained on 16 is the extension
// at factor 4, one of 12 tokens the plain model.
func TestExtendDefaultFactor(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range extendCases {
		auto, fixed, plain := decodeModel(t, c.pos), decodeModel(t, c.pos), decodeModel(t, c.pos)
		if err := auto.Extend(c.method, 0); err != nil {
			t.Fatal(err)
		}
		if err := fixed.Extend(c.method, 4); err != nil {
			t.Fatal(err)
		}
		sameLogits(t, auto, fixed, randomTokens(rng, 64, 256), false)
		sameLogits(t, auto, plain, randomTokens(rng, 12, 256), false)
	}
}

// ALiBi interpolation at factor 2 is the model whose slopes are halved,
// bit for bit (the halving of a power of two is exact); the model's own
// buffer is left as it was.
func TestAlibiInterpHalvesTheSlopes(t *testing.T) {
	m := decodeModel(t, PosALiBi)
	before := append([]float32(nil), m.PositionBuffer...)
	if err := m.Extend("interp", 2); err != nil {
		t.Fatal(err)
	}
	halved, err := FromWeights(m.Config, m.Weights)
	if err != nil {
		t.Fatal(err)
	}
	for h := range halved.PositionBuffer {
		halved.PositionBuffer[h] /= 2
	}
	sameLogits(t, m, halved, randomTokens(rand.New(rand.NewPCG(5, 6)), 50, 256), false)
	for h, v := range m.PositionBuffer {
		if v != before[h] {
			t.Fatalf("the model's slope %d changed from %v to %v", h, before[h], v)
		}
	}
}

// With a fixed factor, the cached logits of every extension equal its full
// pass, through chunked prefill and single steps past 5x train_len.
func TestExtendCachedEqualsFullPass(t *testing.T) {
	ids := randomTokens(rand.New(rand.NewPCG(7, 8)), 90, 256)
	for _, c := range extendCases {
		m := decodeModel(t, c.pos)
		if err := m.Extend(c.method, 4); err != nil {
			t.Fatal(err)
		}
		cachedEqualsFull(t, m, c.pos+"+"+c.method, ids)
	}
}

func TestExtendRejects(t *testing.T) {
	for _, c := range []struct {
		pos, method string
		factor      float64
		want        string
	}{
		{PosALiBi, "yarn", 2, "extension yarn applies to rope runs, not alibi; for alibi use interp"},
		{PosRoPE, "interp", 2, "extension interp applies to alibi runs, not rope; for rope use pi, ntk, dynamic-ntk, yarn"},
		{PosSinusoidal, "pi", 2, "no extension applies to sinusoidal"},
		{PosRoPE, "stretch", 2, `unknown extension method "stretch"`},
		{PosRoPE, "pi", 0.5, "extension factor 0.5: want at least 1"},
		{PosRoPE, "pi", math.NaN(), "extension factor NaN"},
		// Factors that are not finite, or that overflow the extension's
		// arithmetic (position.CheckFactor), in every extension.
		{PosRoPE, "yarn", math.Inf(1), "extension factor +Inf is not a finite number"},
		{PosRoPE, "pi", math.Inf(1), "extension factor +Inf is not a finite number"},
		{PosRoPE, "ntk", math.Inf(1), "extension factor +Inf is not a finite number"},
		{PosALiBi, "interp", math.Inf(1), "extension factor +Inf is not a finite number"},
		{PosRoPE, "yarn", 1e300, "extension factor 1e+300 is too large for yarn on this model"},
		{PosRoPE, "pi", 1e300, "extension factor 1e+300 is too large for pi on this model"},
		{PosRoPE, "ntk", 1e300, "extension factor 1e+300 is too large for ntk on this model"},
		{PosALiBi, "interp", 1e300, "extension factor 1e+300 is too large for interp on this model"},
		{PosRoPE, "dynamic-ntk", math.Inf(1), "takes its factor from the length"},
	} {
		err := decodeModel(t, c.pos).Extend(c.method, c.factor)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with %s at %v: %v, want %q", c.pos, c.method, c.factor, err, c.want)
		}
	}
	m := decodeModel(t, PosRoPE)
	if err := m.Extend("yarn", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := m.NewDecodeGraph(m.NewCache(1), 1); err == nil || !strings.Contains(err.Error(), "needs a factor") {
		t.Errorf("decoding without a factor: %v", err)
	}
	if _, err := m.NewGraph(1, 8, true); err == nil || !strings.Contains(err.Error(), "evaluation") {
		t.Errorf("a training graph of an extended model: %v", err)
	}
	if err := m.Extend("", 0); err != nil {
		t.Fatal(err)
	}
	if e, f := m.Extension(); e != nil || f != 0 {
		t.Errorf("after Extend(\"\"): %v at %v", e, f)
	}
}

// Dynamic NTK takes the factor of the length: a full pass within the
// training length is the plain model, one of 4x L is NTK at factor 4, bit
// for bit; it refuses a factor of its own.
func TestDynamicNTKFullPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	plain, dyn, ntk := decodeModel(t, PosRoPE), decodeModel(t, PosRoPE), decodeModel(t, PosRoPE)
	if err := dyn.Extend("dynamic-ntk", 0); err != nil {
		t.Fatal(err)
	}
	if err := ntk.Extend("ntk", 4); err != nil {
		t.Fatal(err)
	}
	sameLogits(t, dyn, plain, randomTokens(rng, 16, 256), false)
	sameLogits(t, dyn, ntk, randomTokens(rng, 64, 256), false)
	sameLogits(t, dyn, plain, randomTokens(rng, 64, 256), true)
	if err := dyn.Extend("dynamic-ntk", 2); err == nil || !strings.Contains(err.Error(), "give no factor") {
		t.Errorf("dynamic-ntk with a factor: %v", err)
	}
}

// With dynamic NTK the factor grows with every token past L; the cache
// rotates its keys again to each new factor's frequencies. A one-layer
// model then decodes exactly as the full pass over the prefix so far (at
// its own factor), through chunked prefill and single steps, in a batch of
// two sequences of different lengths (and so different factors). With two
// layers it does so up to L; past L it cannot: the second layer's cached
// keys and values come from first-layer states computed at older factors,
// where the full pass recomputes them at the new one.
func TestDynamicNTKCachedAgainstPrefixPasses(t *testing.T) {
	const n = 70 // past 4x train_len
	rng := rand.New(rand.NewPCG(11, 12))
	for _, layers := range []int{1, 2} {
		m, err := New(Config{Vocab: 256, DModel: 32, NLayers: layers, NHeads: 4, DFF: 64, Pos: PosRoPE, TrainLen: 16, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		perturbWeights(m.Weights, rand.New(rand.NewPCG(6, 7)))
		if err := m.Extend("dynamic-ntk", 0); err != nil {
			t.Fatal(err)
		}
		seqs := [][]int{randomTokens(rng, n, 256), randomTokens(rng, n, 256)}
		want := make([][][]float32, len(seqs)) // want[s][p]: logits of row p of the pass over seqs[s][:p+1]
		for s, ids := range seqs {
			for p := range n {
				want[s] = append(want[s], fullLogits(t, m, ids[:p+1])[p*256:])
			}
		}
		for _, plan := range []struct {
			name         string
			first, chunk int
		}{{"single steps", 1, 1}, {"chunks of 7", 7, 7}, {"prefill 30, then steps", 30, 1}} {
			t.Run(fmt.Sprintf("%d layers, %s", layers, plan.name), func(t *testing.T) {
				c := m.NewCache(2)
				at := []int{0, 0}
				worst := 0.0 // the largest error past L
				step := func(rows []int, q int) {
					t.Helper()
					c.Positions.Select(rows...)
					g, err := m.NewDecodeGraph(c, q)
					if err != nil {
						t.Fatal(err)
					}
					defer g.Close()
					var ids []int
					for _, s := range rows {
						ids = append(ids, seqs[s][at[s]:at[s]+q]...)
					}
					if err := g.Execute(ids, nil); err != nil {
						t.Fatal(err)
					}
					got := g.LogitsData()
					for i, s := range rows {
						// The last row of a chunk: the prefix so far.
						p := at[s] + q - 1
						e := layerstest.RelErr(got[(i*q+q-1)*256:][:256], toFloat64(want[s][p]))
						if !(e <= 1e-5) && (layers == 1 || p < 16) {
							t.Fatalf("sequence %d, position %d: logits error %.3g against the full pass over its prefix", s, p, e)
						}
						if p >= 16 {
							worst = max(worst, e)
						}
						at[s] += q
					}
				}
				step([]int{0}, 5) // sequence 0 runs 5 tokens ahead
				for q := plan.first; at[0]+q <= n; q = plan.chunk {
					step([]int{0, 1}, q)
				}
				if layers == 2 && !(worst > 1e-5) {
					t.Errorf("two layers past L: largest error %.3g; the cached states of older factors should show", worst)
				}
				t.Logf("largest error past L: %.3g", worst)
			})
		}
	}
}

// Every extension, and log-length scaling, generates for each prompt of a
// batch the bytes it generates for the prompt alone (dynamic-ntk: each
// sequence at the factor of its own length).
func TestExtendBatchEqualsAlone(t *testing.T) {
	prompts := [][]byte{[]byte("A"), []byte("Light"), []byte(strings.Repeat("of the refraction ", 3)[:40])}
	type variant struct {
		name string
		m    *Model
	}
	var vs []variant
	for _, c := range append(extendCases, struct{ pos, method string }{PosRoPE, "dynamic-ntk"}) {
		m := decodeModel(t, c.pos)
		f := 4.0
		if c.method == "dynamic-ntk" {
			f = 0
		}
		if err := m.Extend(c.method, f); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, variant{c.pos + "+" + c.method, m})
	}
	for _, pos := range []string{PosALiBi, PosRoPE} {
		_, m := logLengthModel(t, pos, 2)
		vs = append(vs, variant{pos + "+log-length", m})
	}
	for _, v := range vs {
		opt := GenerateOptions{Tokens: 30, Sampling: Greedy, Seed: 3, Chunk: 7}
		batch, _, err := v.m.Generate(prompts, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range prompts {
			alone, _, err := v.m.Generate([][]byte{p}, opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(batch[i].Text, alone[0].Text) {
				t.Errorf("%s prompt %d: batch %q, alone %q", v.name, i, batch[i].Text, alone[0].Text)
			}
		}
	}
}
