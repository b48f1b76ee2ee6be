package layers

import (
	"fmt"
	"github.com/alibi-go/alibi/layers/internal/flash"
	"github.com/alibi-go/alibi/layers/layerstest"
	"github.com/alibi-go/alibi/layers/layerstest/longtest"
	"github.com/alibi-go/alibi/layers/position"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"gorgonia.org/tensor"
)

// flashCase is the shape of one tiled-attention call: nSeq sequences of
// qLen queries at positions offset..offset+qLen-1 against offset+qLen keys.
type flashCase struct {
	nSeq, qLen, offset, heads, dHead int
}

func (c flashCase) kLen() int      { return c.offset + c.qLen }
func (c flashCase) d() int         { return c.heads * c.dHead }
func (c flashCase) scale() float64 { return 1 / math.Sqrt(float64(c.dHead)) }
func (c flashCase) lseLen() int    { return c.nSeq * c.heads * c.qLen }

// attnDims are the sizes of the materialised kernel for the same call (which
// requires offset 0) with a bias of b heads.
func (c flashCase) attnDims(b int) attnDims {
	return attnDims{batch: c.nSeq, t: c.qLen, heads: c.heads, dHead: c.dHead, d: c.d(), biasHeads: b, scale: c.scale()}
}

// flashProblem is a random problem in one of two layouts. Packed (offset 0
// only): one (nSeq*T, 3D) qkv matrix as the Attention op takes it. Split:
// queries (nSeq*qLen rows), keys and values side by side (nSeq*kLen rows)
// and outputs, each with padding columns between rows. Padding holds NaN in
// the inputs, so reading outside a head's columns shows in the results, and
// a sentinel in the output, which must survive.
type flashProblem[T float] struct {
	fc           flashCase
	packed       bool
	qkv, q, kv   []T
	o            []T
	ldo          int
	seqs         []flash.Seq[T]
	outputMarker T
}

const flashPad = 3

func newFlashProblem[T float](rng *rand.Rand, fc flashCase, packed bool) *flashProblem[T] {
	p := &flashProblem[T]{fc: fc, packed: packed, outputMarker: 12345}
	d := fc.d()
	nan := T(math.NaN())
	randRows := func(rows, width, ld int) []T {
		buf := make([]T, rows*ld)
		for i := range buf {
			if i%ld < width {
				buf[i] = T(rng.NormFloat64())
			} else {
				buf[i] = nan
			}
		}
		return buf
	}
	p.ldo = d + flashPad
	if packed {
		if fc.offset != 0 {
			panic("packed layout needs offset 0")
		}
		p.ldo = d
	}
	p.o = make([]T, fc.nSeq*fc.qLen*p.ldo)
	for i := range p.o {
		p.o[i] = p.outputMarker
		if i%p.ldo < d {
			p.o[i] = T(math.NaN()) // Forward must overwrite it
		}
	}
	if packed {
		p.qkv = randRows(fc.nSeq*fc.qLen, 3*d, 3*d)
	} else {
		p.q = randRows(fc.nSeq*fc.qLen, d, d+flashPad)
		p.kv = randRows(fc.nSeq*fc.kLen(), 2*d, 2*d+flashPad)
	}
	if packed {
		p.seqs = flash.PackedSeqs(p.qkv, p.o, fc.nSeq, fc.qLen, d)
		return p
	}
	ldq, ldkv := d+flashPad, 2*d+flashPad
	for s := 0; s < fc.nSeq; s++ {
		kv := p.kv[s*fc.kLen()*ldkv:]
		p.seqs = append(p.seqs, flash.Seq[T]{Q: p.q[s*fc.qLen*ldq:], K: kv, V: kv[d:], O: p.o[s*fc.qLen*p.ldo:],
			LdQ: ldq, LdK: ldkv, LdV: ldkv, LdO: p.ldo, Offset: fc.offset})
	}
	return p
}

// output returns the outputs as (nSeq*qLen, D) in float64, and whether
// every padding entry still holds the sentinel.
func (p *flashProblem[T]) output() ([]float64, bool) {
	d := p.fc.d()
	out := make([]float64, 0, p.fc.nSeq*p.fc.qLen*d)
	kept := true
	for i, v := range p.o {
		if i%p.ldo < d {
			out = append(out, float64(v))
		} else if v != p.outputMarker {
			kept = false
		}
	}
	return out, kept
}

// biasKind selects the position bias of a test and its materialised
// reference.
type biasKind int

