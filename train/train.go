package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/layers/position"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/osutil"
)

// ErrInterrupted is returned when the context was cancelled: the current
// step finished and a checkpoint was written, so the run can be resumed.
var ErrInterrupted = errors.New("training interrupted")

// ErrRunExists is returned by a fresh run whose directory already holds
// another run's checkpoints or summary; nothing on disk was changed.
var ErrRunExists = errors.New("already holds a run")

// ErrFinished is returned when resuming a run that has already trained for
// the steps asked and written its summary; nothing on disk was changed.
var ErrFinished = errors.New("has already finished")

// ErrPastSteps is returned when resuming a run that has trained for more
// steps than asked and not finished: finishing it there would report a run
// of another length than the one started. Nothing on disk was changed.
var ErrPastSteps = errors.New("has trained past the steps asked for")

// Options control one call of Train.
type Options struct {
	// Resume continues from the newest good checkpoint in the run directory.
	Resume bool
	// Log receives progress: a bar when Terminal, else plain lines. Nil
	// discards it.
	Log      io.Writer
	Terminal bool
	// CorpusProgress, when not nil, is told the progress of reading a
	// directory corpus.
	CorpusProgress data.Progress
	// Unlocked says that the caller holds the run directory's lock
	// (LockRun), or writes it without one on a file system that has none.
	// Otherwise Train holds the lock for the whole call and fails at once
	// with ErrRunLocked if another process holds it.
	Unlocked bool
	// Comm, when not nil and of more than one rank, makes this process one
	// rank of a data-parallel run (see Comm): rank 0 reads and writes the
	// run directory and returns the summary; the others write nothing and
	// return a summary of the steps alone.
	Comm Comm
	// now, when not nil, is the clock of the final evaluation's progress
	// lines (tests set it; nil: time.Now).
	now func() time.Time
}

// Summary is written to summary.json at the end of a run.
type Summary struct {
	Steps           int     `json:"steps"`
	Tokens          int64   `json:"tokens"`
	WallSeconds     float64 `json:"wall_seconds"`
	TokensPerSecond float64 `json:"tokens_per_second"`
	FinalTrainLoss  float64 `json:"final_train_loss"`
	ValLoss         float64 `json:"val_loss"`
	ValPPL          float64 `json:"val_ppl"`
	// ValBitsPerByte is the final validation's negative log-likelihood in
	// bits per byte of text: comparable across tokenizers.
	ValBitsPerByte float64 `json:"val_bits_per_byte"`
	// Tokenizer describes the run's tokenizer, TokenizerHash names it, and
	// BytesPerToken is the bytes of text a validation token stands for.
	Tokenizer     string  `json:"tokenizer"`
	TokenizerHash string  `json:"tokenizer_hash"`
	BytesPerToken float64 `json:"bytes_per_token"`
	PeakRSSBytes  int64   `json:"peak_rss_bytes"`
	Params        int     `json:"params"`
	Pos           string  `json:"pos"`
	TrainLen      int     `json:"train_len"`
	Checkpoint    string  `json:"checkpoint"`
	Corpus        string  `json:"corpus"`
	CorpusBytes   int     `json:"corpus_bytes"`
	CorpusSHA256  string  `json:"corpus_sha256"`
	GoVersion     string  `json:"go_version,omitempty"` // of a goroot: corpus
	// Processor names the machine the run trained on (osutil.Processor):
	// what its tokens/s and wall time were measured on.
	Processor string `json:"processor,omitempty"`
	// Kernels names the instruction sets the run trained with
	// (layers.Kernels), such as "avx512, bf16 on avx512f".
	Kernels string `json:"kernels,omitempty"`
	// Ranks is the number of processes that trained this segment of the
	// run (data-parallel, Options.Comm), and AllreduceShare the share of
	// its steps' time spent summing their gradients; both are left out
	// for a single process.
	Ranks          int     `json:"ranks,omitempty"`
	AllreduceShare float64 `json:"allreduce_share,omitempty"`
}

