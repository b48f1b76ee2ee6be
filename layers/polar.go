package layers

import (
	"fmt"
	"math"

	"github.com/alibi-go/alibi/layers/internal/vmath"
	"github.com/alibi-go/alibi/layers/position"
	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Polar is PoPE's transform of the queries and keys (see
// position.PopePosition): qkv is (batch*queryLen, 3D) as Attention takes
// it, phase the (heads, d_head) learned phases delta; the output is
// (batch*queryLen, 6D), the queries, keys and values of heads twice as
// wide, for Attention with 2 d_head per head. For component c of head h of
// a query at position i and a key at position j,
//
//	q'_c = sqrt2 softplus(q_c) cos(i theta_c + delta_hc),  q'_{d_head+c} = sqrt2 softplus(q_c) sin(i theta_c + delta_hc),
//	k'_c = softplus(k_c) cos(j theta_c),                   k'_{d_head+c} = softplus(k_c) sin(j theta_c),
//
// so that q' . k' / sqrt(2 d_head) (the attention's scale at the doubled
// width) is sum_c softplus(q_c) softplus(k_c) cos((i - j) theta_c +
// delta_hc) / sqrt(d_head); the values are copied into the first d_head
// components of each head and the others are 0, so the attention's output
// holds each head's output there (PolarHeads takes it back). theta_c =
// 10000^(-c/d_head), c = 0..d_head-1: one frequency per component. pos,
// when not nil, gives each sequence's offset (a key/value cache).
func Polar(qkv, phase *G.Node, heads, queryLen int, pos *Positions) (*G.Node, error) {
	s := qkv.Shape()
	if heads < 1 || queryLen < 1 || len(s) != 2 || s[0]%queryLen != 0 || s[1]%(3*heads) != 0 {
		return nil, fmt.Errorf("pope: qkv of shape %v is not batch x %d rows of 3 x %d heads", s, queryLen, heads)
	}
	dh := s[1] / 3 / heads
	if ps := phase.Shape(); len(ps) != 2 || ps[0] != heads || ps[1] != dh {
		return nil, fmt.Errorf("pope: phases of shape %v for %d heads of width %d", ps, heads, dh)
	}
	op := &polarOp{heads: heads, dh: dh, qLen: queryLen, pos: pos, tab: &ropeTable{half: dh, theta: position.PopeTheta(dh), scale: 1}}
	op.opBase = opBase{key: fmt.Sprintf("Polar{heads=%d, q=%d, pos=%p}", heads, queryLen, pos), arity: 2,
		typ: hm.NewFnType(tt(2, tvA), tt(2, tvA), tt(2, tvA))}
	return G.ApplyOp(op, qkv, phase)
}

// polarOp is the forward op; polarGradOp computes the gradients of qkv and
// of the phases, and polarPhaseGradOp hands the latter to the graph.
type polarOp struct {
	opBase
	heads, dh, qLen int
	pos             *Positions
	tab             *ropeTable // cos and sin of p theta_c
	dPhase          *tensor.Dense
	// keep (set once a gradient is asked for) makes the forward pass keep
	// softplus and sigmoid of every query and key component in mu and sig
	// ([]float32 or []float64, rows x 2D) for the backward pass.
	keep    bool
	mu, sig any
}

func (o *polarOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(o.key, in, 0)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[0], 2 * s[1]}, nil
}

func (o *polarOp) DiffWRT(int) []bool { return []bool{true, true} }

func (o *polarOp) Do(vals ...G.Value) (G.Value, error) {
	x, phase, offsets, err := o.inputs(o.key, &o.opBase, vals)
	if err != nil {
		return nil, err
	}
	s := x.Shape()
	out := o.output(x.Dtype(), s[0], 2*s[1])
	switch xs := x.Data().(type) {
	case []float32:
		polarRows(o, xs, phase.Data().([]float32), out.Data().([]float32), offsets)
	case []float64:
		polarRows(o, xs, phase.Data().([]float64), out.Data().([]float64), offsets)
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, x.Dtype())
	}
	return out, nil
}

