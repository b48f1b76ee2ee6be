package train

import (
	"math"
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
	o.Step++
	bc1 := 1 - math.Pow(o.Beta1, float64(o.Step))
	bc2 := 1 - math.Pow(o.Beta2, float64(o.Step))
	stepSize := float32(lr / bc1)
	invSqrtBC2 := float32(1 / math.Sqrt(bc2))
	b1, b2, eps := float32(o.Beta1), float32(o.Beta2), float32(o.Eps)
	for i, w := range params {
		g, m, v := grads[i], o.M[i], o.V[i]
		shrink := float32(1)
		if decay[i] {
			shrink = float32(1 - lr*o.WeightDecay)
		}
		for j := range w {
			m[j] = b1*m[j] + (1-b1)*g[j]
			v[j] = b2*v[j] + (1-b2)*g[j]*g[j]
			denom := float32(math.Sqrt(float64(v[j])))*invSqrtBC2 + eps
			w[j] = w[j]*shrink - stepSize*m[j]/denom
		}
	}
}

// GlobalNorm is the L2 norm of all gradients together.
func GlobalNorm(grads [][]float32) float64 {
	var s float64
	for _, g := range grads {
		for _, v := range g {
			s += float64(v) * float64(v)
		}
	}
	return math.Sqrt(s)
}

// ClipGlobalNorm scales all gradients by maxNorm/norm when their global norm
// exceeds maxNorm (as torch.nn.utils.clip_grad_norm_, unlike Gorgonia's
// per-element clip), and returns the norm before clipping.
func ClipGlobalNorm(grads [][]float32, maxNorm float64) float64 {
	norm := GlobalNorm(grads)
	if maxNorm > 0 && norm > maxNorm {
		c := float32(maxNorm / (norm + 1e-6))
		for _, g := range grads {
			for j := range g {
				g[j] *= c
			}
		}
	}
	return norm
}
