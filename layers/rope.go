package layers

import (
	"fmt"
	"math"
	"slices"

	"github.com/alibi-go/alibi/layers/position"
	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// RopeBase is the base of the rotary frequencies.
const RopeBase = 10000

// Rope applies the rotary position embedding (Su et al., RoFormer) to the
// queries and keys of qkv, laid out as the Attention op takes it: (batch *
// queryLen, 3D) rows of queries, keys and values side by side, head h in
// columns h*d_head..(h+1)*d_head-1 of each block. The values pass through
// unchanged. Every head of a token at position p is rotated pair by pair in
// the half-split (GPT-NeoX, Hugging Face rotate_half) layout: for
// k = 0..d_head/2-1, with a = p * theta_k and theta_k = 10000^(-2k/d_head),
//
//	x'_k          = x_k cos a - x_{k+d_head/2} sin a,
//	x'_{k+d_head/2} = x_k sin a + x_{k+d_head/2} cos a,
//
// the whole head dimension (which must be even) being rotated. The angles
// are computed in float64 and their cosines and sines kept in a table that
// grows by doubling. The scores q'.k' then depend on the positions only
// through their difference.
//
// With pos nil, row t of each sequence of queryLen rows stands at position
// t. With pos (incremental decoding with a key/value cache), batch row r's
// tokens stand at pos.Offset(r), pos.Offset(r)+1, ..., read when the op
// runs; the batch must be pos's selected sequences.
//
// The gradient is the rotation by -a of the output gradient (values again
// unchanged). Rope has no parameters.
func Rope(qkv *G.Node, heads, queryLen int, pos *Positions) (*G.Node, error) {
	return RopeScaled(qkv, heads, queryLen, pos, RopeScaling{})
}

// RopeScaling replaces Rope's frequencies and scales its output: an
// evaluation-time extension of a rotary model (position.RotaryExtension).
// The zero value is Rope itself.
type RopeScaling struct {
	// Theta, when not nil, holds the d_head/2 frequencies that replace
	// 10000^(-2k/d_head).
	Theta []float64
	// Scale, when not 0, multiplies the rotated queries and keys (YaRN's
	// attention temperature); the values pass through unchanged.
	Scale float64
	// Dynamic, when not nil, replaces Theta and Scale with frequencies that
	// follow the length of each sequence so far (dynamic NTK): the rows of
	// a sequence of n tokens are rotated with those of n. In a full pass
	// that is the pass's length; in decoding, the sequence's length after
	// the new rows, and its cached keys are rotated again, from their
	// unrotated values, whenever the frequencies change (see KVCache), so
	// that decoding gives the full pass over the same prefix.
	Dynamic *DynamicRope
	// shared, when set (Shared), holds the one table of cosines and sines
	// of every layer given this RopeScaling.
	shared *sharedRopeTable
}

// sharedRopeTable is the table the layers of one graph share.
type sharedRopeTable struct{ tab *ropeTable }

// Shared returns sc made to keep one table of cosines and sines for every
// layer it is given to, instead of one per layer: the layers of one graph
// rotate by the same angles, and the table (16 bytes per position and
// frequency) would otherwise grow with the depth. Dynamic frequencies keep
// their own shared tables either way.
func (sc RopeScaling) Shared() RopeScaling {
	sc.shared = &sharedRopeTable{}
	return sc
}

// DynamicRope is the rotation of a sequence by its length so far: a
// factor of the length, and the frequencies and scale of a factor. One
// DynamicRope serves every layer of a graph, which share its tables.
type DynamicRope struct {
	factor func(n int) float64
	at     func(factor float64) (theta []float64, scale float64)
	tables map[float64]*ropeTable
}

// NewDynamicRope returns the rotation whose frequencies for a sequence of
// n tokens are at(factor(n)).
func NewDynamicRope(factor func(n int) float64, at func(factor float64) (theta []float64, scale float64)) *DynamicRope {
	return &DynamicRope{factor: factor, at: at, tables: map[float64]*ropeTable{}}
}

// table returns the factor of a sequence of n tokens and its table, grown
// to n positions, for heads of width 2*half. It keeps the tables of a
// few factors: decoding past the training length meets a new one every
// step.
func (d *DynamicRope) table(n, half int) (float64, *ropeTable, error) {
	f := d.factor(n)
	t, ok := d.tables[f]
	if !ok {
		theta, scale := d.at(f)
		if len(theta) != half {
			return 0, nil, fmt.Errorf("rope: %d frequencies for heads of width %d", len(theta), 2*half)
		}
		if len(d.tables) >= 4 {
			clear(d.tables)
		}
		t = &ropeTable{half: half, theta: theta, scale: scale}
		d.tables[f] = t
	}
	t.grow(n)
	return f, t, nil
}

// RopeScaled is Rope with the frequencies and scale of sc.
func RopeScaled(qkv *G.Node, heads, queryLen int, pos *Positions, sc RopeScaling) (*G.Node, error) {
	return ropeCached(qkv, heads, queryLen, pos, sc, nil, nil)
}

// ropeCached is RopeScaled for an attention layer whose key/value cache is
// cache (nil without one): with dynamic frequencies, it keeps the cache's
// keys rotated to the frequencies of the new rows (KVCache.rotateKeys).
func ropeCached(qkv *G.Node, heads, queryLen int, pos *Positions, sc RopeScaling, cache *KVCache, drawn *DrawnPositions) (*G.Node, error) {
	if heads < 1 || queryLen < 1 {
		return nil, fmt.Errorf("rope: heads (%d) and query length (%d) must be positive", heads, queryLen)
	}
	s := qkv.Shape()
	if len(s) != 2 || s[0]%queryLen != 0 || s[1]%3 != 0 || (s[1]/3)%heads != 0 || (s[1]/3/heads)%2 != 0 {
		return nil, fmt.Errorf("rope: qkv of shape %v is not batch x %d rows of 3 x %d heads x an even d_head", s, queryLen, heads)
	}
	half := s[1] / 3 / heads / 2
	tab := &ropeTable{half: half, theta: sc.Theta, scale: sc.Scale}
	if tab.theta == nil {
		tab.theta = position.RopeTheta(2*half, RopeBase)
	} else if len(tab.theta) != half {
		return nil, fmt.Errorf("rope: %d frequencies for heads of width %d", len(tab.theta), 2*half)
	}
	if tab.scale == 0 {
		tab.scale = 1
	}
	if sh := sc.shared; sh != nil {
		if t := sh.tab; t != nil && t.half == tab.half && t.scale == tab.scale && slices.Equal(t.theta, tab.theta) {
			tab = t
		} else {
			sh.tab = tab
		}
	}
	if drawn != nil && (pos != nil || sc.Dynamic != nil || len(drawn.P) != queryLen) {
		return nil, fmt.Errorf("rope: drawn positions are for training graphs, one per row of the %d", queryLen)
	}
	op := &ropeOp{heads: heads, qLen: queryLen, pos: pos, tab: tab, dyn: sc.Dynamic, drawn: drawn}
	if sc.Dynamic != nil {
		op.cache = cache
	}
	op.opBase = opBase{key: fmt.Sprintf("Rope{heads=%d, q=%d, pos=%p, tab=%p, drawn=%p}", heads, queryLen, pos, tab, drawn), arity: 1,
		typ: hm.NewFnType(tt(2, tvA), tt(2, tvA))}
	return G.ApplyOp(op, qkv)
}

// ropeTable holds scale·cos(p theta_k) and scale·sin(p theta_k) for
// positions p < n, at cos[p*half+k].
type ropeTable struct {
	half     int
	theta    []float64
	scale    float64
	n        int
	cos, sin []float64
}

// grow makes the table cover positions below n, doubling its length.
func (t *ropeTable) grow(n int) {
	if n <= t.n {
		return
	}
	n = max(n, 2*t.n)
	cos, sin := make([]float64, n*t.half), make([]float64, n*t.half)
	copy(cos, t.cos)
	copy(sin, t.sin)
	for p := t.n; p < n; p++ {
		for k, th := range t.theta {
			s, c := math.Sincos(float64(p) * th)
			sin[p*t.half+k], cos[p*t.half+k] = t.scale*s, t.scale*c
		}
	}
	t.n, t.cos, t.sin = n, cos, sin
}

// ropeOp is the forward op; ropeGradOp, sharing its table, the backward.
type ropeOp struct {
	opBase
	heads, qLen int
	pos         *Positions
	tab         *ropeTable   // the frequencies of every row, unless dyn
	dyn         *DynamicRope // the frequencies by sequence length, or nil
	cache       *KVCache     // with dyn: the layer's cache, or nil
	drawn       *DrawnPositions
}

func (o *ropeOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return sameShape(o.key, in, 0)
}

func (o *ropeOp) Do(vals ...G.Value) (G.Value, error) { return o.rotate(o.key, &o.opBase, vals, 1) }

func (o *ropeOp) DiffWRT(int) []bool { return []bool{true} }

func (o *ropeOp) SymDiff(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	b := &ropeGradOp{fwd: o}
	b.opBase = opBase{key: "RopeGrad" + o.key[len("Rope"):], arity: 1, typ: hm.NewFnType(tt(2, tvA), tt(2, tvA))}
	n, err := G.ApplyOp(b, grad)
	return G.Nodes{n}, err
}

// ropeGradOp rotates the output gradient back.
type ropeGradOp struct {
	opBase
	fwd *ropeOp
}

func (o *ropeGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return sameShape(o.key, in, 0)
}

func (o *ropeGradOp) Do(vals ...G.Value) (G.Value, error) {
	return o.fwd.rotate(o.key, &o.opBase, vals, -1)
}

// rotate writes into ob's output the rotation of vals[0] by sign*a: the
// forward pass (sign 1) or the gradient (sign -1).
func (o *ropeOp) rotate(key string, ob *opBase, vals []G.Value, sign float64) (G.Value, error) {
	if err := ob.checkArity(len(vals)); err != nil {
		return nil, err
	}
	x, err := dense(key, vals[0])
	if err != nil {
		return nil, err
	}
	s := x.Shape()
	if len(s) != 2 || s[0]%o.qLen != 0 || s[1] != 6*o.heads*o.tab.half {
		return nil, fmt.Errorf("%s: input of shape %v", key, s)
	}
	batch := s[0] / o.qLen
	offsets := make([]int, batch)
	if o.pos != nil {
		if len(o.pos.Active()) != batch {
			return nil, fmt.Errorf("%s: %d sequences are selected, the input has %d", key, len(o.pos.Active()), batch)
		}
		for r := range offsets {
			offsets[r] = o.pos.Offset(r)
		}
	}
	tabs := make([]*ropeTable, batch) // each sequence's frequencies
	factors := make([]float64, batch)
	for r, off := range offsets {
		if o.drawn != nil {
			o.tab.grow(o.drawn.end())
			tabs[r] = o.tab
		} else if o.dyn == nil {
			o.tab.grow(off + o.qLen)
			tabs[r] = o.tab
		} else if factors[r], tabs[r], err = o.dyn.table(off+o.qLen, o.tab.half); err != nil {
			return nil, err
		}
	}
	if o.cache != nil && sign > 0 {
		xs, ok := x.Data().([]float32)
		if !ok {
			return nil, fmt.Errorf("%s: a cache holds float32, the input is %v", key, x.Dtype())
		}
		if err := o.cache.rotateKeys(xs, o.qLen, factors, tabs); err != nil {
			return nil, err
		}
	}
	out := ob.output(x.Dtype(), s...)
	switch xs := x.Data().(type) {
	case []float32:
		ropeRows(o, xs, out.Data().([]float32), offsets, tabs, sign)
	case []float64:
		ropeRows(o, xs, out.Data().([]float64), offsets, tabs, sign)
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", key, x.Dtype())
	}
	return out, nil
}

// ropeRows rotates the query and key heads of every row of x into out by
// sign times the row's angles (from its sequence's table in tabs) and
// copies the values, rows in parallel.
func ropeRows[T float](o *ropeOp, x, out []T, offsets []int, tabs []*ropeTable, sign float64) {
	half := o.tab.half
	d := 2 * half * o.heads
	parallelChunks(len(x)/(3*d), 64, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			p := offsets[r/o.qLen] + r%o.qLen
			if o.drawn != nil {
				p = o.drawn.P[r%o.qLen]
			}
			tab := tabs[r/o.qLen]
			cos, sin := tab.cos[p*half:][:half], tab.sin[p*half:][:half]
			xr, yr := x[r*3*d:][:3*d], out[r*3*d:][:3*d]
			for h := 0; h < 2*o.heads; h++ { // the query heads, then the key heads
				a, b := xr[h*2*half:][:half], xr[h*2*half+half:][:half]
				ya, yb := yr[h*2*half:][:half], yr[h*2*half+half:][:half]
				for k := range a {
					c, s := cos[k], sign*sin[k]
					x1, x2 := float64(a[k]), float64(b[k])
					ya[k] = T(x1*c - x2*s)
					yb[k] = T(x1*s + x2*c)
				}
			}
			copy(yr[2*d:], xr[2*d:])
		}
	})
}