// inputs checks the op's first two inputs and returns them with each
// sequence's offset.
func (o *polarOp) inputs(key string, ob *opBase, vals []G.Value) (x, phase *tensor.Dense, offsets []int, err error) {
	if err = ob.checkArity(len(vals)); err != nil {
		return
	}
	if x, err = dense(key, vals[0]); err != nil {
		return
	}
	if phase, err = dense(key, vals[1]); err != nil {
		return
	}
	s := x.Shape()
	if len(s) != 2 || s[0]%o.qLen != 0 || s[1] != 3*o.heads*o.dh || phase.Dtype() != x.Dtype() {
		return nil, nil, nil, fmt.Errorf("%s: input of shape %v", key, s)
	}
	offsets = make([]int, s[0]/o.qLen)
	if o.pos != nil {
		if len(o.pos.Active()) != len(offsets) {
			return nil, nil, nil, fmt.Errorf("%s: %d sequences are selected, the input has %d", key, len(o.pos.Active()), len(offsets))
		}
		for r := range offsets {
			offsets[r] = o.pos.Offset(r)
		}
	}
	for _, off := range offsets {
		o.tab.grow(off + o.qLen)
	}
	return x, phase, offsets, nil
}

// phaseSincos returns the cosines and sines of the phases.
func phaseSincos[T float](phase []T) (cos, sin []float64) {
	cos, sin = make([]float64, len(phase)), make([]float64, len(phase))
	for i, p := range phase {
		sin[i], cos[i] = math.Sincos(float64(p))
	}
	return cos, sin
}

// polarRows writes the transform of every row of x into out.
func polarRows[T float](o *polarOp, x, phase, out []T, offsets []int) {
	d, dh := o.heads*o.dh, o.dh
	rows := len(x) / (3 * d)
	cd, sd := phaseSincos(phase)
	var mus, sigs []T
	if o.keep {
		mus, _ = o.mu.([]T)
		sigs, _ = o.sig.([]T)
		mus, sigs = resize(mus, rows*2*d), resize(sigs, rows*2*d)
		o.mu, o.sig = mus, sigs
	}
	parallelChunks(rows, 64, func(_, lo, hi int) {
		mu, sig := make([]T, 2*d), make([]T, 2*d)
		e := make([]float32, 2*d)
		for r := lo; r < hi; r++ {
			p := offsets[r/o.qLen] + r%o.qLen
			cp, sp := o.tab.cos[p*dh:][:dh], o.tab.sin[p*dh:][:dh]
			xr, yr := x[r*3*d:][:3*d], out[r*6*d:][:6*d]
			if mus != nil {
				mu, sig = mus[r*2*d:][:2*d], sigs[r*2*d:][:2*d]
			}
			softplusRow(xr[:2*d], mu, sig, e)
			for h := range o.heads {
				mq, mk, v := mu[h*dh:][:dh], mu[d+h*dh:][:dh], xr[2*d+h*dh:][:dh]
				yq, yk, yv := yr[2*h*dh:][:2*dh], yr[2*d+2*h*dh:][:2*dh], yr[4*d+2*h*dh:][:2*dh]
				for c := range dh {
					cdc, sdc := cd[h*dh+c], sd[h*dh+c]
					cq, sq := cp[c]*cdc-sp[c]*sdc, sp[c]*cdc+cp[c]*sdc // of p theta_c + delta
					m := math.Sqrt2 * float64(mq[c])
					yq[c], yq[dh+c] = T(m*cq), T(m*sq)
					yk[c], yk[dh+c] = T(float64(mk[c])*cp[c]), T(float64(mk[c])*sp[c])
				}
				copy(yv, v)
				clear(yv[dh:])
			}
		}
	})
}

// softplusRow sets mu and sig to softplus and sigmoid of x: in float32
// from vmath's exponentials and vmath.Log1pUnit (relative error about
// 1e-6), in float64 from the math package's; e is scratch of len(x).
func softplusRow[T float](x, mu, sig []T, e []float32) {
	x32, ok := any(x).([]float32)
	if !ok {
		for i, z := range x {
			m, s := softplusSigmoid(float64(z))
			mu[i], sig[i] = T(m), T(s)
		}
		return
	}
	for i, z := range x32 {
		e[i] = -max(z, -z)
	}
	vmath.Exp(e, e)
	for i, z := range x32 {
		ei := float64(e[i])
		m, s := vmath.Log1pUnit(ei), 1/(1+ei)
		if z > 0 {
			m += float64(z)
		} else {
			s = ei * s
		}
		mu[i], sig[i] = T(m), T(s)
	}
}

// softplusSigmoid returns softplus(z) = ln(1 + e^z) and its derivative
// sigmoid(z), without overflow.
func softplusSigmoid(z float64) (sp, sig float64) {
	e := math.Exp(-math.Abs(z))
	if z > 0 {
		return z + math.Log1p(e), 1 / (1 + e)
	}
	return math.Log1p(e), e / (1 + e)
}

