package layers

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/alibi-go/alibi/layers/position"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// popeDirect is PoPE attention straight from the paper's formula in
// float64: the (T, T) logits sum_c softplus(q_c) softplus(k_c)
// cos((i - j) theta_c + delta_hc) / sqrt(d_head), a softmax over j <= i,
// and the weighted values. qkv is (t, 3d) for one sequence.
func popeDirect(qkv, phase []float64, t, heads, dh int) []float64 {
	d := heads * dh
	theta := position.PopeTheta(dh)
	sp := func(x float64) float64 { return math.Log1p(math.Exp(x)) }
	out := make([]float64, t*d)
	for h := range heads {
		for i := range t {
			logits := make([]float64, i+1)
			top := math.Inf(-1)
			for j := range logits {
				s := 0.0
				for c := range dh {
					q, k := qkv[i*3*d+h*dh+c], qkv[j*3*d+d+h*dh+c]
					s += sp(q) * sp(k) * math.Cos(float64(i-j)*theta[c]+phase[h*dh+c])
				}
				logits[j] = s / math.Sqrt(float64(dh))
				top = max(top, logits[j])
			}
			sum := 0.0
			for j := range logits {
				logits[j] = math.Exp(logits[j] - top)
				sum += logits[j]
			}
			for j, p := range logits {
				for c := range dh {
					out[i*d+h*dh+c] += p / sum * qkv[j*3*d+2*d+h*dh+c]
				}
			}
		}
	}
	return out
}

// popeAttention builds PoPE's attention on qkv with the phases.
func popeAttention(qkv, phase *G.Node, heads, qLen int) (*G.Node, error) {
	x, err := Polar(qkv, phase, heads, qLen, nil)
	if err != nil {
		return nil, err
	}
	if x, err = Attention(x, nil, AttentionConfig{Heads: heads, QueryLen: qLen}); err != nil {
		return nil, err
	}
	return PolarHeads(x, heads)
}

// The fused path (Polar, the kernel over doubled heads, PolarHeads) equals
// the formula, in float64 and float32, two sequences, past several query
// tiles and one key tile of the kernel.
func TestPopeMatchesFormula(t *testing.T) {
	rng := rand.New(rand.NewPCG(97, 98))
	for _, tc := range []struct{ qLen, heads, dh int }{{1, 1, 2}, {9, 2, 3}, {600, 2, 8}} {
		const batch = 2
		d := tc.heads * tc.dh
		qkv := randDense(rng, 1, batch*tc.qLen, 3*d)
		phase := make([]float64, d)
		for i := range phase {
			phase[i] = -2 * math.Pi * rng.Float64()
		}
		want := make([]float64, 0, batch*tc.qLen*d)
		for b := range batch {
			want = append(want, popeDirect(qkv.Data().([]float64)[b*tc.qLen*3*d:][:tc.qLen*3*d], phase, tc.qLen, tc.heads, tc.dh)...)
		}
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			g := G.NewGraph()
			x, p := toDtype(qkv, dt), toDtype(tensor.New(tensor.WithShape(tc.heads, tc.dh), tensor.WithBacking(phase)), dt)
			xn := G.NewTensor(g, dt, 2, G.WithShape(x.Shape()...), G.WithValue(x), G.WithName("qkv"))
			pn := G.NewTensor(g, dt, 2, G.WithShape(p.Shape()...), G.WithValue(p), G.WithName("phase"))
			out, err := popeAttention(xn, pn, tc.heads, tc.qLen)
			if err != nil {
				t.Fatal(err)
			}
			vm := G.NewTapeMachine(g)
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			o := out.Value().(*tensor.Dense)
			if dt == tensor.Float32 {
				o = toF64(o)
			}
			got := o.Data().([]float64)
			tol := 1e-12
			if dt == tensor.Float32 {
				tol = 2e-5
			}
			for i := range want {
				if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
					t.Fatalf("%+v %v: output %d = %.12g, formula %.12g", tc, dt, i, got[i], want[i])
				}
			}
			vm.Close()
		}
	}
}

// toDtype returns a float64 tensor's copy in dt.
func toDtype(x *tensor.Dense, dt tensor.Dtype) *tensor.Dense {
	src := x.Data().([]float64)
	if dt == tensor.Float64 {
		return tensor.New(tensor.WithShape(x.Shape()...), tensor.WithBacking(append([]float64(nil), src...)))
	}
	v := make([]float32, len(src))
	for i, s := range src {
		v[i] = float32(s)
	}
	return tensor.New(tensor.WithShape(x.Shape()...), tensor.WithBacking(v))
}

// Finite differences (float64) through PoPE's attention: the gradients of
// qkv and of the phases.
func TestPopeGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(99, 100))
	const batch, qLen, heads, dh = 2, 5, 2, 3
	inputs := []*tensor.Dense{randDense(rng, 1, batch*qLen, 3*heads*dh), randDense(rng, 1, heads, dh)}
	gradCheck(t, inputs, []int{0, 1}, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return popeAttention(in[0], in[1], heads, qLen)
	})
}
