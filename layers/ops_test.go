package layers

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestOpGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ids := tensor.New(tensor.WithShape(6), tensor.WithBacking([]int{3, 0, 4, 4, 1, 2}))
	tests := []struct {
		name   string
		inputs []*tensor.Dense
		wrt    []int
		build  builder
	}{
		{"layernorm", []*tensor.Dense{randDense(rng, 2, 5, 6), randDense(rng, 1, 6), randDense(rng, 1, 6)}, []int{0, 1, 2},
			func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return LayerNorm(in[0], in[1], in[2]) }},
		{"gelu", []*tensor.Dense{randDense(rng, 2, 4, 5)}, []int{0},
			func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return GELU(in[0]) }},
		{"bias", []*tensor.Dense{randDense(rng, 1, 6, 3), randDense(rng, 1, 3)}, []int{0, 1},
			func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return AddRows(in[0], in[1]) }},
		{"position table", []*tensor.Dense{randDense(rng, 1, 6, 3), randDense(rng, 1, 2, 3)}, []int{0, 1},
			func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return AddRows(in[0], in[1]) }},
		{"cross-entropy", []*tensor.Dense{randDense(rng, 3, 6, 5), ids}, []int{0},
			func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return CrossEntropy(in[0], in[1]) }},
		{"mlp", []*tensor.Dense{randDense(rng, 1, 4, 3), randDense(rng, 0.5, 3, 5), randDense(rng, 0.1, 5), randDense(rng, 0.5, 5, 3), randDense(rng, 0.1, 3)},
			[]int{0, 1, 2, 3, 4},
			func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				return MLP{W1: in[1], B1: in[2], W2: in[3], B2: in[4]}.Forward(in[0])
			}},
		{"embedding", []*tensor.Dense{randDense(rng, 1, 5, 3), ids}, []int{0},
			func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return Embedding(in[0], in[1]) }},
		{"scaled embedding", []*tensor.Dense{randDense(rng, 1, 5, 3), ids}, []int{0},
			func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ScaledEmbedding(in[0], in[1], 2.5) }},
		{"add", []*tensor.Dense{randDense(rng, 1, 4, 3), randDense(rng, 1, 4, 3)}, []int{0, 1},
			func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return Add(in[0], in[1]) }},
		{"linear", []*tensor.Dense{randDense(rng, 1, 4, 3), randDense(rng, 0.5, 3, 5), randDense(rng, 0.1, 5)}, []int{0, 1, 2},
			func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return Linear(in[0], in[1], in[2]) }},
		{"linear without bias", []*tensor.Dense{randDense(rng, 1, 4, 3), randDense(rng, 0.5, 3, 5)}, []int{0, 1},
			func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return Linear(in[0], in[1], nil) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { gradCheck(t, tc.inputs, tc.wrt, tc.build) })
	}
}

// run evaluates one op on float64 inputs and returns the output values.
func run(t *testing.T, build builder, inputs ...*tensor.Dense) []float64 {
	t.Helper()
	g := G.NewGraph()
	nodes := make([]*G.Node, len(inputs))
	for i, in := range inputs {
		nodes[i] = G.NewTensor(g, in.Dtype(), in.Dims(), G.WithShape(in.Shape()...), G.WithValue(in), G.WithName(string(rune('a'+i))))
	}
	out, err := build(g, nodes)
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	if s, ok := out.Value().Data().(float64); ok {
		return []float64{s}
	}
	return append([]float64(nil), out.Value().Data().([]float64)...)
}

func TestOpValues(t *testing.T) {
	// LayerNorm of [1, 2, 3, 4]: mean 2.5, variance 1.25.
	ln := run(t, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return LayerNorm(in[0], in[1], in[2]) },
		f64([]int{1, 4}, 1, 2, 3, 4), f64([]int{4}, 1, 1, 2, 1), f64([]int{4}, 0, 0, 0, 10))
	r := 1 / math.Sqrt(1.25+1e-5)
	for i, want := range []float64{-1.5 * r, -0.5 * r, 2 * 0.5 * r, 1.5*r + 10} {
		if math.Abs(ln[i]-want) > 1e-12 {
			t.Errorf("layernorm[%d] = %g, want %g", i, ln[i], want)
		}
	}
	// GELU reference values (PyTorch, approximate='none').
	ge := run(t, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return GELU(in[0]) }, f64([]int{4}, -2, -0.5, 1, 3))
	for i, want := range []float64{-0.04550026, -0.15426877, 0.84134475, 2.99595031} {
		if math.Abs(ge[i]-want) > 1e-7 {
			t.Errorf("gelu[%d] = %.8f, want %.8f", i, ge[i], want)
		}
	}
	// Cross-entropy of uniform logits is log(V); of one row [0, ln 3] with
	// target 1 it is -log(3/4).
	ids := tensor.New(tensor.WithShape(2), tensor.WithBacking([]int{0, 1}))
	ce := run(t, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return CrossEntropy(in[0], in[1]) },
		f64([]int{2, 2}, 5, 5, 0, math.Log(3)), ids)
	if want := (math.Log(2) - math.Log(0.75)) / 2; math.Abs(ce[0]-want) > 1e-12 {
		t.Errorf("cross-entropy = %g, want %g", ce[0], want)
	}
}

