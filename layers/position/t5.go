package position

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gorgonia.org/tensor"
)

// T5Scheme is the relative position bias of T5 (Raffel et al.), in its
// causal form (Hugging Face's _relative_position_bucket with bidirectional
// false): the distance n = i - j from the query back to the key falls in a
// bucket,
//
//	bucket(n) = n                                                 for n < B/2,
//	bucket(n) = min(B-1, B/2 + floor(log(n/(B/2)) / log(M/(B/2)) * (B/2)))  otherwise,
//
// exact for short distances and logarithmic up to M, beyond which every
// distance shares the last bucket; head h adds table[bucket(n)][h]. B is
// Buckets (32 when zero) and M MaxDistance (128 when zero).
//
// The parameter is the learned (B, heads) table, row bucket b holding the
// biases of the heads. T5 shares one table between all layers: the model
// passes the same node to every layer's attention op, and Gorgonia sums the
// gradients. The kernel reads per-head distance tables built for each call
// (O(heads x keys)); the gradient of their entries is folded into buckets.
type T5Scheme struct {
	Buckets     int
	MaxDistance int
}

// Default T5 settings.
const (
	T5Buckets     = 32
	T5MaxDistance = 128
)

// settings returns the number of buckets and the maximum distance, with the
// defaults for zero fields.
func (s T5Scheme) settings() (buckets, maxDist int) {
	buckets, maxDist = s.Buckets, s.MaxDistance
	if buckets == 0 {
		buckets = T5Buckets
	}
	if maxDist == 0 {
		maxDist = T5MaxDistance
	}
	return buckets, maxDist
}

// Name implements BiasScheme.
func (s T5Scheme) Name() string {
	b, m := s.settings()
	return fmt.Sprintf("t5(buckets=%d,max=%d)", b, m)
}

// Bucket returns the bucket of distance n >= 0 (negative distances, which
// the causal mask hides, count as 0). Distances below B/2 are their own
// bucket and those from MaxDistance on the last, without floating point, so
// that no logarithm of 0 is taken; in between, the float64 formula. The
// settings must be valid (see CheckParams): B >= 2 and M > B/2.
func (s T5Scheme) Bucket(n int) int {
	b, m := s.settings()
	exact := b / 2
	switch {
	case n < exact:
		return max(n, 0)
	case n >= m:
		return b - 1
	}
	// n >= exact >= 1: the ratio is at least 1 and in [0, 1) after the
	// division by log(m/exact), so the conversion stays below b.
	v := exact + int(math.Log(float64(n)/float64(exact))/math.Log(float64(m)/float64(exact))*float64(b-exact))
	return min(v, b-1)
}

// CheckParams implements BiasScheme: the settings must be valid and the
// table (buckets, heads).
func (s T5Scheme) CheckParams(p tensor.Shape, call BiasCall) error {
	heads := call.Heads
	b, m := s.settings()
	if b < 2 || m <= b/2 {
		return fmt.Errorf("T5 bias with %d buckets and maximum distance %d: want at least 2 buckets and a maximum distance above half of them", b, m)
	}
	if len(p) != 2 || p[0] != b || p[1] != heads {
		return fmt.Errorf("a T5 bias table has shape %v, want (%d, %d)", p, b, heads)
	}
	return nil
}

// Trainable implements BiasScheme: the table is learned.
func (T5Scheme) Trainable() bool { return true }

// Bias32 implements BiasScheme: per-head distance tables.
func (s T5Scheme) Bias32(p []float32, heads, kLen int) KernelBias[float32] {
	return t5Tables(s, p, heads, kLen)
}

// Bias64 implements BiasScheme: per-head distance tables.
func (s T5Scheme) Bias64(p []float64, heads, kLen int) KernelBias[float64] {
	return t5Tables(s, p, heads, kLen)
}

// ParamGrad32 implements BiasScheme (see t5ParamGrad).
func (s T5Scheme) ParamGrad32(p, biasGrad, out []float32) { t5ParamGrad(s, p, biasGrad, out) }

// ParamGrad64 implements BiasScheme (see t5ParamGrad).
func (s T5Scheme) ParamGrad64(p, biasGrad, out []float64) { t5ParamGrad(s, p, biasGrad, out) }

// t5Tables returns the distance tables of the bucket table p (buckets x
// heads) for n keys: the bias of head h at distance d is
// p[bucket(d)*heads + h].
func t5Tables[T float](s T5Scheme, p []T, heads, n int) distanceBias[T] {
	buckets := s.buckets(n)
	return newDistanceTables[T](heads, n, func(h, d int) float64 {
		return float64(p[buckets[d]*heads+h])
	})
}

// buckets returns the bucket of every distance below n.
func (s T5Scheme) buckets(n int) []int {
	b := make([]int, n)
	for d := range b {
		b[d] = s.Bucket(d)
	}
	return b
}

// t5ParamGrad folds the gradient of the distance tables (heads x n, entry
// h*n + n-1-d for distance d) into the table: the gradient of entry
// (bucket, h) is the sum over the distances d in that bucket.
func t5ParamGrad[T float](s T5Scheme, params, biasGrad, out []T) {
	p, g := float64s(params), float64s(biasGrad)
	nb, _ := s.settings()
	heads := len(p) / nb
	n := len(g) / heads
	buckets := s.buckets(n)
	sum := make([]float64, len(p))
	for h := 0; h < heads; h++ {
		row := g[h*n : (h+1)*n]
		for d, b := range buckets {
			sum[b*heads+h] += row[n-1-d]
		}
	}
	storeAs(out, sum)
}

// T5Position is the scheme "t5" (Raffel et al.): T5Scheme's bias with the
// default settings, from one learned (T5Buckets, heads) table that every
// layer shares, stored as "pos.t5.weight".
type T5Position struct{ NoPosition }

// t5TableName is the name of T5's table in weights and checkpoints.
const t5TableName = "pos.t5.weight"

// Name implements Scheme.
func (T5Position) Name() string { return "t5" }

// SharedParams implements Scheme: the table, initialised
// N(0, d_model^-1/2) as Hugging Face's T5 initialises it, without weight
// decay (which would pull it toward the position-free model).
func (T5Position) SharedParams(shape ModelShape) []ParamSpec {
	std := 1 / math.Sqrt(float64(shape.DModel))
	n := T5Buckets * shape.Heads
	return []ParamSpec{{Name: t5TableName, Shape: []int{T5Buckets, shape.Heads}, Init: func(rng *rand.Rand) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * std)
		}
		return v
	}}}
}

// AttentionBias implements Scheme: T5Scheme on the shared table.
func (T5Position) AttentionBias(ModelShape) (BiasScheme, string) { return T5Scheme{}, t5TableName }

// EvalBytes implements Scheme: each layer's distance tables of the shared buckets, one float32 per head and key.
func (T5Position) EvalBytes(shape ModelShape, _, length int) int64 {
	return distanceTableBytes(shape, length)
}
