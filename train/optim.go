package train

import (
	"math"
	"sort"

	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/layers/parallel"
)

// LR returns the learning rate of step (0-based): linear warm-up from
// lr/warmup to lr over the first warmup steps, then cosine decay to min_lr at
// the last step, as in the reference.
func (s Settings) LRAt(step int) float64 {
	if step < s.Warmup {
		return s.LR * float64(step+1) / float64(s.Warmup)
	}
	prog := float64(step-s.Warmup) / math.Max(1, float64(s.Steps-s.Warmup))
	prog = math.Min(1, prog)
	return s.MinLR + 0.5*(s.LR-s.MinLR)*(1+math.Cos(math.Pi*prog))
}

// AdamW is Adam with decoupled weight decay (Loshchilov & Hutter), with the
// update of torch.optim.AdamW:
//
//	w -= lr*wd*w;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
//	w -= lr/(1-b1^t) * m / (sqrt(v/(1-b2^t)) + eps)
type AdamW struct {
	Beta1, Beta2, Eps, WeightDecay float64
	// Step is the number of updates done so far.
	Step int
	// M and V are the first and second moments, one slice per parameter.
	M, V [][]float32
}

// NewAdamW returns an optimizer for parameters of the given sizes.
func NewAdamW(s Settings, sizes []int) *AdamW {
	o := &AdamW{Beta1: s.Beta1, Beta2: s.Beta2, Eps: s.Eps, WeightDecay: s.WeightDecay}
	for _, n := range sizes {
		o.M = append(o.M, make([]float32, n))
		o.V = append(o.V, make([]float32, n))
	}
	return o
}

// Update applies one step to params with grads at learning rate lr;
// decay[i] says whether params[i] gets weight decay.
func (o *AdamW) Update(params, grads [][]float32, decay []bool, lr float64) {
	o.UpdateScaled(params, grads, decay, lr, 1)
}

// UpdateScaled is Update on the gradients multiplied by scale first (in
// place, each product rounded to float32, as ClipGlobalNorm scales them):
// a clipped step, in which each piece of the gradients is scaled just
// before the update reads it, instead of in a pass of its own.
func (o *AdamW) UpdateScaled(params, grads [][]float32, decay []bool, lr float64, scale float32) {
	o.Step++
	bc1 := 1 - math.Pow(o.Beta1, float64(o.Step))
	bc2 := 1 - math.Pow(o.Beta2, float64(o.Step))
	stepSize := float32(lr / bc1)
	invSqrtBC2 := float32(1 / math.Sqrt(bc2))
	b1, b2, eps := float32(o.Beta1), float32(o.Beta2), float32(o.Eps)
	forPieces(params, func(_, i, lo, hi int) {
		w, g, m, v := params[i][lo:hi], grads[i][lo:hi], o.M[i][lo:hi], o.V[i][lo:hi]
		shrink := float32(1)
		if decay[i] {
			shrink = float32(1 - lr*o.WeightDecay)
		}
		if scale != 1 {
			layers.ScaleInPlace(g, scale)
		}
		// m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g;
		// w = w*shrink - stepSize*m/(sqrt(v)*invSqrtBC2 + eps), in float32.
		layers.AdamWStep(w, g, m, v, b1, b2, eps, shrink, stepSize, invSqrtBC2)
	})
}

// pieceLen is the number of elements one goroutine updates at a time.
const pieceLen = 16384

// forPieces cuts every slice of xs into pieces of pieceLen elements and runs
// fn(k, i, lo, hi) on piece k (xs[i][lo:hi]) on every core. The pieces
// depend only on the slices' lengths, so per-piece partial sums added in
// piece order give the same result on any machine.
func forPieces(xs [][]float32, fn func(k, i, lo, hi int)) {
	ps := cutPieces(xs)
	parallel.Chunks(len(ps), 1, func(_, first, end int) {
		for k := first; k < end; k++ {
			fn(k, ps[k].i, ps[k].lo, ps[k].hi)
		}
	})
}

