package layers

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ropeGraph is a Rope op on an input whose rows can be rewritten between
// runs.
type ropeGraph struct {
	in  *tensor.Dense
	out *G.Node
	vm  G.VM
}

func newRopeGraph(t *testing.T, in *tensor.Dense, heads, qLen int, pos *Positions) *ropeGraph {
	t.Helper()
	g := G.NewGraph()
	x := G.NewTensor(g, in.Dtype(), 2, G.WithShape(in.Shape()...), G.WithValue(in), G.WithName("qkv"))
	out, err := Rope(x, heads, qLen, pos)
	if err != nil {
		t.Fatal(err)
	}
	r := &ropeGraph{in: in, out: out, vm: G.NewTapeMachine(g)}
	t.Cleanup(func() { r.vm.Close() })
	return r
}

// run runs the op and returns a copy of its output as float64.
func (r *ropeGraph) run(t *testing.T) []float64 {
	t.Helper()
	r.vm.Reset()
	if err := r.vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	switch v := r.out.Value().Data().(type) {
	case []float32:
		return convertTo[float64](v)
	case []float64:
		return slices.Clone(v)
	}
	t.Fatalf("output of type %T", r.out.Value().Data())
	return nil
}

// ropeComplex rotates one head x (d_head values) to position p by complex
// multiplication: z_k = x_k + i x_{k+d/2} times exp(i p 10000^(-2k/d)),
// the real parts giving the first half and the imaginary parts the second.
func ropeComplex(x []float64, p int) []float64 {
	half := len(x) / 2
	out := make([]float64, len(x))
	for k := 0; k < half; k++ {
		z := complex(x[k], x[k+half]) * cmplx.Exp(complex(0, float64(p)*math.Pow(10000, -float64(2*k)/float64(len(x)))))
		out[k], out[k+half] = real(z), imag(z)
	}
	return out
}

// Rotated vectors at known positions: by hand for d_head 2 and 4, and
// against complex multiplication for random heads at positions up to
// 30000 (packed rows and rows at cache offsets), in float64 and float32;
// the values pass through bit-identical.
func TestRopeKnownValues(t *testing.T) {
	// d_head 2, position 1: q = (1, 0) turns to (cos 1, sin 1), k = (0, 1)
	// to (-sin 1, cos 1). d_head 4, position 3, x = (1, 2, 3, 4): pairs
	// (x0, x2) at angle 3 and (x1, x3) at 3 * 10000^(-1/2) = 0.03:
	// x0' = cos 3 - 3 sin 3, x2' = sin 3 + 3 cos 3,
	// x1' = 2 cos 0.03 - 4 sin 0.03, x3' = 2 sin 0.03 + 4 cos 0.03.
	for _, tc := range []struct {
		name  string
		dHead int
		pos   int
		row   []float64 // q, k, v of one head
		wantQ []float64
		wantK []float64
	}{
		{"d_head 2", 2, 1, []float64{1, 0, 0, 1, 7, 8},
			[]float64{0.5403023058681398, 0.8414709848078965}, []float64{-0.8414709848078965, 0.5403023058681398}},
		{"d_head 4", 4, 3, []float64{1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8},
			[]float64{-1.413352520780047, 1.8791180666879925, -2.828857481741469, 4.058191135400942},
			[]float64{-1.413352520780047, 1.8791180666879925, -2.828857481741469, 4.058191135400942}},
	} {
		w := 3 * tc.dHead
		data := make([]float64, (tc.pos+1)*w)
		copy(data[tc.pos*w:], tc.row)
		out := newRopeGraph(t, tensor.New(tensor.WithShape(tc.pos+1, w), tensor.WithBacking(data)), 1, tc.pos+1, nil).run(t)
		got := out[tc.pos*w:]
		for k := 0; k < tc.dHead; k++ {
			if math.Abs(got[k]-tc.wantQ[k]) > 1e-14 || math.Abs(got[tc.dHead+k]-tc.wantK[k]) > 1e-14 {
				t.Errorf("%s: rotated q %v, k %v; want %v, %v", tc.name, got[:tc.dHead], got[tc.dHead:2*tc.dHead], tc.wantQ, tc.wantK)
				break
			}
		}
		if !slices.Equal(got[2*tc.dHead:w], tc.row[2*tc.dHead:]) {
			t.Errorf("%s: values %v changed to %v", tc.name, tc.row[2*tc.dHead:], got[2*tc.dHead:w])
		}
	}

	rng := rand.New(rand.NewPCG(61, 62))
	const heads, dHead, qLen = 3, 8, 5
	d := heads * dHead
	offsets := []int{0, 1000, 29995}
	for _, f32 := range []bool{false, true} {
		data := make([]float64, len(offsets)*qLen*3*d)
		for i := range data {
			data[i] = rng.NormFloat64()
			if f32 {
				data[i] = float64(float32(data[i]))
			}
		}
		in := tensor.New(tensor.WithShape(len(offsets)*qLen, 3*d), tensor.WithBacking(slices.Clone(data)))
		tol := 1e-13
		if f32 {
			in = tensor.New(tensor.WithShape(len(offsets)*qLen, 3*d), tensor.WithBacking(convertTo[float32](data)))
			tol = 1e-6
		}
		pos := NewPositions(len(offsets))
		copy(pos.Lengths, offsets)
		packed := newRopeGraph(t, in.Clone().(*tensor.Dense), heads, qLen, nil).run(t)
		cached := newRopeGraph(t, in, heads, qLen, pos).run(t)
		var worst float64
		for r := 0; r < len(offsets)*qLen; r++ {
			for _, c := range []struct {
				out []float64
				p   int
			}{{packed, r % qLen}, {cached, offsets[r/qLen] + r%qLen}} {
				for blk := 0; blk < 2; blk++ {
					for h := 0; h < heads; h++ {
						col := r*3*d + blk*d + h*dHead
						want := ropeComplex(data[col:col+dHead], c.p)
						for k, v := range want {
							worst = max(worst, math.Abs(c.out[col+k]-v))
						}
					}
				}
				if !slices.Equal(c.out[r*3*d+2*d:(r+1)*3*d], data[r*3*d+2*d:(r+1)*3*d]) {
					t.Fatalf("float32 %v: row %d values changed", f32, r)
				}
			}
		}
		t.Logf("float32 %v: worst |difference| from complex multiplication %.3g", f32, worst)
		if worst > tol {
			t.Errorf("float32 %v: rotation differs from complex multiplication by %.3g", f32, worst)
		}
	}
}