const (
	alibiSlopes biasKind = iota // position.AlibiScheme's distance tables from position.AlibiSlopes
	alibiFull                   // layerstest.FullBias of position.AlibiBias, one matrix per head
	alibiLong                   // position.AlibiScheme's tables, grown from a shorter call
	noSlopes                    // no bias: plain causal
	zeroSlopes                  // position.AlibiScheme with zero slopes: plain causal
	maskFull                    // layerstest.FullBias of position.CausalMask, shared by all heads
)

func (k biasKind) String() string {
	return [...]string{"alibiSlopes", "alibiFull", "alibiLong", "noSlopes", "zeroSlopes", "maskFull"}[k]
}

// reference returns the materialised bias of the kind, as position.AlibiBias or
// position.CausalMask build it for the whole call.
func (k biasKind) reference(fc flashCase) *tensor.Dense {
	switch k {
	case alibiSlopes, alibiFull, alibiLong:
		return position.AlibiBias(position.AlibiSlopes(fc.heads), fc.qLen, fc.kLen(), fc.offset, true)
	default:
		return position.CausalMask(fc.qLen, fc.kLen(), fc.offset)
	}
}

// kernelBias returns the kernel's bias of the kind.
func kernelBias[T float](k biasKind, fc flashCase) position.KernelBias[T] {
	switch k {
	case alibiSlopes:
		return alibiKernelBias[T](position.AlibiSlopes(fc.heads), fc.kLen())
	case alibiLong:
		// Tables first built for half the keys, then grown (by doubling)
		// for this call: the grown tables must be as good as fresh ones.
		var memo biasMemo[T]
		slopes := convertTo[T](position.AlibiSlopes(fc.heads))
		memo.bias(position.AlibiScheme{}, slopes, fc.heads, max(1, fc.kLen()/2))
		return memo.bias(position.AlibiScheme{}, slopes, fc.heads, fc.kLen())
	case noSlopes:
		return nil
	case zeroSlopes:
		return alibiKernelBias[T](make([]float32, fc.heads), fc.kLen())
	default:
		ref := k.reference(fc)
		return layerstest.NewFullBias(convertTo[T](ref.Data().([]float32)), ref.Shape()[0], fc.qLen, fc.kLen(), fc.offset)
	}
}

// alibiKernelBias is the bias position.AlibiScheme gives the kernel for slopes and
// keys up to kLen (Bias64 rounds the slopes to float32, which they are).
func alibiKernelBias[T float](slopes []float32, kLen int) position.KernelBias[T] {
	var s position.AlibiScheme
	if _, ok := any(T(0)).(float32); ok {
		return any(s.Bias32(slopes, len(slopes), kLen)).(position.KernelBias[T])
	}
	return any(s.Bias64(convertTo[float64](slopes), len(slopes), kLen)).(position.KernelBias[T])
}

func convertTo[T, S float](x []S) []T {
	out := make([]T, len(x))
	for i, v := range x {
		out[i] = T(v)
	}
	return out
}

// refAttention is the materialised path in float64: for every sequence,
// head and query row i, the scores scale q_i . k_j + bias[h][i][j] over ALL
// kLen keys (masked keys carry the bias's position.MaskValue), a softmax with the
// row maximum subtracted, and o_i = sum_j p_j v_j. It returns the outputs
// as (nSeq*qLen, D) and the log-sum-exp of each row, laid out as
// flash.Forward's lse. biasFor gives sequence s's (1 or H, qLen, kLen) bias.
func refAttention[T float](seqs []flash.Seq[T], qLen, heads, dHead int, scale float64, biasFor func(s int) *tensor.Dense) (o, lse []float64) {
	d := heads * dHead
	o = make([]float64, len(seqs)*qLen*d)
	lse = make([]float64, len(seqs)*heads*qLen)
	for s, sq := range seqs {
		b := biasFor(s)
		bd := b.Data().([]float32)
		bh, kLen := b.Shape()[0], b.Shape()[2]
		scores := make([]float64, kLen)
		for h := 0; h < heads; h++ {
			hb := h % bh
			for i := 0; i < qLen; i++ {
				mx := math.Inf(-1)
				for j := range scores {
					var dp float64
					kj := sq.K[sq.KAt(j, h, dHead):]
					for c := 0; c < dHead; c++ {
						dp += float64(sq.Q[i*sq.LdQ+h*dHead+c]) * float64(kj[c])
					}
					scores[j] = scale*dp + float64(bd[(hb*qLen+i)*kLen+j])
					mx = math.Max(mx, scores[j])
				}
				var sum float64
				for j, x := range scores {
					scores[j] = math.Exp(x - mx)
					sum += scores[j]
				}
				lse[(s*heads+h)*qLen+i] = mx + math.Log(sum)
				out := o[(s*qLen+i)*d+h*dHead:][:dHead]
				for j, p := range scores {
					for c := range out {
						out[c] += p / sum * float64(sq.V[sq.VAt(j, h, dHead)+c])
					}
				}
			}
		}
	}
	return o, lse
}