// piece is xs[i][lo:hi] of forPieces.
type piece struct{ i, lo, hi int }

// cutPieces lists the pieces of forPieces, in order.
func cutPieces(xs [][]float32) []piece {
	var ps []piece
	for i, x := range xs {
		for lo := 0; lo < len(x); lo += pieceLen {
			ps = append(ps, piece{i, lo, min(lo+pieceLen, len(x))})
		}
	}
	return ps
}

// GlobalNorm is the L2 norm of all gradients together: each piece's sum of
// squares (forPieces) in float64, element after element, and those sums
// added in piece order. Four pieces of about the same length are summed in
// one loop, their four chains of additions interleaved so that one's
// latency hides behind the others', without changing the order of any sum.
func GlobalNorm(grads [][]float32) float64 {
	var s float64
	for _, p := range pieceSquares(grads) {
		s += p
	}
	return math.Sqrt(s)
}

// pieceSquares returns the sum of squares of each piece of grads (see
// GlobalNorm).
func pieceSquares(grads [][]float32) []float64 {
	ps := cutPieces(grads)
	partial := make([]float64, len(ps))
	byLen := make([]int, len(ps)) // the pieces, longest first
	for k := range byLen {
		byLen[k] = k
	}
	sort.SliceStable(byLen, func(a, b int) bool { return ps[byLen[a]].hi-ps[byLen[a]].lo > ps[byLen[b]].hi-ps[byLen[b]].lo })
	x := func(k int) []float32 { return grads[ps[k].i][ps[k].lo:ps[k].hi] }
	parallel.Chunks((len(ps)+3)/4, 1, func(_, first, end int) {
		for q := first; q < end; q++ {
			ks := byLen[4*q : min(4*q+4, len(ps))]
			if len(ks) < 4 {
				for _, k := range ks {
					partial[k] = sumSquares(x(k), 0)
				}
				continue
			}
			a, b, c, d := x(ks[0]), x(ks[1]), x(ks[2]), x(ks[3])
			n := min(len(a), len(b), len(c), len(d))
			ah, bh, ch, dh := a[:n], b[:n], c[:n], d[:n]
			var sa, sb, sc, sd float64
			for i := range ah {
				sa += float64(ah[i]) * float64(ah[i])
				sb += float64(bh[i]) * float64(bh[i])
				sc += float64(ch[i]) * float64(ch[i])
				sd += float64(dh[i]) * float64(dh[i])
			}
			partial[ks[0]], partial[ks[1]] = sumSquares(a[n:], sa), sumSquares(b[n:], sb)
			partial[ks[2]], partial[ks[3]] = sumSquares(c[n:], sc), sumSquares(d[n:], sd)
		}
	})
	return partial
}

// sumSquares returns s plus the squares of x, added one after another.
func sumSquares(x []float32, s float64) float64 {
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return s
}

// ClipGlobalNorm scales all gradients by maxNorm/norm when their global norm
// exceeds maxNorm (as torch.nn.utils.clip_grad_norm_, unlike Gorgonia's
// per-element clip), and returns the norm before clipping.
func ClipGlobalNorm(grads [][]float32, maxNorm float64) float64 {
	norm := GlobalNorm(grads)
	if c := ClipScale(norm, maxNorm); c != 1 {
		forPieces(grads, func(_, i, lo, hi int) { layers.ScaleInPlace(grads[i][lo:hi], c) })
	}
	return norm
}

// ClipScale is the factor by which ClipGlobalNorm scales gradients of
// global norm norm: float32(maxNorm/(norm+1e-6)) when norm exceeds maxNorm
// (> 0), else 1.
func ClipScale(norm, maxNorm float64) float32 {
	if maxNorm > 0 && norm > maxNorm {
		return float32(maxNorm / (norm + 1e-6))
	}
	return 1
}
