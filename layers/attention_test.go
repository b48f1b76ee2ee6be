package layers

import (
	"fmt"
	"github.com/alibi-go/alibi/layers/layerstest"
	"github.com/alibi-go/alibi/layers/position"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// runGraph runs g once.
func runGraph(t *testing.T, g *G.ExprGraph) {
	t.Helper()
	vm := G.NewTapeMachine(g)
	t.Cleanup(func() { vm.Close() })
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
}

// The worked example of a well-known ALiBi tutorial: "The cat sat on mat",
// two heads with slopes 0.5 and 0.25, d_head 2, no projections, and a
// bidirectional bias -m|i-j|. The materialised reference kernel reproduces
// every number the tutorial quotes; the attention op, which is causal, must
// reproduce the last row, whose keys are all at or before it (there the two
// biases agree).
func TestAttentionTutorialExample(t *testing.T) {
	q := [][]float64{{1, 0, 1, 0}, {0, 2, 0, 1}, {1, 1, 1, 0}, {0, 0, 1, 1}, {1, 0, 0, 1}}
	k := [][]float64{{0, 1, 0, 1}, {1, 0, 1, 0}, {1, 1, 0, 0}, {0, 0, 1, 1}, {1, 0, 0.5, 0.5}}
	v := [][]float64{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}, {0.5, 0.5, 0.5, 0.5}}
	var packed []float64
	for i := range q {
		packed = append(packed, q[i]...)
		packed = append(packed, k[i]...)
		packed = append(packed, v[i]...)
	}
	wantOut := map[int][]float64{0: {0.3274, 0.3936, 0.1861, 0.2613}, 4: {0.2896, 0.3695, 0.2731, 0.4746}}
	close := func(got, want []float64) bool {
		for j := range want {
			if math.Abs(got[j]-want[j]) > 5e-5 {
				return false
			}
		}
		return true
	}

	// The reference kernel, bidirectional: every quoted output and weight.
	bias := toF64(position.AlibiBias([]float32{0.5, 0.25}, 5, 5, 0, false))
	p := make([]float64, 2*5*5)
	o := make([]float64, 5*4)
	dm := attnDims{batch: 1, t: 5, heads: 2, dHead: 2, d: 4, biasHeads: 2, scale: 1 / math.Sqrt2}
	attnForward(dm, packed, bias.Data().([]float64), o, p, nil)
	for row, want := range wantOut {
		if !close(o[row*4:], want) {
			t.Errorf("reference: output row %d = %.4f, want %v", row, o[row*4:row*4+4], want)
		}
	}
	for _, tc := range []struct {
		head, row int
		w         []float64
	}{
		{0, 0, []float64{0.2879, 0.3541, 0.2148, 0.0642, 0.0790}},
		{0, 1, []float64{0.3791, 0.1520, 0.3791, 0.0559, 0.0339}},
		{1, 0, []float64{0.2142, 0.3384, 0.1299, 0.2052, 0.1122}},
	} {
		if row := p[(tc.head*5+tc.row)*5:][:5]; !close(row, tc.w) {
			t.Errorf("reference: head %d row %d weights %.4f, want %v", tc.head+1, tc.row, row, tc.w)
		}
	}

	// The op, causal ALiBi from the slopes: the last row.
	g := G.NewGraph()
	qkv := G.NewTensor(g, G.Float64, 2, G.WithShape(5, 12), G.WithValue(f64([]int{5, 12}, packed...)), G.WithName("qkv"))
	slopes := G.NewTensor(g, G.Float64, 1, G.WithShape(2), G.WithValue(f64([]int{2}, 0.5, 0.25)), G.WithName("slopes"))
	out := G.Must(Attention(qkv, slopes, AttentionConfig{Heads: 2, QueryLen: 5, PositionBias: position.AlibiScheme{}}))
	runGraph(t, g)
	if got := out.Value().Data().([]float64)[16:20]; !close(got, wantOut[4]) {
		t.Errorf("op: output row 4 = %.4f, want %v", got, wantOut[4])
	}
}

// The gradients of the op against central finite differences, for ALiBi,
// no bias, and a learned full bias (whose every entry gets a gradient).
func TestAttentionGradient(t *testing.T) {
	for _, tc := range []struct {
		batch, tlen, heads, dHead int
		bias                      string
	}{
		{2, 4, 2, 3, "alibi"},
		{1, 5, 3, 2, "none"},
		{3, 3, 1, 4, "alibi"},
		{2, 4, 2, 2, "full"},
		{2, 3, 3, 2, "shared full"},
	} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.tlen)))
			d := tc.heads * tc.dHead
			ins := []*tensor.Dense{randDense(rng, 1, tc.batch*tc.tlen, 3*d)}
			cfg := AttentionConfig{Heads: tc.heads, QueryLen: tc.tlen}
			wrt := []int{0}
			switch tc.bias {
			case "alibi":
				cfg.PositionBias = position.AlibiScheme{}
				ins = append(ins, toF64(tensor.New(tensor.WithShape(tc.heads), tensor.WithBacking(position.AlibiSlopes(tc.heads)))))
			case "full":
				cfg.PositionBias = layerstest.FullBiasScheme{}
				ins = append(ins, randDense(rng, 1, tc.heads, tc.tlen, tc.tlen))
				wrt = append(wrt, 1)
			case "shared full":
				cfg.PositionBias = layerstest.FullBiasScheme{}
				ins = append(ins, randDense(rng, 1, 1, tc.tlen, tc.tlen))
				wrt = append(wrt, 1)
			}
			gradCheck(t, ins, wrt, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				var params *G.Node
				if len(in) > 1 {
					params = in[1]
				}
				return Attention(in[0], params, cfg)
			})
		})
	}
}

