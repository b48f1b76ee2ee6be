package layers

import (
	"fmt"
	"github.com/alibi-go/alibi/layers/internal/flash"
	"github.com/alibi-go/alibi/layers/layerstest"
	"github.com/alibi-go/alibi/layers/layerstest/longtest"
	"github.com/alibi-go/alibi/layers/position"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Tests shared by the learned bias schemes (T5, KERPLE, FIRE). Each case
// pairs a scheme and its parameters with a reference: the scheme's formula
// written out directly in float64 (its own code, not the scheme's), from
// which the tests materialise (H, T, T) biases for layerstest.FullBiasScheme and
// refAttention.

// schemeCase is a scheme under test: its parameters (shape and values) and
// ref, the bias of head h for the query at position i on the key at j <= i,
// computed from the current values of params.
type schemeCase struct {
	name   string
	scheme position.BiasScheme
	heads  int
	shape  []int
	params []float64
	ref    func(p []float64, h, i, j int) float64
}

func (sc schemeCase) String() string { return sc.name }

// t5Case is a T5 table of N(0, 1) entries.
func t5Case(rng *rand.Rand, heads int) schemeCase {
	p := make([]float64, position.T5Buckets*heads)
	for i := range p {
		p[i] = rng.NormFloat64()
	}
	return schemeCase{name: fmt.Sprintf("t5 H=%d", heads), scheme: position.T5Scheme{}, heads: heads, shape: []int{position.T5Buckets, heads}, params: p,
		ref: func(p []float64, h, i, j int) float64 { return p[defaultT5Bucket(i-j)*heads+h] }}
}

// t5Buckets memoises exactT5Bucket for the default settings, by distance.
var t5Buckets []int

func defaultT5Bucket(n int) int {
	for len(t5Buckets) <= n {
		t5Buckets = append(t5Buckets, exactT5Bucket(len(t5Buckets), position.T5Buckets, position.T5MaxDistance))
	}
	return t5Buckets[n]
}

// kerpleCase has r1 ~ U(0.1, 2) and r2 ~ U(0.1, 1).
func kerpleCase(rng *rand.Rand, heads int) schemeCase {
	p := make([]float64, 2*heads)
	for h := 0; h < heads; h++ {
		p[h] = 0.1 + 1.9*rng.Float64()
		p[heads+h] = 0.1 + 0.9*rng.Float64()
	}
	return schemeCase{name: fmt.Sprintf("kerple H=%d", heads), scheme: position.KerpleScheme{}, heads: heads, shape: []int{2, heads}, params: p,
		ref: func(p []float64, h, i, j int) float64 { return -p[h] * math.Log(1+p[heads+h]*float64(i-j)) }}
}

// fireCase has W1, b1 ~ N(0, 1), W2, b2 ~ N(0, 0.5^2), c ~ U(0.05, 0.5) and
// the given threshold L.
func fireCase(rng *rand.Rand, heads int, l float64) schemeCase {
	lay := position.NewFireLayout(heads)
	p := make([]float64, position.FireParamLen(heads))
	for i := range p {
		sd := 1.0
		if i >= lay.W2 {
			sd = 0.5
		}
		p[i] = sd * rng.NormFloat64()
	}
	p[lay.C] = 0.05 + 0.45*rng.Float64()
	p[lay.L] = l
	return schemeCase{name: fmt.Sprintf("fire H=%d L=%g", heads, l), scheme: position.FireScheme{}, heads: heads, shape: []int{len(p)}, params: p,
		ref: func(p []float64, h, i, j int) float64 { return fireRef(p, heads, h, i, j) }}
}

// fireScaledCase is fireCase with the threshold stored in units of l0
// (position.FireScheme{L0: l0}): the parameter is l/l0.
func fireScaledCase(rng *rand.Rand, heads int, l float64, l0 int) schemeCase {
	sc := fireCase(rng, heads, l)
	lay := position.NewFireLayout(heads)
	sc.params[lay.L] = l / float64(l0)
	sc.scheme = position.FireScheme{L0: l0}
	sc.name = fmt.Sprintf("fire H=%d L=%g as %g x L0=%d", heads, l, sc.params[lay.L], l0)
	sc.ref = func(p []float64, h, i, j int) float64 {
		q := append([]float64(nil), p...)
		q[lay.L] *= float64(l0)
		return fireRef(q, heads, h, i, j)
	}
	return sc
}

// fireRef is FIRE's bias by its definition: the MLP evaluated unit by unit
// on u = log(1 + c (i-j)) / log(1 + c max(L, i)).
func fireRef(p []float64, heads, h, i, j int) float64 {
	lay := position.NewFireLayout(heads)
	c, l := p[lay.C], p[lay.L]
	u := math.Log(1+c*float64(i-j)) / math.Log(1+c*math.Max(l, float64(i)))
	out := p[lay.B2+h]
	for k := 0; k < position.FireWidth; k++ {
		out += p[lay.W2+k*heads+h] * math.Max(0, p[lay.W1+k]*u+p[lay.B1+k])
	}
	return out
}

// exactT5Bucket is the causal T5 bucket of distance n for b buckets and
// maximum distance m, in integer arithmetic: with e = b/2, n < e is its own
// bucket; otherwise bucket(n) >= e + k exactly when
// log(n/e) / log(m/e) * (b-e) >= k, that is n^(b-e) * e^k >= m^k * e^(b-e);
// the bucket is the largest such e + k, at most b-1.
func exactT5Bucket(n, b, m int) int {
	e := b / 2
	if n < e {
		return n
	}
	pow := func(x, y int) *big.Int { return new(big.Int).Exp(big.NewInt(int64(x)), big.NewInt(int64(y)), nil) }
	k := 0
	for e+k+1 <= b-1 {
		lhs := new(big.Int).Mul(pow(n, b-e), pow(e, k+1))
		rhs := new(big.Int).Mul(pow(m, k+1), pow(e, b-e))
		if lhs.Cmp(rhs) < 0 {
			break
		}
		k++
	}
	return e + k
}

// materialise returns the (heads, qLen, kLen) float32 bias of the case for
// queries at offset..offset+qLen-1: ref where j <= i, position.MaskValue above.
func (sc schemeCase) materialise(qLen, kLen, offset int) *tensor.Dense {
	data := make([]float32, sc.heads*qLen*kLen)
	for h := 0; h < sc.heads; h++ {
		for r := 0; r < qLen; r++ {
			i := offset + r
			row := data[(h*qLen+r)*kLen:][:kLen]
			for j := range row {
				row[j] = position.MaskValue
				if j <= i {
					row[j] = float32(sc.ref(sc.params, h, i, j))
				}
			}
		}
	}
	return tensor.New(tensor.WithShape(sc.heads, qLen, kLen), tensor.WithBacking(data))
}

// foldRef maps the gradient of a materialised bias, dB (heads, T, T) at
// offset 0, to the parameters through the reference: dtheta =
// sum_{h, i, j<=i} dB[h][i][j] d ref(h, i, j) / d theta, the derivative by
// central differences of ref in float64 (exact for T5, whose bias is
// linear in its table).
func (sc schemeCase) foldRef(dB []float32, tlen int) []float32 {
	p := slices.Clone(sc.params)
	out := make([]float32, len(p))
	const eps = 1e-6
	for e := range p {
		orig := p[e]
		var sum float64
		for h := 0; h < sc.heads; h++ {
			for i := 0; i < tlen; i++ {
				for j := 0; j <= i; j++ {
					g := float64(dB[(h*tlen+i)*tlen+j])
					if g == 0 {
						continue
					}
					p[e] = orig + eps
					up := sc.ref(p, h, i, j)
					p[e] = orig - eps
					down := sc.ref(p, h, i, j)
					p[e] = orig
					sum += g * (up - down) / (2 * eps)
				}
			}
		}
		out[e] = float32(sum)
	}
	return out
}

func (sc schemeCase) params32() *tensor.Dense {
	return tensor.New(tensor.WithShape(sc.shape...), tensor.WithBacking(convertTo[float32](sc.params)))
}

func (sc schemeCase) params64() *tensor.Dense {
	return tensor.New(tensor.WithShape(sc.shape...), tensor.WithBacking(slices.Clone(sc.params)))
}

// The op with each learned scheme equals the op with layerstest.FullBiasScheme fed
// the case's materialised bias, in float32 to 1e-5 relative: output, qkv
// gradient, and the parameters' gradient against the full bias's gradient
// folded through the reference formula. Lengths cross the tiles, T5's
// logarithmic buckets and its last bucket (T = 150 > 128), and FIRE's
// threshold (L below T: rows on both paths). FIRE's reference gradient is
// slow (central differences of every parameter over every entry), so the
// long tests alone add FIRE with every row within L, with most rows beyond
// it, and scaled (whose gradient TestSchemesGradient checks too).
func TestSchemesEqualMaterialised(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	var wo, wq, wp worstErr
	for _, tc := range []struct {
		sc                 schemeCase
		batch, tlen, dHead int
		long               bool
	}{
		{t5Case(rng, 3), 2, 150, 8, false},
		{t5Case(rng, 1), 1, 7, 4, false},
		{kerpleCase(rng, 4), 2, 70, 8, false},
		{kerpleCase(rng, 3), 1, 150, 4, false},
		{fireCase(rng, 4, 200), 2, 70, 8, true}, // every row within L
		{fireCase(rng, 2, 40.5), 2, 90, 8, false},
		{fireCase(rng, 3, 3.5), 1, 150, 4, true}, // not L = 3: see position.FireScheme on integer L
		{fireScaledCase(rng, 2, 40.5, 16), 2, 90, 8, true},
	} {
		if tc.long && !longtest.Enabled {
			continue
		}
		name := fmt.Sprintf("%v B=%d T=%d", tc.sc, tc.batch, tc.tlen)
		d := tc.sc.heads * tc.dHead
		qkv := tensor.New(tensor.WithShape(tc.batch*tc.tlen, 3*d), tensor.WithBacking(randF32(rng, 1, tc.batch*tc.tlen*3*d)))
		r := randF32(rng, 1, tc.batch*tc.tlen*d)
		out, grads := attentionRun(t, qkv, tc.sc.params32(), AttentionConfig{Heads: tc.sc.heads, QueryLen: tc.tlen, PositionBias: tc.sc.scheme}, r)
		full := tc.sc.materialise(tc.tlen, tc.tlen, 0)
		wantOut, wantGrads := attentionRun(t, qkv, full, AttentionConfig{Heads: tc.sc.heads, QueryLen: tc.tlen, PositionBias: layerstest.FullBiasScheme{}}, r)
		if len(grads) != 2 || len(wantGrads) != 2 {
			t.Fatalf("%s: %d and %d gradients, want qkv's and the parameters'", name, len(grads), len(wantGrads))
		}
		wantP := tc.sc.foldRef(wantGrads[1], tc.tlen)
		eo, eq, ep := layerstest.RelErr(out, wantOut), layerstest.RelErr(grads[0], wantGrads[0]), layerstest.RelErr(grads[1], wantP)
		wo.see(name, eo)
		wq.see(name, eq)
		wp.see(name, ep)
		if !(eo <= 1e-5) || !(eq <= 1e-5) || !(ep <= 1e-5) {
			t.Errorf("%s: output %.3g, qkv gradient %.3g, parameter gradient %.3g relative to the materialised bias", name, eo, eq, ep)
		}
	}
	wo.log(t, "output error")
	wq.log(t, "qkv gradient error")
	wp.log(t, "parameter gradient error")
}

// schemeCached is an attention op over a key/value cache with a learned
// scheme, whose input rows can be rewritten between runs.
type schemeCached struct {
	in  []float32
	out *G.Node
	vm  G.VM
}

func newSchemeCached(t *testing.T, cache *KVCache, sc schemeCase, batch, q, d int) *schemeCached {
	t.Helper()
	g := G.NewGraph()
	c := &schemeCached{in: make([]float32, batch*q*3*d)}
	x := G.NewTensor(g, G.Float32, 2, G.WithShape(batch*q, 3*d), G.WithValue(tensor.New(tensor.WithShape(batch*q, 3*d), tensor.WithBacking(c.in))), G.WithName("qkv"))
	pt := sc.params32()
	p := G.NewTensor(g, G.Float32, pt.Dims(), G.WithShape(pt.Shape()...), G.WithValue(pt), G.WithName("params"))
	c.out = G.Must(Attention(x, p, AttentionConfig{Heads: sc.heads, QueryLen: q, PositionBias: sc.scheme, Cache: cache}))
	c.vm = G.NewTapeMachine(g)
	t.Cleanup(func() { c.vm.Close() })
	return c
}

func (c *schemeCached) run(t *testing.T, rows []float32) []float32 {
	t.Helper()
	copy(c.in, rows)
	c.vm.Reset()
	if err := c.vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	return c.out.Value().Data().([]float32)
}

// With a key/value cache (q < k, queries at their sequences' offsets),
// each scheme gives the rows of the full pass with the materialised bias:
// three sequences of different lengths prefilled in chunks of 7, then
// decoded a token at a time together. FIRE's threshold lies inside the
// sequences, so chunks and tokens cross it.
func TestSchemesCachedEqualMaterialised(t *testing.T) {
	const heads, dHead = 4, 8
	d := heads * dHead
	rng := rand.New(rand.NewPCG(43, 44))
	var w worstErr
	for _, sc := range []schemeCase{t5Case(rng, heads), kerpleCase(rng, heads), fireCase(rng, heads, 20.5)} {
		lens := []int{161, 33, 9}
		seqs := make([][]float32, len(lens))
		full := make([][]float32, len(lens))
		for b, n := range lens {
			seqs[b] = randF32(rng, 1, n*3*d)
			full[b], _ = attentionRun(t, tensor.New(tensor.WithShape(n, 3*d), tensor.WithBacking(seqs[b])), sc.materialise(n, n, 0),
				AttentionConfig{Heads: heads, QueryLen: n, PositionBias: layerstest.FullBiasScheme{}}, nil)
		}
		pos := NewPositions(len(lens))
		cache := NewKVCache(pos, heads, d)
		check := func(b, from int, got []float32, rows int) {
			t.Helper()
			e := layerstest.RelErr(got[:rows*d], full[b][from*d:(from+rows)*d])
			name := fmt.Sprintf("%v sequence %d rows %d..%d", sc, b, from, from+rows-1)
			w.see(name, e)
			if !(e <= 1e-5) {
				t.Fatalf("%s: error %.3g against the materialised full pass", name, e)
			}
		}
		chunk := newSchemeCached(t, cache, sc, 1, 7, d)
		for b, n := range lens {
			pos.Select(b)
			for pos.Lengths[b]+7 <= n-4 {
				from := pos.Lengths[b]
				check(b, from, chunk.run(t, seqs[b][from*3*d:(from+7)*3*d]), 7)
				pos.Advance(7)
			}
		}
		step := map[int]*schemeCached{}
		for {
			var live []int
			for b, n := range lens {
				if pos.Lengths[b] < n {
					live = append(live, b)
				}
			}
			if len(live) == 0 {
				break
			}
			if step[len(live)] == nil {
				step[len(live)] = newSchemeCached(t, cache, sc, len(live), 1, d)
			}
			pos.Select(live...)
			var rows []float32
			for _, b := range live {
				rows = append(rows, seqs[b][pos.Lengths[b]*3*d:(pos.Lengths[b]+1)*3*d]...)
			}
			out := step[len(live)].run(t, rows)
			for r, b := range live {
				check(b, pos.Lengths[b], out[r*d:], 1)
			}
			pos.Advance(1)
		}
	}
	w.log(t, "error against the full pass")
}

// Far past the training length: a few queries after 20000 cached keys (and
// single tokens at 20000 and 33000), float32, against refAttention with
// the reference bias rows. The kernel bias is first built for fewer keys
// and then grown, as in generation. FIRE's rows are all beyond L there.
func TestSchemesLong(t *testing.T) {
	longtest.Only(t)
	rng := rand.New(rand.NewPCG(45, 46))
	var w worstErr
	for _, sc := range []schemeCase{t5Case(rng, 4), kerpleCase(rng, 4), fireCase(rng, 4, 512)} {
		for _, fc := range []flashCase{
			{nSeq: 2, qLen: 3, offset: 20000, heads: 4, dHead: 16},
			{nSeq: 1, qLen: 1, offset: 33000, heads: 4, dHead: 16},
		} {
			p := newFlashProblem[float32](rng, fc, false)
			var cache biasMemo[float32]
			cache.bias(sc.scheme, convertTo[float32](sc.params), fc.heads, fc.kLen()/3)
			bias := cache.bias(sc.scheme, convertTo[float32](sc.params), fc.heads, fc.kLen())
			lse := make([]float32, fc.lseLen())
			flash.Forward(p.seqs, fc.qLen, fc.heads, fc.dHead, float32(fc.scale()), bias, lse, flash.Opts{})
			ref := sc.materialise(fc.qLen, fc.kLen(), fc.offset)
			wantO, wantL := refAttention(p.seqs, fc.qLen, fc.heads, fc.dHead, fc.scale(), func(int) *tensor.Dense { return ref })
			got, _ := p.output()
			name := fmt.Sprintf("%v %+v", sc, fc)
			eo, el := layerstest.RelErr(got, wantO), layerstest.RelErr(lse, wantL)
			w.see(name, max(eo, el))
			if eo > 1e-5 || el > 1e-5 {
				t.Errorf("%s: output error %.3g, lse error %.3g", name, eo, el)
			}
		}
	}
	w.log(t, "error")
}

// Finite differences (float64) of every parameter and of qkv through the
// op, for each scheme: T5 with distances into the logarithmic buckets,
// KERPLE, and FIRE with every row within L, with rows on both sides of L
// (L = 5.5 < T = 9), and with most rows beyond it.
func TestSchemesGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	for _, tc := range []struct {
		sc                 schemeCase
		batch, tlen, dHead int
	}{
		{t5Case(rng, 2), 2, 24, 2},
		{kerpleCase(rng, 2), 2, 6, 3},
		{kerpleCase(rng, 3), 1, 9, 2},
		{fireCase(rng, 2, 50), 2, 6, 2},
		{fireCase(rng, 2, 5.5), 2, 9, 2},
		{fireCase(rng, 1, 1.5), 1, 8, 3},
		{fireScaledCase(rng, 2, 5.5, 4), 2, 9, 2},
	} {
		t.Run(fmt.Sprintf("%v B=%d T=%d", tc.sc, tc.batch, tc.tlen), func(t *testing.T) {
			d := tc.sc.heads * tc.dHead
			ins := []*tensor.Dense{randDense(rng, 1, tc.batch*tc.tlen, 3*d), tc.sc.params64()}
			gradCheck(t, ins, []int{0, 1}, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				return Attention(in[0], in[1], AttentionConfig{Heads: tc.sc.heads, QueryLen: tc.tlen, PositionBias: tc.sc.scheme})
			})
		})
	}
}

