package layers

import (
	"fmt"

	"gorgonia.org/tensor"
)

// BiasScheme is a position scheme that biases attention scores: it turns
// the scheme's parameters (a small tensor, the value of the attention op's
// second input) into the bias that the attention kernel adds to the scores,
// tile by tile, without ever building a (T, T) array. The parameters are a
// constant buffer (the ALiBi slopes) or trainable weights, whose gradient
// the attention op then returns.
//
// The schemes of this package: AlibiScheme (constant slopes), the learned
// T5Scheme, KerpleScheme and FireScheme, and FullBiasScheme (a materialised
// (T, T) bias, the reference the others are tested against). Rotary
// positions change the queries and keys instead (Rope). Another package can
// implement one: every method is exported, and the kernel bias it returns
// is a KernelBias (a TrainableBias when the scheme is trainable).
//
// The attention op keeps the bias of its last call and asks for a new one
// only when the parameters changed or the keys grew (see biasMemo): Bias32
// and Bias64 may therefore build tables of a size that grows with kLen.
type BiasScheme interface {
	// Name identifies the scheme and its settings; it is part of the
	// attention op's hash.
	Name() string
	// CheckParams reports why a parameter tensor of this shape cannot
	// serve an attention op of this geometry, or nil.
	CheckParams(params tensor.Shape, call BiasCall) error
	// Trainable reports whether the parameters receive a gradient.
	Trainable() bool
	// Bias32 and Bias64 return the kernel bias of the parameters for calls
	// of heads heads over keys at positions up to kLen-1. They must not keep
	// params, which the optimizer changes in place; a trainable scheme
	// returns a TrainableBias.
	Bias32(params []float32, heads, kLen int) KernelBias[float32]
	Bias64(params []float64, heads, kLen int) KernelBias[float64]
	// ParamGrad32 and ParamGrad64 turn biasGrad, the gradient of the
	// entries of the kernel bias made from params (of its GradLen), into
	// the gradient of the parameters, written to out (of len(params)).
	// Schemes that are not trainable are never asked.
	ParamGrad32(params, biasGrad, out []float32)
	ParamGrad64(params, biasGrad, out []float64)
}

// BiasCall is the geometry of an attention op, against which a BiasScheme
// checks its parameters.
type BiasCall struct {
	Heads    int  // attention heads
	QueryLen int  // queries per sequence
	Cached   bool // the op reads earlier keys from a KVCache: keys outnumber queries
}

// schemeBias returns s's kernel bias in the element type of params.
func schemeBias[T float](s BiasScheme, params []T, heads, kLen int) KernelBias[T] {
	switch p := any(params).(type) {
	case []float32:
		return any(s.Bias32(p, heads, kLen)).(KernelBias[T])
	case []float64:
		return any(s.Bias64(p, heads, kLen)).(KernelBias[T])
	}
	panic(fmt.Sprintf("layers: parameters of type %T", params))
}

// paramGrad calls s's ParamGrad32 or ParamGrad64, following T.
func paramGrad[T float](s BiasScheme, params, biasGrad, out []T) {
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
	bias   KernelBias[T]
}

// bias returns a kernel bias of s for at least kLen keys. The one kept is
// returned again while the parameters are bit-identical to the ones it was
// made from and it covers kLen keys. Otherwise a new one is made and kept:
// for max(kLen, 2*previous n) keys when only the length grew, so that
// generating token after token rebuilds it a logarithmic number of times,
// and for kLen keys when the parameters changed (after an optimizer step).
func (m *biasMemo[T]) bias(s BiasScheme, params []T, heads, kLen int) KernelBias[T] {
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
