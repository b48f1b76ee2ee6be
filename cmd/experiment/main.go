// Command experiment runs the extrapolation comparison: it trains one model
// per position scheme from one config (same data, seed and budget),
// evaluates each at multiples of the training length, and writes
// report.md, report.json and report.png. Runs already trained are reused,
// and a run with checkpoints but no summary is resumed.
//
//	go run ./cmd/experiment --config configs/tiny.yaml --pos alibi,sinusoidal,none --out runs/compare
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/alibi-go/alibi/cmd/internal/cli"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/osutil"
	"github.com/alibi-go/alibi/train"
)

const summary = `experiment: train one model per position scheme on one budget, evaluate each at
multiples of the training length, and write report.md, report.json and report.png.

example: go run ./cmd/experiment --config configs/tiny.yaml --pos alibi,sinusoidal,none --out runs/compare`

func main() {
	cli.TuneGC()
	os.Exit(command(os.Args[1:], os.Stdout, os.Stderr))
}

func command(args []string, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "experiment: "+format+"\n", a...)
		return 1
	}
	flags := cli.NewFlagSet("experiment", summary, stderr)
	configPath := flags.String("config", "configs/tiny.yaml", "run config (YAML) shared by every run")
	posList := flags.String("pos", "alibi,sinusoidal,none", "comma-separated position schemes to compare")
	out := flags.String("out", "runs/compare", "report directory; run i is trained in <out>/<pos>")
	mults := flags.String("mults", "1,2,4,16", "evaluation lengths as multiples of the training length")
	steps := flags.Int("steps", 0, "training steps of every run, overriding the config (a finished run with fewer steps is continued)")
	batchTokens := flags.Int("batch-tokens", 4096, "evaluation tokens per forward pass: windows of length n go batch-tokens/n at a time")
	maxTokens := flags.Int("max-tokens", 0, "score only the first N tokens of the validation split at every length (0: all of it)")
	if code, ok := cli.Parse(flags, args); !ok {
		return code
	}
	cfg, err := train.LoadConfig(*configPath)
	if err != nil {
		return fail("%v", err)
	}
	if *steps != 0 {
		if *steps < 1 {
			return fail("--steps must be positive, got %d", *steps)
		}
		cfg.Train.Steps = *steps
	}
	if *batchTokens < 1 || *maxTokens < 0 {
		return fail("--batch-tokens must be positive and --max-tokens not negative, got %d and %d", *batchTokens, *maxTokens)
	}
	var factors []int
	for _, f := range strings.Split(*mults, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return fail("--mults: %q is not a positive integer", f)
		}
		factors = append(factors, v)
	}
	var schemes []string
	for _, p := range strings.Split(*posList, ",") {
		c := cfg
		c.Model.Pos = strings.TrimSpace(p)
		if err := c.Validate(); err != nil {
			return fail("--pos: %v", err)
		}
		schemes = append(schemes, c.Model.Pos)
	}
	terminal := cli.IsTerminal(stderr)
	// The validation split's size, and whether every evaluation fits in
	// memory, before anything trains.
	_, _, val, err := train.LoadData(cfg, cli.CorpusProgress(stderr, terminal))
	if err != nil {
		return fail("%v", err)
	}
	evalOpts := func(l int) eval.Options {
		return eval.Options{Len: l, BatchTokens: *batchTokens, MaxTokens: *maxTokens, MemoryLimit: osutil.AvailableMemory(),
			Progress: cli.EvalProgress(stderr, terminal, l)}
	}
	for _, pos := range schemes {
		c := cfg.Model
		c.Pos = pos
		m, err := model.New(c)
		if err != nil {
			return fail("%v", err)
		}
		for _, f := range factors {
			o := evalOpts(f * c.TrainLen)
			if need := eval.EstimateBytes(m, len(val), o); o.MemoryLimit > 0 && need > o.MemoryLimit {
				return fail("%s at length %d needs about %s but only %s is available; lower --batch-tokens or --mults",
					pos, o.Len, osutil.FormatBytes(need), osutil.FormatBytes(o.MemoryLimit))
			}
		}
	}
	valTokens := len(val)
	val = nil
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var report eval.Report
	var summaries []*train.Summary
	for _, pos := range schemes {
		c := cfg
		c.Model.Pos = pos
		c.Name = pos
		c.Out = filepath.Join(*out, pos)
		// Hand the memory of the previous run back to the OS first, so that
		// each run's and each length's peak RSS is its own.
		debug.FreeOSMemory()
		sum, err := trainOrReuse(ctx, c, stderr, terminal)
		if errors.Is(err, train.ErrInterrupted) {
			fmt.Fprintf(stderr, "experiment: %v\nrun the same command again to continue\n", err)
			return 130
		}
		if err != nil {
			return fail("%s: %v", pos, err)
		}
		summaries = append(summaries, sum)
		r, err := eval.OpenRun(c.Out, func(err error) { fmt.Fprintf(stderr, "experiment: skipping checkpoint: %v\n", err) })
		if err != nil {
			return fail("%v", err)
		}
		val, err := r.ValidationTokens(nil)
		if err != nil {
			return fail("%v", err)
		}
		rr := eval.RunReport{Run: c.Out, Pos: pos, TrainLen: c.Model.TrainLen}
		for _, f := range factors {
			l := f * c.Model.TrainLen
			debug.FreeOSMemory()
			res, err := eval.Perplexity(r.Model, val, evalOpts(l))
			if err != nil {
				return fail("%s at length %d: %v", pos, l, err)
			}
			fmt.Fprintf(stderr, "%s len %d: ppl %.4f (%.1fs, %.0f tokens/s, peak RSS %.0f MiB)\n",
				pos, l, res.PPL, res.WallSeconds, res.TokensPerSecond, float64(res.PeakRSSBytes)/(1<<20))
			rr.Results = append(rr.Results, res)
		}
		report.Runs = append(report.Runs, rr)
	}
	var js bytes.Buffer
	if err := report.WriteJSON(&js); err != nil {
		return fail("%v", err)
	}
	if err := osutil.WriteFileAtomic(filepath.Join(*out, "report.json"), js.Bytes()); err != nil {
		return fail("%v", err)
	}
	if err := report.Plot(filepath.Join(*out, "report.png")); err != nil {
		return fail("%v", err)
	}
	md := markdown(report, summaries, cfg, *configPath, *posList, *out, *mults, *maxTokens, valTokens)
	if err := osutil.WriteFileAtomic(filepath.Join(*out, "report.md"), []byte(md)); err != nil {
		return fail("%v", err)
	}
	fmt.Fprint(stdout, md)
	return 0
}