// At an integer L, where the row at position L switches normaliser, FIRE's
// gradient of L is the derivative from above (position.FireScheme): it
// equals a one-sided difference from above, and differs from the one from
// below by more than the tolerance, so that taking the wrong side shows.
func TestFireGradientAtIntegerL(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	const heads, dHead, tlen, l = 2, 2, 8, 3.0
	sc := fireCase(rng, heads, l)
	lay := position.NewFireLayout(heads)
	qkv, params := randDense(rng, 1, tlen, 3*heads*dHead), sc.params64()
	run, grads := gradGraph(t, []*tensor.Dense{qkv, params}, []int{1}, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return Attention(in[0], in[1], AttentionConfig{Heads: heads, QueryLen: tlen, PositionBias: sc.scheme})
	})
	base := run()
	analytic := grads[0][lay.L]
	pv := params.Data().([]float64)
	const eps = 1e-7
	pv[lay.L] = l + eps
	above := (run() - base) / eps
	pv[lay.L] = l - eps
	below := (base - run()) / eps
	pv[lay.L] = l
	tol := 1e-5 * (1 + math.Abs(above))
	if math.Abs(analytic-above) > tol {
		t.Errorf("dL = %.9g, the difference from above %.9g (from below %.9g)", analytic, above, below)
	}
	if math.Abs(above-below) <= 10*tol {
		t.Errorf("the differences from above (%.9g) and below (%.9g) agree: the case cannot tell the sides apart", above, below)
	}
}

