package layers

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/layers/position"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Finite differences (float64) through the attention op in stick-breaking
// mode, two sequences, past a tile of 64 keys: the gradients of qkv and of
// the remainder's vectors flow through the graph.
func TestStickBreakingAttentionGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(95, 96))
	for _, qLen := range []int{5, 70} {
		const batch, heads, dHead = 2, 2, 2
		inputs := []*tensor.Dense{randDense(rng, 1, batch*qLen, 3*heads*dHead), randDense(rng, 1, heads, dHead)}
		wrt := []int{0, 1}
		if qLen > 8 { // every element of a large case would take long: the remainder's only, and qkv's by the kernel's test
			wrt = []int{1}
		}
		gradCheck(t, inputs, wrt, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
			return Attention(in[0], nil, AttentionConfig{Heads: heads, QueryLen: qLen, StickBreaking: in[1]})
		})
	}
}

func TestStickBreakingAttentionRefusals(t *testing.T) {
	g := G.NewGraph()
	qkv := G.NewMatrix(g, G.Float64, G.WithShape(8, 12), G.WithName("qkv"))
	for _, tc := range []struct {
		rem  []int
		cfg  AttentionConfig
		want string
	}{
		{[]int{2, 3}, AttentionConfig{Heads: 2, QueryLen: 4}, "remainder of shape (2, 3)"},
		{[]int{2, 2}, AttentionConfig{Heads: 2, QueryLen: 4, PositionBias: position.AlibiScheme{}}, "takes no position bias"},
	} {
		rem := G.NewMatrix(g, G.Float64, G.WithShape(tc.rem...))
		tc.cfg.StickBreaking = rem
		var params *G.Node
		if tc.cfg.PositionBias != nil {
			params = G.NewVector(g, G.Float64, G.WithShape(2))
		}
		if _, err := Attention(qkv, params, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error with %q", tc.rem, err, tc.want)
		}
	}
}