func (o *polarOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	o.keep = true
	b := &polarGradOp{fwd: o}
	b.opBase = opBase{key: "PolarGrad" + o.key[len("Polar"):], arity: 4, typ: hm.NewFnType(tt(2, tvA), tt(2, tvA), tt(2, tvA), tt(2, tvA), tt(2, tvA))}
	// The forward output is an input only to order the two: the softplus
	// values kept must be this step's.
	dqkv, err := G.ApplyOp(b, inputs[0], inputs[1], output, grad)
	if err != nil {
		return nil, err
	}
	p := &polarPhaseGradOp{fwd: o}
	p.opBase = opBase{key: "PolarPhaseGrad" + o.key[len("Polar"):], arity: 2, typ: hm.NewFnType(tt(2, tvA), tt(2, tvA), tt(2, tvA))}
	dPhase, err := G.ApplyOp(p, inputs[1], dqkv)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dqkv, dPhase}, nil
}

// polarGradOp computes d(qkv) from qkv, the phases and the output's
// gradient, and the phases' gradient, kept in the forward op.
type polarGradOp struct {
	opBase
	fwd *polarOp
}

func (o *polarGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return shapeOf(o.key, in, 0)
}

func (o *polarGradOp) Do(vals ...G.Value) (G.Value, error) {
	f := o.fwd
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	x, phase, offsets, err := f.inputs(o.key, &f.opBase, vals[:2])
	if err != nil {
		return nil, err
	}
	g, err := dense(o.key, vals[3])
	if err != nil {
		return nil, err
	}
	dx := o.output(x.Dtype(), x.Shape()...)
	if f.dPhase == nil || !f.dPhase.Shape().Eq(phase.Shape()) || f.dPhase.Dtype() != phase.Dtype() {
		f.dPhase = newLike(phase.Dtype(), phase.Shape()...)
	}
	switch xs := x.Data().(type) {
	case []float32:
		err = polarGradRows(f, xs, phase.Data().([]float32), g.Data().([]float32), dx.Data().([]float32), f.dPhase.Data().([]float32), offsets)
	case []float64:
		err = polarGradRows(f, xs, phase.Data().([]float64), g.Data().([]float64), dx.Data().([]float64), f.dPhase.Data().([]float64), offsets)
	default:
		err = fmt.Errorf("%s: unsupported dtype %v", o.key, x.Dtype())
	}
	if err != nil {
		return nil, err
	}
	return dx, nil
}

// polarGradRows writes d(qkv) into dx and the phases' gradient into
// dPhase, from the output's gradient g. Rows go in chunks whose phase
// gradients are added in chunk order: the same bits on any number of cores.
func polarGradRows[T float](o *polarOp, x, phase, g, dx, dPhase []T, offsets []int) error {
	d, dh := o.heads*o.dh, o.dh
	rows := len(x) / (3 * d)
	const chunk = 64
	parts := make([]float64, ((rows+chunk-1)/chunk)*d)
	cd, sd := phaseSincos(phase)
	mus, _ := o.mu.([]T)
	sigs, _ := o.sig.([]T)
	if len(mus) != rows*2*d || len(sigs) != rows*2*d {
		return fmt.Errorf("%s: no softplus values kept from the forward pass", o.key)
	}
	parallelChunks((rows+chunk-1)/chunk, 1, func(_, lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			acc := parts[ch*d:][:d]
			for r := ch * chunk; r < min(rows, (ch+1)*chunk); r++ {
				p := offsets[r/o.qLen] + r%o.qLen
				cp, sp := o.tab.cos[p*dh:][:dh], o.tab.sin[p*dh:][:dh]
				gr, dr := g[r*6*d:][:6*d], dx[r*3*d:][:3*d]
				mu, sig := mus[r*2*d:][:2*d], sigs[r*2*d:][:2*d]
				for h := range o.heads {
					gq, gk, gv := gr[2*h*dh:][:2*dh], gr[2*d+2*h*dh:][:2*dh], gr[4*d+2*h*dh:][:2*dh]
					dq, dk, dv := dr[h*dh:][:dh], dr[d+h*dh:][:dh], dr[2*d+h*dh:][:dh]
					for c := range dh {
						mq, sgq := float64(mu[h*dh+c]), float64(sig[h*dh+c])
						cdc, sdc := cd[h*dh+c], sd[h*dh+c]
						cq, sq := cp[c]*cdc-sp[c]*sdc, sp[c]*cdc+cp[c]*sdc
						a, b := float64(gq[c]), float64(gq[dh+c])
						dq[c] = T(math.Sqrt2 * sgq * (a*cq + b*sq))
						acc[h*dh+c] += math.Sqrt2 * mq * (b*cq - a*sq)
						sgk := float64(sig[d+h*dh+c])
						dk[c] = T(sgk * (float64(gk[c])*cp[c] + float64(gk[dh+c])*sp[c]))
					}
					copy(dv, gv[:dh])
				}
			}
		}
	})
	clear(dPhase)
	for ch := 0; ch*d < len(parts); ch++ {
		for i, v := range parts[ch*d:][:d] {
			dPhase[i] += T(v)
		}
	}
	return nil
}