// worstErr records the largest error seen by a test, for its log.
type worstErr struct {
	err  float64
	name string
}

func (w *worstErr) see(name string, e float64) {
	if e > w.err {
		w.err, w.name = e, name
	}
}

func (w *worstErr) log(t *testing.T, what string) {
	t.Helper()
	t.Logf("worst %s: %.3g (%s)", what, w.err, w.name)
}

// tiles are the tile settings the tests run: automatic, and small tiles
// that cross many tile boundaries (and put the diagonal inside tiles of
// unequal sizes) at short lengths.
var flashTestTiles = []flash.Opts{{}, {BlockQ: 16, BlockK: 24}}

func tileName(o flash.Opts) string {
	if o.BlockQ == 0 && o.BlockK == 0 {
		return "auto"
	}
	return fmt.Sprintf("bq%d-bk%d", o.BlockQ, o.BlockK)
}

// checkFlashForward runs the kernel on a random problem and checks its
// outputs and lse against refAttention.
func checkFlashForward[T float](t *testing.T, rng *rand.Rand, fc flashCase, kind biasKind, opt flash.Opts, tol float64, wo, wl *worstErr) {
	t.Helper()
	p := newFlashProblem[T](rng, fc, false)
	lse := make([]T, fc.lseLen())
	flash.Forward(p.seqs, fc.qLen, fc.heads, fc.dHead, T(fc.scale()), kernelBias[T](kind, fc), lse, opt)
	ref := kind.reference(fc)
	wantO, wantL := refAttention(p.seqs, fc.qLen, fc.heads, fc.dHead, fc.scale(), func(int) *tensor.Dense { return ref })
	got, kept := p.output()
	if !kept {
		t.Fatal("output padding was overwritten")
	}
	name := fmt.Sprintf("%+v %v %s", fc, kind, tileName(opt))
	eo, el := layerstest.RelErr(convertTo[T](got), wantO), layerstest.RelErr(lse, wantL)
	wo.see(name, eo)
	wl.see(name, el)
	if eo > tol || el > tol {
		t.Errorf("%s: output error %.3g, lse error %.3g (max relative to the largest value), want <= %g", name, eo, el, tol)
	}
}

// The tiled forward pass equals the materialised path to float32 rounding,
// for queries at offset 0 and queries after a cache, every bias kind, head
// counts 1, 3, 4, 12 and lengths that are not multiples of the tiles (up to
// 65, two query tiles of the automatic size and five of the small ones;
// the long tests add 130 and 300).
func TestFlashForwardMatchesMaterialised(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var wo, wl worstErr
	lengths := longtest.Pick([]int{1, 7, 63, 65}, []int{1, 7, 63, 65, 130, 300})
	for _, split := range []bool{false, true} {
		withFlashSplit(split, func() {
			for _, heads := range []int{1, 3, 4, 12} {
				for _, qLen := range lengths {
					for _, offset := range []int{0, 37} {
						for kind := alibiSlopes; kind <= maskFull; kind++ {
							for _, opt := range flashTestTiles {
								fc := flashCase{nSeq: 2, qLen: qLen, offset: offset, heads: heads, dHead: 8}
								checkFlashForward[float32](t, rng, fc, kind, opt, 1e-5, &wo, &wl)
							}
						}
					}
				}
			}
		})
	}
	wo.log(t, "output error")
	wl.log(t, "lse error")
}

// withFlashSplit runs f with flash.Forward's units of work always spread
// over the workers (split) or always run on the calling goroutine, whatever
// their size.
func withFlashSplit(split bool, f func()) {
	saved := flash.SerialWork
	defer func() { flash.SerialWork = saved }()
	flash.SerialWork = math.MaxInt
	if split {
		flash.SerialWork = 0
	}
	f()
}

// Long sequences, with the automatic tiles and with small ones that make
// them span many key tiles: a long prompt, a long cache with a few new
// tokens, and single-token decoding against caches longer than one
// decoding tile.
func TestFlashForwardLong(t *testing.T) {
	longtest.Only(t)
	rng := rand.New(rand.NewPCG(13, 14))
	var wo, wl worstErr
	for _, tc := range []struct {
		fc    flashCase
		kinds []biasKind
	}{
		{flashCase{nSeq: 1, qLen: 1000, heads: 4, dHead: 32}, []biasKind{alibiSlopes, alibiFull, noSlopes}},
		{flashCase{nSeq: 2, qLen: 24, offset: 1000, heads: 4, dHead: 32}, []biasKind{alibiSlopes, alibiFull}},
		{flashCase{nSeq: 3, qLen: 1, offset: 2500, heads: 4, dHead: 32}, []biasKind{alibiSlopes, alibiFull, noSlopes}},
		{flashCase{nSeq: 2, qLen: 3, offset: 1100, heads: 3, dHead: 16}, []biasKind{alibiSlopes, maskFull}},
	} {
		for _, kind := range tc.kinds {
			for _, opt := range []flash.Opts{{}, {BlockQ: 48, BlockK: 100}} {
				checkFlashForward[float32](t, rng, tc.fc, kind, opt, 1e-5, &wo, &wl)
			}
		}
	}
	wo.log(t, "output error")
	wl.log(t, "lse error")
}