// warmSteps are the first steps of each training segment left out of the
// throughput figure (the first step allocates every buffer).
const warmSteps = 5

// Train trains cfg in its run directory, writing the resolved config,
// checkpoints, metrics.jsonl and summary.json.
//
// One process writes a run directory at a time: Train takes the directory's
// lock first (unless opt.Unlocked) and fails with [ErrRunLocked] while
// another process holds it. A fresh run (opt.Resume false) refuses a
// directory that already holds checkpoints or a summary ([ErrRunExists]). A
// resumed run continues from the newest checkpoint that loads cleanly, after
// checking that the config and the corpus are the ones it was trained with
// (only the keys that the package documentation's "Resuming" section names
// may change; [RunConfig] reads the run's own config); if it already reached
// cfg.Train.Steps and wrote its summary, Train returns [ErrFinished], and if
// it went past cfg.Train.Steps without finishing, [ErrPastSteps]; either
// changes nothing.
func Train(ctx context.Context, cfg Config, opt Options) (*Summary, error) {
	comm, rank := opt.Comm, 0
	if ranks(comm) > 1 {
		rank = comm.Rank()
	} else {
		comm = nil
	}
	var fp fingerprint // checked only across ranks: one process skips hashing its executable
	if comm != nil {
		fp = fingerprintOf(cfg)
	}
	if err := checkSame(comm, fp, 2); err != nil { // the config and the program
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, agreed(comm, err) // the same config on every rank: the same error
	}
	if err := CheckRanks(cfg, ranks(comm)); err != nil {
		return nil, agreed(comm, err)
	}
	logw := opt.Log
	if logw == nil || rank != 0 {
		logw = io.Discard
	}
	// The run's wall time counts from here: taking the lock (which syncs
	// the holder's name to disk) and loading are part of it.
	start := time.Now()
	dir := cfg.RunDir()
	var unlock func() error
	err := func() error { // rank 0 alone reads and writes the run directory
		if rank != 0 {
			return nil
		}
		if !opt.Resume {
			if err := cfg.CheckTokenizerFile(); err != nil {
				return err
			}
		}
		if !opt.Unlocked {
			lock, err := LockRun(dir)
			if err != nil {
				return err
			}
			unlock = lock.Unlock
		}
		if !opt.Resume {
			return checkFresh(dir)
		}
		return nil
	}()
	if unlock != nil {
		defer unlock()
	}
	if err := agree(comm, err); err != nil {
		return nil, err
	}
	rss := osutil.StartRSS()
	defer rss.Stop()

	tokDir := ""
	if opt.Resume {
		tokDir = dir // a resumed run keeps its own tokenizer
	}
	d, err := LoadData(cfg, opt.CorpusProgress, tokDir, logw)
	if err := agree(comm, err); err != nil {
		return nil, err
	}
	if err := checkSame(comm, fp.withData(d.Corpus.SHA256, d.Tokenizer.Hash()), 4); err != nil {
		return nil, err
	}
	corpus, valTok := d.Corpus, d.Val
	cfg.Model.Vocab = d.Tokenizer.VocabSize()
	if d.Tokenizer.Kind() != data.ByteTokenizerName {
		fmt.Fprintf(logw, "tokenizer %v, hash %.12s…: %d training and %d validation tokens (%.3f bytes a token)\n",
			d.Tokenizer, d.Tokenizer.Hash(), len(d.Train), len(d.Val), float64(len(d.TrainText))/float64(len(d.Train)))
	}
	st, err := newState(cfg, d)
	if err := agree(comm, err); err != nil {
		return nil, err
	}
	if st.model.Precision == layers.BF16 { // the notice times the bf16 kernels once: not in fp32
		if n := layers.BF16Notice(); n != "" {
			fmt.Fprintf(logw, "notice: train.precision bf16 %s\n", n)
		}
	}
	// This segment's wall time counts from the call, loading included.
	st.segStart = start
	err = func() error {
		if !opt.Resume || rank != 0 {
			return nil
		}
		resumed, err := st.resume(dir, cfg, corpus, logw)
		if err != nil {
			return err
		}
		if !resumed {
			fmt.Fprintf(logw, "no checkpoint in %s yet: starting from the beginning\n", dir)
		}
		if err := checkFinished(dir, st.step, cfg.Train.Steps); err != nil {
			return err
		}
		if st.step > cfg.Train.Steps {
			return fmt.Errorf("%s %w: it is at step %d of the %d steps it was last started for, and %d were asked for now; continue it with its own steps (or any number from %d)",
				dir, ErrPastSteps, st.step, st.startedFor, cfg.Train.Steps, st.step)
		}
		return nil
	}()
	if err := agree(comm, err); err != nil {
		return nil, err
	}
	if err := syncState(comm, st); err != nil {
		return nil, err
	}
	if rank != 0 {
		if err := st.trainSteps(ctx, "", cfg, nil, nil, newProgress(io.Discard, false, cfg.Train.Steps, st.step), comm); err != nil {
			return nil, err
		}
		return &Summary{Steps: st.step, Tokens: st.tokens, WallSeconds: st.wall(), FinalTrainLoss: st.loss, Ranks: ranks(comm)}, nil
	}
	metrics, err := func() (*metricsFile, error) {
		if err := os.MkdirAll(filepath.Join(dir, model.CheckpointDir), 0o777); err != nil {
			return nil, fmt.Errorf("run directory: %w", err)
		}
		removeStaleTemps(dir, logw)
		if err := saveTokenizer(dir, d.Tokenizer); err != nil {
			return nil, err
		}
		if err := writeResolvedConfig(dir, cfg); err != nil {
			return nil, err
		}
		return openMetrics(filepath.Join(dir, "metrics.jsonl"), st.step)
	}()
	if err != nil {
		return nil, err
	}
	defer metrics.Close() // on the error returns; the success path checks Close

	if err := st.trainSteps(ctx, dir, cfg, valTok, metrics, newProgress(logw, opt.Terminal, cfg.Train.Steps, st.step), comm); err != nil {
		return nil, err
	}
	final := eval.Options{Len: cfg.Model.TrainLen, MaxTokens: cfg.Train.FinalEvalTokens, Tokenizer: d.Tokenizer,
		Progress: eval.NewProgress(logw, opt.Terminal, cfg.Model.TrainLen, opt.now)}
	if scored := eval.ScoredTokens(len(valTok), final); scored < len(valTok)-1 {
		fmt.Fprintf(logw, "evaluating on the first %d tokens of the validation split...\n", scored)
	} else {
		fmt.Fprintf(logw, "evaluating on the whole validation split (%d tokens scored)...\n", scored)
	}
	r, err := eval.Perplexity(st.model, valTok, final)
	if err != nil {
		return nil, err
	}
	sum := &Summary{Steps: st.step, Tokens: st.tokens, WallSeconds: st.wall(),
		FinalTrainLoss: st.loss, ValLoss: r.NatsPerToken, ValPPL: r.PPL, ValBitsPerByte: r.BitsPerByte, PeakRSSBytes: rss.Peak(),
		Tokenizer: d.Tokenizer.String(), TokenizerHash: d.Tokenizer.Hash(), BytesPerToken: float64(r.Bytes) / float64(r.Tokens),
		Params: st.model.Weights.NumParams(), Pos: cfg.Model.Pos, TrainLen: cfg.Model.TrainLen,
		Checkpoint: model.CheckpointPath(dir, st.step), Corpus: corpus.Spec, CorpusBytes: len(corpus.Bytes),
		CorpusSHA256: corpus.SHA256, GoVersion: corpus.GoVersion, Processor: osutil.Processor(),
		Kernels: layers.Kernels(st.model.Precision), AllreduceShare: st.allreduceShare()}
	if n := ranks(comm); n > 1 {
		sum.Ranks = n
	}
	sum.TokensPerSecond = st.tokensPerSecond()
	if err := metrics.write(map[string]any{"step": st.step, "val_loss": r.NatsPerToken, "val_ppl": r.PPL,
		"val_bits_per_byte": r.BitsPerByte, "val_tokens": r.Tokens, "elapsed_seconds": sum.WallSeconds}); err != nil {
		return nil, err
	}
	if err := metrics.Close(); err != nil {
		return nil, err
	}
	if err := writeJSON(filepath.Join(dir, model.SummaryFile), sum); err != nil {
		return nil, err
	}
	return sum, nil
}

