package layers

import (
	"fmt"
	"github.com/alibi-go/alibi/layers/layerstest"
	"github.com/alibi-go/alibi/layers/position"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The tests in this file check every custom op against the same computation
// composed from plain Gorgonia ops that are known to be correct (Mul,
// Broadcast*, Sum, Mean, Max, Exp, Log, Sqrt, Inverse, Slice, Concat,
// Reshape, Transpose, ByIndices on axis 0 of a 2-D input), forward values
// and the gradients of loss = sum(out ⊙ R), in float64. The composed
// references avoid the Gorgonia ops listed as wrong in the project notes:
// SoftMax, LogSoftMax, LogSumExp and InverseSqrt.

// composedTol is the bound |custom - composed| <= composedTol * (1 + |composed|).
const composedTol = 1e-11

// composedResult is the forward output and the gradients of one graph.
type composedResult struct {
	shape tensor.Shape
	out   []float64
	grads [][]float64
}

// composedScalar is the fixed random weight R of a scalar output.
const composedScalar = 1.7

// evalComposed builds one graph over copies of inputs with build, reduces its
// output to loss = sum(out ⊙ R) (R fixed and random, the same for every graph
// of the same output shape; out * 1.7 for a scalar output), differentiates
// the loss with respect to inputs[wrt...] and runs the graph twice, checking
// that the second run (which reuses every custom op's buffers) repeats the
// first.
func evalComposed(t *testing.T, inputs []*tensor.Dense, wrt []int, build builder) composedResult {
	t.Helper()
	g := G.NewGraph()
	nodes := make([]*G.Node, len(inputs))
	copies := make([]*tensor.Dense, len(inputs))
	for i, in := range inputs {
		copies[i] = in.Clone().(*tensor.Dense) // no graph can touch another's inputs
		c := copies[i]
		nodes[i] = G.NewTensor(g, c.Dtype(), c.Dims(), G.WithShape(c.Shape()...), G.WithValue(c), G.WithName(fmt.Sprintf("input%d", i)))
	}
	out, err := build(g, nodes)
	if err != nil {
		t.Fatal(err)
	}
	var loss *G.Node
	if out.IsScalar() {
		r := G.NewScalar(g, G.Float64, G.WithValue(composedScalar), G.WithName("R"))
		loss, err = G.Mul(out, r)
	} else {
		rng := rand.New(rand.NewPCG(21, 22))
		r := G.NewTensor(g, G.Float64, out.Dims(), G.WithShape(out.Shape()...), G.WithValue(randDense(rng, 1, out.Shape()...)), G.WithName("R"))
		var prod *G.Node
		if prod, err = G.HadamardProd(out, r); err == nil {
			loss, err = G.Sum(prod)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	ws := make(G.Nodes, len(wrt))
	for k, i := range wrt {
		ws[k] = nodes[i]
	}
	grads, err := G.Grad(loss, ws...)
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	var runs [2]composedResult
	for i := range runs {
		vm.Reset()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		runs[i] = composedResult{shape: out.Shape().Clone(), out: valuesF64(t, out.Value())}
		for _, gn := range grads {
			runs[i].grads = append(runs[i].grads, valuesF64(t, gn.Value()))
		}
	}
	for i, c := range copies {
		if !reflect.DeepEqual(c.Data(), inputs[i].Data()) {
			t.Fatalf("the graph overwrote its input %d", i)
		}
	}
	if d, at := maxAbsDiff(runs[1].out, runs[0].out); d != 0 {
		t.Fatalf("second run changed output element %d by %g", at, d)
	}
	for k := range runs[0].grads {
		if d, at := maxAbsDiff(runs[1].grads[k], runs[0].grads[k]); d != 0 {
			t.Fatalf("second run changed gradient of input %d, element %d, by %g", wrt[k], at, d)
		}
	}
	return runs[1]
}

// valuesF64 copies a float64 value (tensor or scalar) out of the graph.
func valuesF64(t *testing.T, v G.Value) []float64 {
	t.Helper()
	switch d := v.Data().(type) {
	case float64:
		return []float64{d}
	case []float64:
		return append([]float64(nil), d...)
	}
	t.Fatalf("value of type %T, want float64", v.Data())
	return nil
}

// maxAbsDiff is max |a-b| (+Inf on NaN) and where it occurs.
func maxAbsDiff(a, b []float64) (float64, int) {
	var m float64
	at := -1
	for i := range a {
		d := math.Abs(a[i] - b[i])
		if d != d {
			return math.Inf(1), i
		}
		if d > m {
			m, at = d, i
		}
	}
	return m, at
}

// compareComposed checks got against want elementwise within
// composedTol*(1+|want|) and returns the largest absolute difference.
func compareComposed(t *testing.T, what string, got, want []float64) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, reference has %d", what, len(got), len(want))
	}
	var worst float64
	for i := range got {
		d := math.Abs(got[i] - want[i])
		if !(d <= composedTol*(1+math.Abs(want[i]))) { // also catches NaN
			t.Errorf("%s element %d: custom %.12g, composed %.12g (|diff| %.3g)", what, i, got[i], want[i], d)
			return d
		}
		worst = max(worst, d)
	}
	return worst
}

// checkComposed runs the custom and the composed graph on the same inputs
// and compares their outputs and gradients.
func checkComposed(t *testing.T, inputs []*tensor.Dense, wrt []int, custom, composed builder) {
	t.Helper()
	a := evalComposed(t, inputs, wrt, custom)
	b := evalComposed(t, inputs, wrt, composed)
	if !a.shape.Eq(b.shape) {
		t.Fatalf("custom output shape %v, composed %v", a.shape, b.shape)
	}
	msg := fmt.Sprintf("max |diff|: forward %.3g", compareComposed(t, "forward", a.out, b.out))
	for k, i := range wrt {
		d := compareComposed(t, fmt.Sprintf("gradient of input %d", i), a.grads[k], b.grads[k])
		msg += fmt.Sprintf(", d input%d %.3g", i, d)
	}
	t.Log(msg)
}

// ---- Composed references, built from plain Gorgonia ops ----

// composedAddRows adds t, of R rows (or a vector for R = 1), to every block
// of R rows of x, by reshaping x to (N/R, R, D) and broadcasting t over the
// first axis.
func composedAddRows(x, t *G.Node) (*G.Node, error) {
	n, d := x.Shape()[0], x.Shape()[1]
	r := t.Shape().TotalSize() / d
	x3, err := G.Reshape(x, tensor.Shape{n / r, r, d})
	if err != nil {
		return nil, err
	}
	t3, err := G.Reshape(t, tensor.Shape{1, r, d})
	if err != nil {
		return nil, err
	}
	// t is the left operand: the add may run in place in its left operand,
	// which for x3 would be the input x itself (Reshape aliases its input).
	y, err := G.BroadcastAdd(t3, x3, []byte{0}, nil)
	if err != nil {
		return nil, err
	}
	return G.Reshape(y, tensor.Shape{n, d})
}

// composedCrossEntropy is -mean_i logsoftmax(logits)_i[target_i], picking
// the targets with ByIndices on axis 0 of the flattened (N*V, 1) log-probs
// at flat = i*V + target_i (an Int vector).
func composedCrossEntropy(logits, flat *G.Node) (*G.Node, error) {
	n, v := logits.Shape()[0], logits.Shape()[1]
	lp, err := layerstest.ComposedLogSoftmaxRows(logits)
	if err != nil {
		return nil, err
	}
	col, err := G.Reshape(lp, tensor.Shape{n * v, 1})
	if err != nil {
		return nil, err
	}
	picked, err := G.ByIndices(col, flat, 0)
	if err != nil {
		return nil, err
	}
	m, err := G.Mean(picked)
	if err != nil {
		return nil, err
	}
	return G.Neg(m)
}

// flatTargets returns i*v + targets[i] as an Int tensor.
func flatTargets(targets []int, v int) *tensor.Dense {
	flat := make([]int, len(targets))
	for i, id := range targets {
		flat[i] = i*v + id
	}
	return tensor.New(tensor.WithShape(len(flat)), tensor.WithBacking(flat))
}

// oneHot returns the (len(ids), v) float64 one-hot matrix of ids.
func oneHot(ids []int, v int) *tensor.Dense {
	m := make([]float64, len(ids)*v)
	for i, id := range ids {
		m[i*v+id] = 1
	}
	return tensor.New(tensor.WithShape(len(ids), v), tensor.WithBacking(m))
}

func intVector(v ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(v))
}

