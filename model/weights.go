package model

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/alibi-go/alibi/layers"
	"gorgonia.org/tensor"
)

// Weights are the trainable tensors of a model, by name, in a fixed order.
// Matrices are stored (in, out): a linear layer computes x W + b.
type Weights struct {
	Names   []string
	Tensors map[string]*tensor.Dense
	// position holds the names of the position scheme's parameters (T5's
	// table, KERPLE's and FIRE's per-layer parameters).
	position map[string]bool
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
// biases and LayerNorm parameters do not, as in the reference, and neither
// do the position scheme's parameters: decay would pull T5's table and
// KERPLE's and FIRE's functions toward a zero bias, the position-free
// model, whatever the data says.
func (w *Weights) Decays(name string) bool { return w.Tensor(name).Dims() >= 2 && !w.position[name] }

// IsPosition reports whether the named weight is a position scheme's
// parameter.
func (w *Weights) IsPosition(name string) bool { return w.position[name] }

func newWeights() *Weights {
	return &Weights{Tensors: map[string]*tensor.Dense{}, position: map[string]bool{}}
}

func (w *Weights) add(s weightSpec) []float32 {
	data := make([]float32, prod(s.shape))
	w.Names = append(w.Names, s.name)
	w.Tensors[s.name] = tensor.New(tensor.WithShape(s.shape...), tensor.WithBacking(data))
	if s.position {
		w.position[s.name] = true
	}
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
	nameT5     = "pos.t5.weight" // T5's (buckets, heads) table, shared by every layer
	partKerple = "attn.kerple"   // a layer's KERPLE parameters (2, heads)
	partFire   = "attn.fire"     // a layer's FIRE parameters, one flat tensor
)

// shapes lists the weights of cfg in their fixed order, with their shapes
// and initialisation, without allocating them.
func shapes(cfg Config) []weightSpec {
	d, f, h := cfg.DModel, cfg.DFF, cfg.NHeads
	resid := 0.02 / math.Sqrt(2*float64(cfg.NLayers))
	specs := []weightSpec{{name: nameTokEmb, shape: []int{cfg.Vocab, d}, std: 1 / math.Sqrt(float64(d))}}
	if cfg.Pos == PosT5 {
		// N(0, d^-1/2), as Hugging Face's T5 initialises its bias table.
		specs = append(specs, weightSpec{name: nameT5, shape: []int{layers.T5Buckets, h}, std: 1 / math.Sqrt(float64(d)), position: true})
	}
	for l := 0; l < cfg.NLayers; l++ {
		specs = append(specs,
			weightSpec{name: layerName(l, "ln1.weight"), shape: []int{d}, std: -1},
			weightSpec{name: layerName(l, "ln1.bias"), shape: []int{d}, std: 0},
			weightSpec{name: layerName(l, "attn.qkv.weight"), shape: []int{d, 3 * d}, std: 0.02},
			weightSpec{name: layerName(l, "attn.qkv.bias"), shape: []int{3 * d}, std: 0},
			weightSpec{name: layerName(l, "attn.out.weight"), shape: []int{d, d}, std: resid},
			weightSpec{name: layerName(l, "attn.out.bias"), shape: []int{d}, std: 0},
			weightSpec{name: layerName(l, "ln2.weight"), shape: []int{d}, std: -1},
			weightSpec{name: layerName(l, "ln2.bias"), shape: []int{d}, std: 0},
			weightSpec{name: layerName(l, "mlp.fc1.weight"), shape: []int{d, f}, std: 0.02},
			weightSpec{name: layerName(l, "mlp.fc1.bias"), shape: []int{f}, std: 0},
			weightSpec{name: layerName(l, "mlp.fc2.weight"), shape: []int{f, d}, std: resid},
			weightSpec{name: layerName(l, "mlp.fc2.bias"), shape: []int{d}, std: 0},
		)
		switch cfg.Pos {
		case PosKerple:
			specs = append(specs, weightSpec{name: layerName(l, partKerple), shape: []int{2, h}, position: true,
				init: func(rng *rand.Rand) []float32 { return layers.KerpleInit(rng, h) }})
		case PosFire:
			specs = append(specs, weightSpec{name: layerName(l, partFire), shape: []int{layers.FireParamLen(h)}, position: true,
				init: func(rng *rand.Rand) []float32 { return fireScheme(cfg).Init(rng, h, cfg.TrainLen) }})
		}
	}
	return append(specs, weightSpec{name: nameLNfW, shape: []int{d}, std: -1}, weightSpec{name: nameLNfB, shape: []int{d}, std: 0},
		weightSpec{name: nameHead, shape: []int{d, cfg.Vocab}, std: 0.02})
}

type weightSpec struct {
	name     string
	shape    []int
	std      float64                    // 0: zeros, -1: ones, else N(0, std^2)
	init     func(*rand.Rand) []float32 // when not nil, instead of std
	position bool                       // a position scheme's parameter
}

// InitWeights creates the weights of cfg with the reference's
// initialisation (anchors/torch_lm.py, fairseq/GPT-2 style), drawn in order
// from a generator seeded with cfg.Seed:
//   - token embedding N(0, d^-1/2) (scaled by sqrt(d) on input),
//   - qkv and fc1 N(0, 0.02), the residual projections (attention output,
//     fc2) N(0, 0.02/sqrt(2 n_layers)), biases 0,
//   - LayerNorm gain 1 and shift 0, untied output head N(0, 0.02),
//   - the position schemes' parameters as their papers' code: T5's table
//     N(0, d^-1/2), KERPLE's r1 ~ U(0, 2) and r2 ~ U(0, 1), FIRE's MLP as
//     PyTorch's nn.Linear with c = 0.1 and L = train_len (see layers).
func InitWeights(cfg Config) *Weights {
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	w := newWeights()
	for _, s := range shapes(cfg) {
		v := w.add(s)
		if s.init != nil {
			copy(v, s.init(rng))
			continue
		}
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