// The float64 kernel agrees with the reference to float64 rounding.
func TestFlashForwardFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	var wo, wl worstErr
	for _, fc := range []flashCase{
		{nSeq: 2, qLen: 65, heads: 3, dHead: 8},
		{nSeq: 2, qLen: 30, offset: 41, heads: 4, dHead: 5},
		{nSeq: 1, qLen: 1, offset: 90, heads: 2, dHead: 4},
	} {
		for _, kind := range []biasKind{alibiSlopes, alibiFull, noSlopes} {
			for _, opt := range flashTestTiles {
				checkFlashForward[float64](t, rng, fc, kind, opt, 1e-6, &wo, &wl)
			}
		}
	}
	wo.log(t, "output error")
	wl.log(t, "lse error")
}

// Sequences of one call may have different offsets (caches of different
// lengths); each is computed against its own keys.
func TestFlashForwardPerSequenceOffsets(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	const qLen, heads, dHead = 9, 3, 8
	offsets := []int{0, 5, 300}
	var seqs []flash.Seq[float32]
	var problems []*flashProblem[float32]
	for _, off := range offsets {
		p := newFlashProblem[float32](rng, flashCase{nSeq: 1, qLen: qLen, offset: off, heads: heads, dHead: dHead}, false)
		problems = append(problems, p)
		seqs = append(seqs, p.seqs[0])
	}
	for _, opt := range flashTestTiles {
		lse := make([]float32, len(seqs)*heads*qLen)
		slopes := position.AlibiSlopes(heads)
		flash.Forward(seqs, qLen, heads, dHead, float32(1/math.Sqrt(dHead)), alibiKernelBias[float32](slopes, flash.MaxKLen(seqs, qLen)), lse, opt)
		wantO, wantL := refAttention(seqs, qLen, heads, dHead, 1/math.Sqrt(dHead), func(s int) *tensor.Dense {
			return position.AlibiBias(slopes, qLen, offsets[s]+qLen, offsets[s], true)
		})
		var got []float64
		for _, p := range problems {
			o, _ := p.output()
			got = append(got, o...)
		}
		if e := layerstest.RelErr(got, wantO); e > 1e-5 {
			t.Errorf("%s: output error %.3g", tileName(opt), e)
		}
		if e := layerstest.RelErr(lse, wantL); e > 1e-5 {
			t.Errorf("%s: lse error %.3g", tileName(opt), e)
		}
	}
}

// Without lse (evaluation, generation) the outputs are bit-identical.
func TestFlashForwardWithoutLSE(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	fc := flashCase{nSeq: 2, qLen: 70, offset: 9, heads: 3, dHead: 8}
	p := newFlashProblem[float32](rng, fc, false)
	bias := kernelBias[float32](alibiSlopes, fc)
	opt := flash.Opts{BlockQ: 16, BlockK: 24}
	flash.Forward(p.seqs, fc.qLen, fc.heads, fc.dHead, float32(fc.scale()), bias, make([]float32, fc.lseLen()), opt)
	want := append([]float32(nil), p.o...)
	for i := range p.o {
		if i%p.ldo < fc.d() {
			p.o[i] = float32(math.NaN())
		}
	}
	flash.Forward(p.seqs, fc.qLen, fc.heads, fc.dHead, float32(fc.scale()), bias, nil, opt)
	if i := firstBitDifference(p.o, want); i >= 0 {
		t.Fatalf("output %d = %g without lse, %g with", i, p.o[i], want[i])
	}
}

