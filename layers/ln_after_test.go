package layers

import (
	"fmt"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// lnLinearRun is one run of LayerNorm then Linear with gradients: the
// gradients of x, gamma, beta, W and b, and whether the LayerNorm's
// backward ran in the product's epilogue (its output is the product's).
type lnLinearRun struct {
	grads [][]float32
	fused bool
}

// runLNLinear builds y = Linear(LayerNorm(x)) and the gradient of
// sum(y ⊙ r), and runs it runs times, with the ops' outputs from Buffers
// when pooled (the only case in which the LayerNorm's backward can run in
// the product), returning every run.
func runLNLinear(t *testing.T, pooled bool, p Precision, runs int, vals [][]float32, shapes [][]int) []lnLinearRun {
	t.Helper()
	g := G.NewGraph()
	nodes := float32Inputs(g, vals, shapes)
	x, gamma, beta, w, b, r := nodes[0], nodes[1], nodes[2], nodes[3], nodes[4], nodes[5]
	h, err := LayerNorm(x, gamma, beta)
	if err != nil {
		t.Fatal(err)
	}
	y, err := LinearIn(p, h, w, b)
	if err != nil {
		t.Fatal(err)
	}
	loss := G.Must(G.Sum(G.Must(G.HadamardProd(y, r))))
	if _, err := G.Grad(loss, x, gamma, beta, w, b); err != nil {
		t.Fatal(err)
	}
	var dx, lin *G.Node
	for _, n := range g.AllNodes() {
		switch op := n.Op().(type) {
		case *layerNormGradOp:
			if op.wrt == 0 {
				dx = n
			}
		case *linearGradOp:
			if op.wrt == 0 {
				lin = n
			}
		}
	}
	if dx == nil || lin == nil || dx.Op().(*layerNormGradOp).after == nil {
		t.Fatal("the LayerNorm's x gradient is not set up to run in the product's epilogue")
	}
	if pooled {
		poolOutputs(g)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	var out []lnLinearRun
	for range runs {
		vm.Reset()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		var run lnLinearRun
		for _, n := range nodes[:5] {
			gv, err := n.Grad()
			if err != nil {
				t.Fatal(err)
			}
			run.grads = append(run.grads, append([]float32(nil), gv.Data().([]float32)...))
		}
		run.fused = dx.Value() == lin.Value()
		out = append(out, run)
	}
	return out
}

// The LayerNorm's backward run in the epilogue of the product before it
// (the linear layer's dx) gives the bits of the two ops run one after the
// other, in every run, on products that take the threaded path (chunks of
// the LayerNorm's rows finished by blocks of the product that straddle
// them, or that hold a part of their columns), the serial blocked path and
// the small-M path (the whole product at once), for rows the assembly takes
// (d a multiple of 16) and rows it leaves to Go, in fp32 and in bf16 (whose
// product hands its epilogue chunks of whole rows). It runs only on pooled
// outputs.
func TestLayerNormBackwardInProduct(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, tc := range []struct {
		n, d, m int
		p       Precision
	}{
		{2048, 128, 384, FP32}, // the tiny model's queries, keys and values
		{1000, 128, 512, FP32}, // chunks of 66-67 rows
		{300, 128, 384, FP32},  // few rows: blocks of 32 columns
		{2048, 128, 256, FP32}, // the output head
		{300, 40, 24, FP32},    // rows of 40: the LayerNorm in Go
		{100, 16, 48, FP32},    // one goroutine, blocks of rows
		{3, 16, 24, FP32},      // the small-M path
		{2048, 128, 384, BF16}, // the bf16 product's chunks of rows
		{1000, 128, 512, BF16},
		{300, 40, 24, BF16}, // below the bf16 product's parallel size: the whole product at once
	} {
		t.Run(fmt.Sprintf("n=%d,d=%d,m=%d,%v", tc.n, tc.d, tc.m, tc.p), func(t *testing.T) {
			shapes := [][]int{{tc.n, tc.d}, {tc.d}, {tc.d}, {tc.d, tc.m}, {tc.m}, {tc.n, tc.m}}
			vals := make([][]float32, len(shapes))
			for i, s := range shapes {
				vals[i] = make([]float32, tensor.Shape(s).TotalSize())
				for j := range vals[i] {
					vals[i][j] = float32(rng.NormFloat64())
				}
				if i == 1 { // gamma around 1
					for j := range vals[i] {
						vals[i][j] = 1 + vals[i][j]/4
					}
				}
			}
			want := runLNLinear(t, false, tc.p, 1, vals, shapes)[0]
			if want.fused {
				t.Fatal("fused without Buffers")
			}
			for r, got := range runLNLinear(t, true, tc.p, 2, vals, shapes) {
				if !got.fused {
					t.Fatalf("run %d: not fused", r)
				}
				for i, name := range []string{"dx", "dgamma", "dbeta", "dW", "db"} {
					mustSameBits(t, fmt.Sprintf("run %d: %s", r, name), got.grads[i], want.grads[i])
				}
			}
		})
	}
}
