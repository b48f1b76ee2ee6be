package layers

import (
	"fmt"
	"math"
)

// Projector is implemented by the bias schemes whose parameters must stay in
// a domain (KerpleScheme, FireScheme). The model calls Project on a layer's
// parameters after every optimizer step; it moves each parameter that left
// its domain back to the nearest point of it (a clamp), and leaves the
// others bit-identical.
type Projector interface {
	Project(params []float32)
}

// schemeCache is what a learned scheme keeps between calls of one attention
// op: the kernel bias that build made for n keys from a copy of the
// parameters.
type schemeCache[T float] struct {
	name   string
	params []T
	n      int
	bias   any
}

// reuseBias returns a kernel bias for at least kLen keys made by build(n)
// from params. The bias kept in *cache is returned again while the
// parameters are bit-identical to the ones it was made from (the forward and
// backward passes of a training step; every step of generation) and it
// covers kLen keys. Otherwise a new one is built and kept: for max(kLen,
// 2*previous n) keys when only the length grew, so that generating token
// after token rebuilds it a logarithmic number of times, and for kLen keys
// when the parameters changed (after an optimizer step).
func reuseBias[T float](name string, params []T, kLen int, cache *any, build func(n int) any) any {
	c, ok := (*cache).(*schemeCache[T])
	same := ok && c.name == name && sameBits(c.params, params)
	if same && c.n >= kLen {
		return c.bias
	}
	n := kLen
	if same {
		n = max(kLen, 2*c.n)
	}
	c = &schemeCache[T]{name: name, params: append([]T(nil), params...), n: n, bias: build(n)}
	*cache = c
	return c.bias
}

// sameBits reports whether a and b hold the same bit patterns.
func sameBits[T float](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bitsEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

func bitsEqual[T float](a, b T) bool {
	switch x := any(a).(type) {
	case float32:
		return math.Float32bits(x) == math.Float32bits(any(b).(float32))
	case float64:
		return math.Float64bits(x) == math.Float64bits(any(b).(float64))
	}
	return a == b
}

// newDistanceTables returns the distance tables of a bias that depends on
// the head h < heads and the distance d only: tables[h][n-1-d] = T(f(h, d))
// for d < n (the layout of distanceBias). Every head gets a table, even one
// whose bias is zero, so that its entries receive a gradient.
func newDistanceTables[T float](heads, n int, f func(h, d int) float64) distanceBias[T] {
	tables := make([][]T, heads)
	for h := range tables {
		r := make([]T, n)
		for d := 0; d < n; d++ {
			r[n-1-d] = T(f(h, d))
		}
		tables[h] = r
	}
	return distanceBias[T]{tables: tables}
}

// float64s returns x converted to float64.
func float64s[T float](x []T) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// storeAs writes src, converted, into out, a []float32 or []float64 of the
// same length.
func storeAs(out any, src []float64) {
	switch o := out.(type) {
	case []float32:
		for i, v := range src {
			o[i] = float32(v)
		}
	case []float64:
		copy(o, src)
	default:
		panic(fmt.Sprintf("layers: parameter gradient of type %T", out))
	}
}

// gradAs returns a bias gradient ([]float32 or []float64) in float64.
func gradAs(g any) []float64 {
	switch x := g.(type) {
	case []float32:
		return float64s(x)
	case []float64:
		return x
	}
	panic(fmt.Sprintf("layers: bias gradient of type %T", g))
}

// paramsAs returns scheme parameters ([]float32 or []float64) in float64.
func paramsAs(p any) []float64 {
	switch x := p.(type) {
	case []float32:
		return float64s(x)
	case []float64:
		return x
	}
	panic(fmt.Sprintf("layers: parameters of type %T", p))
}
