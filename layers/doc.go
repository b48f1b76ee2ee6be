// Package layers holds the Gorgonia building blocks of a decoder-only
// transformer: linear, embedding, LayerNorm, GELU MLP, multi-head attention
// (with its key/value cache), the rotary embedding op and cross-entropy, as
// custom Gorgonia ops with hand-written, parallel forward and backward
// kernels, each checked against finite differences in the tests.
//
// # Packages
//
//	layers                 the Gorgonia ops (op_*.go, attention.go, kvcache.go,
//	                       rope.go, layers.go); bias_memo.go keeps an
//	                       attention op's last kernel bias; ln_after.go runs
//	                       a LayerNorm's backward inside the product before it
//	layers/position        the position schemes: the Scheme interface, the
//	                       registry, one file per scheme, the kernel biases
//	layers/internal/flash  the tiled attention kernel on plain slices
//	layers/internal/gemm,
//	layers/internal/vmath  the matrix and row kernels (assembly + Go)
//	layers/parallel        fixed-chunk loops on every core
//	layers/layerstest      test support: materialised references, tolerances
//
// Imports go one way: layers imports position and flash; flash imports
// neither (it defines the small Bias interface it consumes, which
// position.KernelBias satisfies); position imports neither.
//
// # Position schemes
//
// A position scheme is one value implementing position.Scheme (see that
// package): its parameters, a constant buffer, and how it enters the model:
// a table added to the token embeddings, a rotation of queries and keys
// (Rope, in this package), or a bias inside the attention kernel (a
// position.BiasScheme, given to Attention in AttentionConfig.PositionBias). Every
// layer function takes and returns *gorgonia.Node values, so weights live
// outside any graph and one set of weights serves graphs of any length.
//
// # From cmd/train to one head's ALiBi bias
//
// Building the graph (once per length):
//
//	main ─▶ train.Train ─▶ state.trainSteps              (cmd/train/main.go, train/train.go)
//	  ─▶ model.Model.NewGraph ─▶ build ─▶ positionBias   (model/model.go)
//	       ├─ Config.Scheme ─▶ position.Lookup("alibi")  (model/config.go, position/registry.go)
//	       ├─ AlibiPosition.AttentionBias                (position/alibi.go)
//	       └─ MultiHeadAttention.Forward ─▶ Attention    (layers/layers.go, layers/attention.go)
//
// Running it (every step):
//
//	stepper.run ─▶ Graph.Execute ─▶ attentionOp.Do ─▶ attnForwardOp ─▶ attnBias
//	                                                      (train/train.go, layers/attention.go)
//	  ├─ biasMemo.bias ─▶ AlibiScheme.Bias32 ─▶ alibiTables
//	  │    ─▶ AlibiBias(AlibiSlopes' slopes)             (layers/bias_memo.go, position/alibi.go)
//	  └─ flash.Forward ─▶ head.forward ─▶ softmaxBand
//	       ─▶ MaxBias.AddMax = distanceBias.AddMax:      (internal/flash/forward.go,
//	          head h's row of distances, and its maximum  position/distance_bias.go)
//
// Attention is one op on the tiled ("flash") kernel: the bias is computed
// inside the kernel from the scheme's parameters and the absolute positions
// (with an offset for a key/value cache, KVCache), so no (T, T) array
// exists at any length.
//
// # Attention at any length
//
// Per (sequence, head, block of 64 queries) the kernel walks the keys in
// blocks of 512 with an online softmax (a running maximum and sum per row),
// skipping key blocks entirely after the block's last query; the backward
// pass recomputes the probabilities from each row's saved log-sum-exp
// (FlashAttention-2). Memory therefore grows linearly with the length, in
// training as in evaluation: a step's activations scale with the tokens in
// the batch, not with L. ALiBi reads -m_h·(i-j) from one table per head
// built by position.AlibiBias, the one definition; the learned biases build
// their tables from their parameters; FoX adds c_i - c_j from per-position
// running sums. The tiled kernel equals the materialised bias applied to the
// full scores to float32 rounding (tested for 1 to 12 heads, lengths that
// are not multiples of the blocks, and queries after a cache).
//
// A graph without gradients lends its ops' outputs from one pool (Buffers)
// and takes each back once its last reader has run, so evaluation holds
// about one layer's activations and the logits, whatever the depth;
// model.EvalGraphBytes estimates that memory from the shapes, and cmd/eval
// refuses a length whose estimate exceeds 80% of the memory available.
//
// # Why custom ops, and how they are checked
//
// Every hot operation is a custom Gorgonia op (Op and SDOp) with parallel
// forward and backward kernels: Linear, MLP (Linear, GELU and Linear as one
// op), Attention, Rope, LogLengthScale, ForgetGate, LayerNorm, GELU,
// CrossEntropy, ScaledEmbedding, Add and AddRows. They replace Gorgonia ops
// that are slow or wrong in gorgonia v0.9.18: its softmax is not
// numerically stable, its InverseSqrt gradient is wrong, and it has no GELU
// or LayerNorm. Each op is checked three ways: against central finite
// differences in float64; against the same computation composed from plain
// Gorgonia ops (values and gradients within 1e-11·(1+|value|) in float64;
// the whole model in float32, logits within 4e-6·(1+|logit|)); and, for
// attention, against a worked ALiBi example and the materialised bias of
// every scheme. GELU, which Gorgonia cannot compose (no erf), is checked
// against math.Erfc and finite differences.
package layers
