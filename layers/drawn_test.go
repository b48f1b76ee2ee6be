package layers

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/alibi-go/alibi/layers/position"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// drawnDirect is attention with a position bias at drawn positions in
// float64, from the (T, T) scores: the bias of the query in row i on the
// key in row j is the scheme's at positions p[i] and p[j] (asked of its
// kernel bias one entry at a time), the rotation none.
func drawnDirect(qkv []float64, kb position.KernelBias[float64], p []int, t, heads, dh int) []float64 {
	d := heads * dh
	out := make([]float64, t*d)
	for h := range heads {
		for i := range t {
			s := make([]float64, i+1)
			top := math.Inf(-1)
			for j := range s {
				for c := range dh {
					s[j] += qkv[i*3*d+h*dh+c] * qkv[j*3*d+d+h*dh+c]
				}
				var b [1]float64
				kb.Add(h, p[i], p[j], b[:])
				s[j] = s[j]/math.Sqrt(float64(dh)) + b[0]
				top = max(top, s[j])
			}
			sum := 0.0
			for j := range s {
				s[j] = math.Exp(s[j] - top)
				sum += s[j]
			}
			for j := range s {
				for c := range dh {
					out[i*d+h*dh+c] += s[j] / sum * qkv[j*3*d+2*d+h*dh+c]
				}
			}
		}
	}
	return out
}

// The kernel's bias at drawn positions equals the scheme's bias at those
// positions, for ALiBi's slopes and KERPLE's learned kernel, two
// sequences; and the drawn positions 0..T-1 are the plain op, bit for bit.
func TestDrawnBiasMatchesPositions(t *testing.T) {
	rng := rand.New(rand.NewPCG(101, 102))
	const batch, qLen, heads, dh, m = 2, 40, 2, 4, 5000
	p := position.DrawPositions(rng, qLen, m)
	kerple := make([]float64, 2*heads)
	for i, v := range position.KerpleInit(rng, heads) {
		kerple[i] = float64(v)
	}
	slopes := []float64{0.5, 0.03}
	for _, tc := range []struct {
		scheme position.BiasScheme
		params []float64
	}{{position.AlibiScheme{}, slopes}, {position.KerpleScheme{}, kerple}} {
		qkv := randDense(rng, 1, batch*qLen, 3*heads*dh)
		run := func(drawn *DrawnPositions) []float64 {
			g := G.NewGraph()
			x := G.NewTensor(g, G.Float64, 2, G.WithShape(qkv.Shape()...), G.WithValue(qkv), G.WithName("qkv"))
			pp := tensor.New(tensor.WithShape(len(tc.params)), tensor.WithBacking(tc.params))
			if len(tc.params) == 2*heads {
				pp = tensor.New(tensor.WithShape(2, heads), tensor.WithBacking(tc.params))
			}
			pn := G.NewTensor(g, G.Float64, pp.Dims(), G.WithShape(pp.Shape()...), G.WithValue(pp), G.WithName("params"))
			out, err := Attention(x, pn, AttentionConfig{Heads: heads, QueryLen: qLen, PositionBias: tc.scheme, Drawn: drawn})
			if err != nil {
				t.Fatal(err)
			}
			vm := G.NewTapeMachine(g)
			defer vm.Close()
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			return append([]float64(nil), out.Value().Data().([]float64)...)
		}
		got := run(&DrawnPositions{P: p})
		kb := tc.scheme.Bias64(tc.params, heads, m)
		for b := range batch {
			want := drawnDirect(qkv.Data().([]float64)[b*qLen*3*heads*dh:], kb, p, qLen, heads, dh)
			for i, w := range want {
				if g := got[b*qLen*heads*dh+i]; math.Abs(g-w) > 1e-12 {
					t.Fatalf("%s: sequence %d output %d = %.15g, at the drawn positions %.15g", tc.scheme.Name(), b, i, g, w)
				}
			}
		}
		usual := make([]int, qLen)
		for i := range usual {
			usual[i] = i
		}
		plain, drawn := run(nil), run(&DrawnPositions{P: usual})
		for i := range plain {
			if plain[i] != drawn[i] {
				t.Fatalf("%s: drawn positions 0..T-1 give output %d = %v, the plain op %v", tc.scheme.Name(), i, drawn[i], plain[i])
			}
		}
	}
}

// Finite differences through KERPLE's bias at drawn positions: the
// gradient of its parameters accumulates into the entries of the drawn
// distances.
func TestDrawnBiasGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(103, 104))
	const batch, qLen, heads, dh = 2, 6, 2, 2
	p := position.DrawPositions(rng, qLen, 300)
	kerple := randDense(rng, 0, 2, heads)
	for i, v := range position.KerpleInit(rng, heads) {
		kerple.Data().([]float64)[i] = float64(v)
	}
	gradCheck(t, []*tensor.Dense{randDense(rng, 1, batch*qLen, 3*heads*dh), kerple}, []int{0, 1}, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return Attention(in[0], in[1], AttentionConfig{Heads: heads, QueryLen: qLen, PositionBias: position.KerpleScheme{}, Drawn: &DrawnPositions{P: p}})
	})
}

// Rope at drawn positions rotates row i by the angles of position p[i]:
// the same rows as Rope over a sequence as long as the largest position,
// read at those positions.
func TestDrawnRope(t *testing.T) {
	rng := rand.New(rand.NewPCG(105, 106))
	const qLen, heads, dh, m = 7, 2, 4, 90
	p := position.DrawPositions(rng, qLen, m)
	long := randDense(rng, 1, m, 3*heads*dh)
	short := make([]float64, qLen*3*heads*dh)
	for i, at := range p {
		copy(short[i*3*heads*dh:(i+1)*3*heads*dh], long.Data().([]float64)[at*3*heads*dh:])
	}
	rot := func(x *tensor.Dense, n int, drawn *DrawnPositions) []float64 {
		g := G.NewGraph()
		xn := G.NewTensor(g, G.Float64, 2, G.WithShape(x.Shape()...), G.WithValue(x), G.WithName("x"))
		out, err := ropeCached(xn, heads, n, nil, RopeScaling{}, nil, drawn)
		if err != nil {
			t.Fatal(err)
		}
		vm := G.NewTapeMachine(g)
		defer vm.Close()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		return out.Value().Data().([]float64)
	}
	all := rot(long, m, nil)
	got := rot(tensor.New(tensor.WithShape(qLen, 3*heads*dh), tensor.WithBacking(short)), qLen, &DrawnPositions{P: p})
	w := 3 * heads * dh
	for i, at := range p {
		for c := range w {
			if got[i*w+c] != all[at*w+c] {
				t.Fatalf("row %d at position %d, column %d: %v, rope over the whole sequence %v", i, at, c, got[i*w+c], all[at*w+c])
			}
		}
	}
}