// offsetDense is randDense plus a constant, so rows have a nonzero mean.
func offsetDense(rng *rand.Rand, sd, offset float64, shape ...int) *tensor.Dense {
	t := randDense(rng, sd, shape...)
	for i, v := range t.Data().([]float64) {
		t.Data().([]float64)[i] = v + offset
	}
	return t
}

// ---- Tests ----

type composedCase struct {
	name     string
	inputs   []*tensor.Dense
	wrt      []int
	custom   builder
	composed builder
}

func runComposedCases(t *testing.T, cases []composedCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkComposed(t, tc.inputs, tc.wrt, tc.custom, tc.composed) })
	}
}

func TestLinearMatchesComposed(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 1))
	withBias := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return Linear(in[0], in[1], in[2]) }
	withBiasRef := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return layerstest.ComposedLinear(in[0], in[1], in[2])
	}
	noBias := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return Linear(in[0], in[1], nil) }
	noBiasRef := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return layerstest.ComposedLinear(in[0], in[1], nil)
	}
	runComposedCases(t, []composedCase{
		{"bias 5x4 4x3", []*tensor.Dense{randDense(rng, 1, 5, 4), randDense(rng, 1, 4, 3), randDense(rng, 1, 3)}, []int{0, 1, 2}, withBias, withBiasRef},
		{"bias 70x16 16x48", []*tensor.Dense{randDense(rng, 1, 70, 16), randDense(rng, 0.3, 16, 48), randDense(rng, 1, 48)}, []int{0, 1, 2}, withBias, withBiasRef},
		{"no bias 5x4 4x3", []*tensor.Dense{randDense(rng, 1, 5, 4), randDense(rng, 1, 4, 3)}, []int{0, 1}, noBias, noBiasRef},
		{"no bias 1x7 7x1", []*tensor.Dense{randDense(rng, 1, 1, 7), randDense(rng, 1, 7, 1)}, []int{0, 1}, noBias, noBiasRef},
		{"no bias 66x8 8x30", []*tensor.Dense{randDense(rng, 1, 66, 8), randDense(rng, 1, 8, 30)}, []int{0, 1}, noBias, noBiasRef},
	})
}

