// Package train runs training: the loop, the AdamW optimizer with global-norm
// clipping, the warm-up and cosine schedule, periodic validation, progress,
// metrics and checkpoints that let a run resume exactly.
//
// [Train] takes a [Config], usually read from YAML by [LoadConfig], and
// writes a run directory. cmd/train is its command-line front end.
//
// # Config keys
//
// Required (no default): model.d_model, n_layers, n_heads, d_ff, train_len,
// and train.batch, steps, lr. Every other key has the default [Defaults]
// gives, shown here (the shipped configs set some differently):
//
//	name: tiny                # default: the config file's name; the run directory is runs/<name>
//	out: ""                   # run directory, if not runs/<name>
//	model:
//	  vocab: 256              # derived: data.tokenizer's size (256 for bytes, N for bpe:N); a value given must be it
//	  d_model: 128            # required; width, divisible by n_heads
//	  n_layers: 4             # required
//	  n_heads: 4              # required
//	  d_ff: 512               # required; MLP hidden width
//	  pos: alibi              # alibi (default) | sinusoidal | none | rope | t5 | kerple | fire | fox | stick-breaking | pope, or a registered scheme
//	  train_len: 128          # required; training window length L
//	  seed: 1337              # default 1337; initialisation; the data order uses seed+1
//	  logit_scale: none       # default none; log-length: every query times s_h·ln(n), n the keys it sees, s_h learned
//	  random_positions: 0     # default 0 (off); M >= train_len: each step's windows stand at a sorted draw of distinct
//	                          # positions from [0, M) (randomized positional encodings; sinusoidal, rope, alibi, t5, kerple, fire)
//	  drope_step: 0           # default 0 (off), below train.steps; rope only: DroPE drops the rotation after this many
//	                          # steps, the rest recalibrate without it, and evaluation has none
//	data:
//	  corpus: builtin:opticks # default; or goroot:src, a text file, or a directory (read recursively, sorted)
//	  val_frac: 0.1           # default; the last 10% of the bytes are the validation split
//	  tokenizer: bytes        # default bytes; bpe:N (a byte-level BPE of N tokens trained on the training split),
//	                          # or the path of a Hugging Face tokenizer.json (byte-level BPE)
//	  passkey: 0              # default 0; fraction of training windows that are passkey episodes, in [0, 1), in the run's tokens
//	  mqar: 0                 # default 0; in [0, 1): fraction of the other windows that are multi-query associative
//	                          # recall episodes (train_len 51 or more in bytes)
//	  multikey: 0             # default 0; in [0, 1): fraction of the rest that are multi-key needle episodes (106 or more)
//	train:
//	  batch: 16               # required
//	  steps: 2000             # required
//	  lr: 1.0e-3              # required; AdamW peak learning rate, after linear warm-up
//	  min_lr: 1.0e-4          # default 0; the cosine decay ends here
//	  warmup: 100             # default 0
//	  beta1: 0.9              # default 0.9
//	  beta2: 0.99             # default 0.99
//	  eps: 1.0e-8             # default 1e-8
//	  weight_decay: 0.1       # default 0; decoupled; matrices only, not biases, LayerNorm or position biases
//	  clip: 1.0               # default 1.0; clipping by global norm (0: off)
//	  log_every: 10           # default 10; a metrics.jsonl line every N steps
//	  eval_every: 500         # default 500; validation every N steps
//	  eval_tokens: 16384      # default 16384; validation tokens of those checks (at least train_len)
//	  eval_lens: [1024]       # optional; the periodic checks also score these lengths (each at most eval_tokens)
//	  final_eval_tokens: 0    # default 0: the summary's val_ppl scores the whole validation split; N: its first N tokens
//	  checkpoint_every: 500   # default 500
//	  keep_checkpoints: 3     # default 3
//	  precision: fp32         # default fp32; bf16: the linear layers' products in bfloat16, accumulated in float32
//
// Errors are one line and name the key: an unknown key (line 3: unknown key
// "model.d_modle"), a value of the wrong type, a missing required key, or a
// value out of range (NaN and infinities included).
//
// # The run directory
//
//	config.yaml          the resolved config: file, defaults and flags together
//	run.lock             the lock of the one process writing the run (PID, host, start time)
//	tokenizer.json       the run's tokenizer in Hugging Face's format; a resumed run reads it
//	checkpoints/         step-NNNNNNNN.safetensors: weights, optimizer moments, training state,
//	                     the run config, the corpus's fingerprint and the tokenizer's hash
//	                     (model.MetaTokenizer); the last keep_checkpoints are kept
//	metrics.jsonl        one JSON object per logged step (step, loss, lr, grad_norm, tokens,
//	                     tokens_per_second, elapsed_seconds) and per validation (val_loss, val_ppl,
//	                     val_tokens, at the end val_bits_per_byte; at each of eval_lens: val_len,
//	                     val_loss_at_len, val_ppl_at_len)
//	summary.json         steps, tokens, wall_seconds, tokens_per_second, final_train_loss, val_loss,
//	                     val_ppl, val_bits_per_byte, tokenizer, tokenizer_hash, bytes_per_token,
//	                     peak_rss_bytes, params, pos, train_len, checkpoint, corpus,
//	                     corpus_bytes, corpus_sha256, go_version, processor, kernels
//
// val_ppl is scored over non-overlapping windows of the training length
// (the whole validation split, or its first final_eval_tokens), and
// val_bits_per_byte is that score per byte of text: the negative
// log-likelihood over ln 2 times the bytes the scored tokens stand for.
//
// # Tokens
//
// Every length (train_len, eval_tokens, eval_lens, final_eval_tokens) and
// every count of tokens is in the run's tokens. The corpus is split at the
// same byte whatever the tokenizer (val_frac of its bytes), and each split
// is encoded on its own; a BPE (bpe:N) is trained on the training split
// only, deterministically, and saved in the run directory, so that a
// resumed run, cmd/eval and cmd/generate read the same ids. A byte-level
// run reads one token a byte, as a checkpoint that names no tokenizer does:
// its numbers are those of the committed byte-level reports, to the last
// digit.
//
// wall_seconds is the run's wall time, summed over its segments when it
// was resumed; tokens_per_second counts training steps only, leaving out
// the first 5 steps of each segment (they allocate the buffers).
//
// # Resuming
//
// A fresh run refuses a directory that already holds checkpoints or a
// summary.json, naming the two ways out (resume, or another directory), and
// changes nothing. A resumed run ([RunConfig]) takes its settings from its
// newest checkpoint that loads cleanly (a corrupt newer one is skipped, and
// said so), which holds the whole run config as it was started: so
// "go run ./cmd/train --out DIR --resume" continues a run however it was
// started. A run stopped before its first checkpoint resumes from its
// config.yaml. On resume:
//   - a seed or scheme that differs from the run's is refused;
//   - a config file must match the checkpoint in every key except name, out
//     and the bookkeeping keys (log_every, eval_every, eval_tokens,
//     eval_lens, final_eval_tokens, checkpoint_every, keep_checkpoints),
//     and the corpus must have the same SHA-256;
//   - more steps than the run had continue it: the cosine schedule is
//     recomputed over the new total, so the result is not what a fresh run
//     of that many steps would give;
//   - a run that already finished changes nothing and says so; one that
//     stopped during its final evaluation is completed; one with more steps
//     done than asked for is refused.
//
// # One writer per run directory
//
// [Train] (and so cmd/train and cmd/experiment) holds an exclusive advisory
// lock on the run directory's run.lock while it writes the run ([LockRun]).
// A second writer refuses at once, naming the holder, and changes nothing.
// The lock belongs to the open file, so the kernel releases it however the
// process ends. Readers (cmd/eval, cmd/generate) never take it. On Linux it
// is an open file description lock (fcntl F_OFD_SETLK), elsewhere flock(2).
// NFSv4 and NFSv3 with lockd hold it between machines (not a mount with
// nolock); Lustre needs the flock mount option (localflock excludes writers
// on one node only). Where the file system refuses locks, the commands stop
// before writing; their --no-lock flag writes without it, and then keeping
// to one writer is up to you.
package train
