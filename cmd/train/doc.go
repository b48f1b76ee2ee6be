// Command train trains a decoder-only language model from a YAML config and
// writes its run directory: the resolved config, the tokenizer,
// checkpoints, metrics and a summary. The model reads bytes (the default)
// or the tokens of a byte-level BPE, trained on the corpus's training split
// or loaded from a Hugging Face tokenizer.json (the config's
// data.tokenizer, go doc ./train); every length is in its tokens.
//
// Usage:
//
//	go run ./cmd/train [--config FILE] [--out DIR] [--pos SCHEME] [--steps N] [--seed S] [--no-lock]
//	go run ./cmd/train --out DIR --resume [--steps N] [--config FILE] [--no-lock]
//
// The first form starts a run; the second continues one from its newest
// good checkpoint. The config's keys and their defaults are in the train
// package's documentation (go doc ./train); configs/ holds the shipped
// ones (tiny.yaml, small.yaml, micro.yaml, ...). --help prints the flags.
//
// # Flags
//
//	--config FILE
//		The run config (YAML). Default configs/tiny.yaml. With --resume it
//		is optional, and checked against the run (see Resuming).
//	--out DIR
//		The run directory. Default: the config's out key if it sets one;
//		otherwise runs/<name>, name being the config's name key (by
//		default the config file's name), or runs/<name>-<pos> when --pos
//		changes the config's scheme, so that another scheme never writes
//		into the config's own run.
//	--pos SCHEME
//		The position scheme, overriding the config's model.pos: alibi,
//		sinusoidal, none, rope, t5, kerple, fire, fox, stick-breaking,
//		pope, or a scheme a program registered (position.Register). The
//		training variants are config keys (model.random_positions,
//		model.drope_step); cmd/experiment's labels such as rope+drope set
//		them.
//	--steps N
//		Training steps, overriding the config's train.steps; at least 1.
//		With --resume, continue the run to N steps.
//	--seed S
//		The random seed, overriding the config's model.seed (the data
//		order uses S+1); not negative.
//	--resume
//		Continue the run in the run directory from its newest checkpoint
//		that loads cleanly, with the settings it was started with.
//	--no-lock
//		Write the run without locking its directory. Only for file
//		systems that refuse locks: then no other process may write the
//		run.
//
// # Output
//
// Standard output gets two lines at the end of a run: the steps, tokens,
// wall time, training tokens/s, final training loss, validation loss,
// perplexity and bits per byte; then the run directory and its last checkpoint. Standard
// error gets the rest: what is trained, the corpus and its SHA-256, a BPE's
// training and its bytes per token, and
// progress (on a terminal, a bar with the step, loss, tokens/s and time
// left; otherwise a line every 10 seconds).
//
// The run directory holds:
//
//	config.yaml      the resolved config: file, defaults and flags together
//	run.lock         the lock of the one process writing the run, with its PID, host and start time
//	tokenizer.json   the run's tokenizer, in Hugging Face's format (the byte tokenizer is a
//	                 byte-level BPE without merges); a resumed run keeps it
//	checkpoints/     step-NNNNNNNN.safetensors: weights, position buffer, optimizer moments,
//	                 training state, the run config, the corpus's fingerprint and the
//	                 tokenizer's hash (data.tokenizer);
//	                 the newest train.keep_checkpoints are kept
//	metrics.jsonl    a JSON object per logged step (step, loss, lr, grad_norm, tokens,
//	                 tokens_per_second, elapsed_seconds) and per validation (val_loss,
//	                 val_ppl, val_tokens, at the end val_bits_per_byte; at each of train.eval_lens: val_len,
//	                 val_loss_at_len, val_ppl_at_len)
//	summary.json     steps, tokens, wall_seconds, tokens_per_second, final_train_loss,
//	                 val_loss, val_ppl, val_bits_per_byte, tokenizer, tokenizer_hash,
//	                 bytes_per_token, peak_rss_bytes, params, pos, train_len, checkpoint,
//	                 corpus, corpus_bytes, corpus_sha256, go_version (goroot: corpora),
//	                 processor, kernels
//
// val_ppl is scored over non-overlapping windows of the training length:
// the whole validation split, or its first train.final_eval_tokens.
// val_bits_per_byte is the same score as the negative log-likelihood of the
// scored tokens over ln 2 times the bytes of text they stand for, the scale
// on which runs of different tokenizers compare (log2 of val_ppl for a
// byte-level run); bytes_per_token is those bytes over the tokens.
// wall_seconds and elapsed_seconds count the run's wall time, loading and
// evaluation included, summed over its segments when it was resumed (a
// segment's time after its last checkpoint is lost with it).
// tokens_per_second counts training steps only, leaving out the first 5
// steps of each segment, which allocate the buffers. processor names the
// machine ("AMD EPYC (family 25, model 17), 2 CPUs"), kernels the
// instruction sets the run trained with ("avx512"; in bf16 also the
// products', "avx512, bf16 on avx512f"). The checkpoint's tensors and
// metadata are described in the model package's documentation (go doc
// ./model).
//
// # Resuming
//
// A fresh run refuses a directory that already holds checkpoints or a
// summary.json, and changes nothing: continue it with --resume, or train
// elsewhere with --out. A resumed run takes its settings from its newest
// checkpoint that loads cleanly (a corrupt newer one is skipped, with a
// message), which holds the whole run config as it was started, flags
// included: so "go run ./cmd/train --out DIR --resume" continues the run
// in DIR however it was started, and it is the command printed when a run
// is interrupted. A run stopped before its first checkpoint resumes from
// its config.yaml, from step 0.
//
//   - --seed or --pos given on resume must match the run's, or it is
//     refused.
//   - --steps N continues the run to N steps. The learning-rate schedule
//     is a function of the step and the total, so the cosine decay is
//     recomputed over the new total: the rate jumps back up from min_lr
//     and decays again to the new end. The result is not what a fresh
//     N-step run gives.
//   - --config FILE on resume must match the checkpoint in every key
//     except name, out and the bookkeeping keys (train.log_every,
//     eval_every, eval_tokens, eval_lens, final_eval_tokens,
//     checkpoint_every, keep_checkpoints, which then take the file's
//     values); otherwise it is refused, naming the first key that
//     differs. A file whose train.steps differs from the run's is refused
//     unless --steps is given too. With --config, a directory without a
//     run yet starts one, so that one command serves the first start and
//     every restart (a scheduler's requeue).
//   - The corpus must have the SHA-256 the run trained on.
//   - A run that already reached its steps and wrote its summary changes
//     nothing and says so (exit 0); one that reached its last step but
//     stopped during its final evaluation is completed; one that has done
//     more steps than asked, and not finished, is refused.
//
// # Signals
//
// SIGINT (Ctrl-C) or SIGTERM finishes the step under way, writes a
// checkpoint and exits, printing the command that resumes the run.
//
// # One writer per run directory
//
// While it writes a run, the command holds an exclusive advisory lock on
// the directory's run.lock (an open file description lock on Linux,
// flock(2) elsewhere). A second writer refuses at once, naming the holder
// (PID, host and since when), and changes nothing. The kernel releases the
// lock however the process ends, so a killed run leaves no stale lock.
// Readers (cmd/eval, cmd/generate) never take it. On NFS the lock holds
// between machines (NFSv4; NFSv3 with its lock service, not a mount with
// nolock); on Lustre it needs the flock mount option (localflock excludes
// writers on one node only). Where the file system refuses locks, the
// command stops before writing anything and names --no-lock.
//
// # One run on several machines (MPI)
//
// Built with the tag mpi (Open MPI through cgo; Debian: libopenmpi-dev and
// openmpi-bin) and started by mpirun, or by srun or mpirun inside a Slurm
// allocation, the command trains one run on every process the launcher
// started (its ranks), data-parallel:
//
//	mpirun -np 4 --hostfile hosts go run -tags mpi ./cmd/train --config configs/small.yaml
//	sbatch --ntasks=4 --wrap "mpirun go run -tags mpi ./cmd/train --config configs/small.yaml"
//
// train.batch is split across the ranks (refused in one line when their
// number does not divide it): every rank draws every step's whole batch from
// the one sampler and trains on its share of the windows, so the windows a
// step trains on do not depend on the number of ranks, and a run resumed
// with another number (or as a single process) continues the same sequence.
// One all-reduce a step sums the ranks' gradients over a flat float32
// buffer; every rank takes the same AdamW step and holds the same weights.
// Threads per rank are as for a single process (all the rank's cores; with
// several ranks on one machine, set GOMAXPROCS). Every rank needs the corpus
// and the program; rank 0 alone writes the run directory and sends the
// others the state it starts from (a fresh run's directory need not be
// shared; to resume, every rank reads its config and tokenizer.json, so it
// must be reachable from every machine). At the
// start, every rank's config, executable, corpus and tokenizer are compared
// with rank 0's: a difference stops the run with one line naming the rank
// and what differs. summary.json and each metrics line give the ranks and
// the all-reduce's share of the step time. A rank killed or lost ends the
// job (mpirun says which rank); an error on one rank alone is printed with
// the rank and ends the job (MPI_Abort); the last checkpoint is intact, and
// the printed command (mpirun -np N go run -tags mpi ./cmd/train --out DIR
// --resume) continues the run. SIGINT or SIGTERM to mpirun stops every rank
// after the same step, with a checkpoint, if the step ends before mpirun's
// own deadline (it kills the ranks one second after SIGTERM; give a longer
// one with --mca odls_base_sigkill_timeout SECONDS, or signal the ranks
// themselves: Slurm's --signal). A build without the tag started as one of
// several processes refuses in one line, saying how to build for MPI,
// rather than training copies of the run.
//
// # Exit status
//
//	0    the run finished, was already finished, or --help was asked for
//	1    an error, in one line on standard error: a config or corpus that
//	     does not load, a run that exists, a locked directory, a resume that
//	     does not match the run, a failed write
//	2    a malformed command line: an unknown flag, a missing or bad value,
//	     an argument that is not a flag, --steps below 1, a negative --seed
//	130  interrupted by SIGINT (143 by SIGTERM) after writing a checkpoint
//
// # Examples
//
// Train the tiny ALiBi model (0.86M parameters, 2000 steps on Newton's
// Opticks, shipped with the project) into runs/tiny:
//
//	go run ./cmd/train --config configs/tiny.yaml
//
// The same model with sinusoidal positions, into runs/tiny-sinusoidal:
//
//	go run ./cmd/train --config configs/tiny.yaml --pos sinusoidal
//
// Continue runs/tiny to 3000 steps, and resume an interrupted run:
//
//	go run ./cmd/train --out runs/tiny --resume --steps 3000
//	go run ./cmd/train --out runs/tiny --resume
package main