func TestLayerNormMatchesComposed(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 2))
	custom := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return LayerNorm(in[0], in[1], in[2]) }
	ref := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return layerstest.ComposedLayerNorm(in[0], in[1], in[2], LayerNormEps)
	}
	var cases []composedCase
	for _, s := range []struct {
		rows, cols int
		sd, offset float64
	}{{6, 8, 2, 3}, {1, 5, 1, -1}, {70, 32, 0.5, 0.2}, {4, 3, 0.01, 5}} {
		cases = append(cases, composedCase{
			fmt.Sprintf("%dx%d sd %g", s.rows, s.cols, s.sd),
			[]*tensor.Dense{offsetDense(rng, s.sd, s.offset, s.rows, s.cols), offsetDense(rng, 0.5, 1, s.cols), randDense(rng, 0.5, s.cols)},
			[]int{0, 1, 2}, custom, ref})
	}
	runComposedCases(t, cases)
}

// The attention op against the composed computation with the materialised
// bias: ALiBi computed inside the kernel from the slopes, no bias (the mask
// alone), and a learned full bias, whose gradient is compared too.
func TestAttentionMatchesComposed(t *testing.T) {
	var cases []composedCase
	for _, s := range []struct {
		batch, tlen, heads, dHead int
		bias                      string // alibi, mask, full (learned, per head) or shared (learned, one matrix)
	}{
		{2, 5, 2, 3, "alibi"},
		{1, 6, 3, 4, "alibi"},
		{2, 4, 4, 2, "alibi"},
		{2, 5, 2, 3, "mask"},
		{2, 4, 4, 2, "mask"},
		{1, 7, 3, 2, "mask"},
		{2, 4, 3, 2, "full"},
		{2, 5, 2, 2, "shared"},
	} {
		rng := rand.New(rand.NewPCG(31, uint64(3+len(cases))))
		d := s.heads * s.dHead
		slopes := toF64(tensor.New(tensor.WithShape(s.heads), tensor.WithBacking(position.AlibiSlopes(s.heads))))
		var bias *tensor.Dense
		cfg := AttentionConfig{Heads: s.heads, QueryLen: s.tlen}
		wrt := []int{0}
		switch s.bias {
		case "alibi":
			bias, cfg.PositionBias = toF64(position.AlibiBias(position.AlibiSlopes(s.heads), s.tlen, s.tlen, 0, true)), position.AlibiScheme{}
		case "mask":
			bias = toF64(position.CausalMask(s.tlen, s.tlen, 0))
		case "full":
			bias, cfg.PositionBias, wrt = maskedRandom(rng, s.heads, s.tlen), layerstest.FullBiasScheme{}, []int{0, 1}
		default:
			bias, cfg.PositionBias, wrt = maskedRandom(rng, 1, s.tlen), layerstest.FullBiasScheme{}, []int{0, 1}
		}
		heads := s.heads
		cases = append(cases, composedCase{
			fmt.Sprintf("batch %d T %d heads %d dh %d %s", s.batch, s.tlen, s.heads, s.dHead, s.bias),
			[]*tensor.Dense{randDense(rng, 1.5, s.batch*s.tlen, 3*d), bias, slopes},
			wrt,
			func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				switch cfg.PositionBias.(type) {
				case position.AlibiScheme:
					return Attention(in[0], in[2], cfg)
				case layerstest.FullBiasScheme:
					return Attention(in[0], in[1], cfg)
				}
				return Attention(in[0], nil, cfg)
			},
			func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				return layerstest.ComposedAttention(in[0], in[1], heads)
			},
		})
	}
	runComposedCases(t, cases)
}

