package model

import (
	"fmt"
	"github.com/alibi-go/alibi/layers/position"
	"math"
	"math/rand/v2"

	"gorgonia.org/tensor"
)

// Weights are the trainable tensors of a model, by name, in a fixed order.
// Matrices are stored (in, out): a linear layer computes x W + b.
type Weights struct {
	Names   []string
	Tensors map[string]*tensor.Dense
	// position holds the position scheme's parameters (T5's table,
	// KERPLE's and FIRE's per-layer parameters) by name.
	position map[string]position.ParamSpec
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
// biases and LayerNorm parameters do not, as in the reference, and the
// position scheme's parameters only when the scheme says so
// (position.ParamSpec.Decay; no built-in scheme's do: decay would pull T5's
// table and KERPLE's and FIRE's functions toward a zero bias, the
// position-free model, whatever the data says).
func (w *Weights) Decays(name string) bool {
	p, isPos := w.position[name]
	return w.Tensor(name).Dims() >= 2 && (!isPos || p.Decay)
}

// IsPosition reports whether the named weight is a position scheme's
// parameter.
func (w *Weights) IsPosition(name string) bool {
	_, ok := w.position[name]
	return ok
}

// project moves the position scheme's parameters back into their domain
// (position.ParamSpec.Project).
func (w *Weights) project() {
	for _, name := range w.Names {
		if p, ok := w.position[name]; ok && p.Project != nil {
			p.Project(w.Data(name))
		}
	}
}

func newWeights() *Weights {
	return &Weights{Tensors: map[string]*tensor.Dense{}, position: map[string]position.ParamSpec{}}
}

func (w *Weights) add(s weightSpec) []float32 {
	data := make([]float32, prod(s.shape))
	w.Names = append(w.Names, s.name)
	w.Tensors[s.name] = tensor.New(tensor.WithShape(s.shape...), tensor.WithBacking(data))
	if s.position != nil {
		w.position[s.name] = *s.position
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

// nameLogitScale is a layer's scales of log-length scaling (model.logit_scale).
const nameLogitScale = "attn.logit_scale"

// logitScaleInit returns the log-length scales' start, 1/ln(train_len) for
// every head: the factor s·ln(n) is 1 for a query that sees train_len keys.
func logitScaleInit(cfg Config) func(*rand.Rand) []float32 {
	return func(*rand.Rand) []float32 {
		s := make([]float32, cfg.NHeads)
		for h := range s {
			s[h] = float32(1 / math.Log(float64(cfg.TrainLen)))
		}
		return s
	}
}

const (
	nameTokEmb = "tok_emb.weight"
	nameLNfW   = "ln_f.weight"
	nameLNfB   = "ln_f.bias"
	nameHead   = "head.weight"
)

// shapes lists the weights of cfg in their fixed order, with their shapes
// and initialisation, without allocating them: the token embedding, the
// position scheme's shared parameters, each layer with the scheme's
// parameters of the layer last, the final LayerNorm and the output head.
// cfg must be valid.
func shapes(cfg Config) []weightSpec {
	d, f := cfg.DModel, cfg.DFF
	scheme, shape := cfg.mustScheme(), cfg.shape()
	resid := 0.02 / math.Sqrt(2*float64(cfg.NLayers))
	specs := []weightSpec{{name: nameTokEmb, shape: []int{cfg.Vocab, d}, std: 1 / math.Sqrt(float64(d))}}
	for _, p := range scheme.SharedParams(shape) {
		specs = append(specs, positionSpec(p.Name, p))
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
		for _, p := range scheme.LayerParams(shape) {
			specs = append(specs, positionSpec(layerName(l, p.Name), p))
		}
		if cfg.logLength() {
			specs = append(specs, weightSpec{name: layerName(l, nameLogitScale), shape: []int{cfg.NHeads}, init: logitScaleInit(cfg)})
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
	position *position.ParamSpec        // a position scheme's parameter
}

// positionSpec is the weight of a position scheme's parameter p, stored
// under name.
func positionSpec(name string, p position.ParamSpec) weightSpec {
	return weightSpec{name: name, shape: p.Shape, init: p.Init, position: &p}
}

// InitWeights creates the weights of cfg with the reference's
// initialisation (anchors/torch_lm.py, fairseq/GPT-2 style), drawn in order
// from a generator seeded with cfg.Seed:
//   - token embedding N(0, d^-1/2) (scaled by sqrt(d) on input),
//   - qkv and fc1 N(0, 0.02), the residual projections (attention output,
//     fc2) N(0, 0.02/sqrt(2 n_layers)), biases 0,
//   - LayerNorm gain 1 and shift 0, untied output head N(0, 0.02),
//   - the position scheme's parameters by its position.ParamSpec.Init, for
//     the built-in schemes as their papers' code: T5's table N(0, d^-1/2),
//     KERPLE's r1 ~ U(0, 2) and r2 ~ U(0, 1), FIRE's MLP as PyTorch's
//     nn.Linear with c = 0.1 and L = train_len (see layers),
//   - with logit_scale log-length, each layer's scales 1/ln(train_len).
//
// cfg must be valid (Config.Validate): it panics for a pos that names no
// registered scheme.
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
