// Command eval measures trained runs at several lengths: their perplexity
// at several window lengths (by default 1x, 2x and 4x each run's training
// length L), or, with --task passkey, their retrieval of a pass key at
// several distances, or, with --task mqar or multikey, their recall of one
// key's value among many in episodes of several lengths.
//
// Usage:
//
//	go run ./cmd/eval [--run DIR ...] [--checkpoint FILE ...] [--len N] [--lens N,N,...] [--stride S] \
//	    [--data FILE] [--tokenizer FILE] [--batch-tokens N] [--max-tokens N] [--max-memory SIZE] [--attention-stats] \
//	    [--extend METHOD] [--extend-factor F] [--precision fp32|bf16] [--json FILE] [--plot FILE.png]
//	go run ./cmd/eval --task passkey [--run DIR ...] [--checkpoint FILE ...] [--distances D,D,...] \
//	    [--depths X,X,...] [--episodes N] [--seed S] [--data FILE] [--max-memory SIZE] \
//	    [--extend METHOD --extend-factor F] [--precision fp32|bf16] [--json FILE] [--plot FILE.png]
//	go run ./cmd/eval --task mqar|multikey [--run DIR ...] [--checkpoint FILE ...] [--lens N,N,...] \
//	    [--episodes N] [--seed S] [--extend METHOD] [--extend-factor F] [--precision fp32|bf16] [--json FILE]
//
// Each --run is a run directory of cmd/train or cmd/experiment: a finished
// run is read from its final checkpoint, and refused if that file cannot be
// read (the one line names the newest good checkpoint, to evaluate on
// purpose with --checkpoint); a run that has not finished, from its newest
// checkpoint that loads cleanly, labelled "(unfinished at step 755 of 800)"
// in every report. Each --checkpoint is one checkpoint file. With neither,
// it evaluates runs/tiny. A run that a process is still training is read
// all the same (readers never wait for the lock): stderr says so, and the
// run is labelled "(in progress at step 755 of 800)" in every report. A
// run of a position scheme that a program added (position.Register) is
// refused in one line: evaluate it from a Go program that registers the
// scheme and calls eval.OpenRun. --help prints the flags.
//
// Every length, stride and token count is in the run's tokens: a run reads
// the ids of the tokenizer it was trained with, the tokenizer.json in its
// run directory, which its checkpoints name by hash (a run whose
// checkpoints name none is a byte-level run). A checkpoint and a tokenizer
// whose hashes differ are refused in one line, never scored.
//
// # What to evaluate
//
//	--run DIR
//		A run directory to evaluate; repeatable. Default runs/tiny, when
//		no --checkpoint is given either.
//	--checkpoint FILE
//		A checkpoint file to evaluate; repeatable.
//	--task NAME
//		What to measure: perplexity (the default), passkey, mqar or
//		multikey. mqar (multi-query associative recall, Zoology's) and
//		multikey (RULER's needle among several with other keys) score
//		--episodes episodes (default 50) at each --lens (default L, 2L, 4L,
//		8L and 16L), laid out by data.Recall in the run's tokens with
//		filler from its training split: an answer is right when each of
//		its tokens is the model's most probable one given the tokens
//		before it (so greedy decoding writes the value exactly). stdout
//		has the accuracy by length (in brackets, of the answers whose value
//		stands L or more tokens back) and by distance, with each run's
//		effective context (the longest length whose accuracy is at least
//		half its accuracy up to L); --json the eval.RecallReport: per run,
//		points by length (queries, correct, accuracy, accuracy_past_L of
//		the answers whose value stands L or more tokens back, -1 when none
//		does), by_distance in powers of two, short_accuracy and
//		effective_context (0 when the run answers nothing up to L). A model
//		learns the tasks only if it trained on their episodes (data.mqar,
//		data.multikey).
//	--data FILE
//		The text to evaluate on: a file, a directory (read recursively, in
//		sorted order) or a corpus spec such as goroot:src or
//		builtin:opticks, all of it. Default: the validation split of each
//		run's own corpus (perplexity), or its training split (passkey's
//		filler). It is encoded with each run's own tokenizer.
//	--tokenizer FILE
//		The tokenizer.json every run was trained with, for a checkpoint
//		kept outside its run directory. Default: each run's own
//		tokenizer.json. A run whose checkpoint names another tokenizer is
//		refused in one line.
//	--extend METHOD
//		Evaluate every run under an evaluation-time extension of its
//		positions, which changes no weight: pi, ntk, dynamic-ntk or yarn
//		for rope runs, interp for alibi runs (see Extensions). Any other
//		pairing is refused.
//	--extend-factor F
//		The extension's factor, finite and at least 1; needs --extend.
//		Default: each length over the training length, at least 1 (a
//		length up to L is the plain model), for every window of that
//		length, the shorter last one too. A factor so large that the
//		extension's frequencies or slopes leave float32's normal range is
//		refused, naming the largest usable one (about 2.7e34 for pi, ntk and
//		yarn at head width 16; 3.3e35 for interp). --task passkey needs one;
//		dynamic-ntk takes none.
//	--precision P
//		The arithmetic of the linear layers' products: fp32 (the default)
//		or bf16 (bfloat16 factors, float32 accumulation; the run is then
//		reported as "<scheme> bf16", in the passkey report too). Where the
//		CPU lacks AVX512_BF16 (or AVX-512), the products run its arithmetic
//		another way, with the same results, and stderr says how; where it
//		has AMX's tiles they run there, with the tiles' own rounding (not
//		the same bits as elsewhere; ALIBI_SIMD=avx512 keeps AVX512_BF16).
//	--max-memory SIZE
//		The memory the command may use, in bytes or with a K, M, G or T
//		suffix (powers of 1024: 2G, 512M, 2GiB). A length whose estimated
//		memory exceeds 80% of it is refused, with the estimate, before any
//		length is evaluated. Default: the memory available when the
//		command starts (no limit where that cannot be read).
//	--json FILE
//		Write every number to this JSON file (see Output).
//	--plot FILE
//		Write a PNG: perplexity against length, and the loss by position
//		(passkey: accuracy against distance).
//
// # Perplexity
//
//	--lens N,N,...
//		The lengths to evaluate at, comma-separated, instead of 1x, 2x and
//		4x each run's training length.
//	--len N
//		Evaluate at length N too, added to the default lengths or to --lens.
//	--stride S
//		Use sliding windows with stride S (at most each length) instead of
//		non-overlapping ones. Default 0: non-overlapping windows.
//	--batch-tokens N
//		Tokens per forward pass: windows of length n go max(1, N/n) at a
//		time. Default 4096.
//	--max-tokens N
//		Score only the first N tokens of the data. Default 0: all of it.
//	--attention-stats
//		Also report, per layer and head at each length, the mean attended
//		distance sum p_ij (i-j), the entropy -sum p_ij ln p_ij and the share
//		of attention on keys at distance L or more, averaged over the
//		queries at positions L and past (where training never looked).
//
// Two protocols. Non-overlapping windows (the default, and the ALiBi
// paper's main one) score every token once, with the context available
// inside its window; a tail shorter than one window is scored as one
// shorter window. Sliding windows (--stride S) score only the last S
// tokens of each window after the first, so every token is still scored
// once, predicted from at least len-S+1 tokens (stride 1: from the len
// tokens before it). A window of n tokens needs n+1 tokens of data (after
// --max-tokens): a length that does not fit is refused before anything is
// evaluated, naming the tokens available and the longest length that fits.
//
// # Passkey retrieval
//
//	--distances D,D,...
//		Comma-separated distances from the key to the answer. Default
//		48,64,128,256,512,1024,2048,4096,8192,16384.
//	--depths X,X,...
//		Comma-separated depths in [0, 1] the episodes cycle through: the
//		filler before the key as a fraction of the filler after it (0: the
//		prompt opens with the key; 1: it sits in the middle). Default
//		0,0.5,1.
//	--episodes N
//		Episodes per distance. Default 50.
//	--seed S
//		The seed of the episodes: the same seed, distances and depths give
//		the same episodes. Default 1.
//
// An episode is filler text with a 5-digit key stated once ("The pass key
// is 48213. Remember it. 48213 is the pass key."), more filler, then "What
// is the pass key? The pass key is ", after which the model must write the
// key. The distance counts the run's tokens from the end of the statement
// to the first token of the answer (at least the question itself: 38 for a
// byte-level run, 17 under configs/tiny-bpe.yaml's BPE of 1024 tokens). The
// filler is a run of tokens of the run's training split (or --data), and
// never contains the key; the statement, the question and the key are each
// encoded by the run's tokenizer, so the key's digits are split as the
// tokenizer splits them. For each distance the command reports the
// exact-match accuracy of greedy decoding (its decoded bytes begin with the
// key's digits, however its tokens split them), the share of the key's
// tokens right given the true ones before them, and the mean
// log-probability per digit of the key given the prompt (a uniform guess is
// -2.30). Each episode runs once through the key/value cache, its prompt
// prefilled in chunks, which is why an extension needs a fixed
// --extend-factor here and dynamic-ntk (whose score would depend on the
// chunk size) is refused. The effective context length is the largest
// distance whose accuracy is at least half the run's own accuracy at
// distances up to L/2. A model learns the task only if it trained on
// episodes: train with configs/tiny-passkey.yaml (data.passkey: 0.5).
//
// # Extensions
//
// An extension changes how a trained run's positions enter attention, at a
// factor F >= 1, without retraining:
//
//	pi           rope   every frequency divided by F (position interpolation)
//	ntk          rope   the base 10000 multiplied by F^(d/(d-2)), d the head width ("NTK-aware")
//	dynamic-ntk  rope   ntk at F = max(1, n/L), n the length so far: within L, the plain model
//	yarn         rope   YaRN: each frequency interpolated by how often it turns within L,
//	                    and the logits scaled by (0.1 ln F + 1)^2
//	interp       alibi  every slope divided by F
//
// # Output
//
// Standard output gets a line per run naming its weights, "weights:
// <checkpoint> (step 800 of 800, finished)" (or "unfinished at step 755 of
// 800", "in progress at ...", "earlier checkpoint, step 400 of 800"), then a
// Markdown table: one row per length (and protocol), one column per run,
// named by its scheme and directory (with that state when it is not the
// final model of a finished run), then the same table in bits per byte:
// the negative log-likelihood of the scored tokens over ln 2 times the
// bytes of text they stand for, which compares runs of different
// tokenizers (for a byte-level run it is log2 of the perplexity); with
// --attention-stats, a second table of every layer and head. With --task
// passkey it is a table of each distance's exact-match accuracy and mean
// log-probability (a column per run), the effective context length and the
// contiguous one (the largest distance up to which every evaluated distance
// meets the same bar), then the accuracy by depth. Standard error gets
// a line per evaluation (perplexity, bits per byte, tokens, windows, wall
// time, tokens/s and peak resident memory) and progress.
//
// --json writes, for perplexity,
//
//	{"runs": [{"run", "pos", "train_len", "extend", "extend_factor", "precision",
//	  "weights": {"checkpoint", "step", "steps", "finished", "in_progress"},
//	  "tokenizer", "tokenizer_hash",
//	  "results": [{"len", "protocol", "stride", "ppl", "nats_per_token", "bits_per_byte",
//	    "bytes", "tokens", "windows", "wall_seconds", "tokens_per_second", "peak_rss_bytes",
//	    "position_loss"}]}],
//	 "attention": {"runs": [{"run", "pos", "train_len", "weights",
//	   "results": [{"len", "train_len", "windows", "queries", "wall_seconds",
//	     "layers": [[{"mean_distance", "entropy", "share_past_l"}]]}]}]}}
//
// where protocol is "nonoverlap" or "sliding", bytes is the bytes of text
// the scored tokens stand for, tokenizer describes the run's tokenizer and
// tokenizer_hash names it, position_loss is the mean
// loss at each position in the window (null where no window scored it),
// weights names the checkpoint, the training step it was saved at, the
// steps of its run and whether the run finished (in_progress only when
// another process was writing it), extend, extend_factor and precision
// appear only when used, and attention
// only with --attention-stats (layers: one list per layer, one entry per
// head). For passkey,
//
//	{"runs": [{"run", "pos", "train_len", "extend", "extend_factor", "precision", "weights", "seed", "depths",
//	  "short_accuracy", "effective_context", "effective_note", "attention_lag", "wall_seconds",
//	  "prompt_tokens_per_second",
//	  "points": [{"distance", "episodes", "correct", "accuracy", "digit_accuracy",
//	    "mean_logprob", "max_prompt_tokens", "wall_seconds",
//	    "by_depth": [{"depth", "episodes", "correct"}]}]}]}
//
// where short_accuracy is the accuracy over the distances up to L/2,
// effective_note says why effective_context is 0 when it is undefined, and
// attention_lag is how much farther back than the distance the nearest
// copy of an answer digit lies, in the run's tokens (the tokens of " is
// the pass key." and four more: 21 for a byte-level run), so that from
// distance L minus it on, copying the key needs attention beyond L;
// extend, extend_factor and precision appear only when used, as for
// perplexity.
// The JSON file is written atomically (a temporary file, then a rename).
//
// # Exit status
//
//	0  the evaluation finished, or --help was asked for
//	1  an error, in one line on standard error: a bad value (--len 0, an unknown
//	   --task or --extend, a flag of the other task, an extension factor that is
//	   not finite or that its arithmetic cannot hold), a run that does not load,
//	   a finished run whose final checkpoint cannot be read, a run of a position
//	   scheme the command does not know, a length that does not fit in the data
//	   or in memory, a failed write
//	2  a malformed command line: an unknown flag, a missing or mistyped value,
//	   an argument that is not a flag
//
// # Examples
//
// runs/tiny at 128, 256 and 512 (1x, 2x and 4x its training length) and
// at 2048, with every number in a JSON file and a plot:
//
//	go run ./cmd/eval --len 2048 --json runs/tiny/eval.json --plot runs/tiny/eval.png
//
// Two runs side by side at chosen lengths, with sliding windows of stride
// 64 on the first 65,536 tokens:
//
//	go run ./cmd/eval --run runs/tiny --run runs/tiny-sinusoidal --lens 128,512,2048 --stride 64 --max-tokens 65536
//
// A rope run under YaRN, and the passkey task of a run trained on episodes:
//
//	go run ./cmd/eval --run runs/tiny-rope --extend yarn --lens 128,512,1024
//	go run ./cmd/eval --run runs/tiny-passkey --task passkey --distances 64,128,1024
package main
