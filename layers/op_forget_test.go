package layers

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/alibi-go/alibi/layers/position"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The forget gate's prefix sums equal a direct float64 sum of ln sigmoid
// of the logits, sequence by sequence and head by head; large logits of
// either sign stay finite.
func TestForgetGateValues(t *testing.T) {
	const batch, qLen, heads = 2, 5, 3
	g := []float64{0.3, -1, 2, 40, -40, 0, 1.5, -0.2, 0.7, -3, 3, 0.1, 9, -9, 0.5,
		-0.4, 0.8, -1.2, 2.2, 0.6, -0.1, 0, 0, 0, 5, -5, 1, 0.25, -0.75, 0.05}
	out := run(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ForgetGate(in[0], heads, qLen, nil) },
		tensor.New(tensor.WithShape(batch*qLen, heads), tensor.WithBacking(append([]float64(nil), g...))))
	for b := 0; b < batch; b++ {
		for h := 0; h < heads; h++ {
			var sum float64
			for q := 0; q < qLen; q++ {
				i := (b*qLen+q)*heads + h
				sum += math.Log(1 / (1 + math.Exp(-g[i])))
				if math.Abs(out[i]-sum) > 1e-12*max(1, math.Abs(sum)) || math.IsInf(out[i], 0) {
					t.Fatalf("sequence %d head %d row %d: %v, want %v", b, h, q, out[i], sum)
				}
			}
		}
	}
}

// Finite differences (float64) of the forget gate alone: its prefix sums
// as an op of their own, every logit's gradient included (the first row's
// too, which inside attention is 0, since no bias c_i - c_j holds it).
func TestForgetGateGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(93, 94))
	const batch, qLen, heads = 2, 4, 3
	gradCheck(t, []*tensor.Dense{randDense(rng, 2, batch*qLen, heads)}, []int{0}, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return ForgetGate(in[0], heads, qLen, nil)
	})
}

// Finite differences (float64) through the Forgetting Transformer's
// attention: the gate's logits from x by a linear layer (weights and bias),
// their prefix sums, and attention with them as its bias, alone and with
// ALiBi's slopes: the gradients of x, the gate's weight and bias, and qkv.
func TestForgetGateAttentionGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(91, 92))
	const batch, qLen, heads, dHead = 2, 5, 2, 3
	d := heads * dHead
	for _, alibi := range []bool{false, true} {
		inputs := []*tensor.Dense{randDense(rng, 1, batch*qLen, 4), randDense(rng, 0.5, 4, heads), randDense(rng, 0.5, heads), randDense(rng, 1, batch*qLen, 3*d)}
		gradCheck(t, inputs, []int{0, 1, 2, 3}, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
			logits, err := Linear(in[0], in[1], in[2])
			if err != nil {
				return nil, err
			}
			c, err := ForgetGate(logits, heads, qLen, nil)
			if err != nil {
				return nil, err
			}
			cfg := AttentionConfig{Heads: heads, QueryLen: qLen, Gate: c}
			var params *G.Node
			if alibi {
				slopes := make([]float64, heads)
				for h, m := range position.AlibiSlopes(heads) {
					slopes[h] = float64(m)
				}
				cfg.PositionBias = position.AlibiScheme{}
				params = G.NewTensor(g, G.Float64, 1, G.WithShape(heads), G.WithName("slopes"),
					G.WithValue(tensor.New(tensor.WithShape(heads), tensor.WithBacking(slopes))))
			}
			return Attention(in[3], params, cfg)
		})
	}
}
