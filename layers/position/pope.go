package position

import (
	"math"
	"math/rand/v2"
)

// PolarScheme is a scheme that transforms queries and keys into polar form
// (PoPE, layers.Polar): each layer has a (heads, d_head) parameter of
// phases, named by Phase among its LayerParams.
type PolarScheme interface {
	Scheme
	// Phase returns the name of the layer parameter of the phases.
	Phase() string
}

// PopePosition is the scheme "pope": polar coordinate position embeddings
// (Gopalakrishnan, Csordás, Schmidhuber and Mozer, "Decoupling the 'What'
// and 'Where' With Polar Coordinate Positional Embeddings", 2025, arXiv
// 2509.10534). RoPE rotates pairs of components, so a query's content and
// its position mix in each pair's angle; PoPE keeps them apart: every
// component c of a head's query and key becomes a magnitude,
// softplus(q_c) and softplus(k_c), with a phase set by the position alone,
// and the attention logit is
//
//	sum_c softplus(q_c) softplus(k_c) cos((i - j) theta_c + delta_hc) / sqrt(d_head),
//
// with one frequency per component, theta_c = 10000^(-c/d_head) for
// c = 0..d_head-1 (RoPE has d_head/2), and delta a learned phase per head
// and component, kept in [-2 pi, 0] as the paper bounds it (projected after
// every optimizer step) and started at 0. Only the queries and keys change,
// so it runs in the fused kernel: layers.Polar writes each as 2 d_head
// components (the magnitude times the cosine and the sine of its angle),
// and the kernel attends over heads of that width. The phases get no
// weight decay.
type PopePosition struct{ NoPosition }

// Name implements Scheme.
func (PopePosition) Name() string { return "pope" }

// popePhase is the layer parameter's name.
const popePhase = "attn.pope.phase"

// LayerParams implements Scheme: the phases.
func (PopePosition) LayerParams(shape ModelShape) []ParamSpec {
	h, dh := shape.Heads, shape.DHead()
	return []ParamSpec{{Name: popePhase, Shape: []int{h, dh},
		Init: func(*rand.Rand) []float32 { return make([]float32, h*dh) },
		Project: func(p []float32) {
			for i, x := range p {
				p[i] = min(0, max(float32(-2*math.Pi), x))
			}
		}}}
}

// Phase implements PolarScheme.
func (PopePosition) Phase() string { return popePhase }

// PopeTheta returns PoPE's frequencies for heads of width dHead:
// 10000^(-c/dHead) for c = 0..dHead-1.
func PopeTheta(dHead int) []float64 {
	th := make([]float64, dHead)
	for c := range th {
		th[c] = math.Pow(10000, -float64(c)/float64(dHead))
	}
	return th
}
