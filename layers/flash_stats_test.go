package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/alibi-go/alibi/layers/internal/flash"
	"github.com/alibi-go/alibi/layers/position"
)

// statsCases are every bias scheme of the zoo with random parameters, and
// no bias (sinusoidal, none and rope, whose kernels see only the causal
// mask: rope's rotation is applied to q and k before the kernel).
func statsCases(rng *rand.Rand, heads int) []schemeCase {
	slopes := position.AlibiSlopes(heads)
	alibi := schemeCase{name: "alibi", scheme: position.AlibiScheme{}, heads: heads, shape: []int{heads}, params: convertTo[float64](slopes),
		ref: func(p []float64, h, i, j int) float64 { return -float64(float32(p[h])) * float64(i-j) }}
	return []schemeCase{alibi, t5Case(rng, heads), kerpleCase(rng, heads), fireCase(rng, heads, 12),
		{name: "no bias", heads: heads, ref: func([]float64, int, int, int) float64 { return 0 }}}
}

// refStats is Stats computed from explicitly materialised softmax rows in
// float64: for every sequence, head and query at position pos >= far, the
// probabilities p_j over keys j <= pos, and their mean distance, entropy and
// share on keys at distance >= far.
func refStats[T float](p *flashProblem[T], sc schemeCase, far int) *flash.Stats {
	fc := p.fc
	st := flash.NewStats(fc.heads, far)
	for _, sq := range p.seqs {
		for h := 0; h < fc.heads; h++ {
			for i := 0; i < fc.qLen; i++ {
				pos := fc.offset + i
				if pos < far {
					continue
				}
				s := make([]float64, pos+1)
				mx := math.Inf(-1)
				for j := range s {
					var dp float64
					kj := sq.K[sq.KAt(j, h, fc.dHead):]
					for c := 0; c < fc.dHead; c++ {
						dp += float64(sq.Q[i*sq.LdQ+h*fc.dHead+c]) * float64(kj[c])
					}
					s[j] = fc.scale()*dp + sc.ref(sc.params, h, pos, j)
					mx = math.Max(mx, s[j])
				}
				var sum float64
				for j := range s {
					s[j] = math.Exp(s[j] - mx)
					sum += s[j]
				}
				var dist, ent, mass float64
				for j, e := range s {
					q := e / sum
					dist += q * float64(pos-j)
					if q > 0 {
						ent -= q * math.Log(q)
					}
					if pos-j >= far {
						mass += q
					}
				}
				st.Distance[h] += dist
				st.Entropy[h] += ent
				st.FarMass[h] += mass
				st.Queries[h]++
			}
		}
	}
	return st
}

// statsErr is the largest difference between two Stats' per-head means:
// relative for the distance, absolute for the entropy (nats) and the share.
func statsErr(got, want *flash.Stats) (float64, error) {
	if !slices.Equal(got.Queries, want.Queries) {
		return 0, fmt.Errorf("queries %v, want %v", got.Queries, want.Queries)
	}
	worst := 0.0
	for h, n := range want.Queries {
		if n == 0 {
			if got.Distance[h] != 0 || got.Entropy[h] != 0 || got.FarMass[h] != 0 {
				return 0, fmt.Errorf("head %d counted no query but has sums %v %v %v", h, got.Distance[h], got.Entropy[h], got.FarMass[h])
			}
			continue
		}
		k := float64(n)
		worst = max(worst, math.Abs(got.Distance[h]-want.Distance[h])/k/max(1, want.Distance[h]/k),
			math.Abs(got.Entropy[h]-want.Entropy[h])/k, math.Abs(got.FarMass[h]-want.FarMass[h])/k)
	}
	return worst, nil
}

