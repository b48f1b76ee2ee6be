package position

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"gorgonia.org/tensor"
)

// FireScheme is FIRE, functional interpolation for relative positions (Li
// et al., ICLR 2024): head h adds to the score of the query at position i on
// the key at position j <= i
//
//	b_h(i, j) = f_h(psi(i - j) / psi(max(L, i))),  psi(x) = log(1 + c x),
//	f(u) = W2^T relu(W1 u + b1) + b2,
//
// an MLP 1 -> FireWidth (ReLU) -> heads, with c and the threshold L learned
// too. Up to L the normaliser is psi(L) and the bias depends on the distance
// only; beyond L it is psi(i) (the paper's progressive interpolation: every
// row maps its keys onto [0, 1]).
//
// The parameters of a layer are one flat tensor of FireParamLen(heads)
// values, laid out as FireLayout says: W1 (FireWidth), b1 (FireWidth), W2
// (FireWidth x heads, row k for hidden unit k), b2 (heads), c, L. They must
// satisfy c > 0 and L > 0, which Project maintains (with margins, see
// FireMinC and FireMinL).
//
// The kernel bias has two paths. Rows at positions i <= L read per-head
// distance tables built for each call (normaliser psi(L), keys up to L
// back); rows beyond L evaluate f key by key in the kernel. Both use f in
// its piecewise-linear form: relu makes f_h linear between the breakpoints
// -b1_k/W1_k of the units, f_h(u) = A_hs u + B_hs on segment s. Along a
// row u falls monotonically: the keys split into at most FireWidth+1 runs,
// one per segment, found by binary search, and on a run the bias is
// (A_hs/psi(i)) psi(d) + B_hs, a multiply-add per key. Backward, rows
// beyond L accumulate, per head and segment, sum dS, sum dS u and
// sum dS du/dc into slots after the tables' gradient; ParamGrad adds the
// tables' gradient (through psi(L), which alone gives L's gradient) to
// those slots and maps them to the parameters.
//
// At an integer L the bias is not differentiable in L (row i = L switches
// normaliser there); its gradient is then the derivative from above, row
// L counting with the rows within L.
type FireScheme struct {
	// L0 is the unit of the threshold: the last parameter is L/L0, so that
	// with L0 = the training length it starts at 1 and moves at Adam's
	// relative pace (stored directly, L ~ 512 would move by about the
	// learning rate per step: not at all). 0 means 1: the parameter is L.
	L0 int
}

// l0 is L0, 1 for zero.
func (s FireScheme) l0() float64 {
	if s.L0 <= 0 {
		return 1
	}
	return float64(s.L0)
}

// FIRE settings.
const (
	// FireWidth is the width of the MLP's hidden layer.
	FireWidth = 32
	// FireInitC is the initial c, as in the paper's implementation.
	FireInitC = 0.1
	// FireMinC is the smallest c Project leaves. c must stay positive: at
	// c = 0 the ratio u = psi(d)/psi(L) is 0/0, and for c < 0 psi is
	// undefined from distance 1/|c| on. As c falls, u tends smoothly to
	// d/L (psi is evaluated with log1p, accurate for small c x), so the
	// floor only has to be positive; 1e-3, 1% of the initial value, keeps
	// that limit within reach without constraining the learned shape.
	FireMinC = 1e-3
	// FireMinL is the smallest L Project leaves. Every L in (0, 1] gives
	// the same biases (only row 0, whose one key has u = 0, sees a
	// threshold below 1), so the floor loses nothing and keeps psi(L)
	// away from 0.
	FireMinL = 1
)

// fireSegments is the number of linear pieces f can have: one more than
// the number of hidden units.
const fireSegments = FireWidth + 1

// FireLayout gives the index of each group of FIRE parameters in the flat
// tensor: W1 at W1..W1+FireWidth-1, b1 at B1.., W2 (FireWidth x heads,
// W2[k][h] at W2+k*heads+h), b2 at B2..B2+heads-1, then c and L.
type FireLayout struct {
	W1, B1, W2, B2, C, L int
}