// For q = k the tiled kernel reproduces today's attnForward (packed qkv,
// materialised bias) with either bias implementation.
func TestFlashForwardMatchesAttnForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	var w worstErr
	for _, qLen := range []int{1, 7, 65, 130, 300} {
		for _, heads := range []int{1, 4, 12} {
			for _, kind := range []biasKind{alibiSlopes, alibiFull, noSlopes, maskFull} {
				for _, opt := range flashTestTiles {
					fc := flashCase{nSeq: 3, qLen: qLen, heads: heads, dHead: 16}
					p := newFlashProblem[float32](rng, fc, true)
					ref := kind.reference(fc)
					want := make([]float32, fc.nSeq*qLen*fc.d())
					attnForward(fc.attnDims(ref.Shape()[0]), p.qkv, ref.Data().([]float32), want, nil, new(any))
					lse := make([]float32, fc.lseLen())
					flash.Forward(p.seqs, qLen, heads, fc.dHead, float32(fc.scale()), kernelBias[float32](kind, fc), lse, opt)
					name := fmt.Sprintf("T=%d H=%d %v %s", qLen, heads, kind, tileName(opt))
					e := layerstest.RelErr(p.o, convertTo[float64](want))
					w.see(name, e)
					if e > 1e-5 {
						t.Errorf("%s: error %.3g against attnForward", name, e)
					}
				}
			}
		}
	}
	w.log(t, "error against attnForward")
}

// Huge scores and huge ALiBi penalties stay finite: the running maximum is
// subtracted before every exponential, across key tiles too. Every score is
// q.k = 2*30*30 = 1800 (exp overflows) before the penalty of 1e6 per step
// of distance, so only the key at distance 0 has weight.
func TestFlashForwardStableAtLongDistances(t *testing.T) {
	const qLen, dHead = 40, 2
	seq := make([]float32, qLen*3*dHead)
	for i := range seq {
		seq[i] = 30
		if i%(3*dHead) >= 2*dHead {
			seq[i] = 1 // values
		}
	}
	o := make([]float32, qLen*dHead)
	seqs := flash.PackedSeqs(seq, o, 1, qLen, dHead)
	lse := make([]float32, qLen)
	flash.Forward(seqs, qLen, 1, dHead, 1, alibiKernelBias[float32]([]float32{1e6}, qLen), lse, flash.Opts{BlockQ: 8, BlockK: 8})
	for i, v := range o {
		if v != 1 {
			t.Fatalf("output %d = %g, want 1", i, v)
		}
	}
	for i, v := range lse {
		if v != 1800 {
			t.Fatalf("lse %d = %g, want 1800", i, v)
		}
	}
}

// dGradients holds input gradients in one of flashProblem's layouts.
type dGradients[T float] struct {
	dqkv, dq, dkv []T
	do            []T
	grads         []flash.GradSeq[T]
}

// newGradients returns random output gradients and input gradients filled
// with NaN for p, laid out as p's inputs (with NaN padding in do): Backward
// must overwrite every head column of the input gradients, and a row it
// only accumulates into without clearing first stays NaN.
func newGradients[T float](rng *rand.Rand, p *flashProblem[T]) *dGradients[T] {
	fc, d := p.fc, p.fc.d()
	g := &dGradients[T]{do: make([]T, fc.nSeq*fc.qLen*p.ldo)}
	for i := range g.do {
		if i%p.ldo < d {
			g.do[i] = T(rng.NormFloat64())
		} else {
			g.do[i] = T(math.NaN())
		}
	}
	if p.packed {
		g.dqkv = nans[T](len(p.qkv))
	} else {
		g.dq, g.dkv = nans[T](len(p.q)), nans[T](len(p.kv))
	}
	if p.packed {
		g.grads = flash.PackedGrads(g.do, g.dqkv, fc.nSeq, fc.qLen, d)
		return g
	}
	for s := 0; s < fc.nSeq; s++ {
		do := g.do[s*fc.qLen*p.ldo:]
		ldq, ldkv := d+flashPad, 2*d+flashPad
		kv := g.dkv[s*fc.kLen()*ldkv:]
		g.grads = append(g.grads, flash.GradSeq[T]{DO: do, DQ: g.dq[s*fc.qLen*ldq:], DK: kv, DV: kv[d:],
			LdDO: p.ldo, LdDQ: ldq, LdDK: ldkv, LdDV: ldkv})
	}
	return g
}

// nans returns n NaNs.
func nans[T float](n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(math.NaN())
	}
	return s
}

// For q = k, dQ, dK and dV equal today's attnBackward, in float32 and
// float64.
func TestFlashBackwardMatchesAttnBackward(t *testing.T) {
	t.Run("float32", func(t *testing.T) { checkAgainstAttnBackward[float32](t, 2e-5) })
	t.Run("float64", func(t *testing.T) { checkAgainstAttnBackward[float64](t, 1e-12) })
}

