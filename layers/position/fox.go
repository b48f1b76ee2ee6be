package position

import "math/rand/v2"

// GatedScheme is a scheme whose attention adds the Forgetting
// Transformer's data-dependent bias: each layer projects its attention
// input x_t to one forget-gate logit per head, w_h · x_t + b_h, with the
// parameters named by ForgetGate (among its LayerParams), and the kernel
// adds c_i - c_j to the score of query i on key j, c being the running sum
// of ln sigmoid of the logits (layers.ForgetGate, layers.AttentionConfig
// Gate).
type GatedScheme interface {
	Scheme
	// ForgetGate returns the names of the gate's weight (d_model, heads)
	// and bias (heads), as its LayerParams name them.
	ForgetGate() (weight, bias string)
}

// FoxPosition is the scheme "fox": the Forgetting Transformer (Lin et al.,
// ICLR 2025), whose forget gates make ALiBi's bias data-dependent: every
// token between a query and a key (the query's own included) multiplies the
// key's attention weight by its forget gate sigmoid(w_h · x_t + b_h) < 1, a
// penalty per token that the data sets, where ALiBi's is the constant m_h.
// It has no other position information. The gate's weight is initialised
// N(0, 0.02) and its bias 0, as the paper's code does (every gate starts
// near 1/2); the weight gets weight decay, as the model's other matrices,
// the bias none.
type FoxPosition struct{ NoPosition }

// Name implements Scheme.
func (FoxPosition) Name() string { return "fox" }

// Gate parameter names, per layer.
const (
	foxWeight = "attn.fgate.weight"
	foxBias   = "attn.fgate.bias"
)

// LayerParams implements Scheme: the gate's weight and bias.
func (FoxPosition) LayerParams(shape ModelShape) []ParamSpec {
	d, h := shape.DModel, shape.Heads
	return []ParamSpec{
		{Name: foxWeight, Shape: []int{d, h}, Decay: true, Init: func(rng *rand.Rand) []float32 {
			w := make([]float32, d*h)
			for i := range w {
				w[i] = float32(rng.NormFloat64() * 0.02)
			}
			return w
		}},
		{Name: foxBias, Shape: []int{h}, Init: func(*rand.Rand) []float32 { return make([]float32, h) }},
	}
}

// ForgetGate implements GatedScheme.
func (FoxPosition) ForgetGate() (weight, bias string) { return foxWeight, foxBias }

// EvalBytes implements Scheme: nothing (the gate's logits and their running
// sums are the outputs of ops).
func (FoxPosition) EvalBytes(ModelShape, int, int) int64 { return 0 }
