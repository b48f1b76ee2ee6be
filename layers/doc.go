// Package layers holds the Gorgonia building blocks of a decoder-only
// transformer: linear, embedding, LayerNorm, GELU MLP, multi-head attention,
// cross-entropy, and the position schemes.
//
// # Position schemes
//
// A position scheme is one value implementing PositionScheme: its name, its
// parameters (ParamSpec: names, shapes, initialisation, weight decay,
// projection after an optimizer step), a constant buffer, and how it enters
// the model: a table added to the token embeddings, a rotation of queries
// and keys (Rope), or a bias inside the attention kernel (a BiasScheme,
// whose Bias32 and Bias64 give a KernelBias for a call's heads and keys).
// One registry holds the schemes by name: the seven built-in ones (alibi,
// sinusoidal, none, rope, t5, kerple, fire, one position_*.go file each),
// and any other added with RegisterScheme; LookupScheme finds one for a
// model config. Every method is exported, so another module can write and
// register a scheme.
//
// The position math lives here, once: AlibiSlopes gives the per-head slopes of
// Press et al. (ICLR 2022), AlibiBias the additive (heads, query, key) bias
// with its causal mask, CausalMask the mask alone, SinusoidalTable the
// sin/cos table, Rope the rotary embedding, and the BiasSchemes (ALiBi, T5,
// KERPLE, FIRE) the biases that attention adds to its scores. Every layer
// function takes and returns *gorgonia.Node values, so weights live outside
// any graph and one set of weights serves graphs of any length.
//
// # From cmd/train to one head's ALiBi bias
//
// Building the graph (once per length):
//
//	cmd/train command ─▶ train.Train ─▶ state.trainSteps           (train/train.go)
//	  ─▶ model.Model.NewGraph ─▶ build                              (model/model.go)
//	       ├─ Config.Scheme ─▶ LookupScheme("alibi")               (scheme_registry.go)
//	       └─ positionBias ─▶ AlibiPosition.AttentionBias           (position_alibi.go)
//	            ─▶ MultiHeadAttention.Forward ─▶ Attention          (layers.go, attention.go)
//
// Running it (every step):
//
//	stepper.run ─▶ Graph.Execute ─▶ attentionOp.Do ─▶ attnForwardOp (attention.go)
//	  ├─ attnBias ─▶ biasMemo.bias ─▶ AlibiScheme.Bias32            (bias_scheme.go, position_bias.go)
//	  │    ─▶ alibiTables ─▶ AlibiBias (with AlibiSlopes' slopes)   (alibi.go)
//	  └─ flash.Forward ─▶ head.forward ─▶ softmaxStep
//	       ─▶ KernelBias.Add = distanceBias.Add: head h's row       (flash.go, position_bias.go)
//
// Attention is one op on tiled ("flash") kernels: the bias is computed
// inside the kernel from the scheme's parameters and the absolute positions
// (with an offset for a key/value cache, KVCache), so no (T, T) array
// exists at any length. The heavy operations (attention, LayerNorm, GELU,
// cross-entropy, bias add) are custom Gorgonia ops with hand-written,
// parallel forward and backward kernels; each is checked against finite
// differences in the tests.
package layers
