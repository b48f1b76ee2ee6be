package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// mlpRun is one run of an MLP block in float32: its output and, in a
// training graph, the gradients of x, W1, b1, W2 and b2 for the loss
// sum(y ⊙ r).
type mlpRun struct {
	y     []float32
	grads [][]float32
}

// runMLP builds the block from its parts (fused: MLP.Forward; otherwise
// LinearIn, GELU, LinearIn) and runs it once, with gradients when grad is
// set, and with its ops' outputs (and scratch) from Buffers when pooled.
func runMLP(t *testing.T, fused, grad, pooled bool, p Precision, vals [][]float32, shapes [][]int) mlpRun {
	t.Helper()
	g := G.NewGraph()
	nodes := float32Inputs(g, vals, shapes)
	x, w1, b1, w2, b2, r := nodes[0], nodes[1], nodes[2], nodes[3], nodes[4], nodes[5]
	var y *G.Node
	var err error
	if fused {
		y, err = MLP{W1: w1, B1: b1, W2: w2, B2: b2, Precision: p}.Forward(x)
	} else {
		var h *G.Node
		if h, err = LinearIn(p, x, w1, b1); err == nil {
			if h, err = GELU(h); err == nil {
				y, err = LinearIn(p, h, w2, b2)
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if grad {
		loss := G.Must(G.Sum(G.Must(G.HadamardProd(y, r))))
		if _, err := G.Grad(loss, x, w1, b1, w2, b2); err != nil {
			t.Fatal(err)
		}
	}
	if pooled {
		poolOutputs(g)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	out := mlpRun{y: append([]float32(nil), y.Value().Data().([]float32)...)}
	if grad {
		for _, n := range nodes[:5] {
			gv, err := n.Grad()
			if err != nil {
				t.Fatal(err)
			}
			out.grads = append(out.grads, append([]float32(nil), gv.Data().([]float32)...))
		}
	}
	return out
}

func mustSameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s[%d] = %v, the composed block gives %v", what, i, got[i], want[i])
		}
	}
}

// The fused MLP op gives the bits of Linear, GELU and Linear, forward and
// backward, in both precisions, on products that take the threaded, serial
// and small-M paths, for hidden widths the fusion takes (multiples of 8)
// and those it leaves to a pass after the product; also without gradients,
// with its hidden activations in a scratch buffer of its own or from
// Buffers. (The shapes keep the composed GELU's parallel chunks multiples
// of 8 long; see op_mlp.go.)
func TestMLPFusedEqualsComposed(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, tc := range []struct {
		n, d, f, e int
		p          Precision
	}{
		{2048, 128, 512, 128, FP32}, // the tiny model's block
		{216, 128, 200, 48, FP32},   // rows of 200: pieces of 96 and 8 columns
		{37, 16, 52, 24, FP32},      // F not a multiple of 8: GELU after the product
		{3, 16, 24, 16, FP32},       // small-M products
		{1, 8, 40, 8, FP32},
		{150, 40, 64, 24, BF16},
		{7, 16, 20, 8, BF16},
	} {
		t.Run(fmt.Sprintf("%dx%dx%dx%d_%v", tc.n, tc.d, tc.f, tc.e, tc.p), func(t *testing.T) {
			shapes := [][]int{{tc.n, tc.d}, {tc.d, tc.f}, {tc.f}, {tc.f, tc.e}, {tc.e}, {tc.n, tc.e}}
			vals := make([][]float32, len(shapes))
			for i, s := range shapes {
				sd := []float64{1, 1 / math.Sqrt(float64(tc.d)), 0.5, 1 / math.Sqrt(float64(tc.f)), 0.1, 1}[i]
				vals[i] = make([]float32, tensor.Shape(s).TotalSize())
				for j := range vals[i] {
					vals[i][j] = float32(sd * rng.NormFloat64())
				}
			}
			want := runMLP(t, false, true, false, tc.p, vals, shapes)
			got := runMLP(t, true, true, false, tc.p, vals, shapes)
			mustSameBits(t, "y", got.y, want.y)
			for i, name := range []string{"dx", "dW1", "db1", "dW2", "db2"} {
				mustSameBits(t, name, got.grads[i], want.grads[i])
			}
			for _, pooled := range []bool{false, true} {
				ev := runMLP(t, true, false, pooled, tc.p, vals, shapes)
				mustSameBits(t, fmt.Sprintf("y without gradients (pooled %v)", pooled), ev.y, want.y)
			}
		})
	}
}

// A backward op without the activations of a forward pass says so instead
// of reading stale or missing buffers.
func TestMLPGradNeedsForward(t *testing.T) {
	fwd := &mlpOp{prec: FP32}
	g := &mlpGradOp{fwd: fwd, part: mlpHidden}
	g.opBase = opBase{key: "MLPGrad{da}", arity: 3}
	w2 := tensor.New(tensor.WithShape(8, 4), tensor.WithBacking(make([]float32, 32)))
	y := tensor.New(tensor.WithShape(2, 4), tensor.WithBacking(make([]float32, 8)))
	dy := tensor.New(tensor.WithShape(2, 4), tensor.WithBacking(make([]float32, 8)))
	if _, err := g.Do(w2, y, dy); err == nil {
		t.Fatal("the backward op ran without kept activations")
	}
}

// BenchmarkMLP runs the tiny model's MLP block (2048 rows, 128 -> 512 ->
// 128), forward and backward, fused and composed (Linear, GELU, Linear) in
// turn within each iteration, so that both see the same phases of a
// machine whose speed drifts; it reports each one's milliseconds a run and
// the composed/fused time ratio.
func BenchmarkMLP(b *testing.B) {
	const n, d, f = 2048, 128, 512
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := [][]int{{n, d}, {d, f}, {f}, {f, d}, {d}, {n, d}}
	build := func(fused bool) G.VM {
		g := G.NewGraph()
		nodes := make([]*G.Node, len(shapes))
		for i, s := range shapes {
			v := make([]float32, tensor.Shape(s).TotalSize())
			for j := range v {
				v[j] = float32(0.1 * rng.NormFloat64())
			}
			nodes[i] = G.NewTensor(g, G.Float32, len(s), G.WithShape(s...), G.WithName(fmt.Sprintf("in%d", i)),
				G.WithValue(tensor.New(tensor.WithShape(s...), tensor.WithBacking(v))))
		}
		x, w1, b1, w2, b2, r := nodes[0], nodes[1], nodes[2], nodes[3], nodes[4], nodes[5]
		var y *G.Node
		var err error
		if fused {
			y, err = MLP{W1: w1, B1: b1, W2: w2, B2: b2}.Forward(x)
		} else {
			y, err = Linear(G.Must(GELU(G.Must(Linear(x, w1, b1)))), w2, b2)
		}
		if err != nil {
			b.Fatal(err)
		}
		loss := G.Must(G.Sum(G.Must(G.HadamardProd(y, r))))
		if _, err := G.Grad(loss, x, w1, b1, w2, b2); err != nil {
			b.Fatal(err)
		}
		return G.NewTapeMachine(g)
	}
	vms := []G.VM{build(true), build(false)}
	var spent [2]time.Duration
	b.ResetTimer()
	for i := range b.N {
		for k := range vms {
			vm := vms[(i+k)%2] // alternate which goes first
			start := time.Now()
			if err := vm.RunAll(); err != nil {
				b.Fatal(err)
			}
			vm.Reset()
			spent[(i+k)%2] += time.Since(start)
		}
	}
	b.ReportMetric(spent[0].Seconds()*1e3/float64(b.N), "fused-ms")
	b.ReportMetric(spent[1].Seconds()*1e3/float64(b.N), "composed-ms")
	b.ReportMetric(spent[1].Seconds()/spent[0].Seconds(), "ratio")
	for _, vm := range vms {
		vm.Close()
	}
}