func checkAgainstAttnBackward[T float](t *testing.T, tol float64) {
	rng := rand.New(rand.NewPCG(21, 22))
	var w worstErr
	// 16 heads of 16: rows of 768 and 256 elements, which the backward
	// pass copies (contiguousRows). Up to 65 queries (two query tiles of
	// the automatic size, five of the small ones); the long tests add 130
	// and 300.
	for _, qLen := range longtest.Pick([]int{1, 7, 65}, []int{1, 7, 65, 130, 300}) {
		for _, heads := range []int{1, 3, 4, 16} {
			for _, kind := range []biasKind{alibiSlopes, alibiFull, noSlopes} {
				for _, opt := range flashTestTiles {
					fc := flashCase{nSeq: 2, qLen: qLen, heads: heads, dHead: 16}
					p := newFlashProblem[T](rng, fc, true)
					g := newGradients(rng, p)
					ref := kind.reference(fc)
					dm := fc.attnDims(ref.Shape()[0])
					probs := make([]T, fc.nSeq*heads*qLen*qLen)
					out := make([]T, len(p.o))
					attnForward(dm, p.qkv, convertTo[T](ref.Data().([]float32)), out, probs, nil)
					want := make([]T, len(p.qkv))
					attnBackward(dm, p.qkv, probs, g.do, want, workerScratch[T](new(any), qLen*qLen))

					bias := kernelBias[T](kind, fc)
					lse := make([]T, fc.lseLen())
					flash.Forward(p.seqs, qLen, heads, fc.dHead, T(fc.scale()), bias, lse, opt)
					flash.Backward(p.seqs, g.grads, qLen, heads, fc.dHead, T(fc.scale()), bias, lse, nil, opt)
					name := fmt.Sprintf("T=%d H=%d %v %s", qLen, heads, kind, tileName(opt))
					e := layerstest.RelErr(g.dqkv, convertTo[float64](want))
					w.see(name, e)
					if e > tol {
						t.Errorf("%s: d(qkv) error %.3g against attnBackward", name, e)
					}
				}
			}
		}
	}
	w.log(t, "d(qkv) error")
}

// flashLoss is sum(O * R) of a float64 forward pass, R being the output
// gradient g.do.
func flashLoss(p *flashProblem[float64], g *dGradients[float64], bias position.KernelBias[float64], opt flash.Opts) float64 {
	fc := p.fc
	lse := make([]float64, fc.lseLen())
	flash.Forward(p.seqs, fc.qLen, fc.heads, fc.dHead, fc.scale(), bias, lse, opt)
	var loss float64
	for i, o := range p.o {
		if i%p.ldo < fc.d() {
			loss += o * g.do[i]
		}
	}
	return loss
}

// checkFiniteDiff compares analytic[e] with the central difference of loss
// for every element e of x that is not padding (i%ld < width).
func checkFiniteDiff(t *testing.T, what string, x, analytic []float64, ld, width int, loss func() float64, w *worstErr) {
	t.Helper()
	const eps = 1e-6
	for e := range x {
		if e%ld >= width {
			continue
		}
		orig := x[e]
		x[e] = orig + eps
		up := loss()
		x[e] = orig - eps
		down := loss()
		x[e] = orig
		num := (up - down) / (2 * eps)
		d := math.Abs(num - analytic[e])
		w.see(what, d/(1e-6+1e-5*math.Abs(num)))
		if d > 1e-6+1e-5*math.Abs(num) {
			t.Fatalf("%s element %d: analytic %.9g, numeric %.9g", what, e, analytic[e], num)
		}
	}
}

// dQ, dK, dV and the gradient of a materialised (learned) bias equal
// central finite differences of the float64 forward pass, with and without
// a cache offset, across several tiles.
func TestFlashBackwardFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	var w worstErr
	for _, fc := range []flashCase{
		{nSeq: 2, qLen: 7, offset: 0, heads: 2, dHead: 3},
		{nSeq: 2, qLen: 5, offset: 4, heads: 2, dHead: 3},
		{nSeq: 1, qLen: 1, offset: 6, heads: 3, dHead: 2},
	} {
		for _, kind := range []biasKind{alibiSlopes, alibiFull, maskFull} {
			for _, opt := range []flash.Opts{{}, {BlockQ: 2, BlockK: 3}} {
				name := fmt.Sprintf("%+v %v %s", fc, kind, tileName(opt))
				t.Run(name, func(t *testing.T) {
					p := newFlashProblem[float64](rng, fc, false)
					g := newGradients(rng, p)
					bias := kernelBias[float64](kind, fc)
					// Random entries make every bias entry matter to the loss.
					var biasGrad []float64
					fb, learned := bias.(layerstest.FullBias[float64])
					if learned {
						for i := range fb.Data() {
							fb.Data()[i] += rng.NormFloat64()
						}
						biasGrad = make([]float64, fb.GradLen())
					}
					lse := make([]float64, fc.lseLen())
					flash.Forward(p.seqs, fc.qLen, fc.heads, fc.dHead, fc.scale(), bias, lse, opt)
					flash.Backward(p.seqs, g.grads, fc.qLen, fc.heads, fc.dHead, fc.scale(), bias, lse, biasGrad, opt)
					loss := func() float64 { return flashLoss(p, g, bias, opt) }
					d := fc.d()
					checkFiniteDiff(t, name+" dQ", p.q, g.dq, d+flashPad, d, loss, &w)
					checkFiniteDiff(t, name+" dK dV", p.kv, g.dkv, 2*d+flashPad, 2*d, loss, &w)
					if learned {
						checkFiniteDiff(t, name+" dBias", fb.Data(), biasGrad, 1, 1, loss, &w)
					}
				})
			}
		}
	}
	w.log(t, "finite-difference error (in units of the tolerance)")
}