// The parameters' gradient with queries after a cache (q != k, which the
// op cannot differentiate, so at the kernel level: flash.Forward,
// flash.Backward and paramGrad) equals central finite differences of the
// float64 forward pass, with automatic and small tiles. One kernel-bias
// cache serves every evaluation, so a stale bias after a parameter change
// would show. FIRE's threshold splits the queries (L = 7.5, queries at
// 6..9) or lies before all of them.
func TestSchemesKernelParamGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 50))
	var w worstErr
	for _, tc := range []struct {
		sc schemeCase
		fc flashCase
	}{
		{t5Case(rng, 2), flashCase{nSeq: 2, qLen: 4, offset: 20, heads: 2, dHead: 3}},
		{kerpleCase(rng, 2), flashCase{nSeq: 2, qLen: 5, offset: 4, heads: 2, dHead: 3}},
		{kerpleCase(rng, 3), flashCase{nSeq: 1, qLen: 1, offset: 6, heads: 3, dHead: 2}},
		{fireCase(rng, 2, 7.5), flashCase{nSeq: 2, qLen: 4, offset: 6, heads: 2, dHead: 3}},
		{fireCase(rng, 2, 2.5), flashCase{nSeq: 1, qLen: 3, offset: 7, heads: 2, dHead: 2}},
	} {
		for _, opt := range []flash.Opts{{}, {BlockQ: 2, BlockK: 3}} {
			name := fmt.Sprintf("%v %+v %s", tc.sc, tc.fc, tileName(opt))
			t.Run(name, func(t *testing.T) {
				fc := tc.fc
				p := newFlashProblem[float64](rng, fc, false)
				g := newGradients(rng, p)
				params := slices.Clone(tc.sc.params)
				var cache biasMemo[float64]
				tile := func() position.KernelBias[float64] {
					return cache.bias(tc.sc.scheme, params, fc.heads, fc.kLen())
				}
				bias := tile()
				lse := make([]float64, fc.lseLen())
				flash.Forward(p.seqs, fc.qLen, fc.heads, fc.dHead, fc.scale(), bias, lse, opt)
				biasGrad := make([]float64, bias.(position.TrainableBias[float64]).GradLen())
				flash.Backward(p.seqs, g.grads, fc.qLen, fc.heads, fc.dHead, fc.scale(), bias, lse, biasGrad, opt)
				analytic := make([]float64, len(params))
				tc.sc.scheme.ParamGrad64(params, biasGrad, analytic)
				checkFiniteDiff(t, name+" dParams", params, analytic, 1, 1, func() float64 { return flashLoss(p, g, tile(), opt) }, &w)
			})
		}
	}
	w.log(t, "finite-difference error (in units of the tolerance)")
}