// The whole attention layer, projections included, against finite
// differences: input, both weight matrices and both biases.
func TestMultiHeadAttentionGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const batch, tlen, heads, d = 2, 4, 2, 4
	ins := []*tensor.Dense{
		randDense(rng, 1, batch*tlen, d),
		randDense(rng, 0.5, d, 3*d), randDense(rng, 0.1, 3*d),
		randDense(rng, 0.5, d, d), randDense(rng, 0.1, d),
		toF64(tensor.New(tensor.WithShape(heads), tensor.WithBacking(position.AlibiSlopes(heads)))),
	}
	gradCheck(t, ins, []int{0, 1, 2, 3, 4}, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		a := MultiHeadAttention{Heads: heads, WQKV: in[1], BQKV: in[2], WOut: in[3], BOut: in[4]}
		return a.Forward(in[0], in[5], AttentionConfig{QueryLen: tlen, PositionBias: position.AlibiScheme{}})
	})
}

// attentionRun builds and runs the op on float32 inputs and returns its
// output and, when withGrad, the gradients of sum(out*R) with respect to
// qkv and to the bias parameters.
func attentionRun(t *testing.T, qkv, params *tensor.Dense, cfg AttentionConfig, r []float32) (out []float32, grads [][]float32) {
	t.Helper()
	g := G.NewGraph()
	x := G.NewTensor(g, G.Float32, 2, G.WithShape(qkv.Shape()...), G.WithValue(qkv.Clone()), G.WithName("qkv"))
	var p *G.Node
	wrt := G.Nodes{x}
	if params != nil {
		p = G.NewTensor(g, G.Float32, params.Dims(), G.WithShape(params.Shape()...), G.WithValue(params.Clone()), G.WithName("params"))
		if cfg.PositionBias.Trainable() {
			wrt = append(wrt, p)
		}
	}
	o := G.Must(Attention(x, p, cfg))
	if r != nil {
		rn := G.NewTensor(g, G.Float32, 2, G.WithShape(o.Shape()...), G.WithValue(tensor.New(tensor.WithShape(o.Shape()...), tensor.WithBacking(r))), G.WithName("R"))
		if _, err := G.Grad(G.Must(G.Sum(G.Must(G.HadamardProd(o, rn)))), wrt...); err != nil {
			t.Fatal(err)
		}
	}
	runGraph(t, g)
	out = append([]float32(nil), o.Value().Data().([]float32)...)
	for _, n := range wrt {
		if gv, err := n.Grad(); err == nil && r != nil {
			grads = append(grads, append([]float32(nil), gv.Data().([]float32)...))
		}
	}
	return out, grads
}

// The op with ALiBi computed in the kernel from the slopes equals the op
// with the materialised position.AlibiBias tensor (and no bias equals position.CausalMask), in
// float32 to 1e-5 relative, output and qkv gradient, for 1, 3, 4 and 12
// heads and lengths that are not multiples of the tile; the slopes receive
// no gradient, the full bias one.
func TestAttentionInlineBiasEqualsMaterialised(t *testing.T) {
	for _, tc := range []struct{ batch, tlen, heads, dHead int }{
		{2, 7, 1, 8}, {1, 65, 3, 4}, {2, 130, 4, 8}, {1, 77, 12, 4}, {1, 600, 4, 8},
	} {
		rng := rand.New(rand.NewPCG(9, uint64(tc.tlen)))
		d := tc.heads * tc.dHead
		qkv := tensor.New(tensor.WithShape(tc.batch*tc.tlen, 3*d), tensor.WithBacking(randF32(rng, 1, tc.batch*tc.tlen*3*d)))
		r := randF32(rng, 1, tc.batch*tc.tlen*d)
		slopes := position.AlibiSlopes(tc.heads)
		for _, scheme := range []string{"alibi", "none"} {
			cfg := AttentionConfig{Heads: tc.heads, QueryLen: tc.tlen}
			var params, full *tensor.Dense
			if scheme == "alibi" {
				cfg.PositionBias, params = position.AlibiScheme{}, tensor.New(tensor.WithShape(tc.heads), tensor.WithBacking(slopes))
				full = position.AlibiBias(slopes, tc.tlen, tc.tlen, 0, true)
			} else {
				full = position.CausalMask(tc.tlen, tc.tlen, 0)
			}
			out, grads := attentionRun(t, qkv, params, cfg, r)
			if len(grads) != 1 {
				t.Fatalf("%s: %d gradients, want qkv's only", scheme, len(grads))
			}
			wantOut, wantGrads := attentionRun(t, qkv, full, AttentionConfig{Heads: tc.heads, QueryLen: tc.tlen, PositionBias: layerstest.FullBiasScheme{}}, r)
			if len(wantGrads) != 2 {
				t.Fatalf("full bias: %d gradients, want qkv's and the bias's", len(wantGrads))
			}
			eo, eg := layerstest.RelErr(out, wantOut), layerstest.RelErr(grads[0], wantGrads[0])
			if !(eo <= 1e-5) || !(eg <= 1e-5) {
				t.Errorf("%+v %s: output %.3g, qkv gradient %.3g relative to the materialised bias", tc, scheme, eo, eg)
			}
		}
	}
}