// The kernels' results are bit-identical from run to run and whatever the
// number of workers: outputs and lse, the attention statistics (each unit's
// added in unit order), dQ, dK, dV, and the bias gradient,
// which sums the contributions of all units into one matrix.
func TestFlashDeterministic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(25, 26))
	fc := flashCase{nSeq: 8, qLen: 150, heads: 4, dHead: 8}
	p := newFlashProblem[float32](rng, fc, false)
	g := newGradients(rng, p)
	bias := kernelBias[float32](maskFull, fc) // one matrix shared by all 32 units
	lse := make([]float32, fc.lseLen())
	biasGrad := make([]float32, bias.(position.TrainableBias[float32]).GradLen())
	// results lists every output of both passes, in a fixed order.
	results := [][]float32{p.o, lse, g.dq, g.dkv, biasGrad}
	names := []string{"output", "lse", "dQ", "dK dV", "bias gradient"}
	var first [][]float32
	var firstStats *flash.Stats
	saved := flash.SerialWork
	defer func() { flash.SerialWork = saved }()
	flash.SerialWork = 0 // spread the forward units over the workers
	for _, procs := range []int{2, 4, 2, 4, 1} {
		runtime.GOMAXPROCS(procs)
		var cache any
		opt := flash.Opts{BlockK: 64, Scratch: &cache}
		for run := 0; run < 3; run++ {
			opt.Stats = flash.NewStats(fc.heads, 20)
			flash.Forward(p.seqs, fc.qLen, fc.heads, fc.dHead, float32(fc.scale()), bias, lse, opt)
			stats := opt.Stats
			opt.Stats = nil
			flash.Backward(p.seqs, g.grads, fc.qLen, fc.heads, fc.dHead, float32(fc.scale()), bias, lse, biasGrad, opt)
			if first == nil {
				for _, r := range results {
					first = append(first, append([]float32(nil), r...))
				}
				firstStats = stats
				continue
			}
			if !reflect.DeepEqual(stats, firstStats) {
				t.Fatalf("GOMAXPROCS %d run %d: statistics %+v, first run %+v", procs, run, *stats, *firstStats)
			}
			for k, r := range results {
				if i := firstBitDifference(r, first[k]); i >= 0 {
					t.Fatalf("GOMAXPROCS %d run %d: %s %d = %g, first run %g", procs, run, names[k], i, r[i], first[k][i])
				}
			}
		}
	}
}