// trainSteps runs the optimisation loop from st.step to the configured
// number of steps, logging metrics, validating and checkpointing as
// configured. It returns ErrInterrupted (after a checkpoint) when ctx is
// cancelled.
//
// With comm (a data-parallel run), every rank draws the whole batch and
// trains on its share of the rows, the gradients summed by one all-reduce a
// step; rank 0 alone logs, validates and checkpoints (the others pass dir
// "" and no metrics), and a stop asked on any rank stops every rank after
// the same step.
func (st *state) trainSteps(ctx context.Context, dir string, cfg Config, valTok []uint32, metrics *metricsFile, prog *progress, comm Comm) error {
	t := cfg.Train
	L := cfg.Model.TrainLen
	drope := cfg.Model.DropeStep
	if drope > 0 && st.step >= drope {
		st.model.DropPositions() // resumed after the drop
	}
	n, rank := ranks(comm), 0
	if comm != nil {
		rank = comm.Rank()
	}
	local := t.Batch / n // the rows of each rank
	g, err := st.model.NewGraph(local, L, true)
	if err != nil {
		return err
	}
	// The training graph's buffers are released before the final
	// evaluation, which can then reuse their memory.
	defer func() { g.Close() }()
	step := newStepper(st.model, st.opt, g)
	if comm != nil {
		st.allreduce = &allreduce{comm: comm}
		step.allreduce = st.allreduce
	}
	x, y := make([]int, t.Batch*L), make([]int, t.Batch*L)
	mine := func(v []int) []int { return v[rank*local*L : (rank+1)*local*L] }
	segSteps := 0
	for st.step < t.Steps {
		if drope > 0 && st.step == drope && !st.model.PositionsDropped() {
			// DroPE: the rotation goes, the run trains on without it.
			st.model.DropPositions()
			g.Close()
			if g, err = st.model.NewGraph(local, L, true); err != nil {
				return err
			}
			step = newStepper(st.model, st.opt, g)
			step.allreduce = st.allreduce
			prog.message(fmt.Sprintf("step %d: DroPE: the rotation is dropped; recalibrating without positions for %d steps", st.step, t.Steps-st.step))
		}
		stepStart := time.Now()
		st.sampler.Next(x, y)
		if m := cfg.Model.RandomPositions; m > 0 {
			if err := g.SetPositions(DrawnPositions(cfg.Model.Seed, st.step, L, m)); err != nil {
				return err
			}
		}
		lr := t.LRAt(st.step)
		loss, norm, stop, err := step.run(mine(x), mine(y), t.Clip, lr, func() bool { return ctx.Err() != nil })
		if err != nil {
			kept := "no checkpoint was written yet"
			if st.saved != "" {
				kept = "the last good checkpoint, " + st.saved + ", is kept"
			}
			return fmt.Errorf("step %d: %w (%s)", st.step+1, err, kept)
		}
		st.step++
		if st.allreduce != nil {
			st.allreduce.steps += time.Since(stepStart).Seconds()
		}
		st.tokens += int64(t.Batch * L)
		st.loss = loss
		if segSteps++; segSteps > warmSteps {
			st.stepSeconds += time.Since(stepStart).Seconds()
			st.timedTokens += int64(t.Batch * L)
		} else {
			st.warmSeconds += time.Since(stepStart).Seconds()
			st.warmTokens += int64(t.Batch * L)
		}
		elapsed := st.wall()
		tps := st.tokensPerSecond()
		prog.step(st.step, loss, tps, elapsed)
		if (st.step%t.LogEvery == 0 || st.step == t.Steps) && metrics != nil {
			line := map[string]any{"step": st.step, "loss": loss, "lr": lr, "grad_norm": norm,
				"tokens": st.tokens, "tokens_per_second": tps, "elapsed_seconds": elapsed}
			if comm != nil {
				line["ranks"], line["allreduce_share"] = n, st.allreduceShare()
			}
			if err := metrics.write(line); err != nil {
				return err
			}
		}
		if st.step%t.EvalEvery == 0 && st.step < t.Steps && dir != "" {
			// Validate in batches of the training batch's size, and hand the
			// evaluation graph's memory back afterwards, so that peak memory
			// stays that of the training graph plus one small batch.
			r, err := eval.Perplexity(st.model, valTok, eval.Options{Len: L, MaxTokens: t.EvalTokens, BatchTokens: t.Batch * L, Tokenizer: st.tok})
			debug.FreeOSMemory()
			if err != nil {
				return err
			}
			prog.message(fmt.Sprintf("step %d: val loss %.4f, val ppl %.3f", st.step, r.NatsPerToken, r.PPL))
			if err := metrics.write(map[string]any{"step": st.step, "val_loss": r.NatsPerToken, "val_ppl": r.PPL,
				"val_tokens": r.Tokens, "elapsed_seconds": st.wall()}); err != nil {
				return err
			}
			if err := st.validateAt(t, valTok, metrics, prog); err != nil {
				return err
			}
		}
		interrupted := stop
		if (st.step%t.CheckpointEvery == 0 || st.step == t.Steps || interrupted) && dir != "" {
			if err := st.save(dir, cfg); err != nil {
				return err
			}
		}
		if interrupted && st.step < t.Steps {
			prog.finish()
			return agreed(comm, fmt.Errorf("%w at step %d; checkpoint saved in %s", ErrInterrupted, st.step, dir))
		}
	}
	prog.finish()
	return nil
}

