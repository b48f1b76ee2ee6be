package layers

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// Engine's Add gives the standard engine's results for every option: into
// a reuse tensor and into the first operand (its parallel path, at sizes
// above and below the chunk length), a new result, an increment, views and
// float64 (the standard engine's path).
func TestEngineAddEqualsStandard(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fill := func(x *tensor.Dense) *tensor.Dense {
		switch d := x.Data().(type) {
		case []float32:
			for i := range d {
				d[i] = float32(r.NormFloat64())
			}
		case []float64:
			for i := range d {
				d[i] = r.NormFloat64()
			}
		}
		return x
	}
	mk := func(dt tensor.Dtype, e tensor.Engine, shape ...int) *tensor.Dense {
		return tensor.New(tensor.Of(dt), tensor.WithShape(shape...), tensor.WithEngine(e))
	}
	std := tensor.StdEng{}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, shape := range [][]int{{3, 5}, {300, 128}} {
			for _, mode := range []string{"reuse", "unsafe", "safe", "incr", "view"} {
				a, b := fill(mk(dt, Engine(), shape...)), fill(mk(dt, Engine(), shape...))
				a2, b2 := a.Clone().(*tensor.Dense), b.Clone().(*tensor.Dense)
				tensor.WithEngine(std)(a2)
				tensor.WithEngine(std)(b2)
				var got, want tensor.Tensor
				var err1, err2 error
				switch mode {
				case "reuse":
					got, err1 = tensor.Add(a, b, tensor.WithReuse(mk(dt, Engine(), shape...)))
					want, err2 = tensor.Add(a2, b2, tensor.WithReuse(mk(dt, std, shape...)))
				case "unsafe":
					got, err1 = tensor.Add(a, b, tensor.UseUnsafe())
					want, err2 = tensor.Add(a2, b2, tensor.UseUnsafe())
					if got != a {
						t.Fatalf("%v %v unsafe: result is not the first operand", dt, shape)
					}
				case "safe":
					got, err1 = tensor.Add(a, b)
					want, err2 = tensor.Add(a2, b2)
				case "incr":
					inc := fill(mk(dt, Engine(), shape...))
					inc2 := inc.Clone().(*tensor.Dense)
					got, err1 = tensor.Add(a, b, tensor.WithIncr(inc))
					want, err2 = tensor.Add(a2, b2, tensor.WithIncr(inc2))
				case "view":
					va, err := a.Slice(tensor.S(1, shape[0]))
					if err != nil {
						t.Fatal(err)
					}
					vb, _ := b.Slice(tensor.S(1, shape[0]))
					wa, _ := a2.Slice(tensor.S(1, shape[0]))
					wb, _ := b2.Slice(tensor.S(1, shape[0]))
					got, err1 = tensor.Add(va, vb)
					want, err2 = tensor.Add(wa, wb)
				}
				if err1 != nil || err2 != nil {
					t.Fatalf("%v %v %s: errors %v, %v", dt, shape, mode, err1, err2)
				}
				g, w := tensor.Materialize(got).(*tensor.Dense), tensor.Materialize(want).(*tensor.Dense)
				if !g.Shape().Eq(w.Shape()) {
					t.Fatalf("%v %v %s: shape %v, want %v", dt, shape, mode, g.Shape(), w.Shape())
				}
				for i := range g.Shape().TotalSize() {
					x, y := elemF64(g.Data(), i), elemF64(w.Data(), i)
					if math.Float64bits(x) != math.Float64bits(y) {
						t.Fatalf("%v %v %s: element %d = %v, standard engine %v", dt, shape, mode, i, x, y)
					}
				}
			}
		}
	}
}

// elemF64 is element i of a float32 or float64 slice.
func elemF64(d any, i int) float64 {
	switch s := d.(type) {
	case []float32:
		return float64(s[i])
	case []float64:
		return s[i]
	}
	panic("dtype")
}

// The parallel path runs: a float32 sum into a reuse tensor is not the
// standard engine's (which this test would not see by its values alone).
func TestEngineAddRunsInPlace(t *testing.T) {
	a := tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, 2, 3, 4}), tensor.WithEngine(Engine()))
	b := tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{10, 20, 30, 40}), tensor.WithEngine(Engine()))
	out := tensor.New(tensor.WithShape(2, 2), tensor.WithBacking(make([]float32, 4)))
	if got := addInPlace(a, b, []tensor.FuncOpt{tensor.WithReuse(out)}); got != out {
		t.Fatalf("addInPlace into a reuse tensor returned %p, want the reuse tensor %p", got, out)
	}
	if d := out.Float32s(); d[0] != 11 || d[3] != 44 {
		t.Fatalf("sum %v", d)
	}
	if got := addInPlace(a, b, nil); got != nil {
		t.Fatal("addInPlace made a new result; that is the standard engine's job")
	}
}