func TestCrossEntropyRejectsOutOfRangeTarget(t *testing.T) {
	g := G.NewGraph()
	l := G.NewTensor(g, G.Float64, 2, G.WithShape(1, 3), G.WithValue(f64([]int{1, 3}, 0, 0, 0)), G.WithName("l"))
	ids := G.NewTensor(g, tensor.Int, 1, G.WithShape(1), G.WithValue(tensor.New(tensor.WithShape(1), tensor.WithBacking([]int{3}))), G.WithName("t"))
	G.Must(CrossEntropy(l, ids))
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err == nil {
		t.Fatal("no error for target 3 with vocabulary 3")
	}
}

// sumRows reuses its scratch between calls: a second call with other
// values gives their own periodic sums, not the first call's added in.
func TestSumRowsReusesScratch(t *testing.T) {
	const d, period, rows = 4, 8, 512 // period 8 = two rows of 4
	var scratch []float64
	for call := 1; call <= 2; call++ {
		dy := make([]float32, rows*d)
		for i := range dy {
			dy[i] = float32(call*(i%7) - 3)
		}
		want := make([]float64, period)
		for i, g := range dy {
			want[i%period] += float64(g)
		}
		out := make([]float32, period)
		sumRows(dy, out, d, &scratch)
		for i := range out {
			if float64(out[i]) != want[i] {
				t.Fatalf("call %d: out[%d] = %v, want %v", call, i, out[i], want[i])
			}
		}
	}
	if len(scratch) == 0 {
		t.Error("the scratch was not kept")
	}
}

// TestOpValues's LayerNorm and cross-entropy in float32, the precision of
// training and evaluation (their float32 kernels are other code than the
// float64 ones the gradient checks use), and the cross-entropy's gradient,
// (softmax - onehot) / N.
func TestOpValuesFloat32(t *testing.T) {
	g := G.NewGraph()
	f32 := func(name string, shape []int, v ...float32) *G.Node {
		return G.NewTensor(g, G.Float32, len(shape), G.WithShape(shape...), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))))
	}
	x := f32("x", []int{1, 4}, 1, 2, 3, 4)
	ln := G.Must(LayerNorm(x, f32("gamma", []int{4}, 1, 1, 2, 1), f32("beta", []int{4}, 0, 0, 0, 10)))
	logits := f32("logits", []int{2, 2}, 5, 5, 0, float32(math.Log(3)))
	ids := G.NewTensor(g, G.Int, 1, G.WithShape(2), G.WithName("ids"), G.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]int{0, 1}))))
	ce := G.Must(CrossEntropy(logits, ids))
	grads, err := G.Grad(ce, logits)
	if err != nil {
		t.Fatal(err)
	}
	runGraph(t, g)
	r := 1 / math.Sqrt(1.25+1e-5)
	for i, want := range []float64{-1.5 * r, -0.5 * r, 2 * 0.5 * r, 1.5*r + 10} {
		if got := float64(ln.Value().Data().([]float32)[i]); math.Abs(got-want) > 2e-7*(1+math.Abs(want)) {
			t.Errorf("layernorm[%d] = %.9g, want %.9g", i, got, want)
		}
	}
	if got, want := float64(ce.Value().Data().(float32)), (math.Log(2)-math.Log(0.75))/2; math.Abs(got-want) > 1e-6 {
		t.Errorf("cross-entropy = %.9g, want %.9g", got, want)
	}
	for i, want := range []float64{-0.25, 0.25, 0.125, -0.125} {
		if got := float64(grads[0].Value().Data().([]float32)[i]); math.Abs(got-want) > 1e-7 {
			t.Errorf("cross-entropy gradient[%d] = %.9g, want %g", i, got, want)
		}
	}
}
