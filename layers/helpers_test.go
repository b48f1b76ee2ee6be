package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// randDense returns a float64 tensor of N(0, sd^2) values.
func randDense(rng *rand.Rand, sd float64, shape ...int) *tensor.Dense {
	n := 1
	for _, s := range shape {
		n *= s
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64() * sd
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
}

// builder builds an output node from input nodes.
type builder func(g *G.ExprGraph, in []*G.Node) (*G.Node, error)

// gradGraph builds loss = sum(out * R) (R fixed and random; loss = out for a
// scalar output) on graph nodes holding inputs, runs it once and returns
// Gorgonia's gradients of the inputs whose indices are in wrt, and run,
// which runs the graph again (after the caller has changed an input's
// data in place) and returns the loss.
func gradGraph(t *testing.T, inputs []*tensor.Dense, wrt []int, build builder) (run func() float64, analytic [][]float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	g := G.NewGraph()
	nodes := make([]*G.Node, len(inputs))
	for i, in := range inputs {
		nodes[i] = G.NewTensor(g, in.Dtype(), in.Dims(), G.WithShape(in.Shape()...), G.WithValue(in), G.WithName(string(rune('a'+i))))
	}
	out, err := build(g, nodes)
	if err != nil {
		t.Fatal(err)
	}
	loss := out
	if !out.IsScalar() {
		r := G.NewTensor(g, G.Float64, out.Dims(), G.WithShape(out.Shape()...), G.WithValue(randDense(rng, 1, out.Shape()...)), G.WithName("R"))
		loss = G.Must(G.Sum(G.Must(G.HadamardProd(out, r))))
	}
	var ws G.Nodes
	for _, i := range wrt {
		ws = append(ws, nodes[i])
	}
	grads, err := G.Grad(loss, ws...)
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	t.Cleanup(func() { vm.Close() })
	run = func() float64 {
		vm.Reset()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		return loss.Value().Data().(float64)
	}
	run()
	analytic = make([][]float64, len(wrt))
	for k := range wrt {
		analytic[k] = append([]float64(nil), grads[k].Value().Data().([]float64)...)
	}
	return run, analytic
}

// gradCheck compares Gorgonia's gradients of loss = sum(out * R) (R fixed and
// random; loss = out for a scalar output) with central finite differences
// for every element of each input whose index is in wrt. Inputs must be
// float64 tensors (others, such as Int targets, may be passed but not in wrt).
func gradCheck(t *testing.T, inputs []*tensor.Dense, wrt []int, build builder) {
	t.Helper()
	run, analytic := gradGraph(t, inputs, wrt, build)
	const eps = 1e-6
	for k, i := range wrt {
		x := inputs[i].Data().([]float64)
		for e := range x {
			orig := x[e]
			x[e] = orig + eps
			up := run()
			x[e] = orig - eps
			down := run()
			x[e] = orig
			num := (up - down) / (2 * eps)
			if d := math.Abs(num - analytic[k][e]); d > 1e-6+1e-5*math.Abs(num) {
				t.Fatalf("input %d element %d: analytic %.9g, numeric %.9g", i, e, analytic[k][e], num)
			}
		}
	}
}

func f64(shape []int, v ...float64) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
}

// toF64 converts a float32 tensor to float64.
func toF64(t *tensor.Dense) *tensor.Dense {
	src := t.Data().([]float32)
	dst := make([]float64, len(src))
	for i, v := range src {
		dst[i] = float64(v)
	}
	return tensor.New(tensor.WithShape(t.Shape()...), tensor.WithBacking(dst))
}

// poolOutputs makes every op of g borrow its output from one Buffers, as a
// graph's runner does.
func poolOutputs(g *G.ExprGraph) {
	bufs := NewBuffers()
	for _, n := range g.AllNodes() {
		if p, ok := n.Op().(PooledOp); ok {
			p.UseBuffers(bufs)
		}
	}
}

// float32Inputs adds a float32 input node to g for each of vals, with
// the given shapes, named in0, in1, ..., each on a copy of its values.
func float32Inputs(g *G.ExprGraph, vals [][]float32, shapes [][]int) []*G.Node {
	nodes := make([]*G.Node, len(vals))
	for i, v := range vals {
		data := append([]float32(nil), v...)
		nodes[i] = G.NewTensor(g, G.Float32, len(shapes[i]), G.WithShape(shapes[i]...), G.WithName(fmt.Sprintf("in%d", i)),
			G.WithValue(tensor.New(tensor.WithShape(shapes[i]...), tensor.WithBacking(data))))
	}
	return nodes
}