// The kernel's statistics equal those of a materialised softmax, for every
// scheme, queries at offset 0 and after a cache, tiles that force the
// online rescaling, thresholds inside and outside the call, in float32 and
// float64; and the output is bit for bit the one without statistics.
func TestFlashStatsMatchMaterialised(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	var worst worstErr
	for _, fc := range []flashCase{{nSeq: 2, qLen: 40, heads: 3, dHead: 8}, {nSeq: 1, qLen: 9, offset: 30, heads: 3, dHead: 8}} {
		for _, sc := range statsCases(rng, fc.heads) {
			for _, far := range []int{0, 8, 25, 100} {
				for _, opt := range flashTestTiles {
					name := fmt.Sprintf("%s %+v far %d %s", sc.name, fc, far, tileName(opt))
					t.Run(name, func(t *testing.T) {
						e32 := checkStats[float32](t, rng, fc, sc, far, opt)
						e64 := checkStats[float64](t, rng, fc, sc, far, opt)
						worst.see(name+" float32", e32)
						if e32 > 2e-5 || e64 > 1e-11 {
							t.Errorf("error %.3g (float32), %.3g (float64)", e32, e64)
						}
					})
				}
			}
		}
	}
	worst.log(t, "float32 statistics error")
}

func checkStats[T float](t *testing.T, rng *rand.Rand, fc flashCase, sc schemeCase, far int, opt flash.Opts) float64 {
	t.Helper()
	p := newFlashProblem[T](rng, fc, false)
	var bias position.KernelBias[T]
	if sc.scheme != nil {
		switch any(T(0)).(type) {
		case float32:
			bias = any(sc.scheme.Bias32(convertTo[float32](sc.params), fc.heads, fc.kLen())).(position.KernelBias[T])
		default:
			bias = any(sc.scheme.Bias64(sc.params, fc.heads, fc.kLen())).(position.KernelBias[T])
		}
	}
	flash.Forward(p.seqs, fc.qLen, fc.heads, fc.dHead, T(fc.scale()), bias, nil, opt)
	plain := slices.Clone(p.o)
	opt.Stats = flash.NewStats(fc.heads, far)
	flash.Forward(p.seqs, fc.qLen, fc.heads, fc.dHead, T(fc.scale()), bias, nil, opt)
	for i := range plain {
		if math.Float64bits(float64(plain[i])) != math.Float64bits(float64(p.o[i])) {
			t.Fatalf("output %d is %v with statistics, %v without", i, p.o[i], plain[i])
		}
	}
	e, err := statsErr(opt.Stats, refStats(p, sc, far))
	if err != nil {
		t.Fatal(err)
	}
	// Every counted query at far = 0 has all its mass at distance >= 0.
	if far == 0 {
		for h, n := range opt.Stats.Queries {
			if math.Abs(opt.Stats.FarMass[h]-float64(n)) > 1e-5*float64(n) {
				t.Errorf("far 0: head %d share sums to %v over %d queries", h, opt.Stats.FarMass[h], n)
			}
		}
	}
	return e
}

// Queries before the threshold are not counted, and a Stats collects over
// calls: two calls add up to twice one.
func TestFlashStatsCounting(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	fc := flashCase{nSeq: 3, qLen: 20, heads: 2, dHead: 4}
	p := newFlashProblem[float32](rng, fc, false)
	st := flash.NewStats(fc.heads, 12)
	for range 2 {
		flash.Forward(p.seqs, fc.qLen, fc.heads, fc.dHead, float32(fc.scale()), nil, nil, flash.Opts{Stats: st})
	}
	one := flash.NewStats(fc.heads, 12)
	flash.Forward(p.seqs, fc.qLen, fc.heads, fc.dHead, float32(fc.scale()), nil, nil, flash.Opts{Stats: one})
	for h := range fc.heads {
		if want := 2 * 3 * (20 - 12); st.Queries[h] != want || one.Queries[h] != want/2 {
			t.Errorf("head %d: %d queries over two calls, %d over one; want %d and %d", h, st.Queries[h], one.Queries[h], want, want/2)
		}
		if math.Abs(st.Entropy[h]-2*one.Entropy[h]) > 1e-9*math.Abs(st.Entropy[h]) {
			t.Errorf("head %d: entropy sums %v over two calls, %v over one", h, st.Entropy[h], one.Entropy[h])
		}
	}
}