// NewFireLayout returns the layout for heads heads.
func NewFireLayout(heads int) FireLayout {
	w2 := 2 * FireWidth
	b2 := w2 + FireWidth*heads
	return FireLayout{W1: 0, B1: FireWidth, W2: w2, B2: b2, C: b2 + heads, L: b2 + heads + 1}
}

// FireParamLen is the number of FIRE parameters of a layer of heads heads:
// FireWidth*(2+heads) + heads + 2.
func FireParamLen(heads int) int { return FireWidth*(2+heads) + heads + 2 }

// Init returns a layer's initial FIRE parameters: the MLP as PyTorch's
// default nn.Linear initialisation, which the paper's implementation uses
// (a scaled uniform: W1, b1 ~ U(-1, 1) for fan-in 1; W2, b2 ~ U(-b, b) with
// bound b = 1/sqrt(FireWidth)), c = FireInitC and L = trainLen (stored as
// trainLen/L0), projected.
func (s FireScheme) Init(rng *rand.Rand, heads, trainLen int) []float32 {
	p := make([]float32, FireParamLen(heads))
	lay := NewFireLayout(heads)
	uniform := func(bound float64) float32 { return float32((2*rng.Float64() - 1) * bound) }
	for k := 0; k < FireWidth; k++ {
		p[lay.W1+k] = uniform(1)
		p[lay.B1+k] = uniform(1)
	}
	bound := 1 / math.Sqrt(FireWidth)
	for i := lay.W2; i < lay.C; i++ {
		p[i] = uniform(bound)
	}
	p[lay.C] = FireInitC
	p[lay.L] = float32(float64(trainLen) / s.l0())
	s.Project(p)
	return p
}

// Project implements Projector: c (the next-to-last parameter) is raised to
// at least FireMinC and L (the last, in units of L0) to at least FireMinL,
// NaN included. The MLP is unconstrained.
func (s FireScheme) Project(params []float32) {
	n := len(params)
	if !(params[n-2] >= FireMinC) {
		params[n-2] = FireMinC
	}
	if minL := float32(FireMinL / s.l0()); !(params[n-1] >= minL) {
		params[n-1] = minL
	}
}

// Name implements BiasScheme.
func (s FireScheme) Name() string { return fmt.Sprintf("fire(L0=%g)", s.l0()) }

// CheckParams implements BiasScheme: the parameters are one flat tensor of
// FireParamLen(heads) values.
func (FireScheme) CheckParams(p tensor.Shape, call BiasCall) error {
	heads := call.Heads
	if len(p) != 1 || p[0] != FireParamLen(heads) {
		return fmt.Errorf("FIRE parameters have shape %v, want (%d) for %d heads", p, FireParamLen(heads), heads)
	}
	return nil
}

// Trainable implements BiasScheme: the MLP, c and L are learned.
func (FireScheme) Trainable() bool { return true }

// Bias32 implements BiasScheme (see fireTile).
func (s FireScheme) Bias32(p []float32, heads, kLen int) KernelBias[float32] {
	return fireTile(s, p, heads, kLen)
}

// Bias64 implements BiasScheme (see fireTile).
func (s FireScheme) Bias64(p []float64, heads, kLen int) KernelBias[float64] {
	return fireTile(s, p, heads, kLen)
}

// ParamGrad32 implements BiasScheme (see fireParamGrad).
func (s FireScheme) ParamGrad32(p, biasGrad, out []float32) { fireParamGrad(s, p, biasGrad, out) }

// ParamGrad64 implements BiasScheme (see fireParamGrad).
func (s FireScheme) ParamGrad64(p, biasGrad, out []float64) { fireParamGrad(s, p, biasGrad, out) }

// fireModel is the FIRE function of one parameter vector in float64, with
// f in piecewise-linear form: breaks are the breakpoints -b1_k/W1_k of the
// units with W1_k != 0, ascending; segment s is the u with exactly s
// breakpoints at or below it (s = 0 below all of them); on it
// f_h(u) = slope[h*fireSegments+s]*u + icpt[h*fireSegments+s].
type fireModel struct {
	heads          int
	w1, b1, w2, b2 []float64
	c, l           float64
	breaks         []float64
	rank           []int // rank[k]: position of unit k's breakpoint in breaks (-1: none)
	slope, icpt    []float64
}