// The parameters' gradient (and the output and qkv gradient) of the op
// are bit-identical from run to run of one graph and across graphs run
// with GOMAXPROCS 1, 2 and 4: 16 (sequence, head) units accumulate into
// chunked buffers that are added in a fixed order.
func TestSchemesDeterministic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(51, 52))
	const batch, tlen, heads, dHead = 4, 150, 4, 8
	d := heads * dHead
	qkv := tensor.New(tensor.WithShape(batch*tlen, 3*d), tensor.WithBacking(randF32(rng, 1, batch*tlen*3*d)))
	r := tensor.New(tensor.WithShape(batch*tlen, d), tensor.WithBacking(randF32(rng, 1, batch*tlen*d)))
	for _, sc := range []schemeCase{t5Case(rng, heads), kerpleCase(rng, heads), fireCase(rng, heads, 100.5)} {
		var first [][]float32
		for _, procs := range []int{1, 2, 4, 2, 1, 4} {
			runtime.GOMAXPROCS(procs)
			g := G.NewGraph()
			x := G.NewTensor(g, G.Float32, 2, G.WithShape(qkv.Shape()...), G.WithValue(qkv.Clone()), G.WithName("qkv"))
			pt := sc.params32()
			p := G.NewTensor(g, G.Float32, pt.Dims(), G.WithShape(pt.Shape()...), G.WithValue(pt), G.WithName("params"))
			o := G.Must(Attention(x, p, AttentionConfig{Heads: heads, QueryLen: tlen, PositionBias: sc.scheme}))
			rn := G.NewTensor(g, G.Float32, 2, G.WithShape(r.Shape()...), G.WithValue(r.Clone()), G.WithName("R"))
			grads, err := G.Grad(G.Must(G.Sum(G.Must(G.HadamardProd(o, rn)))), x, p)
			if err != nil {
				t.Fatal(err)
			}
			vm := G.NewTapeMachine(g)
			for run := 0; run < 2; run++ {
				vm.Reset()
				if err := vm.RunAll(); err != nil {
					t.Fatal(err)
				}
				results := [][]float32{o.Value().Data().([]float32), grads[0].Value().Data().([]float32), grads[1].Value().Data().([]float32)}
				if first == nil {
					for _, res := range results {
						first = append(first, slices.Clone(res))
					}
					continue
				}
				for k, res := range results {
					if i := firstBitDifference(res, first[k]); i >= 0 {
						t.Fatalf("%v GOMAXPROCS %d run %d: %s %d = %g, first run %g", sc, procs, run,
							[]string{"output", "qkv gradient", "parameter gradient"}[k], i, res[i], first[k][i])
					}
				}
			}
			vm.Close()
		}
	}
}

