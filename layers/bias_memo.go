package layers

import (
	"fmt"
	"math"

	"github.com/alibi-go/alibi/layers/position"
)

// schemeBias returns s's kernel bias in the element type of params.
func schemeBias[T float](s position.BiasScheme, params []T, heads, kLen int) position.KernelBias[T] {
	switch p := any(params).(type) {
	case []float32:
		return any(s.Bias32(p, heads, kLen)).(position.KernelBias[T])
	case []float64:
		return any(s.Bias64(p, heads, kLen)).(position.KernelBias[T])
	}
	panic(fmt.Sprintf("layers: parameters of type %T", params))
}

// paramGrad calls s's ParamGrad32 or ParamGrad64, following T.
func paramGrad[T float](s position.BiasScheme, params, biasGrad, out []T) {
	switch p := any(params).(type) {
	case []float32:
		s.ParamGrad32(p, any(biasGrad).([]float32), any(out).([]float32))
	case []float64:
		s.ParamGrad64(p, any(biasGrad).([]float64), any(out).([]float64))
	default:
		panic(fmt.Sprintf("layers: parameters of type %T", params))
	}
}

// biasMemo keeps the kernel bias of an attention op's last call, so that a
// training step's forward and backward passes, and every step of
// generation, build it once.
type biasMemo[T float] struct {
	last *memoEntry[T]
}

// memoEntry is a kernel bias with a copy of the parameters it was made from
// and the number of keys it covers.
type memoEntry[T float] struct {
	params []T
	n      int
	bias   position.KernelBias[T]
}

// bias returns a kernel bias of s for at least kLen keys. The one kept is
// returned again while the parameters are bit-identical to the ones it was
// made from and it covers kLen keys. Otherwise a new one is made and kept:
// for max(kLen, 2*previous n) keys when only the length grew, so that
// generating token after token rebuilds it a logarithmic number of times,
// and for kLen keys when the parameters changed (after an optimizer step).
func (m *biasMemo[T]) bias(s position.BiasScheme, params []T, heads, kLen int) position.KernelBias[T] {
	same := m.last != nil && sameBits(m.last.params, params)
	if same && m.last.n >= kLen {
		return m.last.bias
	}
	n := kLen
	if same {
		n = max(kLen, 2*m.last.n)
	}
	m.last = &memoEntry[T]{params: append([]T(nil), params...), n: n, bias: schemeBias(s, params, heads, n)}
	return m.last.bias
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