// newFireModel reads the parameters p (the FireLayout of their length;
// the model keeps slices of p), with the threshold L = p[L] * l0, and
// computes the breakpoints and each head's slope and intercept on every
// segment.
func newFireModel(p []float64, l0 float64) *fireModel {
	heads := (len(p) - 2*FireWidth - 2) / (FireWidth + 1)
	lay := NewFireLayout(heads)
	m := &fireModel{heads: heads, w1: p[lay.W1:lay.B1], b1: p[lay.B1:lay.W2], w2: p[lay.W2:lay.B2], b2: p[lay.B2:lay.C],
		c: p[lay.C], l: p[lay.L] * l0, rank: make([]int, FireWidth)}
	var units []int
	for k, w := range m.w1 {
		m.rank[k] = -1
		if w != 0 {
			units = append(units, k)
		}
	}
	brk := func(k int) float64 { return -m.b1[k] / m.w1[k] }
	slices.SortStableFunc(units, func(a, b int) int {
		if ba, bb := brk(a), brk(b); ba < bb {
			return -1
		} else if ba > bb {
			return 1
		}
		return 0
	})
	for r, k := range units {
		m.rank[k] = r
		m.breaks = append(m.breaks, brk(k))
	}
	m.slope, m.icpt = make([]float64, heads*fireSegments), make([]float64, heads*fireSegments)
	for h := 0; h < heads; h++ {
		for s := 0; s <= len(m.breaks); s++ {
			a, b := 0.0, m.b2[h]
			for k := 0; k < FireWidth; k++ {
				if m.active(s, k) {
					w := m.w2[k*heads+h]
					a += w * m.w1[k]
					b += w * m.b1[k]
				}
			}
			m.slope[h*fireSegments+s], m.icpt[h*fireSegments+s] = a, b
		}
	}
	return m
}

// active reports whether hidden unit k is on (W1_k u + b1_k > 0) on
// segment s: for W1_k > 0 above its breakpoint, for W1_k < 0 below it, and
// for W1_k = 0 everywhere or nowhere as b1_k. At a breakpoint itself the
// unit's value is 0 either way.
func (m *fireModel) active(s, k int) bool {
	switch {
	case m.w1[k] > 0:
		return m.rank[k] < s
	case m.w1[k] < 0:
		return m.rank[k] >= s
	}
	return m.b1[k] > 0
}

// segment returns the segment of u: the number of breakpoints <= u.
func (m *fireModel) segment(u float64) int {
	return sort.Search(len(m.breaks), func(i int) bool { return m.breaks[i] > u })
}

// f returns f_h(u).
func (m *fireModel) f(h int, u float64) float64 {
	s := h*fireSegments + m.segment(u)
	return m.slope[s]*u + m.icpt[s]
}

// psi is log(1 + c x).
func (m *fireModel) psi(x float64) float64 { return math.Log1p(m.c * x) }

// dpsi is d psi(x) / dc = x / (1 + c x).
func (m *fireModel) dpsi(x float64) float64 { return x / (1 + m.c*x) }

// tableLen is the number of distances the tables need for n keys: rows at
// positions i <= L look back at most floor(L) keys.
func (m *fireModel) tableLen(n int) int {
	switch {
	case !(m.l >= 0): // also NaN: no row uses the tables
		return 0
	case m.l >= float64(n-1):
		return n
	}
	return int(m.l) + 1
}

// fireBias is FIRE's kernel bias for up to n = len(psi) keys: the distance
// tables of the rows at positions <= L (nt distances each) and, for the
// rows beyond, psi(d) for every distance d < n, in float64 and reversed in
// T (psiRev[n-1-d], so that a row's keys read a contiguous slice).
type fireBias[T float] struct {
	m      *fireModel
	table  distanceBias[T]
	nt     int
	psi    []float64
	psiRev []T
}

// fireTile returns FIRE's kernel bias for n keys.
func fireTile[T float](s FireScheme, p []T, heads, n int) fireBias[T] {
	m := newFireModel(float64s(p), s.l0())
	psi := make([]float64, n)
	psiRev := make([]T, n)
	for d := range psi {
		psi[d] = m.psi(float64(d))
		psiRev[n-1-d] = T(psi[d])
	}
	nt := m.tableLen(n)
	inv := 1 / m.psi(m.l)
	table := newDistanceTables[T](heads, nt, func(h, d int) float64 { return m.f(h, psi[d]*inv) })
	return fireBias[T]{m: m, table: table, nt: nt, psi: psi, psiRev: psiRev}
}

