// Package model assembles the decoder-only language model from layers: its
// configuration, its weights (which live outside any graph, so one set serves
// graphs of every length), the graphs themselves, generation and checkpoints.
//
// # Using a trained model
//
// LoadCheckpoint reads a checkpoint file (LatestCheckpoint, the newest of a
// run directory) and Checkpoint.Model makes the model. The model reads
// token ids of its run's tokenizer (data.Tokenizer; Config.Vocab is its
// size), 32-bit ids widened to the ints a graph reads; for a byte-level run
// the id of a byte is its value. Generate continues prompts (greedily with
// Greedy), encoding them and turning each generated token back into its
// bytes with GenerateOptions.Tokenizer. To score a
// text, eval.Perplexity gives its mean negative log-likelihood and
// perplexity; for the loss of one batch of ids and targets, build a graph
// with NewGraph (without gradients, to evaluate), Execute it and read
// Graph.LossValue and Graph.LogitsData.
//
// # The model
//
// Pre-LayerNorm blocks: x += out(attention(LN1(x))); x += fc2(gelu(fc1(LN2(x)))),
// then a final LayerNorm and an untied output head. The token embedding is
// initialised N(0, 1/d) and multiplied by √d on input; linear layers are
// initialised N(0, 0.02), the residual projections (out, fc2)
// N(0, 0.02/√(2·layers)); GELU is exact (erf); LayerNorm uses eps 1e-5
// and the biased variance. The position scheme (Config.Pos, looked up in
// the registry of layers/position) decides how positions enter: a table
// added to the embeddings, a rotation of queries and keys, or a bias inside
// the attention kernel.
//
// # Generation
//
// Every layer keeps a key/value cache; a prompt is prefilled in chunks of 64
// tokens, then each step runs one token through the graph NewDecodeGraph
// builds: the same layers, weights and attention kernel as training, with
// the queries at their absolute positions (the offset is the number of
// cached tokens). Prompts of different lengths decode together in one batch
// without padding, each getting exactly the tokens it gets alone. The cached
// logits equal the full forward pass over the same prefix for every scheme
// (tested past five times the training length), which guards against the
// known ALiBi cache bugs: no bias in incremental decoding, a bias built over
// the query length, a bias not shifted by the cache's length.
//
// # Checkpoints
//
// A checkpoint is one safetensors file (package model/safetensors), readable
// elsewhere (in Python, safetensors.numpy.load_file). All tensors are
// float32, little-endian; matrices are stored (in, out): a linear layer
// computes x·W + b on row vectors.
//
//	tok_emb.weight                       (vocab, d)   token embeddings
//	layers.L.ln1.weight, .ln1.bias       (d)          LayerNorm before attention
//	layers.L.attn.qkv.weight, .qkv.bias  (d, 3d)      queries, keys, values side by side
//	                                                  (columns [0,d), [d,2d), [2d,3d));
//	                                                  head h owns columns h·dh..(h+1)·dh-1 of each
//	layers.L.attn.out.weight, .out.bias  (d, d)       output projection of the heads
//	layers.L.ln2.weight, .ln2.bias       (d)          LayerNorm before the MLP
//	layers.L.mlp.fc1.weight, .fc1.bias   (d, d_ff)    first MLP layer, then GELU
//	layers.L.mlp.fc2.weight, .fc2.bias   (d_ff, d)    second MLP layer
//	ln_f.weight, ln_f.bias               (d)          final LayerNorm
//	head.weight                          (d, vocab)   output head (not tied)
//	buffers.alibi_slopes                 (heads)      alibi only; constant
//	pos.t5.weight                        (32, heads)  t5 only: a bias per bucket and head
//	layers.L.attn.kerple                 (2, heads)   kerple only: r1, r2
//	layers.L.attn.fire                   (flat)       fire only: W1, b1, W2, b2, c, L/train_len
//	layers.L.attn.fgate.weight, .bias    (d, heads)   fox only: the forget gate
//	layers.L.attn.sb.remainder           (heads, dh)  stick-breaking only: what the keys leave goes to
//	layers.L.attn.pope.phase             (heads, dh)  pope only: the phases delta, in [-2 pi, 0]
//	layers.L.attn.logit_scale            (heads)      logit_scale log-length only
//	optim.m.NAME, optim.v.NAME           as NAME      AdamW's moments
//
// The metadata holds config (the model config as JSON), format, sha256
// (over every tensor and entry: a flipped bit is caught on load),
// train.config (the whole run config), the training state (train.step,
// train.tokens, train.loss, train.elapsed_seconds, train.optimizer_step,
// train.sampler and the timing counters) and the corpus's fingerprint
// (data.corpus, data.val_frac, data.sha256, data.bytes, data.go_version),
// and data.tokenizer (MetaTokenizer), the Hash of the run's tokenizer,
// whose tokenizer.json the run directory holds (TokenizerFile); a
// checkpoint without it is a byte-level run's.
// Checkpoints are written atomically: a temporary file, fsync, rename, and
// an fsync of the directory.
package model