// The score of a rotated query and key depends on their positions only
// through the difference: <R(m) q, R(n) k> = <R(m+s) q, R(n+s) k> to 1e-5
// (relative to |q||k|), in float32, for shifts up to 20000. The four
// positions are four sequences' offsets in one call.
func TestRopeRelative(t *testing.T) {
	rng := rand.New(rand.NewPCG(63, 64))
	const heads, dHead = 2, 16
	d := heads * dHead
	var worst float64
	for _, tc := range []struct{ m, n, s int }{{5, 2, 100}, {0, 0, 7}, {3, 9, 1000}, {700, 13, 20000}, {40, 41, 1}} {
		q, k := randF32(rng, 1, d), randF32(rng, 1, d)
		rows := make([]float32, 4*3*d)
		for r := 0; r < 4; r++ {
			copy(rows[r*3*d:], q)
			copy(rows[r*3*d+d:], k)
		}
		pos := NewPositions(4)
		copy(pos.Lengths, []int{tc.m, tc.n, tc.m + tc.s, tc.n + tc.s})
		out := newRopeGraph(t, tensor.New(tensor.WithShape(4, 3*d), tensor.WithBacking(rows)), heads, 1, pos).run(t)
		for h := 0; h < heads; h++ {
			score := func(qRow, kRow int) float64 {
				var s float64
				for c := h * dHead; c < (h+1)*dHead; c++ {
					s += out[qRow*3*d+c] * out[kRow*3*d+d+c]
				}
				return s
			}
			var nq, nk float64
			for c := h * dHead; c < (h+1)*dHead; c++ {
				nq += float64(q[c]) * float64(q[c])
				nk += float64(k[c]) * float64(k[c])
			}
			e := math.Abs(score(0, 1)-score(2, 3)) / math.Sqrt(nq*nk)
			worst = max(worst, e)
			if e > 1e-5 {
				t.Errorf("%+v head %d: scores %.7g and %.7g", tc, h, score(0, 1), score(2, 3))
			}
		}
		// Not a trivial pass: the score does change with the difference.
		pos.Lengths[1]++
		shifted := newRopeGraph(t, tensor.New(tensor.WithShape(4, 3*d), tensor.WithBacking(rows)), heads, 1, pos).run(t)
		if slices.Equal(shifted[3*d+d:3*d+2*d], out[3*d+d:3*d+2*d]) {
			t.Errorf("%+v: the key at n+1 equals the key at n", tc)
		}
	}
	t.Logf("worst relative score difference %.3g", worst)
}