// stepper runs optimisation steps of a model on a training graph.
type stepper struct {
	m             *model.Model
	g             *model.Graph
	opt           *AdamW
	params, grads [][]float32
	decay         []bool
	// allreduce, in a data-parallel run, averages the gradients and the
	// loss over the ranks.
	allreduce *allreduce
}

func newStepper(m *model.Model, opt *AdamW, g *model.Graph) *stepper {
	s := &stepper{m: m, g: g, opt: opt, params: make([][]float32, len(m.Weights.Names))}
	s.grads = make([][]float32, len(s.params))
	s.decay = make([]bool, len(s.params))
	for i, name := range m.Weights.Names {
		s.params[i] = m.Weights.Data(name)
		s.decay[i] = m.Weights.Decays(name)
	}
	return s
}

// run does one step on the batch x, y: the forward and backward pass, the
// gradients clipped to a global norm of clip (0: not clipped), the AdamW
// update at learning rate lr, and the position parameters projected back
// into their domain (model.Project). A non-finite loss or gradient norm stops
// it before the update, with an error; the weights are then unchanged.
//
// In a data-parallel run it also averages the gradients and the loss over
// the ranks and returns whether any rank asked to stop (stop, asked just
// before the all-reduce, is this rank's request); alone it returns stop().
func (s *stepper) run(x, y []int, clip, lr float64, stopAsked func() bool) (loss, norm float64, stop bool, err error) {
	if err := s.g.Execute(x, y); err != nil {
		return 0, 0, false, err
	}
	loss = s.g.LossValue()
	if faultNaNLoss(s.opt.Step + 1) { // only in fault-injection builds
		loss = math.NaN()
	}
	for i := range s.grads {
		s.grads[i] = s.g.GradData(i)
	}
	stop = stopAsked()
	if s.allreduce != nil {
		if loss, stop, err = s.allreduce.run(s.grads, loss, stop); err != nil {
			return 0, 0, false, fmt.Errorf("all-reduce: %w", err)
		}
	}
	norm = GlobalNorm(s.grads)
	if math.IsNaN(loss) || math.IsInf(loss, 0) || math.IsNaN(norm) || math.IsInf(norm, 0) {
		err := fmt.Errorf("non-finite loss %g or gradient norm %g; stopping without a checkpoint", loss, norm)
		if s.allreduce != nil {
			err = &agreedError{err} // every rank holds the same loss and gradients
		}
		return loss, norm, stop, err
	}
	s.opt.UpdateScaled(s.params, s.grads, s.decay, lr, ClipScale(norm, clip)) // clipped as ClipGlobalNorm does
	s.m.Project()
	return loss, norm, stop, nil
}

