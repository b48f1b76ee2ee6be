package layers_test

import (
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/layers/position"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Build a causal multi-head attention layer with ALiBi in your own Gorgonia
// graph, take the gradient of a loss with respect to its weights, and check
// one entry against a central finite difference. The graph is in float64 so
// that the finite difference is accurate; float32 works the same way.
func ExampleMultiHeadAttention() {
	const batch, length, d, heads = 2, 6, 8, 2
	rng := rand.New(rand.NewPCG(1, 2))
	g := G.NewGraph()
	input := func(name string, shape ...int) *G.Node {
		v := make([]float64, tensor.Shape(shape).TotalSize())
		for i := range v {
			v[i] = 0.5 * rng.NormFloat64()
		}
		t := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
		return G.NewTensor(g, G.Float64, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(t))
	}
	x := input("x", batch*length, d) // the rows of each sequence, one after the other
	attn := layers.MultiHeadAttention{Heads: heads,
		WQKV: input("wqkv", d, 3*d), BQKV: input("bqkv", 3*d),
		WOut: input("wout", d, d), BOut: input("bout", d)}

	// ALiBi's parameters are its per-head slopes: a constant input, never
	// differentiated. The kernel computes the bias from them.
	var slopes []float64
	for _, s := range position.AlibiSlopes(heads) {
		slopes = append(slopes, float64(s))
	}
	slopeNode := layers.ConstantInput(g, tensor.New(tensor.WithShape(heads), tensor.WithBacking(slopes)), "slopes")
	out, err := attn.Forward(x, slopeNode, layers.AttentionConfig{QueryLen: length, PositionBias: position.AlibiScheme{}})
	if err != nil {
		log.Fatal(err)
	}
	loss := G.Must(G.Sum(G.Must(G.Square(out)))) // any scalar of the output
	grads, err := G.Grad(loss, attn.WQKV)
	if err != nil {
		log.Fatal(err)
	}

	vm := G.NewTapeMachine(g)
	defer vm.Close()
	run := func() float64 {
		vm.Reset()
		if err := vm.RunAll(); err != nil {
			log.Fatal(err)
		}
		return loss.Value().Data().(float64)
	}
	run()
	fmt.Println("output shape:", out.Shape())
	analytic := grads[0].Value().Data().([]float64)[3] // d loss / d WQKV[0, 3], a query weight

	// The same entry by central differences: the weights are read in
	// place, so changing their backing changes the next run.
	w := attn.WQKV.Value().Data().([]float64)
	const h = 1e-5
	w[3] += h
	up := run()
	w[3] -= 2 * h
	down := run()
	w[3] += h
	numeric := (up - down) / (2 * h)
	fmt.Printf("d loss / d WQKV[0, 3]: %.6f, finite difference %.6f, relative error < 1e-6: %v\n",
		analytic, numeric, math.Abs(analytic-numeric) < 1e-6*math.Abs(analytic))
	// Output:
	// output shape: (12, 8)
	// d loss / d WQKV[0, 3]: -0.474964, finite difference -0.474964, relative error < 1e-6: true
}