// Finite differences (float64) of the op, packed and at cache offsets.
func TestRopeGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(65, 66))
	for _, tc := range []struct {
		batch, qLen, heads, dHead int
		offsets                   []int
	}{
		{2, 3, 2, 4, nil},
		{1, 5, 1, 2, nil},
		{2, 2, 2, 6, []int{4, 9}},
		{3, 1, 1, 4, []int{0, 123, 7}},
	} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			var pos *Positions
			if tc.offsets != nil {
				pos = NewPositions(tc.batch)
				copy(pos.Lengths, tc.offsets)
			}
			d := tc.heads * tc.dHead
			gradCheck(t, []*tensor.Dense{randDense(rng, 1, tc.batch*tc.qLen, 3*d)}, []int{0}, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				return Rope(in[0], tc.heads, tc.qLen, pos)
			})
		})
	}
}

// With Positions, each batch row's tokens get exactly (bit for bit) the
// rotation of the packed path's rows at the same positions; the graph runs
// first at small offsets, then at larger ones (growing the op's table).
func TestRopePositionsEqualPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(67, 68))
	const tlen, heads, dHead, qLen = 40, 2, 8, 3
	d := heads * dHead
	seq := randF32(rng, 1, tlen*3*d)
	packed := newRopeGraph(t, tensor.New(tensor.WithShape(tlen, 3*d), tensor.WithBacking(seq)), heads, tlen, nil).run(t)
	pos := NewPositions(3)
	in := make([]float32, 3*qLen*3*d)
	g := newRopeGraph(t, tensor.New(tensor.WithShape(3*qLen, 3*d), tensor.WithBacking(in)), heads, qLen, pos)
	for _, offsets := range [][]int{{0, 1, 2}, {5, 17, 30}, {37, 0, 20}} {
		copy(pos.Lengths, offsets)
		for r, off := range offsets {
			copy(in[r*qLen*3*d:(r+1)*qLen*3*d], seq[off*3*d:(off+qLen)*3*d])
		}
		out := g.run(t)
		for r, off := range offsets {
			if got, want := out[r*qLen*3*d:(r+1)*qLen*3*d], packed[off*3*d:(off+qLen)*3*d]; !slices.Equal(got, want) {
				t.Fatalf("offsets %v: batch row %d differs from packed rows %d..%d", offsets, r, off, off+qLen-1)
			}
		}
	}
	// A selection of fewer sequences than the batch is an error.
	pos.Select(0, 1)
	g.vm.Reset()
	if err := g.vm.RunAll(); err == nil {
		t.Error("2 selected sequences for a batch of 3: no error")
	}
}

// Bad shapes are errors, not panics.
func TestRopeRejects(t *testing.T) {
	g := G.NewGraph()
	for _, tc := range []struct {
		shape       []int
		heads, qLen int
		name        string
	}{
		{[]int{8, 18}, 2, 8, "odd d_head 3"},
		{[]int{8, 24}, 3, 8, "width 8 not a multiple of 3 heads"},
		{[]int{8, 25}, 1, 8, "width not 3 x D"},
		{[]int{9, 24}, 2, 4, "rows not a multiple of the query length"},
		{[]int{8, 24}, 0, 8, "no heads"},
		{[]int{8, 24}, 2, 0, "no query length"},
		{[]int{2, 4, 24}, 2, 4, "rank 3"},
	} {
		x := G.NewTensor(g, G.Float32, len(tc.shape), G.WithShape(tc.shape...), G.WithName(tc.name))
		if _, err := Rope(x, tc.heads, tc.qLen, nil); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}