// allreduceShare is the share of the segment's timed step time spent in
// the all-reduce (0 for a single process).
func (st *state) allreduceShare() float64 {
	if st.allreduce == nil || st.allreduce.steps == 0 {
		return 0
	}
	return st.allreduce.seconds / st.allreduce.steps
}

// CheckRanks refuses a data-parallel run of n ranks that do not divide the
// batch.
func CheckRanks(cfg Config, n int) error {
	if cfg.Train.Batch%n != 0 {
		return fmt.Errorf("train.batch (%d) must be divisible by the %d ranks: each trains on an equal share of every step's windows", cfg.Train.Batch, n)
	}
	return nil
}

// agreed marks err as known to every rank (Agreed), in a data-parallel
// run.
func agreed(comm Comm, err error) error {
	if comm == nil || err == nil {
		return err
	}
	return &agreedError{err}
}

// tokensPerSecond is the training throughput: over the steps after each
// segment's warm-up, or, for a run too short to have any, over the warm-up
// steps themselves.
// validateAt scores the model at each of t.EvalLens other than the
// training length, as the periodic validation does at the training length,
// and logs each as its own metrics line (val_len, val_ppl_at_len), so that
// the lines of the training length keep their form.
func (st *state) validateAt(t Settings, valTok []uint32, metrics *metricsFile, prog *progress) error {
	L := st.model.Config.TrainLen
	for _, n := range t.EvalLens {
		if n == L {
			continue
		}
		r, err := eval.Perplexity(st.model, valTok, eval.Options{Len: n, MaxTokens: t.EvalTokens, BatchTokens: max(t.Batch*L, n), Tokenizer: st.tok})
		debug.FreeOSMemory()
		if err != nil {
			return fmt.Errorf("validation at length %d: %w", n, err)
		}
		prog.message(fmt.Sprintf("step %d: val ppl %.3f at length %d", st.step, r.PPL, n))
		if err := metrics.write(map[string]any{"step": st.step, "val_len": n, "val_loss_at_len": r.NatsPerToken,
			"val_ppl_at_len": r.PPL, "val_tokens": r.Tokens, "elapsed_seconds": st.wall()}); err != nil {
			return err
		}
	}
	return nil
}

func (st *state) tokensPerSecond() float64 {
	if st.stepSeconds > 0 {
		return float64(st.timedTokens) / st.stepSeconds
	}
	if st.warmSeconds > 0 {
		return float64(st.warmTokens) / st.warmSeconds
	}
	return 0
}

// removeStaleTemps deletes temporary files that a crash in the middle of a
// checkpoint write left behind; the checkpoints themselves are untouched.
func removeStaleTemps(dir string, log io.Writer) {
	temps, _ := filepath.Glob(filepath.Join(dir, model.CheckpointDir, ".*.tmp-*"))
	for _, t := range temps {
		if os.Remove(t) == nil {
			fmt.Fprintf(log, "removed %s, left by an interrupted checkpoint write\n", t)
		}
	}
}

// DrawnPositions are the positions the windows of training step step+1
// stand at under randomized positions (model.Config.RandomPositions = m):
// position.DrawPositions from a generator seeded by the model's seed and
// the step alone, so that a resumed run draws what the uninterrupted one
// would have.
func DrawnPositions(seed uint64, step, n, m int) []int {
	return position.DrawPositions(rand.New(rand.NewPCG(seed, 0x52616e646f6d0000^uint64(step))), n, m)
}