// trainOrReuse returns the summary of a run that finished with the steps
// asked for, and otherwise trains it: from the beginning, or continuing
// from its newest checkpoint (a run that finished with fewer steps is
// continued to the new number). A run that trained for more steps than asked
// is an error: the report would claim a budget its run did not have.
func trainOrReuse(ctx context.Context, c train.Config, log io.Writer, terminal bool) (*train.Summary, error) {
	s, err := train.ReadSummary(c.Out)
	switch {
	case err == nil && s.Steps == c.Train.Steps:
		fmt.Fprintf(log, "%s: reusing the trained run in %s\n", c.Model.Pos, c.Out)
		return s, nil
	case err == nil && s.Steps > c.Train.Steps:
		return nil, fmt.Errorf("%s was trained for %d steps, more than the %d asked for; use another --out", c.Out, s.Steps, c.Train.Steps)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	fmt.Fprintf(log, "%s: training into %s\n", c.Model.Pos, c.Out)
	return train.Train(ctx, c, train.Options{Resume: true, Log: log, Terminal: terminal})
}

func markdown(r eval.Report, sums []*train.Summary, cfg train.Config, configPath, pos, out, mults string, maxTokens, valTokens int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Extrapolation: %s\n\n", strings.ReplaceAll(pos, ",", " vs "))
	scored := "the whole validation split"
	if maxTokens > 0 && maxTokens < valTokens-1 {
		scored = fmt.Sprintf("the first %d tokens of the validation split (of %d)", maxTokens, valTokens)
	}
	fmt.Fprintf(&b, "Validation perplexity per byte, non-overlapping windows over %s "+
		"(last %g of %s), at multiples of the training length L = %d.\n\n", scored, cfg.Data.ValFrac, cfg.Data.Corpus, cfg.Model.TrainLen)
	r.Markdown(&b)
	b.WriteString("\nPerplexity relative to the training length:\n\n| run |")
	for _, x := range r.Runs[0].Results {
		fmt.Fprintf(&b, " %d / %d |", x.Len, r.Runs[0].TrainLen)
	}
	b.WriteString("\n|---|")
	for range r.Runs[0].Results {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "| %s |", run.Pos)
		for _, x := range run.Results {
			fmt.Fprintf(&b, " %.3f |", x.PPL/run.Results[0].PPL)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n![perplexity vs length and loss by position](report.png)\n\n## Settings\n\n")
	m, t := cfg.Model, cfg.Train
	fmt.Fprintf(&b, "Model: vocab %d, d_model %d, %d layers, %d heads, d_ff %d, seed %d. Training: %d steps of %d x %d tokens, "+
		"AdamW lr %g (warm-up %d, cosine to %g), betas %g/%g, weight decay %g, clip %g.\n\n",
		m.Vocab, m.DModel, m.NLayers, m.NHeads, m.DFF, m.Seed, t.Steps, t.Batch, m.TrainLen, t.LR, t.Warmup, t.MinLR, t.Beta1, t.Beta2, t.WeightDecay, t.Clip)
	b.WriteString("| run | train tokens | train wall (s) | train tokens/s | final train loss | val ppl at L | peak RSS (MiB) |\n|---|---|---|---|---|---|---|\n")
	for i, s := range sums {
		fmt.Fprintf(&b, "| %s | %d | %.0f | %.0f | %.4f | %.3f | %.0f |\n", r.Runs[i].Pos, s.Tokens, s.WallSeconds, s.TokensPerSecond,
			s.FinalTrainLoss, s.ValPPL, float64(s.PeakRSSBytes)/(1<<20))
	}
	b.WriteString("\n| run | eval length | tokens | windows | wall (s) | tokens/s | peak RSS (MiB) |\n|---|---|---|---|---|---|---|\n")
	for _, run := range r.Runs {
		for _, x := range run.Results {
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %.1f | %.0f | %.0f |\n", run.Pos, x.Len, x.Tokens, x.Windows, x.WallSeconds,
				x.TokensPerSecond, float64(x.PeakRSSBytes)/(1<<20))
		}
	}
	extra := ""
	if maxTokens > 0 {
		extra = fmt.Sprintf(" --max-tokens %d", maxTokens)
	}
	fmt.Fprintf(&b, "\n## Reproduce\n\n```sh\ngo run ./cmd/experiment --config %s --pos %s --out %s --mults %s%s\n```\n\nGenerated %s.\n",
		configPath, pos, out, mults, extra, time.Now().UTC().Format("2006-01-02"))
	return b.String()
}
