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

// InitWeights creates the weights of cfg with the reference's
// initialisation (anchors/torch_lm.py, fairseq/GPT-2 style), drawn from a
// generator seeded with cfg.Seed:
//   - token embedding N(0, d^-1/2) (scaled by sqrt(d) on input),
//   - qkv and fc1 N(0, 0.02), the residual projections (attention output,
//     fc2) N(0, 0.02/sqrt(2 n_layers)), biases 0,
//   - LayerNorm gain 1 and shift 0, untied output head N(0, 0.02).
func InitWeights(cfg Config) *Weights {
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	normal := func(v []float32, sd float64) {
		for i := range v {
			v[i] = float32(rng.NormFloat64() * sd)
		}
	}
	ones := func(v []float32) {
		for i := range v {
			v[i] = 1
		}
	}
	d, f := cfg.DModel, cfg.DFF
	resid := 0.02 / math.Sqrt(2*float64(cfg.NLayers))
	w := &Weights{Tensors: map[string]*tensor.Dense{}}
	normal(w.add(nameTokEmb, cfg.Vocab, d), 1/math.Sqrt(float64(d)))
	for l := 0; l < cfg.NLayers; l++ {
		ones(w.add(layerName(l, "ln1.weight"), d))
		w.add(layerName(l, "ln1.bias"), d)
		normal(w.add(layerName(l, "attn.qkv.weight"), d, 3*d), 0.02)
		w.add(layerName(l, "attn.qkv.bias"), 3*d)
		normal(w.add(layerName(l, "attn.out.weight"), d, d), resid)
		w.add(layerName(l, "attn.out.bias"), d)
		ones(w.add(layerName(l, "ln2.weight"), d))
		w.add(layerName(l, "ln2.bias"), d)
		normal(w.add(layerName(l, "mlp.fc1.weight"), d, f), 0.02)
		w.add(layerName(l, "mlp.fc1.bias"), f)
		normal(w.add(layerName(l, "mlp.fc2.weight"), f, d), resid)
		w.add(layerName(l, "mlp.fc2.bias"), d)
	}
	ones(w.add(nameLNfW, d))
	w.add(nameLNfB, d)
	normal(w.add(nameHead, d, cfg.Vocab), 0.02)
	return w
}

// checkShapes verifies that w has exactly the tensors of cfg, with their
// shapes; it names the first mismatch.
func (w *Weights) checkShapes(cfg Config) error {
	want := InitWeights(Config{Vocab: cfg.Vocab, DModel: cfg.DModel, NLayers: cfg.NLayers, NHeads: cfg.NHeads, DFF: cfg.DFF})
	if len(w.Names) != len(want.Names) {
		return fmt.Errorf("%d weight tensors, want %d for this config", len(w.Names), len(want.Names))
	}
	for _, name := range want.Names {
		t, ok := w.Tensors[name]
		if !ok {
			return fmt.Errorf("weight %s is missing", name)
		}
		if !t.Shape().Eq(want.Tensors[name].Shape()) {
			return fmt.Errorf("weight %s has shape %v, want %v", name, t.Shape(), want.Tensors[name].Shape())
		}
	}
	return nil
}
