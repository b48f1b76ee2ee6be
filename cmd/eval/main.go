package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/alibi-go/alibi/cmd/internal/cli"
	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/layers/position"
	"github.com/alibi-go/alibi/model/osutil"
)

const summary = `eval: report the perplexity of trained runs at several window lengths, or
(--task passkey) their retrieval of a pass key at several distances.

example: go run ./cmd/eval --len 2048      (runs/tiny at 1x, 2x and 4x its training length, and 2048)
         go run ./cmd/eval --run runs/tiny-passkey --task passkey --distances 64,128,1024`

func main() {
	cli.TuneGC()
	layers.UseFastBLAS()
	os.Exit(command(os.Args[1:], os.Stdout, os.Stderr))
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func command(args []string, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "eval: "+format+"\n", a...)
		return 1
	}
	flags := cli.NewFlagSet("eval", summary, stderr)
	var runs, ckpts listFlag
	flags.Var(&runs, "run", "run directory to evaluate (repeatable; default runs/tiny)")
	flags.Var(&ckpts, "checkpoint", "checkpoint file to evaluate (repeatable)")
	length := flags.Int("len", 0, "evaluate at this length too (added to the default lengths or to --lens)")
	lens := flags.String("lens", "", "comma-separated lengths to evaluate at, instead of 1x, 2x and 4x each run's training length")
	stride := flags.Int("stride", 0, "sliding-window protocol with this stride (default: non-overlapping windows)")
	dataPath := flags.String("data", "", "text file, directory or corpus spec to evaluate on (default: the validation split of each run's corpus)")
	tokenizerPath := flags.String("tokenizer", "", "the runs' tokenizer.json (default: each run's own, beside its checkpoints); a checkpoint trained with another tokenizer is refused")
	jsonPath := flags.String("json", "", "write every number to this JSON file")
	plotPath := flags.String("plot", "", "write perplexity-vs-length and loss-by-position plots to this PNG file")
	batchTokens := flags.Int("batch-tokens", 4096, "tokens per forward pass: windows of length n go batch-tokens/n at a time (at least one)")
	maxTokens := flags.Int("max-tokens", 0, "score only the first N tokens of the stream (0: all)")
	attnStats := flags.Bool("attention-stats", false, "also report, per layer and head at each length, the mean attended distance, the entropy and the share of attention past the training length L, over the queries past L")
	task := flags.String("task", "perplexity", "what to measure: perplexity; passkey (retrieval of a 5-digit key at each --distances; train with configs/tiny-passkey.yaml); mqar (multi-query associative recall) or multikey (one of several needles) in episodes of each --lens (train with data.mqar, data.multikey)")
	distances := flags.String("distances", "", fmt.Sprintf("passkey: comma-separated distances from the key to the answer (default %s)", joinInts(eval.DefaultPasskeyDistances)))
	depths := flags.String("depths", "", "passkey: comma-separated depths in [0, 1] the episodes cycle through: the filler before the key as a fraction of the filler after it (default 0,0.5,1)")
	episodes := flags.Int("episodes", 50, "passkey, mqar, multikey: episodes per distance or length")
	seed := flags.Uint64("seed", 1, "passkey, mqar, multikey: seed of the episodes")
	extend := flags.String("extend", "", "evaluation-time extension of every run's positions: pi, ntk, dynamic-ntk or yarn for rope runs, interp for alibi runs")
	extendFactor := flags.Float64("extend-factor", 0, "the extension's factor, at least 1 (default: each length over the training length, at least 1, for every window of that length, the shorter last one too; --task passkey needs one; dynamic-ntk takes none)")
	precision := flags.String("precision", "fp32", "arithmetic of the linear layers' products: fp32, or bf16 (bfloat16 factors, float32 accumulation; reported as a scheme of its own)")
	maxMemory := flags.String("max-memory", "", fmt.Sprintf("the memory to allow for, e.g. 2G: lengths estimated to need more than %d%% of it are refused (default: the memory available now)", eval.MemoryPercent))
	if code, ok := cli.Parse(flags, args); !ok {
		return code
	}
	set := cli.Set(flags)
	if set["len"] && *length < 1 {
		return fail("--len must be positive, got %d", *length)
	}
	if *stride < 0 {
		return fail("--stride must not be negative, got %d", *stride)
	}
	if *batchTokens < 1 {
		return fail("--batch-tokens must be positive, got %d", *batchTokens)
	}
	if *maxTokens < 0 {
		return fail("--max-tokens must not be negative, got %d", *maxTokens)
	}
	memLimit := osutil.AvailableMemory()
	if *maxMemory != "" {
		v, err := cli.ParseBytes(*maxMemory)
		if err != nil {
			return fail("--max-memory: %v", err)
		}
		memLimit = v
	}
	if set["lens"] && strings.TrimSpace(*lens) == "" {
		return fail("--lens is empty: give the lengths to evaluate at, or leave it out for 1x, 2x and 4x each run's training length")
	}
	explicit, err := parseLens(*lens)
	if err != nil {
		return fail("%v", err)
	}
	// The outputs are checked before any work.
	if *jsonPath != "" {
		if err := osutil.CheckOutput(*jsonPath); err != nil {
			return fail("--json: %v", err)
		}
	}
	if *plotPath != "" {
		if _, err := os.Stat(filepath.Dir(*plotPath)); err == nil { // a missing directory is made
			if err := osutil.CheckOutput(*plotPath); err != nil {
				return fail("--plot: %v", err)
			}
		}
	}
	var pk eval.PasskeyOptions
	switch *task {
	case "perplexity":
		for _, f := range []string{"distances", "depths", "episodes", "seed"} {
			if set[f] {
				return fail("--%s is a flag of --task %s", f, map[bool]string{true: "passkey", false: "passkey, mqar or multikey"}[f == "distances" || f == "depths"])
			}
		}
	case "passkey":
		for _, f := range []string{"len", "lens", "stride", "batch-tokens", "max-tokens", "attention-stats"} {
			if set[f] {
				return fail("--%s is a flag of --task perplexity", f)
			}
		}
		if *episodes < 1 {
			return fail("--episodes must be positive, got %d", *episodes)
		}
		pk = eval.PasskeyOptions{Episodes: *episodes, Seed: *seed, MemoryLimit: memLimit}
		if pk.Distances, err = parseInts("distances", *distances); err != nil {
			return fail("%v", err)
		}
		if pk.Depths, err = parseDepths(*depths); err != nil {
			return fail("%v", err)
		}
	case data.TaskMQAR, data.TaskMultiKey:
		for _, f := range []string{"len", "distances", "depths", "stride", "batch-tokens", "max-tokens", "max-memory", "attention-stats", "plot", "data"} {
			if set[f] {
				return fail("--%s is not a flag of --task %s", f, *task)
			}
		}
		if *episodes < 1 {
			return fail("--episodes must be positive, got %d", *episodes)
		}
	default:
		return fail("--task must be perplexity, passkey, mqar or multikey, got %q", *task)
	}
	if set["extend-factor"] && !set["extend"] {
		return fail("--extend-factor needs --extend")
	}
	if set["extend-factor"] && !(*extendFactor >= 1 && !math.IsInf(*extendFactor, 1)) {
		return fail("--extend-factor must be at least 1 and finite, got %v", *extendFactor)
	}
	if e, err := position.LookupExtension(*extend); *task == "passkey" && err == nil {
		if _, dynamic := e.(position.DynamicExtension); dynamic {
			return fail("--task passkey cannot use %s: its prompts are prefilled in chunks, whose deeper states keep the factor of their own length, so the score would depend on the chunk size", *extend)
		}
	}
	if *task == "passkey" && set["extend"] && !set["extend-factor"] {
		return fail("--task passkey decodes through the key/value cache, which needs a fixed factor: give --extend-factor")
	}
	prec, err := layers.ParsePrecision(*precision)
	if err != nil {
		return fail("--precision: %v", err)
	}
	if len(runs) == 0 && len(ckpts) == 0 {
		runs = append(runs, "runs/tiny")
	}
	var opened []*eval.Trained
	for _, dir := range runs {
		r, err := cli.OpenRun("eval", dir, stderr)
		if err != nil {
			return fail("%v", err)
		}
		opened = append(opened, r)
	}
	for _, path := range ckpts {
		r, err := cli.OpenCheckpoint("eval", path)
		if err != nil {
			return fail("%v", err)
		}
		opened = append(opened, r)
	}
	if *tokenizerPath != "" {
		t, err := data.LoadTokenizer(*tokenizerPath)
		if err != nil {
			return fail("--tokenizer: %v", err)
		}
		for _, r := range opened {
			if err := r.UseTokenizer(t, *tokenizerPath); err != nil {
				return fail("%v", err)
			}
		}
	}
	for _, r := range opened {
		if _, err := r.RunTokenizer(); err != nil {
			return fail("%v", err)
		}
	}
	if prec == layers.BF16 { // the notice times the bf16 kernels once: not in fp32
		if n := layers.BF16Notice(); n != "" {
			fmt.Fprintf(stderr, "notice: --precision bf16 %s\n", n)
		}
	}
	for _, r := range opened {
		if err := r.Model.Extend(*extend, *extendFactor); err != nil {
			return fail("%s: --extend: %v", r.Name, err)
		}
		r.Model.Precision = prec
	}
	if *task == "passkey" {
		var fileText []byte
		if *dataPath != "" {
			c, err := data.LoadCorpus(*dataPath)
			if err != nil {
				return fail("%v", err)
			}
			fileText = c.Bytes
		}
		if err := passkeyTask(opened, fileText, pk, *jsonPath, *plotPath, stdout, stderr); err != nil {
			return fail("%v", err)
		}
		return 0
	}
	if *task == data.TaskMQAR || *task == data.TaskMultiKey {
		o := eval.RecallOptions{Task: *task, Lengths: explicit, Episodes: *episodes, Seed: *seed}
		if err := recallTask(opened, o, *jsonPath, stdout, stderr); err != nil {
			return fail("%v", err)
		}
		return 0
	}
	// Every run's lengths and tokens first, and the length and memory checks
	// of every evaluation, before any of them allocates.
	type job struct {
		r       *eval.Trained
		tokens  []uint32
		lengths []int
	}
	var jobs []job
	progress := cli.CorpusProgress(stderr, cli.IsTerminal(stderr))

	for _, r := range opened {
		cfg := r.Model.Config
		lengths := append([]int(nil), explicit...)
		if lengths == nil {
			lengths = []int{cfg.TrainLen, 2 * cfg.TrainLen, 4 * cfg.TrainLen}
		}
		if set["len"] {
			lengths = append(lengths, *length)
		}
		lengths = uniqueSorted(lengths)
		for _, l := range lengths {
			if *stride > l {
				return fail("--stride %d is longer than the window length %d", *stride, l)
			}
		}
		var tokens []uint32
		if *dataPath != "" {
			tokens, err = eval.FileTokens(*dataPath, r.Tokenizer)
		} else {
			tokens, err = r.ValidationTokens(progress)
		}
		if err != nil {
			return fail("%v", err)
		}
		jobs = append(jobs, job{r, tokens, lengths})
	}
	terminal := cli.IsTerminal(stderr)
	opts := func(r *eval.Trained, l int) eval.Options {
		return eval.Options{Len: l, Stride: *stride, BatchTokens: *batchTokens, MaxTokens: *maxTokens, MemoryLimit: memLimit,
			Progress: eval.NewProgress(stderr, terminal, l, nil), Tokenizer: r.Tokenizer}
	}
	for _, j := range jobs {
		opts := func(l int) eval.Options { return opts(j.r, l) }
		for _, l := range j.lengths {
			if err := eval.CheckLength(len(j.tokens), opts(l)); err != nil {
				return fail("%s: %v", j.r.Name, err)
			}
			err := eval.CheckMemory(j.r.Model, len(j.tokens), opts(l))
			var me *eval.MemoryError
			switch {
			case errors.As(err, &me) && me.Batch > 1:
				return fail("%s: %v; lower --batch-tokens (now %d) or the length", j.r.Name, err, *batchTokens)
			case err != nil:
				return fail("%s: %v; evaluate shorter lengths, or raise --max-memory if the estimate is too cautious", j.r.Name, err)
			}
		}
	}
	var report eval.Report
	for _, j := range jobs {
		opts := func(l int) eval.Options { return opts(j.r, l) }
		cfg := j.r.Model.Config
		weights := j.r.Weights
		rr := eval.RunReport{Run: j.r.Label(), Pos: cfg.Label(), TrainLen: cfg.TrainLen, Extend: *extend, ExtendFactor: *extendFactor, Weights: &weights,
			Tokenizer: j.r.Tokenizer.String(), TokenizerHash: j.r.TokenizerHash}
		if prec != layers.FP32 {
			rr.Precision = prec.String()
		}
		for _, l := range j.lengths {
			res, err := eval.Perplexity(j.r.Model, j.tokens, opts(l))
			if err != nil {
				return fail("%s at length %d: %v", j.r.Name, l, err)
			}
			fmt.Fprintf(stderr, "%s (%s) len %d: ppl %.4f, %.4f bits per byte, %d tokens in %d windows, %.1fs, %.0f tokens/s, peak RSS %.0f MiB\n",
				rr.Run, rr.Scheme(), l, res.PPL, res.BitsPerByte, res.Tokens, res.Windows, res.WallSeconds, res.TokensPerSecond, float64(res.PeakRSSBytes)/(1<<20))
			rr.Results = append(rr.Results, res)
		}
		report.Runs = append(report.Runs, rr)
		if *attnStats {
			if report.Attention == nil {
				report.Attention = &eval.AttentionReport{}
			}
			ar := eval.AttentionRun{Run: j.r.Label(), Pos: cfg.Label(), TrainLen: cfg.TrainLen, Weights: &weights}
			for _, l := range j.lengths {
				o := opts(l)
				o.Stride = 0
				res, err := eval.AttentionStats(j.r.Model, j.tokens, o)
				if err != nil {
					return fail("%s at length %d: %v", j.r.Name, l, err)
				}
				ar.Results = append(ar.Results, res)
			}
			report.Attention.Runs = append(report.Attention.Runs, ar)
		}
	}
	if err := report.Markdown(stdout); err != nil {
		return fail("%v", err)
	}
	if report.Attention != nil {
		fmt.Fprintln(stdout)
		if err := report.Attention.Markdown(stdout); err != nil {
			return fail("%v", err)
		}
	}
	if *jsonPath != "" {
		var buf bytes.Buffer
		if err := report.WriteJSON(&buf); err != nil {
			return fail("%v", err)
		}
		if err := osutil.WriteFileAtomic(*jsonPath, buf.Bytes()); err != nil {
			return fail("write %s: %v", *jsonPath, err)
		}
	}
	if *plotPath != "" {
		if err := report.Plot(*plotPath); err != nil {
			return fail("%v", err)
		}
	}
	return 0
}

func parseLens(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("--lens: %q is not a positive length", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func uniqueSorted(v []int) []int {
	sort.Ints(v)
	out := v[:0:0]
	for i, x := range v {
		if i == 0 || x != v[i-1] {
			out = append(out, x)
		}
	}
	return out
}
