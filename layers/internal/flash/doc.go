// Package flash is the tiled ("flash") causal attention kernel, forward and
// backward, on plain slices: no Gorgonia, no tensors. The attention op of
// package layers and its key/value cache call it; it knows nothing of
// position schemes beyond the Bias a caller hands it.
//
// For one sequence and head, with queries Q (qLen x dHead) at absolute
// positions offset..offset+qLen-1 and keys K, values V (kLen = offset+qLen
// rows) at positions 0..kLen-1,
//
//	S = scale Q K^T + B,  P = softmax(S) over the keys j <= pos of each row,
//	O = P V,  lse_i = log sum_j exp(S_ij),
//
// computed a (query tile, key tile) block at a time with an online softmax
// (Forward), so that memory stays linear in the length: no (T, T) array
// exists, only per-worker scratch of one tile and the transposed key tiles
// of the head at hand, packed once for all its query tiles (at most
// KeyTilesBytes a worker), and in the backward pass contiguous copies of
// one key tile's keys and one query tile's queries and output gradients
// when their rows are a multiple of 1 KiB apart (contiguousRows). Key
// tiles entirely above the diagonal are skipped. A block that crosses the
// diagonal is cut into bands of BandRows query rows, and each band's
// products cover only the keys its last row sees (beyond gemm.KBlock keys,
// the products that sum over the keys, P V and dS K, cover the whole
// block's, the others still the band's: see keySpan); each row's bias,
// maximum and exponentials cover only its visible
// keys (plus, in the exponential, at most 7 keys set to -Inf to fill the
// last vector), and the other probabilities are exactly 0. No mask value
// is added and no bias of an invisible key is read. Backward
// recomputes the probabilities tile by tile from the saved log-sum-exp
// (FlashAttention-2) and, for a TrainableBias, returns the gradient of the
// bias entries.
//
// A sequence may also carry a data-dependent bias by prefix sums (Seq.C,
// the Forgetting Transformer's cumulative log forget gates): B_ij gains
// C_i - C_j, read from one value per position and head, and Backward
// returns its gradient (GradSeq.DC), dC_j = -sum_i dS_ij; the term of C_i,
// sum_j dS_ij, is 0, since a softmax row does not change when a constant is
// added to it.
//
// Contracts: the bias B is added by Bias.Add one row of visible keys at a
// time, never for a masked key (in the forward pass by MaxBias.AddMax when
// the bias has it, which also returns the biased row's maximum for the
// softmax, and in the backward pass by ExpBias.AddExpShift when it has
// that, which also takes the row's exponentials); float32 runs the vmath
// row kernels and the gemm package's single-goroutine Sgemm, float64
// (gradient checks) plain Go and gonum's Dgemm. In float32 the products and
// the softmax's gradient flush subnormal numbers to zero (a probability of
// a distant key times a small gradient falls below 2^-126 often, and each
// subnormal number costs an Intel core a microcode assist), so their
// results below 2^-126 are 0. Units of work are handed out one at a time,
// each writing rows of its own; with a bias gradient the backward's units
// go in fixed chunks (package parallel) and the chunks' accumulators are
// added in chunk order, so every result is bit-identical from run to run,
// whatever the number of cores or the scheduling. Accuracy: vmath's
// exponential has a relative error below 5e-7 and its row sums below 2e-7;
// against a materialised softmax in float64, the float32 outputs and
// log-sum-exps stay within 1e-5 of the largest value (layerstest.RelErr),
// which the kernel's tests in package layers check for every bias kind and
// tile split.
//
// Files: seq.go (the views of one sequence's matrices), tiles.go (tile
// sizes, the score tiles' row stride and per-worker buffers), forward.go
// (the forward pass and the online softmax), backward.go (the backward pass
// and the bias gradient), bias.go (the bias interfaces the kernel
// consumes), rows.go (row kernels), gemm.go.
package flash
