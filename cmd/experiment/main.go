package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/alibi-go/alibi/cmd/internal/cli"
	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/osutil"
	"github.com/alibi-go/alibi/train"
)

const summary = `experiment: train one model per position scheme (and seed) on one budget, evaluate each at
multiples of the training length, and write report.md, report.json and report.png.

example: go run ./cmd/experiment --config configs/tiny.yaml --pos alibi,sinusoidal,none --out runs/compare`

func main() {
	cli.TuneGC()
	layers.UseFastBLAS()
	os.Exit(command(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command's settings after parsing.
type options struct {
	configList, gridPath, posList, out, mults, seedList string
	factors                                             []float64
	// entries are the configs, each with its schemes (--pos, or the
	// experiment file's).
	entries                []entry
	seeds                  []uint64 // nil: the config's own seed
	batchTokens, maxTokens int
	shard, shards          int
	reportOnly, noLock     bool
	steps                  int // --steps, 0 if not given
	evalEvery              int // --eval-every, 0 if not given
	// The context lenses: passkey distances (nil: no passkey evaluation)
	// and episodes per distance.
	passkeyList string
	distances   []int
	episodes    int
	// The retrieval tasks (--recall: data.RecallTasks) scored at every
	// length, and their episodes per length.
	recall         []string
	recallEpisodes int
	// The stride sweep: every length under every stride (default: "1",
	// non-overlapping windows only).
	strideList string
	strides    []eval.StrideSpec
	// attention: also measure attention statistics at every length.
	attention bool
	// The evaluation-time extensions: by scheme, the methods each of its
	// runs is also evaluated with.
	extendList string
	extends    map[string][]string
	// noTimings leaves the machine's figures out of the report.
	noTimings bool
	// beside is another experiment's report (--beside), whose schemes the
	// bits-per-byte table sets beside these at equal bytes of context.
	besidePath string
	beside     *eval.Comparison
	// The cost measurement (--cost-steps > 0): steps per round and rounds.
	costSteps, costRounds int
}

func command(args []string, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "experiment: "+format+"\n", a...)
		return 1
	}
	flags := cli.NewFlagSet("experiment", summary, stderr)
	var o options
	flags.StringVar(&o.configList, "config", "configs/tiny.yaml", "run config (YAML) shared by every run; several, comma-separated, make a grid of configs x schemes x seeds, with runs in <out>/<config name>/")
	flags.StringVar(&o.gridPath, "grid", "", "experiment file (YAML): a list of runs:, each a config: with its own pos: list, for a grid that is not every scheme on every config (instead of --config and --pos)")
	flags.StringVar(&o.posList, "pos", "alibi,sinusoidal,none", "comma-separated position schemes to compare, of "+model.SchemesText("and")+"; a scheme followed by +"+model.LogitScaleLogLength+" (alibi+"+model.LogitScaleLogLength+") also scales its attention logits by log-length, +randomized trains at randomized positions, +drope (rope) drops the rotation for the last 5% of the steps")
	flags.StringVar(&o.out, "out", "runs/compare", "report directory; runs are trained in <out>/<pos>, or <out>/<pos>-seed<S> for a seed other than the config's")
	flags.StringVar(&o.mults, "mults", "1,2,4,16", "evaluation lengths as multiples of the training length (fractions too: 1.125 is L + L/8, rounded to a whole token)")
	flags.StringVar(&o.seedList, "seeds", "", "comma-separated seeds: train every scheme once per seed (default: the config's seed)")
	flags.IntVar(&o.steps, "steps", 0, "training steps of every run, overriding the config (a finished run with fewer steps is continued)")
	flags.IntVar(&o.batchTokens, "batch-tokens", 4096, "evaluation tokens per forward pass: windows of length n go batch-tokens/n at a time")
	flags.IntVar(&o.maxTokens, "max-tokens", 0, "score only the first N tokens of the validation split at every length (0: all of it)")
	flags.StringVar(&o.strideList, "strides", "1", "comma-separated strides as fractions of each evaluation length: 1 (non-overlapping windows), 1/k (length/k tokens) or 1tok (one token: every scored token is predicted from the length tokens before it); bound the sliding ones with --max-tokens")
	flags.BoolVar(&o.attention, "attention-stats", false, "also measure, per layer and head at every length, the mean attended distance, the entropy and the share of attention past the training length L")
	flags.StringVar(&o.passkeyList, "passkey", "", "comma-separated distances: also score every run on passkey retrieval at these distances (train with configs/tiny-passkey.yaml)")
	flags.StringVar(&o.extendList, "extend", "", "comma-separated scheme:method pairs ("+extensionPairs()+"): also evaluate every run of the scheme with the evaluation-time extension, the factor each length over L, as a column of its own")
	flags.IntVar(&o.episodes, "passkey-episodes", 50, "passkey episodes per distance")
	recallList := flags.String("recall", "", "comma-separated retrieval tasks, mqar and multikey: also score every run on them at every length (train with data.mqar, data.multikey: configs/tiny-recall.yaml)")
	flags.IntVar(&o.recallEpisodes, "recall-episodes", 20, "retrieval episodes per task and length")
	shard := flags.String("shard", "1/1", "K/N: train and evaluate only the K-th of N shares of the runs (then build the report with --report-only)")
	flags.BoolVar(&o.reportOnly, "report-only", false, "train nothing: build the report from the runs and evaluations already finished")
	flags.BoolVar(&o.noTimings, "no-timings", false, "leave the machine's figures out of the report (wall times, tokens/s, peak memory, the date), so that one grid gives the same report bytes wherever and however it ran (not with the context lenses, whose reports keep theirs)")
	flags.IntVar(&o.evalEvery, "eval-every", 0, "steps between periodic validations of every run, overriding the config (denser points for time to perplexity)")
	flags.IntVar(&o.costSteps, "cost-steps", 0, "measure training cost instead: train every run from scratch for this many steps, once per round, and write cost.md and cost.json (tokens/s and peak memory per scheme)")
	flags.IntVar(&o.costRounds, "cost-rounds", 3, "with --cost-steps: rounds, each training every run once, in turn, so that a drift in the machine's speed reaches every scheme alike")
	flags.StringVar(&o.besidePath, "beside", "", "report.json of another experiment (such as testdata/results/tiny-zoo.json, the byte-level zoo): the bits-per-byte table sets each scheme the two share beside this one's, at equal bytes of context")
	redrawPath := flags.String("redraw", "", "draw the figure of a report's JSON (a report.json or context.json, such as testdata/results/tiny-zoo.json) again into the .png of the same name, from the JSON alone; nothing is trained or evaluated")
	flags.BoolVar(&o.noLock, "no-lock", false, "write runs without locking their directories (only for file systems without locks: then no other process may write them)")
	if code, ok := cli.Parse(flags, args); !ok {
		return code
	}
	if *redrawPath != "" {
		png, err := redraw(*redrawPath, flags)
		if err != nil {
			return fail("%v", err)
		}
		fmt.Fprintf(stderr, "experiment: wrote %s\n", png)
		return 0
	}
	if o.steps < 0 || o.costSteps < 0 || o.evalEvery < 0 {
		return fail("--steps, --eval-every and --cost-steps must be positive, got %d, %d and %d", o.steps, o.evalEvery, o.costSteps)
	}
	if o.gridPath != "" && (flagSet(flags, "config") || flagSet(flags, "pos")) {
		return fail("--grid names the configs and schemes: give it without --config and --pos")
	}
	if err := o.loadEntries(); err != nil {
		return fail("%v", err)
	}
	if err := o.parse(*shard); err != nil {
		return fail("%v", err)
	}
	if o.besidePath != "" {
		c, err := readBeside(o.besidePath)
		if err != nil {
			return fail("--beside: %v", err)
		}
		o.beside = c
	}
	if *recallList != "" {
		for _, t := range strings.Split(*recallList, ",") {
			t = strings.TrimSpace(t)
			if !slices.Contains(data.RecallTasks, t) {
				return fail("--recall: %q is not one of %s", t, strings.Join(data.RecallTasks, ", "))
			}
			if slices.Contains(o.recall, t) {
				return fail("--recall lists %s twice", t)
			}
			o.recall = append(o.recall, t)
		}
	}
	if o.recallEpisodes < 1 {
		return fail("--recall-episodes must be positive, got %d", o.recallEpisodes)
	}
	if o.noTimings && o.lenses() {
		return fail("--no-timings applies to the perplexity report only, not with --strides, --passkey, --recall or --attention-stats")
	}
	if o.isGrid() && (o.lenses() || o.extendList != "") {
		return fail("--strides, --passkey, --attention-stats and --extend take one config, not a grid")
	}
	cells := grid(o)
	if o.costSteps > 0 {
		if err := o.checkCost(flags); err != nil {
			return fail("%v", err)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return measureCost(ctx, o, cells, stdout, stderr)
	}
	if o.reportOnly {
		return report(o, cells, stdout, stderr)
	}
	mine := shardOf(cells, o.shard, o.shards)
	terminal := cli.IsTerminal(stderr)
	// The validation split's size, and whether every evaluation fits in it
	// and in memory, before anything trains.
	for _, e := range o.entries {
		if err := o.check(e, mine, stderr, terminal); err != nil {
			return fail("%v", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Training stops at a signal by itself, with a checkpoint. The
	// evaluations save each result as it is made (atomically), so a signal
	// during one ends the process at once: only the evaluation under way is
	// lost, and running the command again continues.
	var evaluating atomic.Bool
	go func() {
		<-ctx.Done()
		if evaluating.Load() {
			fmt.Fprintf(stderr, "experiment: interrupted during an evaluation; the finished ones are saved: run the same command again to continue\n")
			os.Exit(130)
		}
	}()
	for _, c := range mine {
		// Hand the memory of the previous run back to the OS first, so that
		// each run's and each length's peak RSS is its own.
		debug.FreeOSMemory()
		if err := trainAndEvaluate(ctx, c, o, &evaluating, stderr, terminal); err != nil {
			if errors.Is(err, train.ErrInterrupted) {
				fmt.Fprintf(stderr, "experiment: %v\nrun the same command again to continue\n", err)
				return 130
			}
			return fail("%s: %v", c.cfg.Out, err)
		}
	}
	if o.shards > 1 {
		fmt.Fprintf(stderr, "experiment: shard %d/%d done (%d of %d runs); once every shard is done, build the report with --report-only\n",
			o.shard, o.shards, len(mine), len(cells))
		return 0
	}
	return report(o, cells, stdout, stderr)
}

// checkCost refuses what the cost measurement does not take: a number of
// rounds below one, and the flags of training budgets, seeds, shards and
// evaluations, which it has no use for.
func (o options) checkCost(flags *flag.FlagSet) error {
	if o.costRounds < 1 {
		return fmt.Errorf("--cost-rounds must be positive, got %d", o.costRounds)
	}
	for _, name := range []string{"steps", "eval-every", "seeds", "shard", "mults", "strides", "passkey", "attention-stats", "extend", "no-timings", "max-tokens"} {
		if flagSet(flags, name) {
			return fmt.Errorf("--cost-steps measures training only: give it without --%s", name)
		}
	}
	return nil
}

// flagSet reports whether the command line gave the flag name.
func flagSet(flags *flag.FlagSet, name string) bool {
	set := false
	flags.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// check refuses, before anything trains, an evaluation length that does
// not fit in config e's validation split, or in memory for one of the runs
// of e this process trains, and a passkey distance its training split
// cannot fill.
func (o options) check(e entry, mine []cell, stderr io.Writer, terminal bool) error {
	d, err := train.LoadData(e.cfg, cli.CorpusProgress(stderr, terminal), "", nil)
	if err != nil {
		return err
	}
	val := d.Val
	question := len(d.Tokenizer.Encode([]byte(data.PasskeyQuestion)))
	for _, dist := range o.distances {
		if dist < question {
			return fmt.Errorf("--passkey %d is shorter than the question, %d tokens long under the tokenizer %v", dist, question, d.Tokenizer)
		}
		if piece := dist - question; piece > len(d.Train) {
			return fmt.Errorf("--passkey %d needs %d tokens of filler in one piece, the training split has %d", dist, piece, len(d.Train))
		}
	}
	for _, f := range o.factors {
		of := ""
		if o.isGrid() {
			of = " of " + e.path
		}
		l := lengthOf(f, e.cfg.Model.TrainLen)
		if l == math.MaxInt { // the length itself is past what an int holds
			err := &eval.LengthError{Len: l, Available: len(val), Stream: len(val)}
			return fmt.Errorf("--mults %g is too long for the validation split%s: %.4g tokens, past the largest length, and the data has %d%s",
				f, of, f*float64(e.cfg.Model.TrainLen), len(val), longestMult(err, e.cfg.Model.TrainLen))
		}
		if err := eval.CheckLength(len(val), o.evalOptions(l, stderr, false)); err != nil {
			return fmt.Errorf("--mults %g is too long for the validation split%s: %v%s", f, of, err, longestMult(err, e.cfg.Model.TrainLen))
		}
	}
	for _, c := range mine {
		if c.entry != e.path {
			continue
		}
		mc := c.cfg.Model
		mc.Vocab = d.Tokenizer.VocabSize()
		m, err := model.New(mc)
		if err != nil {
			return err
		}
		for _, l := range o.lengths(c.cfg) {
			if err := eval.CheckMemory(m, len(val), o.evalOptions(l, stderr, false)); err != nil {
				return fmt.Errorf("%s: %v; lower --batch-tokens or --mults", c.label, err)
			}
		}
	}
	return nil
}

// parse checks and expands the list flags.
func (o *options) parse(shard string) error {
	var err error
	for _, f := range strings.Split(o.mults, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("--mults: %q is not a positive number", f)
		}
		o.factors = append(o.factors, v)
	}
	if o.seedList != "" {
		for _, f := range strings.Split(o.seedList, ",") {
			v, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return fmt.Errorf("--seeds: %q is not a seed (a non-negative integer)", f)
			}
			o.seeds = append(o.seeds, v)
		}
	}
	// A value listed twice would train or evaluate one thing twice and count
	// it as two (a mean of two seeds with no spread).
	for _, err := range []error{twice("--mults", o.factors), twice("--seeds", o.seeds)} {
		if err != nil {
			return err
		}
	}
	k, n, ok := strings.Cut(shard, "/")
	var err1, err2 error
	o.shard, err1 = strconv.Atoi(k)
	o.shards, err2 = strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || o.shards < 1 || o.shard < 1 || o.shard > o.shards {
		return fmt.Errorf("--shard %q is not K/N with 1 <= K <= N", shard)
	}
	if o.strides, err = eval.ParseStrides(o.strideList); err != nil {
		return fmt.Errorf("--strides: %w", err)
	}
	if !slices.Contains(o.strides, eval.StrideSpec{Den: 1}) {
		// The comparison's table is of non-overlapping windows: always.
		o.strides = append([]eval.StrideSpec{{Den: 1}}, o.strides...)
	}
	if o.passkeyList != "" {
		for _, f := range strings.Split(o.passkeyList, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || v < 1 {
				return fmt.Errorf("--passkey: %q is not a distance in tokens (a positive integer, at least the question's length)", f)
			}
			o.distances = append(o.distances, v)
		}
		if err := twice("--passkey", o.distances); err != nil {
			return err
		}
	}
	if o.episodes < 1 {
		return fmt.Errorf("--passkey-episodes must be positive, got %d", o.episodes)
	}
	if err := o.parseExtends(); err != nil {
		return err
	}
	if o.batchTokens < 1 || o.maxTokens < 0 {
		return fmt.Errorf("--batch-tokens must be positive and --max-tokens not negative, got %d and %d", o.batchTokens, o.maxTokens)
	}
	return nil
}

// twice returns an error naming the first value that list (the flag
// named flag) holds more than once, and nil if it holds none twice.
func twice[T comparable](flag string, list []T) error {
	seen := map[T]bool{}
	for _, v := range list {
		if seen[v] {
			return fmt.Errorf("%s lists %v twice", flag, v)
		}
		seen[v] = true
	}
	return nil
}

// longestMult names the largest multiple of trainLen that fits where the
// *eval.LengthError err says a length did not, or returns "" if none does.
func longestMult(err error, trainLen int) string {
	var le *eval.LengthError
	if errors.As(err, &le) && (le.Available-1)/trainLen >= 1 {
		return fmt.Sprintf(" (--mults up to %d)", (le.Available-1)/trainLen)
	}
	return ""
}

// lengths are the evaluation lengths: each multiple of the training
// length, rounded to a whole token (two multiples that round to one
// length give it once), at least 1.
func (o options) lengths(cfg train.Config) []int {
	var ls []int
	for _, f := range o.factors {
		if l := lengthOf(f, cfg.Model.TrainLen); !slices.Contains(ls, l) {
			ls = append(ls, l)
		}
	}
	return ls
}

// lengthOf is multiple f of the training length trainLen, rounded to a
// whole token, at least 1, and at most math.MaxInt: a multiple such as
// 1e300 stays a length too long for any validation split (CheckLength
// refuses it) instead of wrapping around to a short one.
func lengthOf(f float64, trainLen int) int {
	l := math.Round(f * float64(trainLen))
	if l >= math.MaxInt {
		return math.MaxInt
	}
	return max(1, int(l))
}

func (o options) evalOptions(l int, stderr io.Writer, terminal bool) eval.Options {
	return eval.Options{Len: l, BatchTokens: o.batchTokens, MaxTokens: o.maxTokens, MemoryLimit: osutil.AvailableMemory(),
		Progress: eval.NewProgress(stderr, terminal, l, nil)}
}

// cell is one run of the grid: a config, a scheme and a seed, in its own
// directory.
type cell struct {
	cfg   train.Config
	entry string // the config's path
	seed  uint64
	// label is the run's --pos entry: its scheme, and +log-length for
	// log-length scaling (model.Config.Label).
	label string
	// group is what a grid's report groups the run by: its scheme and
	// training length ("alibi L=256"), or with the config's name when two
	// configs share both; "" for one config.
	group string
}

// grid lists the runs, configs first, then schemes, then seeds, in a
// fixed order that every shard computes alike. One config's runs are in
// <out>/<pos>, a grid's in <out>/<config name>/<pos>; a seed other than the
// config's own adds -seed<S>.
func grid(o options) []cell {
	var cells []cell
	groups := map[string]int{}
	for _, e := range o.entries {
		for _, pos := range e.schemes {
			groups[fmt.Sprintf("%s L=%d", pos, e.cfg.Model.TrainLen)]++
		}
	}
	for _, e := range o.entries {
		dir := o.out
		if o.isGrid() {
			dir = filepath.Join(o.out, e.cfg.Name)
		}
		for _, pos := range e.schemes {
			seeds := o.seeds
			if seeds == nil {
				seeds = []uint64{e.cfg.Model.Seed}
			}
			group := ""
			if o.isGrid() {
				group = fmt.Sprintf("%s L=%d", pos, e.cfg.Model.TrainLen)
				if groups[group] > 1 {
					group = fmt.Sprintf("%s %s", pos, e.cfg.Name)
				}
			}
			for _, s := range seeds {
				c := e.cfg
				c.Model.ApplyLabel(pos, c.Train.Steps)
				c.Model.Seed, c.Name = s, pos
				c.Out = filepath.Join(dir, pos)
				if s != e.cfg.Model.Seed {
					// The config's own seed keeps the plain directory, so
					// that an experiment without --seeds finds its runs.
					c.Name = fmt.Sprintf("%s-seed%d", pos, s)
					c.Out = filepath.Join(dir, c.Name)
				}
				cells = append(cells, cell{cfg: c, entry: e.path, seed: s, label: pos, group: group})
			}
		}
	}
	return cells
}

// shardOf returns shard k (1-based) of n: the runs whose index in the grid
// is k-1 modulo n.
func shardOf(cells []cell, k, n int) []cell {
	var mine []cell
	for i, c := range cells {
		if i%n == k-1 {
			mine = append(mine, c)
		}
	}
	return mine
}

// trainAndEvaluate trains a run (or reuses it) and evaluates it at every
// length (or reuses the evaluations its eval.json already has), holding the
// run directory's lock throughout: another process writing the run (an
// overlapping shard, the same job twice) makes it fail at once.
func trainAndEvaluate(ctx context.Context, c cell, o options, evaluating *atomic.Bool, stderr io.Writer, terminal bool) error {
	if !o.noLock {
		lock, err := train.LockRun(c.cfg.Out)
		if err != nil {
			if errors.Is(err, osutil.ErrLockUnsupported) {
				err = fmt.Errorf("%w; if no other process can write these runs, run again with --no-lock", err)
			}
			return err
		}
		defer lock.Unlock()
	}
	trained, err := trainOrReuse(ctx, c.cfg, stderr, terminal)
	if err != nil {
		return err
	}
	evaluating.Store(true)
	defer evaluating.Store(false)
	if ctx.Err() != nil {
		return train.ErrInterrupted
	}
	r, err := eval.OpenRun(c.cfg.Out, func(err error) { fmt.Fprintf(stderr, "experiment: skipping checkpoint: %v\n", err) })
	var fe *eval.FinalCheckpointError
	if errors.As(err, &fe) && fe.Good != "" {
		return fmt.Errorf("%w; train its last steps again from there (the same weights, bit for bit): go run ./cmd/train --resume --out %s", err, c.cfg.Out)
	}
	if err != nil {
		return err
	}
	made := madeBy{final: &r.Weights, trained: trained}
	lengths := o.lengths(c.cfg)
	have, _, err := readEvaluations(c.cfg.Out, o, made)
	if err != nil {
		return err
	}
	var todo []evalKey
	for _, l := range lengths {
		for _, spec := range o.strides {
			// Two specs can name one stride at a length (1/k of a short
			// length is 1tok): one evaluation.
			if k := (evalKey{l, spec.Stride(l)}); !haveKey(have, k) && !slices.Contains(todo, k) {
				todo = append(todo, k)
			}
		}
	}
	if len(todo) == 0 {
		fmt.Fprintf(stderr, "%s: reusing its evaluations\n", c.cfg.Out)
	}
	var val []uint32
	if len(todo) > 0 || o.attention {
		if val, err = r.ValidationTokens(cli.CorpusProgress(stderr, terminal)); err != nil {
			return err
		}
	}
	for _, k := range todo {
		debug.FreeOSMemory()
		opt := o.evalOptions(k.Len, stderr, terminal)
		opt.Stride, opt.Tokenizer = k.Stride, r.Tokenizer
		res, err := eval.Perplexity(r.Model, val, opt)
		if err != nil {
			return fmt.Errorf("length %d, stride %d: %w", k.Len, k.Stride, err)
		}
		fmt.Fprintf(stderr, "%s len %d stride %d: ppl %.4f, %.4f bits per byte (%d tokens, %.1fs, %.0f tokens/s, peak RSS %.0f MiB)\n",
			c.cfg.Out, k.Len, k.Stride, res.PPL, res.BitsPerByte, res.Tokens, res.WallSeconds, res.TokensPerSecond, float64(res.PeakRSSBytes)/(1<<20))
		have[k] = res
		if err := writeEvaluations(c.cfg.Out, "eval.json", o, made.final, have); err != nil {
			return err
		}
	}
	if o.attention {
		if err := attentionRun(r, val, c.cfg.Out, lengths, o, made, stderr, terminal); err != nil {
			return err
		}
	}
	if o.distances != nil {
		debug.FreeOSMemory()
		if err := passkeyRun(r, c.cfg.Out, o, made, stderr, terminal); err != nil {
			return err
		}
	}
	for _, task := range o.recall {
		debug.FreeOSMemory()
		if err := recallRun(r, c.cfg.Out, task, lengths, o, made, stderr, terminal); err != nil {
			return err
		}
	}
	for _, method := range o.extends[c.label] {
		if val == nil {
			if val, err = r.ValidationTokens(cli.CorpusProgress(stderr, terminal)); err != nil {
				return err
			}
		}
		if err := extendRun(r, val, c.cfg.Out, method, lengths, o, made, stderr, terminal); err != nil {
			return err
		}
	}
	return nil
}

// trainOrReuse reuses a run that finished with the steps asked for, and
// otherwise trains it: from the beginning, or continuing from its newest
// checkpoint that loads (a run that finished with fewer steps is continued
// to the new number), and reports that it trained. A run that trained for
// more steps than asked is an error: the report would claim a budget its
// run did not have.
func trainOrReuse(ctx context.Context, c train.Config, log io.Writer, terminal bool) (trained bool, err error) {
	s, err := train.ReadSummary(c.Out)
	switch {
	case err == nil && s.Steps == c.Train.Steps:
		fmt.Fprintf(log, "%s: reusing the trained run in %s\n", c.Name, c.Out)
		return false, nil
	case err == nil && s.Steps > c.Train.Steps:
		return false, fmt.Errorf("%s was trained for %d steps, more than the %d asked for; use another --out", c.Out, s.Steps, c.Train.Steps)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return false, err
	}
	fmt.Fprintf(log, "%s: training into %s\n", c.Name, c.Out)
	_, err = train.Train(ctx, c, train.Options{Resume: true, Log: log, Terminal: terminal, CorpusProgress: cli.CorpusProgress(log, terminal),
		Unlocked: true}) // trainAndEvaluate holds the lock
	return true, err
}

// readBeside reads an experiment's report.json (another's, for --beside;
// any, for --redraw) and compares its runs again, so that a report written
// before reports had bits per byte gets them from its results.
func readBeside(path string) (*eval.Comparison, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c eval.Comparison
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(c.Runs) == 0 {
		return nil, fmt.Errorf("%s holds no runs", path)
	}
	cmp := eval.Compare(c.Runs)
	return &cmp, nil
}
