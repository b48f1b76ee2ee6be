package position

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gorgonia.org/tensor"
)

// KerpleScheme is the logarithmic variant of KERPLE (Chi et al., NeurIPS
// 2022): head h adds
//
//	-r1_h * log(1 + r2_h * n)
//
// to the score of a key at distance n = i - j. The parameters of a layer
// are a (2, heads) tensor: row 0 holds r1, row 1 holds r2. Both must be
// positive; the reference code (chijames/KERPLE) clamps them to at least
// KerpleMin in its forward pass, here Project does it after each optimizer
// step, so that the bias is a differentiable function of the parameters the
// optimizer sees. The kernel reads per-head distance tables built for each
// call (O(heads x keys)), and the gradient of their entries gives
//
//	dr1_h = sum_n dB_h(n) * -log(1 + r2_h n),
//	dr2_h = sum_n dB_h(n) * -r1_h n / (1 + r2_h n).
type KerpleScheme struct{}

// KerpleMin is the smallest value Project leaves r1 and r2 at, as in the
// reference code.
const KerpleMin = 0.01

// KerpleInit returns a layer's initial KERPLE parameters for heads heads,
// laid out as the (2, heads) tensor: r1 ~ U(0, 2) and r2 ~ U(0, 1), as in
// the reference code, then projected (values below KerpleMin raised to it).
func KerpleInit(rng *rand.Rand, heads int) []float32 {
	p := make([]float32, 2*heads)
	for h := 0; h < heads; h++ {
		p[h] = float32(2 * rng.Float64())
		p[heads+h] = float32(rng.Float64())
	}
	KerpleScheme{}.Project(p)
	return p
}

// Project implements Projector: every parameter below KerpleMin (or NaN)
// is set to KerpleMin.
func (KerpleScheme) Project(params []float32) {
	for i, v := range params {
		if !(v >= KerpleMin) {
			params[i] = KerpleMin
		}
	}
}

// Name implements BiasScheme.
func (KerpleScheme) Name() string { return "kerple-log" }

// CheckParams implements BiasScheme: the parameters are (2, heads).
func (KerpleScheme) CheckParams(p tensor.Shape, call BiasCall) error {
	heads := call.Heads
	if len(p) != 2 || p[0] != 2 || p[1] != heads {
		return fmt.Errorf("KERPLE parameters have shape %v, want (2, %d)", p, heads)
	}
	return nil
}

// Trainable implements BiasScheme: r1 and r2 are learned.
func (KerpleScheme) Trainable() bool { return true }

// Bias32 implements BiasScheme: per-head distance tables.
func (KerpleScheme) Bias32(p []float32, heads, kLen int) KernelBias[float32] {
	return kerpleTables(p, heads, kLen)
}

// Bias64 implements BiasScheme: per-head distance tables.
func (KerpleScheme) Bias64(p []float64, heads, kLen int) KernelBias[float64] {
	return kerpleTables(p, heads, kLen)
}

// ParamGrad32 implements BiasScheme (see kerpleParamGrad).
func (KerpleScheme) ParamGrad32(p, biasGrad, out []float32) { kerpleParamGrad(p, biasGrad, out) }

// ParamGrad64 implements BiasScheme (see kerpleParamGrad).
func (KerpleScheme) ParamGrad64(p, biasGrad, out []float64) { kerpleParamGrad(p, biasGrad, out) }

// kerpleTables returns the distance tables of the parameters p (r1 then r2,
// heads each) for n keys, computed in float64.
func kerpleTables[T float](p []T, heads, n int) distanceBias[T] {
	return newDistanceTables[T](heads, n, func(h, d int) float64 {
		return -float64(p[h]) * math.Log1p(float64(p[heads+h])*float64(d))
	})
}

// kerpleParamGrad applies the chain rule above to the gradient of the
// distance tables (heads x n, entry h*n + n-1-d for distance d), in float64.
func kerpleParamGrad[T float](params, biasGrad, out []T) {
	p, g := float64s(params), float64s(biasGrad)
	heads := len(p) / 2
	n := len(g) / heads
	sum := make([]float64, len(p))
	for h := 0; h < heads; h++ {
		r1, r2 := p[h], p[heads+h]
		row := g[h*n : (h+1)*n]
		var d1, d2 float64
		for d := 0; d < n; d++ {
			gd := row[n-1-d]
			x := float64(d)
			d1 -= gd * math.Log1p(r2*x)
			d2 -= gd * r1 * x / (1 + r2*x)
		}
		sum[h], sum[heads+h] = d1, d2
	}
	storeAs(out, sum)
}

// KerplePosition is the scheme "kerple" (Chi et al., NeurIPS 2022):
// KerpleScheme's bias from each layer's own (2, heads) parameters, stored
// as "layers.<l>.attn.kerple", initialised by KerpleInit and kept positive
// by KerpleScheme.Project after every optimizer step.
type KerplePosition struct{ NoPosition }

// kerplePart is the name of a layer's KERPLE parameters within the layer.
const kerplePart = "attn.kerple"

// Name implements Scheme.
func (KerplePosition) Name() string { return "kerple" }

// LayerParams implements Scheme: r1 and r2, without weight decay.
func (KerplePosition) LayerParams(shape ModelShape) []ParamSpec {
	h := shape.Heads
	return []ParamSpec{{Name: kerplePart, Shape: []int{2, h},
		Init:    func(rng *rand.Rand) []float32 { return KerpleInit(rng, h) },
		Project: KerpleScheme{}.Project}}
}

// AttentionBias implements Scheme: KerpleScheme on the layer's
// parameters.
func (KerplePosition) AttentionBias(ModelShape) (BiasScheme, string) {
	return KerpleScheme{}, kerplePart
}

// EvalBytes implements Scheme: each layer's distance tables, one float32 per head and key.
func (KerplePosition) EvalBytes(shape ModelShape, _, length int) int64 {
	return distanceTableBytes(shape, length)
}
