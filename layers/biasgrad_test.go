package layers

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/layers/internal/gemm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestBiasGradFromWeightGrad checks the bias gradients of a Linear layer
// and of an MLP's second layer in float32: their bits are those of the
// column sums of the output gradient taken on their own (columnSums, what
// the layers computed before the weight-gradient product took them while
// packing), in every run, and on the AVX-512 kernel they come from the
// product: with 4096 rows the products pack dy (more than 1024 rows) on
// the static split (more than the shared path's budget).
func TestBiasGradFromWeightGrad(t *testing.T) {
	const n, e, f = 4096, 40, 72
	rng := rand.New(rand.NewPCG(3, 4))
	randF32 := func(shape ...int) *tensor.Dense {
		v := make([]float32, tensor.Shape(shape).TotalSize())
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
	}
	g := G.NewGraph()
	node := func(name string, v *tensor.Dense) *G.Node {
		return G.NewTensor(g, G.Float32, v.Dims(), G.WithShape(v.Shape()...), G.WithValue(v), G.WithName(name))
	}
	x, x2 := node("x", randF32(n, e)), node("x2", randF32(n, f))
	w, b := node("w", randF32(e, f)), node("b", randF32(f))
	w1, b1 := node("w1", randF32(f, f)), node("b1", randF32(f))
	w2, b2 := node("w2", randF32(f, e)), node("b2", randF32(e))
	h, err := Linear(x, w, b)
	if err != nil {
		t.Fatal(err)
	}
	y, err := MLP{W1: w1, B1: b1, W2: w2, B2: b2}.Forward(x2)
	if err != nil {
		t.Fatal(err)
	}
	r1, r2 := node("r1", randF32(n, f)), node("r2", randF32(n, e))
	loss := G.Must(G.Add(G.Must(G.Sum(G.Must(G.HadamardProd(h, r1)))), G.Must(G.Sum(G.Must(G.HadamardProd(y, r2))))))
	grads, err := G.Grad(loss, b, b1, b2)
	if err != nil {
		t.Fatal(err)
	}
	// The gradients of b and b2 are the column sums of r1 and r2; that of
	// b1 the column sums of the MLP's hidden gradient.
	var da *G.Node
	var fused []*biasSums
	for _, nd := range g.AllNodes() {
		switch op := nd.Op().(type) {
		case *sumRowsOp:
			if op.from != nil {
				fused = append(fused, op.from)
			}
		case *mlpGradOp:
			if op.part == mlpHidden {
				da = nd
			}
		}
	}
	if len(fused) != 3 || da == nil {
		t.Fatalf("%d bias gradients from a weight gradient, want 3 (b, b1, b2); the MLP's hidden gradient found: %v", len(fused), da != nil)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	wantFused := gemm.Active() == gemm.AVX512 && !strings.Contains(BLASName(), "openblas")
	for run := 1; run <= 2; run++ {
		vm.Reset()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		for i, c := range []struct {
			dy   *tensor.Dense
			grad *G.Node
		}{{r1.Value().(*tensor.Dense), grads[0]}, {da.Value().(*tensor.Dense), grads[1]}, {r2.Value().(*tensor.Dense), grads[2]}} {
			dy := c.dy.Data().([]float32)
			d := c.dy.Shape()[1]
			ones := make([]float32, len(dy)/d)
			for j := range ones {
				ones[j] = 1
			}
			want := make([]float32, d)
			columnSums(ones, dy, want, len(ones), d)
			got := c.grad.Value().Data().([]float32)
			for j := range want {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("run %d, gradient %d: [%d] = %v, the column sums give %v", run, i, j, got[j], want[j])
				}
			}
		}
		for i, s := range fused {
			if s.ok != wantFused {
				t.Errorf("run %d: bias gradient %d taken from the product: %v, want %v", run, i, s.ok, wantFused)
			}
		}
	}
}