// maskedRandom is a random (heads, T, T) bias with the causal mask above the
// diagonal, so that the composed reference ignores the entries the causal
// op never reads (their gradient is 0 in both).
func maskedRandom(rng *rand.Rand, heads, tlen int) *tensor.Dense {
	b := randDense(rng, 1, heads, tlen, tlen)
	mask := position.CausalMask(tlen, tlen, 0).Data().([]float32)
	v := b.Data().([]float64)
	for i := range v {
		if m := mask[i%(tlen*tlen)]; m != 0 {
			v[i] = float64(m)
		}
	}
	return b
}

func TestAddRowsMatchesComposed(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 4))
	custom := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return AddRows(in[0], in[1]) }
	ref := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return composedAddRows(in[0], in[1]) }
	runComposedCases(t, []composedCase{
		{"period 1, vector", []*tensor.Dense{randDense(rng, 1, 12, 5), randDense(rng, 1, 5)}, []int{0, 1}, custom, ref},
		{"period 1, one row", []*tensor.Dense{randDense(rng, 1, 12, 5), randDense(rng, 1, 1, 5)}, []int{0, 1}, custom, ref},
		{"period T=4, batch 3", []*tensor.Dense{randDense(rng, 1, 12, 5), randDense(rng, 1, 4, 5)}, []int{0, 1}, custom, ref},
		{"period T=16, batch 20", []*tensor.Dense{randDense(rng, 1, 320, 8), randDense(rng, 1, 16, 8)}, []int{0, 1}, custom, ref},
		{"period = N", []*tensor.Dense{randDense(rng, 1, 6, 3), randDense(rng, 1, 6, 3)}, []int{0, 1}, custom, ref},
	})
}

func TestCrossEntropyMatchesComposed(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 5))
	custom := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return CrossEntropy(in[0], in[1]) }
	ref := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return composedCrossEntropy(in[0], in[2]) }
	ce := func(name string, logits *tensor.Dense, targets ...int) composedCase {
		v := logits.Shape()[1]
		return composedCase{name, []*tensor.Dense{logits, intVector(targets...), flatTargets(targets, v)}, []int{0}, custom, ref}
	}
	// Rows far from zero and far apart check that every row is stabilised
	// by its own maximum.
	shifted := randDense(rng, 3, 4, 6)
	for i, off := range []float64{200, -300, 0, 40} {
		for j := 0; j < 6; j++ {
			shifted.Data().([]float64)[i*6+j] += off
		}
	}
	targets := make([]int, 70)
	for i := range targets {
		targets[i] = rng.IntN(33)
	}
	runComposedCases(t, []composedCase{
		ce("6x5 repeated targets", randDense(rng, 3, 6, 5), 3, 0, 4, 4, 1, 2),
		ce("1x2", randDense(rng, 1, 1, 2), 1),
		ce("4x6 shifted rows", shifted, 5, 0, 2, 2),
		ce("70x33", randDense(rng, 2, 70, 33), targets...),
	})
}

func TestEmbeddingMatchesComposed(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 6))
	custom := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return Embedding(in[0], in[1]) }
	// The lookup as a product with the one-hot matrix of the ids: its
	// gradient, onehot^T dY, adds up the rows of repeated ids.
	ref := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return G.Mul(in[2], in[0]) }
	emb := func(name string, table *tensor.Dense, ids ...int) composedCase {
		return composedCase{name, []*tensor.Dense{table, intVector(ids...), oneHot(ids, table.Shape()[0])}, []int{0}, custom, ref}
	}
	many := make([]int, 80)
	for i := range many {
		many[i] = rng.IntN(10)
	}
	runComposedCases(t, []composedCase{
		emb("7x4 repeated ids", randDense(rng, 1, 7, 4), 3, 0, 6, 3, 3, 1, 0, 2),
		emb("one id many times", randDense(rng, 1, 5, 3), 4, 4, 4, 4),
		emb("10x16, 80 ids", randDense(rng, 1, 10, 16), many...),
	})
}