// polarPhaseGradOp returns the phases' gradient computed by polarGradOp,
// which its second input orders before it.
type polarPhaseGradOp struct {
	opBase
	fwd *polarOp
}

func (o *polarPhaseGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return shapeOf(o.key, in, 0)
}

func (o *polarPhaseGradOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	if o.fwd.dPhase == nil {
		return nil, fmt.Errorf("%s: the backward pass has not run", o.key)
	}
	return o.fwd.dPhase, nil
}

// PolarHeads takes each head's output back from the attention over
// Polar's doubled heads: x is (rows, 2D), head h's output in columns
// 2h d_head..2h d_head+d_head-1; the result is (rows, D).
func PolarHeads(x *G.Node, heads int) (*G.Node, error) {
	s := x.Shape()
	if len(s) != 2 || heads < 1 || s[1]%(2*heads) != 0 {
		return nil, fmt.Errorf("pope: attention output of shape %v is not rows x %d heads of an even width", s, heads)
	}
	op := &polarHeadsOp{heads: heads, dh: s[1] / 2 / heads}
	op.opBase = opBase{key: fmt.Sprintf("PolarHeads{heads=%d}", heads), arity: 1, typ: hm.NewFnType(tt(2, tvA), tt(2, tvA))}
	return G.ApplyOp(op, x)
}

// polarHeadsOp selects the heads' outputs (back false) or, as its own
// gradient, puts them back with zeros beside them (back true).
type polarHeadsOp struct {
	opBase
	heads, dh int
	back      bool
}

func (o *polarHeadsOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(o.key, in, 0)
	if err != nil {
		return nil, err
	}
	if o.back {
		return tensor.Shape{s[0], 2 * s[1]}, nil
	}
	return tensor.Shape{s[0], s[1] / 2}, nil
}

func (o *polarHeadsOp) DiffWRT(int) []bool { return []bool{true} }

func (o *polarHeadsOp) SymDiff(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	b := &polarHeadsOp{heads: o.heads, dh: o.dh, back: true}
	b.opBase = opBase{key: "PolarHeadsGrad" + o.key[len("PolarHeads"):], arity: 1, typ: hm.NewFnType(tt(2, tvA), tt(2, tvA))}
	n, err := G.ApplyOp(b, grad)
	return G.Nodes{n}, err
}

func (o *polarHeadsOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	x, err := dense(o.key, vals[0])
	if err != nil {
		return nil, err
	}
	s := x.Shape()
	d := o.heads * o.dh
	if want := map[bool]int{false: 2 * d, true: d}[o.back]; len(s) != 2 || s[1] != want {
		return nil, fmt.Errorf("%s: input of shape %v", o.key, s)
	}
	rows := s[0]
	switch xs := x.Data().(type) {
	case []float32:
		out := o.output(x.Dtype(), rows, map[bool]int{false: d, true: 2 * d}[o.back])
		polarSelect(o, xs, out.Data().([]float32), rows)
		return out, nil
	case []float64:
		out := o.output(x.Dtype(), rows, map[bool]int{false: d, true: 2 * d}[o.back])
		polarSelect(o, xs, out.Data().([]float64), rows)
		return out, nil
	}
	return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, x.Dtype())
}

func polarSelect[T float](o *polarHeadsOp, x, out []T, rows int) {
	d, dh := o.heads*o.dh, o.dh
	for r := range rows {
		for h := range o.heads {
			if o.back {
				y := out[r*2*d+2*h*dh:][:2*dh]
				copy(y, x[r*d+h*dh:][:dh])
				clear(y[dh:])
			} else {
				copy(out[r*d+h*dh:][:dh], x[r*2*d+2*h*dh:][:dh])
			}
		}
	}
}