// firstBitDifference returns the first index where a and b differ bitwise
// (NaN equals NaN), or -1.
func firstBitDifference(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// A forward pass at T = 32768 allocates no (T, T) array: its allocations
// do not grow with T at all (per-worker scratch of one tile). Spot rows
// are checked against the reference.
func TestFlashForwardMemoryLinear(t *testing.T) {
	longtest.Only(t)
	const qLen, heads, dHead = 32768, 4, 32
	rng := rand.New(rand.NewPCG(27, 28))
	fc := flashCase{nSeq: 1, qLen: qLen, heads: heads, dHead: dHead}
	p := newFlashProblem[float32](rng, fc, true)
	lse := make([]float32, fc.lseLen())
	bias := alibiKernelBias[float32](position.AlibiSlopes(heads), qLen)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	flash.Forward(p.seqs, qLen, heads, dHead, float32(fc.scale()), bias, lse, flash.Opts{})
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("T=%d: forward allocated %d bytes (T*T*4 = %d)", qLen, allocated, qLen*qLen*4)
	// One score tile per worker, the transposed key tiles a worker keeps
	// (at most flash.KeyTilesBytes) and one more, plus gemm's packing
	// buffers and goroutines: independent of T.
	bq, bk := flash.Tiles(qLen, qLen, flash.Opts{})
	if limit := uint64(1<<20 + workers()*(bq*bk*4+flash.KeyTilesBytes+bk*dHead*4)); allocated > limit {
		t.Errorf("forward allocated %d bytes, want < %d", allocated, limit)
	}
	// Spot rows: the first, some middle ones and the last, against the
	// float64 reference over the same keys.
	for _, i := range []int{0, 1, 4097, qLen - 1} {
		row := flash.Seq[float32]{Q: p.seqs[0].Q[i*p.seqs[0].LdQ:], K: p.seqs[0].K, V: p.seqs[0].V,
			LdQ: p.seqs[0].LdQ, LdK: p.seqs[0].LdK, LdV: p.seqs[0].LdV, Offset: i}
		wantO, wantL := refAttention([]flash.Seq[float32]{row}, 1, heads, dHead, fc.scale(), func(int) *tensor.Dense {
			return position.AlibiBias(position.AlibiSlopes(heads), 1, i+1, i, true)
		})
		gotL := make([]float32, heads)
		for h := range gotL {
			gotL[h] = lse[h*qLen+i]
		}
		if e := layerstest.RelErr(p.o[i*fc.d():(i+1)*fc.d()], wantO); e > 1e-5 {
			t.Errorf("row %d: output error %.3g", i, e)
		}
		if e := layerstest.RelErr(gotL, wantL); e > 1e-5 {
			t.Errorf("row %d: lse error %.3g", i, e)
		}
	}
}

// Tile choice: one key tile for short sequences, larger key tiles for
// decoding, overrides honoured and clamped to the lengths.
func TestFlashTiles(t *testing.T) {
	for _, tc := range []struct {
		qLen, kLen int
		opt        flash.Opts
		bq, bk     int
	}{
		{128, 128, flash.Opts{}, flash.BlockQ, 128},
		{7, 7, flash.Opts{}, 7, 7},
		{flash.BlockK, flash.BlockK, flash.Opts{}, flash.BlockQ, flash.BlockK},
		{flash.BlockK + 1, flash.BlockK + 1, flash.Opts{}, flash.BlockQ, flash.BlockK},
		{1, 8192, flash.Opts{}, 1, flash.DecodeBlockK},
		{1, 300, flash.Opts{}, 1, 300},
		{24, 5000, flash.Opts{}, 24, flash.BlockK},
		{100, 100, flash.Opts{BlockQ: 16, BlockK: 24}, 16, 24},
		{5, 9, flash.Opts{BlockQ: 16, BlockK: 24}, 5, 9},
	} {
		bq, bk := flash.Tiles(tc.qLen, tc.kLen, tc.opt)
		if bq != tc.bq || bk != tc.bk {
			t.Errorf("flash.Tiles(%d, %d, %+v) = %d, %d; want %d, %d", tc.qLen, tc.kLen, tc.opt, bq, bk, tc.bq, tc.bk)
		}
	}
}

// The forward pass packs a head's transposed key tiles once for all its
// query tiles and keeps them for the call (up to flash.KeyTilesBytes a
// worker, then packs again per query tile). With key tiles of
// 64 (each product one k block), a row's output does not depend on how the
// rows are grouped into query tiles, so query tiles of 16 (every key tile
// reused by many) must give the bits of one query tile per head (no reuse),
// also for keys that changed in place between calls sharing a scratch, and
// past the kept tiles (8320 keys: 130 tiles of 8 KiB, 128 kept).
func TestFlashForwardKeyTilesReused(t *testing.T) {
	for _, fc := range []flashCase{{nSeq: 2, qLen: 300, heads: 2, dHead: 32}, {nSeq: 1, qLen: 8320, heads: 1, dHead: 32}} {
		if fc.qLen > 1000 && testing.Short() {
			continue
		}
		rng := rand.New(rand.NewPCG(41, 42))
		p := newFlashProblem[float32](rng, fc, true)
		bias := alibiKernelBias[float32](position.AlibiSlopes(fc.heads), fc.kLen())
		lse := make([]float32, fc.lseLen())
		var shared any
		run := func(bq int, scratch *any) []float32 {
			flash.Forward(p.seqs, fc.qLen, fc.heads, fc.dHead, float32(fc.scale()), bias, lse, flash.Opts{BlockQ: bq, BlockK: 64, Scratch: scratch})
			return append([]float32(nil), p.o...)
		}
		for call := range 2 {
			if call == 1 { // new keys at the same addresses
				d := fc.d()
				for i := d; i < len(p.qkv); i += 3 * d {
					for j := range d {
						p.qkv[i+j] = float32(rng.NormFloat64())
					}
				}
			}
			whole := run(fc.qLen, nil)
			tiled := run(16, &shared)
			if i := firstBitDifference(whole, tiled); i >= 0 {
				t.Fatalf("%v call %d: element %d is %v with query tiles of 16, %v with one", fc, call, i, tiled[i], whole[i])
			}
		}
	}
}