// geluRef is the exact GELU, x Phi(x), with the normal CDF written through
// math.Erfc (Phi(x) = erfc(-x/sqrt2)/2), not the package's 1 + erf form.
func geluRef(x float64) float64 { return x * 0.5 * math.Erfc(-x/math.Sqrt2) }

// geluDerivRef is the derivative of geluRef by central finite differences
// with Richardson extrapolation, (4 D(h/2) - D(h))/3: truncation error
// O(h^4) and rounding error about 1e-16/h, under 1e-11 at h = 1e-3 over the
// test's inputs. It uses no closed form of GELU', so it checks the package's
// derivative independently.
func geluDerivRef(x float64) float64 {
	d := func(h float64) float64 { return (geluRef(x+h) - geluRef(x-h)) / (2 * h) }
	const h = 1e-3
	return (4*d(h/2) - d(h)) / 3
}

// geluInputs are a grid over [-12, 12], zero, and random values.
func geluInputs() []float64 {
	var xs []float64
	for x := -12.0; x <= 12; x += 0.0625 {
		xs = append(xs, x)
	}
	xs = append(xs, 0, 1e-8, -1e-8, 30, -30)
	rng := rand.New(rand.NewPCG(31, 7))
	for i := 0; i < 500; i++ {
		xs = append(xs, rng.NormFloat64()*3)
	}
	return xs
}

// GELU has no Gorgonia composition (there is no erf op): its forward value
// and gradient are compared elementwise, in float64, with math.Erfc and with
// finite differences.
func TestGELUMatchesErf(t *testing.T) {
	xs := geluInputs()
	x := tensor.New(tensor.WithShape(len(xs)), tensor.WithBacking(xs))
	res := evalComposed(t, []*tensor.Dense{x}, []int{0}, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return GELU(in[0]) })
	r := randDense(rand.New(rand.NewPCG(21, 22)), 1, len(xs)) // the R of evalComposed
	want := make([]float64, len(xs))
	wantGrad := make([]float64, len(xs))
	for i, v := range xs {
		want[i] = geluRef(v)
		wantGrad[i] = geluDerivRef(v) * r.Data().([]float64)[i]
	}
	f := compareComposed(t, "forward", res.out, want)
	gr := compareComposed(t, "gradient", res.grads[0], wantGrad)
	t.Logf("max |diff|: forward %.3g, gradient %.3g", f, gr)
}

// The float32 kernels (vmath.GELU and vmath.GELUGrad) against the float64 reference, within
// 1e-6 * max(1, |x|).
func TestGELUFloat32MatchesErf(t *testing.T) {
	xs := geluInputs()
	x32 := make([]float32, len(xs))
	for i, v := range xs {
		x32[i] = float32(v)
	}
	g := G.NewGraph()
	x := G.NewTensor(g, G.Float32, 1, G.WithShape(len(xs)), G.WithValue(tensor.New(tensor.WithShape(len(xs)), tensor.WithBacking(x32))), G.WithName("x"))
	y := G.Must(GELU(x))
	grads, err := G.Grad(G.Must(G.Sum(y)), x) // the gradient is GELU'(x) itself
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	out, dx := y.Value().Data().([]float32), grads[0].Value().Data().([]float32)
	var worstF, worstG float64 // in units of max(1, |x|)
	for i, v32 := range x32 {
		v := float64(v32)
		tol := 1e-6 * max(1, math.Abs(v))
		df := math.Abs(float64(out[i]) - geluRef(v))
		dg := math.Abs(float64(dx[i]) - geluDerivRef(v))
		if !(df <= tol) || !(dg <= tol) {
			t.Fatalf("x = %g: gelu %.9g (want %.9g), gelu' %.9g (want %.9g)", v, out[i], geluRef(v), dx[i], geluDerivRef(v))
		}
		worstF = max(worstF, df/max(1, math.Abs(v)))
		worstG = max(worstG, dg/max(1, math.Abs(v)))
	}
	t.Logf("max |diff|/max(1,|x|): forward %.3g, gradient %.3g", worstF, worstG)
}
