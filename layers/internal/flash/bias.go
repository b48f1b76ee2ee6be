package flash

// Float is the element type of the kernels: float32 for models, float64 for
// gradient checks.
type Float interface{ ~float32 | ~float64 }

// float is Float, the short name the kernels use.
type float = Float

// Bias is an additive position bias applied inside the kernels, one row of
// keys at a time, so that no (T, T) bias is ever built.
//
// Add adds the bias of head h for the query at absolute position pos to the
// scores of keys j0..j0+len(row)-1, all of which are <= pos (the kernels
// never ask for masked keys). It is called concurrently from several
// goroutines and must not modify the receiver.
type Bias[T Float] interface {
	Add(h, pos, j0 int, row []T)
}

// MaxBias is a Bias that can also return the maximum of the row it has just
// biased: AddMax(h, pos, j0, row) does what Add does and returns the
// maximum of the updated row (-Inf if it is empty). The forward pass's
// softmax needs that maximum, and taking it as the row is biased saves a
// pass over the row (a tenth of the forward pass at 128 keys).
type MaxBias[T Float] interface {
	Bias[T]
	AddMax(h, pos, j0 int, row []T) T
}

// ExpBias is a Bias that can also turn the row it biases into the
// backward pass's probabilities in the same pass over the row:
// AddExpShift(h, pos, j0, row, n, shift) adds the bias of keys
// j0..j0+n-1 to row[:n], as Add(h, pos, j0, row[:n]) does, and then sets
// every element of row (the keys beyond n padded, see padInvisible) to
// exp(row[i] - shift), with the bits of the two steps taken apart
// (vmath.ExpSubOf). The backward pass recomputes P = exp(S + bias - lse) so, and
// reads and writes its scores once instead of twice.
type ExpBias[T Float] interface {
	Bias[T]
	AddExpShift(h, pos, j0 int, row []T, n int, shift T)
}

// TrainableBias is a Bias with trainable entries. Backward passes it dS,
// the gradient of the loss with respect to the biased scores, which is also
// the gradient with respect to the bias entries that were added to them.
//
// GradLen is the size of one gradient accumulator (for example the number
// of entries of a bias table). Accumulate adds the gradient ds of the
// entries that Add(h, pos, j0, row) used, row by row, into acc; it must
// touch only acc and is called concurrently on distinct accumulators.
type TrainableBias[T Float] interface {
	Bias[T]
	GradLen() int
	Accumulate(acc []T, h, pos, j0 int, ds []T)
}