// Parameters of the wrong shape are errors, not panics.
func TestSchemesRejectShapes(t *testing.T) {
	g := G.NewGraph()
	qkv := G.NewTensor(g, G.Float32, 2, G.WithShape(8, 24), G.WithName("qkv"))
	for _, tc := range []struct {
		scheme position.BiasScheme
		shape  []int
	}{
		{position.T5Scheme{}, []int{32, 3}},
		{position.T5Scheme{}, []int{16, 2}},
		{position.T5Scheme{}, []int{64}},
		{position.T5Scheme{Buckets: 8, MaxDistance: 4}, []int{8, 2}},
		{position.KerpleScheme{}, []int{2, 3}},
		{position.KerpleScheme{}, []int{4}},
		{position.FireScheme{}, []int{position.FireParamLen(3)}},
		{position.FireScheme{}, []int{1, position.FireParamLen(2)}},
	} {
		p := G.NewTensor(g, G.Float32, len(tc.shape), G.WithShape(tc.shape...), G.WithName(fmt.Sprintf("p%v%v", tc.scheme.Name(), tc.shape)))
		if _, err := Attention(qkv, p, AttentionConfig{Heads: 2, QueryLen: 8, PositionBias: tc.scheme}); err == nil {
			t.Errorf("%s with parameters %v for 2 heads: no error", tc.scheme.Name(), tc.shape)
		}
	}
}

// One T5 table shared by two layers (two attention ops on the same
// parameter node, as T5 shares it across the model): the table's gradient
// is the sum of both layers' and matches finite differences.
func TestT5SharedAcrossLayers(t *testing.T) {
	rng := rand.New(rand.NewPCG(55, 56))
	const batch, tlen, heads, dHead = 2, 20, 2, 2
	sc := t5Case(rng, heads)
	d := heads * dHead
	ins := []*tensor.Dense{randDense(rng, 1, batch*tlen, 3*d), randDense(rng, 1, batch*tlen, 3*d), sc.params64()}
	gradCheck(t, ins, []int{0, 1, 2}, func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		cfg := AttentionConfig{Heads: heads, QueryLen: tlen, PositionBias: position.T5Scheme{}}
		a, err := Attention(in[0], in[2], cfg)
		if err != nil {
			return nil, err
		}
		b, err := Attention(in[1], in[2], cfg)
		if err != nil {
			return nil, err
		}
		return G.Add(a, b)
	})
}
