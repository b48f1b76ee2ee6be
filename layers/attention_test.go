package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The worked example of a well-known ALiBi tutorial: "The cat sat on mat",
// two heads with slopes 0.5 and 0.25, d_head 2, a bidirectional bias and no
// projections.
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
	g := G.NewGraph()
	qkv := G.NewTensor(g, G.Float64, 2, G.WithShape(5, 12), G.WithValue(f64([]int{5, 12}, packed...)), G.WithName("qkv"))
	bias := BiasInput(g, toF64(AlibiBias([]float32{0.5, 0.25}, 5, 5, 0, false)), "bias")
	out := G.Must(Attention(qkv, bias, 2))
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	got := out.Value().Data().([]float64)
	wantOut := map[int][]float64{0: {0.3274, 0.3936, 0.1861, 0.2613}, 4: {0.2896, 0.3695, 0.2731, 0.4746}}
	for row, want := range wantOut {
		for j, w := range want {
			if math.Abs(got[row*4+j]-w) > 5e-5 {
				t.Errorf("output row %d = %.4f, want %v", row, got[row*4:row*4+4], want)
				break
			}
		}
	}
	// The attention weights themselves, from the same kernel.
	p := make([]float64, 2*5*5)
	o := make([]float64, 5*4)
	dm := attnDims{batch: 1, t: 5, heads: 2, dHead: 2, d: 4, biasHeads: 2, scale: 1 / math.Sqrt2}
	attnForward(dm, packed, bias.Value().Data().([]float64), o, p, nil)
	wantP := []struct {
		head, row int
		w         []float64
	}{
		{0, 0, []float64{0.2879, 0.3541, 0.2148, 0.0642, 0.0790}},
		{0, 1, []float64{0.3791, 0.1520, 0.3791, 0.0559, 0.0339}},
		{1, 0, []float64{0.2142, 0.3384, 0.1299, 0.2052, 0.1122}},
	}
	for _, tc := range wantP {
		row := p[(tc.head*5+tc.row)*5:][:5]
		for j := range row {
			if math.Abs(row[j]-tc.w[j]) > 5e-5 {
				t.Errorf("head %d row %d weights %.4f, want %v", tc.head+1, tc.row, row, tc.w)
				break
			}
		}
	}
}

func TestAttentionGradient(t *testing.T) {
	for _, tc := range []struct {
		batch, tlen, heads, dHead int
		alibi                     bool
	}{
		{2, 4, 2, 3, true},
		{1, 5, 3, 2, false},
		{3, 3, 1, 4, true},
	} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.tlen)))
			d := tc.heads * tc.dHead
			qkv := randDense(rng, 1, tc.batch*tc.tlen, 3*d)
			bias := toF64(CausalMask(tc.tlen, tc.tlen, 0))
			if tc.alibi {
				bias = toF64(AlibiBias(AlibiSlopes(tc.heads), tc.tlen, tc.tlen, 0, true))
			}
			gradCheck(t, []*tensor.Dense{qkv, bias}, []int{0}, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				return Attention(in[0], in[1], tc.heads)
			})
		})
	}
}

// The whole attention layer, projections included, against finite
// differences: input, both weight matrices and both biases.
func TestAlibiMultiHeadAttentionGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const batch, tlen, heads, d = 2, 4, 2, 4
	ins := []*tensor.Dense{
		randDense(rng, 1, batch*tlen, d),
		randDense(rng, 0.5, d, 3*d), randDense(rng, 0.1, 3*d),
		randDense(rng, 0.5, d, d), randDense(rng, 0.1, d),
		toF64(AlibiBias(AlibiSlopes(heads), tlen, tlen, 0, true)),
	}
	gradCheck(t, ins, []int{0, 1, 2, 3, 4}, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		a := AlibiMultiHeadAttention{Heads: heads, WQKV: in[1], BQKV: in[2], WOut: in[3], BOut: in[4]}
		return a.Forward(in[0], in[5])
	})
}

// Rows of a causal model never see later tokens: the output for the first
// positions is unchanged when later positions change.
func TestAttentionCausalPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const tlen, heads, d = 6, 2, 4
	run := func(qkv *tensor.Dense) []float64 {
		g := G.NewGraph()
		x := G.NewTensor(g, G.Float64, 2, G.WithShape(tlen, 3*d), G.WithValue(qkv), G.WithName("qkv"))
		b := BiasInput(g, toF64(AlibiBias(AlibiSlopes(heads), tlen, tlen, 0, true)), "bias")
		out := G.Must(Attention(x, b, heads))
		vm := G.NewTapeMachine(g)
		defer vm.Close()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
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

// A huge ALiBi penalty next to the -1e9 mask must not produce NaN: the
// softmax subtracts each row's own maximum.
func TestAttentionStableAtLongDistances(t *testing.T) {
	const tlen = 4
	g := G.NewGraph()
	qkvT := tensor.New(tensor.WithShape(tlen, 3), tensor.WithBacking(make([]float32, tlen*3)))
	for i := range qkvT.Data().([]float32) {
		qkvT.Data().([]float32)[i] = 1
	}
	qkv := G.NewTensor(g, G.Float32, 2, G.WithShape(tlen, 3), G.WithValue(qkvT), G.WithName("qkv"))
	b := BiasInput(g, AlibiBias([]float32{1e6}, tlen, tlen, 0, true), "bias")
	out := G.Must(Attention(qkv, b, 1))
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	for i, v := range out.Value().Data().([]float32) {
		if math.IsNaN(float64(v)) || v != 1 {
			t.Fatalf("output %d = %g, want 1", i, v)
		}
	}
}
