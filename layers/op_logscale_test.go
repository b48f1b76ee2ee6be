package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Finite differences (float64) of the log-length scale for qkv and the
// scales, packed and at cache offsets.
func TestLogLengthScaleGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	for _, tc := range []struct {
		batch, qLen, heads, dHead int
		offsets                   []int
	}{
		{2, 3, 2, 4, nil},
		{1, 5, 1, 2, nil},
		{2, 2, 2, 3, []int{4, 9}},
	} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			var pos *Positions
			if tc.offsets != nil {
				pos = NewPositions(tc.batch)
				copy(pos.Lengths, tc.offsets)
			}
			d := tc.heads * tc.dHead
			gradCheck(t, []*tensor.Dense{randDense(rng, 1, tc.batch*tc.qLen, 3*d), randDense(rng, 1, tc.heads)}, []int{0, 1},
				func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
					return LogLengthScale(in[0], in[1], tc.heads, tc.qLen, pos)
				})
		})
	}
}

// The values: query head h of the row at position p is multiplied by
// s_h·ln(p+1), worked out here; keys and values are unchanged.
func TestLogLengthScaleValues(t *testing.T) {
	const heads, dh, qLen = 2, 2, 3
	x := make([]float64, 2*qLen*3*heads*dh)
	for i := range x {
		x[i] = float64(i%7) - 3
	}
	s := []float64{0.5, 2}
	pos := NewPositions(2)
	pos.Lengths[0], pos.Lengths[1] = 0, 10
	out := run(t, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return LogLengthScale(in[0], in[1], heads, qLen, pos)
	},
		tensor.New(tensor.WithShape(2*qLen, 3*heads*dh), tensor.WithBacking(append([]float64(nil), x...))),
		tensor.New(tensor.WithShape(heads), tensor.WithBacking(s)))
	w := 3 * heads * dh
	for r := 0; r < 2*qLen; r++ {
		n := float64(r%qLen + 1 + pos.Lengths[r/qLen])
		for j := 0; j < w; j++ {
			want := x[r*w+j]
			if j < heads*dh {
				want *= s[j/dh] * math.Log(n)
			}
			if math.Abs(out[r*w+j]-want) > 1e-12 {
				t.Fatalf("row %d column %d: %v, want %v", r, j, out[r*w+j], want)
			}
		}
	}
}
