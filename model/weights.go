package model

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gorgonia.org/tensor"
)

// Weights are the trainable tensors of a model, by name, in a fixed order.
// Matrices are stored (in, out): a linear layer computes x W + b.
type Weights struct {
	Names   []string
	Tensors map[string]*tensor.Dense
}

// Tensor returns the named tensor; it panics on an unknown name, which is a
// programming error.
func (w *Weights) Tensor(name string) *tensor.Dense {
	t, ok := w.Tensors[name]
	if !ok {
		panic(fmt.Sprintf("model: no weight %q", name))
	}
	return t
}

// Data returns the float32 values of the named tensor.
func (w *Weights) Data(name string) []float32 { return w.Tensor(name).Data().([]float32) }

// NumParams is the number of trainable scalars.
func (w *Weights) NumParams() int {
	n := 0
	for _, name := range w.Names {
		n += w.Tensors[name].Shape().TotalSize()
	}
	return n
}

// Decays reports whether a weight gets weight decay: matrices (2-D) do,
// biases and LayerNorm parameters do not, as in the reference.
func (w *Weights) Decays(name string) bool { return w.Tensor(name).Dims() >= 2 }

func (w *Weights) add(name string, shape ...int) []float32 {
	data := make([]float32, prod(shape))
	w.Names = append(w.Names, name)
	w.Tensors[name] = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))
	return data
}

func prod(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

// Weight names.
func layerName(l int, part string) string { return fmt.Sprintf("layers.%d.%s", l, part) }

const (
	nameTokEmb = "tok_emb.weight"
	nameLNfW   = "ln_f.weight"
	nameLNfB   = "ln_f.bias"
	nameHead   = "head.weight"
)

// shapes lists the weights of cfg in their fixed order, with their shapes
// and initial standard deviations (0: zeros, -1: ones), without allocating
// them.
func shapes(cfg Config) []weightSpec {
	d, f := cfg.DModel, cfg.DFF
	resid := 0.02 / math.Sqrt(2*float64(cfg.NLayers))
	specs := []weightSpec{{nameTokEmb, []int{cfg.Vocab, d}, 1 / math.Sqrt(float64(d))}}
	for l := 0; l < cfg.NLayers; l++ {
		specs = append(specs,
			weightSpec{layerName(l, "ln1.weight"), []int{d}, -1},
			weightSpec{layerName(l, "ln1.bias"), []int{d}, 0},
			weightSpec{layerName(l, "attn.qkv.weight"), []int{d, 3 * d}, 0.02},
			weightSpec{layerName(l, "attn.qkv.bias"), []int{3 * d}, 0},
			weightSpec{layerName(l, "attn.out.weight"), []int{d, d}, resid},
			weightSpec{layerName(l, "attn.out.bias"), []int{d}, 0},
			weightSpec{layerName(l, "ln2.weight"), []int{d}, -1},
			weightSpec{layerName(l, "ln2.bias"), []int{d}, 0},
			weightSpec{layerName(l, "mlp.fc1.weight"), []int{d, f}, 0.02},
			weightSpec{layerName(l, "mlp.fc1.bias"), []int{f}, 0},
			weightSpec{layerName(l, "mlp.fc2.weight"), []int{f, d}, resid},
			weightSpec{layerName(l, "mlp.fc2.bias"), []int{d}, 0},
		)
	}
	return append(specs, weightSpec{nameLNfW, []int{d}, -1}, weightSpec{nameLNfB, []int{d}, 0},
		weightSpec{nameHead, []int{d, cfg.Vocab}, 0.02})
}

type weightSpec struct {
	name  string
	shape []int
	std   float64 // 0: zeros, -1: ones
}

// InitWeights creates the weights of cfg with the reference's
// initialisation (anchors/torch_lm.py, fairseq/GPT-2 style), drawn in order
// from a generator seeded with cfg.Seed:
//   - token embedding N(0, d^-1/2) (scaled by sqrt(d) on input),
//   - qkv and fc1 N(0, 0.02), the residual projections (attention output,
//     fc2) N(0, 0.02/sqrt(2 n_layers)), biases 0,
//   - LayerNorm gain 1 and shift 0, untied output head N(0, 0.02).
func InitWeights(cfg Config) *Weights {
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	w := &Weights{Tensors: map[string]*tensor.Dense{}}
	for _, s := range shapes(cfg) {
		v := w.add(s.name, s.shape...)
		for i := range v {
			switch s.std {
			case 0:
			case -1:
				v[i] = 1
			default:
				v[i] = float32(rng.NormFloat64() * s.std)
			}
		}
	}
	return w
}

// checkShapes verifies that w has exactly the tensors of cfg, with their
// shapes; it names the first mismatch.
func (w *Weights) checkShapes(cfg Config) error {
	want := shapes(cfg)
	if len(w.Names) != len(want) {
		return fmt.Errorf("%d weight tensors, want %d for this config", len(w.Names), len(want))
	}
	for _, s := range want {
		t, ok := w.Tensors[s.name]
		if !ok {
			return fmt.Errorf("weight %s is missing", s.name)
		}
		if !t.Shape().Eq(tensor.Shape(s.shape)) {
			return fmt.Errorf("weight %s has shape %v, want %v", s.name, t.Shape(), s.shape)
		}
	}
	return nil
}