// direct reports whether the row at position pos is beyond L.
func (b fireBias[T]) direct(pos int) bool { return !(float64(pos) <= b.m.l) }

// runs splits the keys j0..j0+n-1 of the query at pos (beyond L; inv =
// 1/psi(pos)) into runs of one segment of f and calls fn(s, lo, hi) for
// each non-empty run, keys j0+lo..j0+hi-1 on segment s, farthest first.
// Along the row u = psi(d) inv falls, so the segments do too; each run's
// end is found by binary search on the breakpoint below it.
func (b fireBias[T]) runs(pos, j0, n int, inv float64, fn func(s, lo, hi int)) {
	m := b.m
	d0 := pos - j0
	s := m.segment(b.psi[d0] * inv)
	lo := 0
	for ; s > 0; s-- {
		br := m.breaks[s-1]
		hi := lo + sort.Search(n-lo, func(x int) bool { return b.psi[d0-lo-x]*inv < br })
		if hi > lo {
			fn(s, lo, hi)
		}
		if lo = hi; lo == n {
			return
		}
	}
	fn(0, lo, n)
}

// add adds a row's biases: from the tables within L; beyond, on each run
// of segment s, A_hs u + B_hs = (A_hs inv) psi(d) + B_hs, key by key.
func (b fireBias[T]) Add(h, pos, j0 int, row []T) {
	if !b.direct(pos) {
		b.table.Add(h, pos, j0, row)
		return
	}
	inv := 1 / b.psi[pos]
	t := len(b.psiRev) - 1 - (pos - j0)
	b.runs(pos, j0, len(row), inv, func(s, lo, hi int) {
		k := h*fireSegments + s
		a, c := T(b.m.slope[k]*inv), T(b.m.icpt[k])
		r := row[lo:hi]
		p := b.psiRev[t+lo:][:len(r)]
		x := 0 // four keys a step: about twice as fast as one
		for ; x+4 <= len(r); x += 4 {
			r[x] += a*p[x] + c
			r[x+1] += a*p[x+1] + c
			r[x+2] += a*p[x+2] + c
			r[x+3] += a*p[x+3] + c
		}
		for ; x < len(r); x++ {
			r[x] += a*p[x] + c
		}
	})
}

// gradLen is the tables' entries (heads x nt) followed by three slots per
// head and segment for the rows beyond L.
func (b fireBias[T]) GradLen() int { return b.m.heads * (b.nt + 3*fireSegments) }

// accumulate adds the gradient of a row's biases: into the tables' layout
// for a row at a position <= L; otherwise, per run of keys on one segment
// s, sum dS, sum dS u and sum dS du/dc (summed in float64) into the slots
// of (h, s), with
//
//	du/dc = (dpsi(d) - u dpsi(i)) / psi(i),  dpsi(x) = x / (1 + c x).
func (b fireBias[T]) Accumulate(acc []T, h, pos, j0 int, ds []T) {
	m := b.m
	if !b.direct(pos) {
		b.table.Accumulate(acc[:m.heads*b.nt], h, pos, j0, ds)
		return
	}
	slots := acc[m.heads*b.nt+h*3*fireSegments:][:3*fireSegments]
	inv := 1 / b.psi[pos]
	dpsiPos := m.dpsi(float64(pos))
	d0 := pos - j0
	b.runs(pos, j0, len(ds), inv, func(s, lo, hi int) {
		var s0, s1, s2 float64
		for x := lo; x < hi; x++ {
			d := d0 - x
			u := b.psi[d] * inv
			g := float64(ds[x])
			s0 += g
			s1 += g * u
			s2 += g * (m.dpsi(float64(d)) - u*dpsiPos) * inv
		}
		slots[3*s] += T(s0)
		slots[3*s+1] += T(s1)
		slots[3*s+2] += T(s2)
	})
}

