package position

import (
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
// T5Scheme, KerpleScheme and FireScheme (layerstest.FullBiasScheme, a
// materialised (T, T) bias, is the reference they are tested against).
// Rotary positions change the queries and keys instead (layers.Rope). Another package can
// implement one: every method is exported, and the kernel bias it returns
// is a KernelBias (a TrainableBias when the scheme is trainable).
//
// The attention op keeps the bias of its last call and asks for a new one
// only when the parameters changed or the keys grew (layers keeps it in a memo): Bias32
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

// KernelBias is an additive position bias applied inside the tiled
// attention kernels, one row of keys at a time, so that no (T, T) bias is
// ever built. A BiasScheme returns one for a call's geometry.
//
// Add adds the bias of head h for the query at absolute position pos to the
// scores of keys j0..j0+len(row)-1, all of which are <= pos (the kernels
// never ask for masked keys). It is called concurrently from several
// goroutines and must not modify the receiver.
type KernelBias[T float] interface {
	Add(h, pos, j0 int, row []T)
}

// TrainableBias is a KernelBias with trainable entries. The backward kernel
// passes it dS, the gradient of the loss with respect to the biased scores,
// which is also the gradient with respect to the bias entries that were
// added to them.
//
// GradLen is the size of one gradient accumulator (for example the number
// of entries of a bias table). Accumulate adds the gradient ds of the
// entries that Add(h, pos, j0, row) used, row by row, into acc; it must
// touch only acc and is called concurrently on distinct accumulators.
type TrainableBias[T float] interface {
	KernelBias[T]
	GradLen() int
	Accumulate(acc []T, h, pos, j0 int, ds []T)
}