func randF32(rng *rand.Rand, sd float64, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * sd)
	}
	return v
}

// Rows of a causal model never see later tokens: the output for the first
// positions is unchanged when later positions change.
func TestAttentionCausalPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const tlen, heads, d = 6, 2, 4
	run := func(qkv *tensor.Dense) []float64 {
		g := G.NewGraph()
		x := G.NewTensor(g, G.Float64, 2, G.WithShape(tlen, 3*d), G.WithValue(qkv), G.WithName("qkv"))
		s := G.NewTensor(g, G.Float64, 1, G.WithShape(heads), G.WithValue(toF64(tensor.New(tensor.WithShape(heads), tensor.WithBacking(position.AlibiSlopes(heads))))), G.WithName("slopes"))
		out := G.Must(Attention(x, s, AttentionConfig{Heads: heads, QueryLen: tlen, PositionBias: position.AlibiScheme{}}))
		runGraph(t, g)
		return append([]float64(nil), out.Value().Data().([]float64)...)
	}
	qkv := randDense(rng, 1, tlen, 3*d)
	a := run(qkv)
	data := qkv.Data().([]float64)
	for i := 3 * 3 * d; i < len(data); i++ { // change rows 3..5
		data[i] += 1
	}
	b := run(qkv)
	for i := 0; i < 3*d; i++ {
		if a[i] != b[i] {
			t.Fatalf("prefix output %d changed: %g -> %g", i, a[i], b[i])
		}
	}
	if a[5*d] == b[5*d] {
		t.Fatal("last row did not change; test is not sensitive")
	}
}

// A huge ALiBi penalty must not produce NaN: the softmax subtracts each
// row's own maximum.
func TestAttentionStableAtLongDistances(t *testing.T) {
	const tlen = 4
	g := G.NewGraph()
	ones := make([]float32, tlen*3)
	for i := range ones {
		ones[i] = 1
	}
	qkv := G.NewTensor(g, G.Float32, 2, G.WithShape(tlen, 3), G.WithValue(tensor.New(tensor.WithShape(tlen, 3), tensor.WithBacking(ones))), G.WithName("qkv"))
	s := G.NewTensor(g, G.Float32, 1, G.WithShape(1), G.WithValue(tensor.New(tensor.WithShape(1), tensor.WithBacking([]float32{1e6}))), G.WithName("slopes"))
	out := G.Must(Attention(qkv, s, AttentionConfig{Heads: 1, QueryLen: tlen, PositionBias: position.AlibiScheme{}}))
	runGraph(t, g)
	for i, v := range out.Value().Data().([]float32) {
		if math.IsNaN(float64(v)) || v != 1 {
			t.Fatalf("output %d = %g, want 1", i, v)
		}
	}
}

// Bad configurations are errors, not panics.
func TestAttentionRejects(t *testing.T) {
	g := G.NewGraph()
	qkv := G.NewTensor(g, G.Float32, 2, G.WithShape(8, 12), G.WithName("qkv"))
	slopes := G.NewTensor(g, G.Float32, 1, G.WithShape(3), G.WithName("slopes"))
	full := G.NewTensor(g, G.Float32, 3, G.WithShape(2, 8, 8), G.WithName("full"))
	for _, tc := range []struct {
		name   string
		params *G.Node
		cfg    AttentionConfig
	}{
		{"no heads", nil, AttentionConfig{QueryLen: 8}},
		{"scheme without parameters", nil, AttentionConfig{Heads: 2, QueryLen: 8, PositionBias: position.AlibiScheme{}}},
		{"parameters without scheme", slopes, AttentionConfig{Heads: 2, QueryLen: 8}},
		{"slopes for 3 heads, 2 heads", slopes, AttentionConfig{Heads: 2, QueryLen: 8, PositionBias: position.AlibiScheme{}}},
		{"full bias of the wrong length", full, AttentionConfig{Heads: 2, QueryLen: 4, PositionBias: layerstest.FullBiasScheme{}}},
		{"full bias with a cache", full, AttentionConfig{Heads: 2, QueryLen: 8, PositionBias: layerstest.FullBiasScheme{}, Cache: NewKVCache(NewPositions(1), 2, 4)}},
	} {
		if _, err := Attention(qkv, tc.params, tc.cfg); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}