// fireParamGrad maps the bias gradient (the layout of gradLen) to the
// parameters. The tables' entries (distance d, normaliser psi(L),
// u = psi(d)/psi(L)) are added to the slots of their segments like the rows
// beyond L, and give L's gradient, through du/dL = -u c / ((1 + c L) psi(L)).
// Then for every head h and segment s with slots (S0, S1, S2) = (sum dS,
// sum dS u, sum dS du/dc), and every unit k on in s:
//
//	db2_h += S0,  dc += A_hs S2,
//	dW2_kh += W1_k S1 + b1_k S0,  dW1_k += W2_kh S1,  db1_k += W2_kh S0.
func fireParamGrad[T float](s FireScheme, params, biasGrad, out []T) {
	p, g := float64s(params), float64s(biasGrad)
	m := newFireModel(p, s.l0())
	heads := m.heads
	nt := len(g)/heads - 3*fireSegments
	slots := append([]float64(nil), g[heads*nt:]...)
	var dL float64
	if nt > 0 {
		inv := 1 / m.psi(m.l)
		dpsiL := m.dpsi(m.l)
		var sum float64
		for d := 0; d < nt; d++ {
			u := m.psi(float64(d)) * inv
			s := m.segment(u)
			dudc := (m.dpsi(float64(d)) - u*dpsiL) * inv
			for h := 0; h < heads; h++ {
				gd := g[h*nt+nt-1-d]
				sl := slots[(h*fireSegments+s)*3:]
				sl[0] += gd
				sl[1] += gd * u
				sl[2] += gd * dudc
				sum += gd * m.slope[h*fireSegments+s] * u
			}
		}
		dL = -sum * m.c / (1 + m.c*m.l) * inv
	}
	lay := NewFireLayout(heads)
	grad := make([]float64, len(p))
	for h := 0; h < heads; h++ {
		for s := 0; s < fireSegments; s++ {
			sl := slots[(h*fireSegments+s)*3:][:3]
			if sl[0] == 0 && sl[1] == 0 && sl[2] == 0 {
				continue
			}
			grad[lay.B2+h] += sl[0]
			grad[lay.C] += m.slope[h*fireSegments+s] * sl[2]
			for k := 0; k < FireWidth; k++ {
				if !m.active(s, k) {
					continue
				}
				w2 := m.w2[k*heads+h]
				grad[lay.W2+k*heads+h] += m.w1[k]*sl[1] + m.b1[k]*sl[0]
				grad[lay.W1+k] += w2 * sl[1]
				grad[lay.B1+k] += w2 * sl[0]
			}
		}
	}
	grad[lay.L] = dL * s.l0() // dL/d(L/L0) = L0 dL/dL
	storeAs(out, grad)
}

// FirePosition is the scheme "fire" (Li et al., ICLR 2024): FireScheme's
// bias, with its threshold in units of the training length, from each
// layer's own parameters, stored as "layers.<l>.attn.fire", initialised by
// FireScheme.Init and kept in their domain by FireScheme.Project after
// every optimizer step.
type FirePosition struct{ NoPosition }

// firePart is the name of a layer's FIRE parameters within the layer.
const firePart = "attn.fire"

// Name implements Scheme.
func (FirePosition) Name() string { return "fire" }

// bias is FIRE with its threshold in units of the training length.
func (FirePosition) bias(shape ModelShape) FireScheme { return FireScheme{L0: shape.TrainLen} }

// LayerParams implements Scheme: one flat tensor of
// FireParamLen(heads) values, without weight decay.
func (p FirePosition) LayerParams(shape ModelShape) []ParamSpec {
	s, h := p.bias(shape), shape.Heads
	return []ParamSpec{{Name: firePart, Shape: []int{FireParamLen(h)},
		Init:    func(rng *rand.Rand) []float32 { return s.Init(rng, h, shape.TrainLen) },
		Project: s.Project}}
}

// AttentionBias implements Scheme: FireScheme on the layer's
// parameters.
func (p FirePosition) AttentionBias(shape ModelShape) (BiasScheme, string) {
	return p.bias(shape), firePart
}

// EvalBytes implements Scheme: each layer's normalised distances of the keys (a float64 and a float32 per key).
func (FirePosition) EvalBytes(shape ModelShape, _, length int) int64 {
	return int64(shape.Layers) * int64(length) * 12
}
