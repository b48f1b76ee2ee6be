// Command experiment runs an extrapolation comparison: it trains one model
// per position scheme (and per seed) on one config's data and budget,
// evaluates each at multiples of its training length L, and writes a
// report (report.md, report.json, report.png). Given several configs it
// runs the grid of configs x schemes x seeds and reports each scheme by
// training length; with --cost-steps it measures each scheme's training
// cost instead. Finished runs and evaluations are reused and partial runs
// resumed, so the command can be interrupted and run again; --shard splits
// the runs between independent jobs and --report-only builds the report
// from what they finished.
//
// Usage:
//
//	go run ./cmd/experiment [--config FILE[,FILE...]] [--pos SCHEME,...] [--out DIR] [--seeds S,...] \
//	    [--mults M,...] [--steps N] [--eval-every N] [--batch-tokens N] [--max-tokens N] \
//	    [--strides 1,1/k,1tok] [--attention-stats] [--passkey D,...] [--passkey-episodes N] \
//	    [--extend SCHEME:METHOD,...] [--beside REPORT.json] [--no-timings] [--shard K/N] [--report-only] [--no-lock]
//	go run ./cmd/experiment --grid FILE [--out DIR] [--seeds S,...] [--mults M,...] ...
//	go run ./cmd/experiment [--config FILE | --grid FILE] [--pos SCHEME,...] --cost-steps N [--cost-rounds N] [--out DIR]
//	go run ./cmd/experiment --redraw REPORT.json
//
// --help prints the flags.
//
// Every length is in the runs' tokens, those of the config's
// data.tokenizer (bytes, or a BPE: go doc ./train), and every report gives
// bits per byte beside perplexity, so that experiments of different
// tokenizers compare.
//
// # Runs
//
// One config's runs live in <out>/<pos>, or <out>/<pos>-seed<S> for a seed
// other than the config's own (so that a report with --seeds and one
// without share the config seed's runs); a grid's in <out>/<config
// name>/<pos>[-seed<S>] when there are several configs (two may not share
// a name). Each is a run
// directory of cmd/train (go doc ./cmd/train), with the experiment's
// evaluations beside it. A run that finished with the steps asked for is
// reused; a partial one is resumed from its newest checkpoint that loads
// (stderr names the newer ones it passes over, whose steps are trained
// again); one that finished with fewer steps is continued to the new number
// (its schedule recomputed over the new total); one with more steps is an
// error. Runs are evaluated from their final checkpoint: a finished run
// whose final checkpoint cannot be read stops the command with one line
// naming the newest good one and the cmd/train --resume command that
// trains the last steps again from it. Each evaluation is saved as soon as
// it is made, with the checkpoint that made it, and reused while that is
// the run's final checkpoint (a continued run is evaluated again).
//
// Before anything trains, the command refuses, in one line: a value listed
// twice in --pos, --seeds, --mults or --passkey; a multiple whose length
// does not fit in a config's validation split (naming the largest that
// does); a passkey distance the training split cannot fill; and an
// evaluation estimated to need more than 80% of the memory available.
//
// # What to train
//
//	--config FILE[,FILE...]
//		The run config (YAML) every run shares. Default configs/tiny.yaml.
//		Several, comma-separated, make a grid of configs x schemes x seeds.
//	--grid FILE
//		An experiment file, instead of --config and --pos, for a grid that
//		is not every scheme on every config: a list of runs, each a config
//		with its own schemes (configs/experiments/ has two):
//
//		runs:
//		  - config: configs/small-256.yaml
//		    pos: alibi
//		  - config: configs/small.yaml
//		    pos: alibi, sinusoidal
//
//		A mistake in it is one line naming its line, as in a config
//		file: line 3: unknown key "poss".
//
//	--pos SCHEME,...
//		The position schemes to compare, comma-separated: alibi,
//		sinusoidal, none, rope, t5, kerple, fire, fox, stick-breaking, pope
//		or a registered scheme, each a run of its own, followed by any of,
//		in this order: +log-length (alibi+log-length: its attention logits
//		scaled by log-length, model.logit_scale), +randomized
//		(rope+randomized: randomized positions drawn from [0, 256 L), unless
//		the config sets model.random_positions) and +drope (rope+drope:
//		DroPE drops the rotation after 95% of train.steps, unless the config
//		sets model.drope_step; such a run cannot be resumed with another
//		--steps, which would move the drop). Default alibi,sinusoidal,none.
//	--seeds S,...
//		Train every scheme once per seed. Default: the config's seed.
//	--steps N
//		Training steps of every run, overriding the config.
//	--eval-every N
//		Steps between the periodic validations of every run, overriding
//		the config (denser points for time to perplexity).
//	--out DIR
//		The report directory, where the runs are trained too. Default
//		runs/compare.
//
// # What to evaluate
//
//	--mults M,...
//		Evaluation lengths as multiples of each run's training length;
//		fractions too (1.125 is L + L/8, rounded to a whole token).
//		Default 1,2,4,16.
//	--batch-tokens N
//		Evaluation tokens per forward pass: windows of length n go
//		max(1, N/n) at a time. Default 4096.
//	--max-tokens N
//		Score only the first N tokens of the validation split at every
//		length, so that every protocol scores the same tokens. Default 0:
//		all of it.
//	--extend SCHEME:METHOD,...
//		Also evaluate every run of a scheme of --pos under an
//		evaluation-time extension, at the factor each length over L, as a
//		column of its own: alibi:interp, rope:pi, rope:ntk,
//		rope:dynamic-ntk, rope:yarn (go doc ./cmd/eval describes them).
//		One config only.
//	--beside REPORT.json
//		Another experiment's report.json, typically one of another
//		tokenizer (testdata/results/tiny-zoo.json is the byte-level zoo):
//		the bits-per-byte table gives, beside each scheme the two share,
//		that experiment's bits per byte at the same bytes of context,
//		interpolated linearly in the logarithm of the context between the
//		two lengths it evaluated around it ("–" outside them).
//
// # Context lenses
//
// They measure whether a model uses the context past L, beside
// perplexity, with one config only.
//
//	--strides S,...
//		Evaluate every length under each stride, written as a fraction of
//		the length: 1 (non-overlapping windows, always included), 1/k (a
//		stride of length/k tokens, k at least 2) or 1tok (one token: every
//		scored token predicted from the length tokens before it). Bound the
//		sliding ones with --max-tokens. Default 1.
//	--attention-stats
//		Also measure, per layer and head at every length, the mean attended
//		distance, the entropy and the share of attention on keys at
//		distance L or more (go doc ./cmd/eval).
//	--passkey D,...
//		Also score every run on passkey retrieval at these distances, each
//		at least 38 (go doc ./cmd/eval; train with
//		configs/tiny-passkey.yaml).
//	--passkey-episodes N
//		Passkey episodes per distance. Default 50.
//	--recall TASK,...
//		Also score every run on the retrieval tasks mqar and multikey at
//		every evaluation length (go doc ./cmd/eval, --task), into each
//		run's mqar.json and multikey.json and the report's recall section
//		(train with data.mqar and data.multikey: configs/tiny-recall.yaml).
//	--recall-episodes N
//		Retrieval episodes per task and length. Default 20.
//
// # Reports and machines
//
//	--no-timings
//		Leave the machine's figures out of report.md and report.json (wall
//		times, tokens/s, peak memory, processor, the date), so that one grid
//		gives the same report bytes however it ran: in one process or in
//		shards, interrupted or not, on any machine with the same kernels.
//		Not with the context lenses.
//	--shard K/N
//		Train and evaluate only the runs whose index in the grid (configs,
//		then schemes, then seeds, in order) is K-1 modulo N; then build the
//		report with --report-only. Default 1/1.
//	--report-only
//		Train nothing: build the report from the finished runs and
//		evaluations. It names the runs that are missing or that a process
//		is still writing, and then writes no report.
//	--no-lock
//		Write runs without locking their directories. Only for file
//		systems that refuse locks: then no other process may write them.
//	--redraw REPORT.json
//		Train and evaluate nothing: draw the figure of a report.json or a
//		context.json again, from that file alone, into the .png of the same
//		name beside it (testdata/results/tiny-zoo.json gives tiny-zoo.png).
//		Every figure is drawn from what its JSON holds, so this redraws it
//		as the current plotting code draws it, without the runs. Not with
//		other flags.
//
// # Training cost
//
//	--cost-steps N
//		Measure training cost instead: train every run of the grid from
//		scratch for N steps, once per round, in <out>/cost/<run>/round<k>,
//		and write cost.md and cost.json (with --report-only, from the
//		rounds already finished). It refuses the flags of budgets, seeds,
//		shards and evaluations: --steps, --eval-every, --seeds, --shard,
//		--mults, --strides, --passkey, --attention-stats, --extend,
//		--no-timings and --max-tokens.
//	--cost-rounds N
//		Rounds of the cost measurement, each training every run once in
//		turn, so that a drift in the machine's speed reaches every scheme
//		alike; finished rounds are reused. Default 3.
//
// # Output
//
// In <out>:
//
//	report.md     the report, also printed to standard output: perplexity at every
//	              length per scheme (mean and min–max over seeds), bits per byte at
//	              every length with its bytes of context (and --beside's schemes at
//	              the same bytes), the tokenizer, the settings, each
//	              run's training and evaluation figures, and the command that reproduces it
//	report.json   the numbers (see below)
//	report.png    perplexity against length, loss by position, training loss
//	context.json  with a context lens: every run's stride sweep ("strides"), passkey
//	              scores ("passkey") and attention statistics ("attention"), as
//	              cmd/eval's JSON has them
//	context.png   its plots
//	cost.md       with --cost-steps, also printed: per scheme the median training
//	cost.json     tokens/s over rounds, every round's figure, the ratio to the first
//	              scheme and the peak resident memory, with the processor
//
// In each run's directory, beside cmd/train's files: eval.json (its
// evaluations at every length and stride, as cmd/eval's JSON), and with
// the lenses and extensions attention.json, passkey.json and
// eval-<method>.json.
//
// report.json is
//
//	{"runs": [{"run", "pos", "group", "seed", "train_len", "params", "steps", "train_tokens",
//	  "train_tokens_per_second", "train_wall_seconds", "final_train_loss",
//	  "train_peak_rss_bytes", "processor", "kernels", "tokenizer",
//	  "weights": {"checkpoint", "step", "steps", "finished"},
//	  "corpus": {"spec", "bytes", "sha256", "go_version"},
//	  "loss": [{"step", "loss"}],
//	  "validation": [{"step", "tokens", "seconds", "ppl", "len"}],
//	  "results": [{"len", "protocol", "stride", "ppl", "nats_per_token", "bits_per_byte",
//	    "bytes", "tokens", "windows", "wall_seconds", "tokens_per_second", "peak_rss_bytes",
//	    "position_buckets": [{"from", "to", "loss"}]}]}],
//	 "schemes": [{"pos", "group", "train_len", "seeds", "params", "train_tokens_per_second",
//	  "lengths": [{"len", "mean_ppl", "min_ppl", "max_ppl", "std_ppl", "relative_to_first",
//	    "mean_bits_per_byte", "min_bits_per_byte", "max_bits_per_byte", "context_bytes"}]}]}
//
// group names a grid's groups (scheme and training length, "alibi
// L=256"); weights is the checkpoint the run's results were scored from
// (report.md says it too; absent for evaluations saved before they named
// it); position_buckets is the loss by position over log-spaced buckets
// of positions ([0, 1), [1, 2), [2, 4), ...), so that a committed report
// stays small (each run's eval.json keeps the full arrays);
// relative_to_first is the mean perplexity over the one at the first
// multiple; bytes is the bytes of text a result's scored tokens stand for,
// and context_bytes a length in bytes of text (the length times the bytes
// a scored token stands for; the length itself for a byte-level run);
// tokenizer describes the run's tokenizer (absent for runs trained before
// runs had one, which are byte-level). With several configs the report adds a table of each group's
// training, a row per training length of each scheme with its perplexity
// at every multiple and its best length, time-to-perplexity tables, and a
// plot with a panel per scheme and a curve per L.
//
// cost.json is {"processor", "steps", "rounds", "rows": [{"label",
// "train_len", "batch", "params", "tokens_per_second", "peak_rss_bytes"}]},
// the last two with one entry per round.
//
// # Signals, locks and clusters
//
// SIGINT or SIGTERM during training finishes the step, writes a checkpoint
// and exits; during an evaluation it exits at once, the finished
// evaluations saved. Running the same command again continues. Each run's
// directory is locked while a process trains or evaluates it, so a task
// that runs twice at once, or two shards whose grids overlap, cannot both
// write one run: the second stops with one line naming the holder (the
// lock's needs of shared storage are in go doc ./cmd/train).
// configs/slurm/zoo.sbatch runs one shard per task of a Slurm job array,
// and the report when submitted without --array.
//
// # Exit status
//
//	0    the report was written, a shard finished, or --help was asked for
//	1    an error, in one line on standard error: a bad value, a config that does not
//	     load, a length or distance that does not fit, a locked run, runs not ready for
//	     the report, a failed run or write
//	2    a malformed command line: an unknown flag, a missing or mistyped value, an
//	     argument that is not a flag
//	130  interrupted by SIGINT or SIGTERM; run the same command again to continue
//
// # Examples
//
// ALiBi, sinusoidal and no positions on the tiny config, evaluated at 1x,
// 2x, 4x and 16x L:
//
//	go run ./cmd/experiment --config configs/tiny.yaml --pos alibi,sinusoidal,none --out runs/compare
//
// Every scheme over three seeds, with each rope run also under YaRN:
//
//	go run ./cmd/experiment --config configs/tiny.yaml --pos alibi,sinusoidal,none,rope,t5,kerple,fire,fox \
//	    --seeds 1337,1,2 --out runs/zoo --extend rope:yarn
//
// The zoo on BPE tokens (configs/tiny-bpe.yaml, a BPE of 1024 tokens), to
// 64x L in tokens, its bits per byte set beside the byte-level zoo's at
// equal bytes of context:
//
//	go run ./cmd/experiment --config configs/tiny-bpe.yaml --pos alibi,sinusoidal,rope,kerple,fox \
//	    --seeds 1337,1,2 --out runs/zoo-bpe --mults 1,2,4,16,64 --beside testdata/results/tiny-zoo.json
//
// The training-length sweep of an experiment file, read finer than 2L:
//
//	go run ./cmd/experiment --grid configs/experiments/tiny-lengths.yaml --out runs/tiny-lengths \
//	    --mults 1,1.0625,1.125,1.25,1.5,2,4,8,16,32,64
//
// The context lenses, on runs trained with passkey episodes:
//
//	go run ./cmd/experiment --config configs/tiny-passkey.yaml --pos alibi,sinusoidal,rope --out runs/context \
//	    --mults 1,2,4,8 --max-tokens 8192 --strides 1,1/2,1/8,1tok --attention-stats --passkey 48,128,512,2048
//
// Three shards, run anywhere the output directory is shared, then the
// report:
//
//	go run ./cmd/experiment --config configs/tiny.yaml --out runs/compare --shard 1/3
//	go run ./cmd/experiment --config configs/tiny.yaml --out runs/compare --shard 2/3
//	go run ./cmd/experiment --config configs/tiny.yaml --out runs/compare --shard 3/3
//	go run ./cmd/experiment --config configs/tiny.yaml --out runs/compare --report-only
//
// The training cost of two schemes at the small config, three rounds of 30
// steps:
//
//	go run ./cmd/experiment --config configs/small.yaml --pos alibi,sinusoidal --cost-steps 30 --out runs/small-cost
package main
