package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/alibi-go/alibi/cmd/internal/cli"
	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/layers/position"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/osutil"
)

const summary = `generate: continue a prompt with a trained model and stream the new text to stdout.

example: go run ./cmd/generate --prompt "Light is"          (runs/tiny, 256 bytes, temperature 0.8)`

func main() {
	cli.TuneGC()
	layers.UseFastBLAS()
	os.Exit(command(os.Args[1:], os.Stdout, os.Stderr))
}

// record is one prompt's entry of the --json file. Text is the generated
// bytes as a JSON string: a byte that is not part of valid UTF-8 becomes
// U+FFFD there (stdout has the exact bytes).
type record struct {
	PromptTokens    int     `json:"prompt_tokens"`
	Tokens          int     `json:"tokens"`
	Context         int     `json:"context"`
	TokensPerSecond float64 `json:"tokens_per_second"`
	Text            string  `json:"text"`
	// Weights names the checkpoint that generated the text.
	Weights eval.Weights `json:"weights"`
}

func command(args []string, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "generate: "+format+"\n", a...)
		return 1
	}
	flags := cli.NewFlagSet("generate", summary, stderr)
	runDir := flags.String("run", "runs/tiny", "run directory to generate with: a finished run's final checkpoint, an unfinished one's newest good one")
	ckpt := flags.String("checkpoint", "", "checkpoint file to generate with, instead of --run")
	prompt := flags.String("prompt", "", "the text to continue")
	promptFile := flags.String("prompt-file", "", "read the text to continue from this file")
	batchFile := flags.String("batch-file", "", "continue each line of this file, all decoded as one batch")
	tokens := flags.Int("tokens", 256, "tokens to generate per prompt, at most (bytes, for a run of the byte tokenizer)")
	temperature := flags.Float64("temperature", 0.8, "sampling temperature (0: greedy)")
	topK := flags.Int("top-k", 0, "sample from the k most likely tokens only (0: off)")
	topP := flags.Float64("top-p", 1, "sample from the smallest set of tokens with this much probability (1: off)")
	tokenizerPath := flags.String("tokenizer", "", "the run's tokenizer.json (default: the run's own, beside its checkpoints); a checkpoint trained with another tokenizer is refused")
	seed := flags.Uint64("seed", 1, "random seed: the same flags give the same bytes")
	stop := flags.String("stop", "", "stop a prompt's generation when this text appears (it is not printed)")
	extend := flags.String("extend", "", "evaluation-time extension of the positions: pi, ntk, dynamic-ntk or yarn for a rope run, interp for an alibi run")
	extendFactor := flags.Float64("extend-factor", 0, "the extension's factor, at least 1 (default: the longest prompt plus --tokens, over the training length, at least 1; dynamic-ntk takes none: its factor follows the length)")
	precision := flags.String("precision", "fp32", "arithmetic of the linear layers' products: fp32, or bf16 (bfloat16 factors, float32 accumulation)")
	jsonPath := flags.String("json", "", "write each prompt's prompt_tokens, tokens, context, tokens_per_second, text and weights (the checkpoint, its step, the run's steps, whether it finished) to this JSON file")
	maxMemory := flags.String("max-memory", "", fmt.Sprintf("the memory to allow for, e.g. 2G: a generation estimated to need more than %d%% of it (the key/value cache of the prompts plus --tokens, and the largest graph) is refused (default: the memory available now)", eval.MemoryPercent))
	if code, ok := cli.Parse(flags, args); !ok {
		return code
	}
	set := cli.Set(flags)
	opt := model.GenerateOptions{Tokens: *tokens, Seed: *seed, Stop: []byte(*stop),
		Sampling: model.Sampling{Temperature: *temperature, TopK: *topK, TopP: *topP}}
	if opt.Tokens < 1 {
		return fail("--tokens must be at least 1, got %d", opt.Tokens)
	}
	if err := opt.Sampling.Validate(); err != nil {
		return fail("--%v", err)
	}
	if *jsonPath != "" { // checked before any work
		if err := osutil.CheckOutput(*jsonPath); err != nil {
			return fail("--json: %v", err)
		}
	}
	prompts, err := readPrompts(set, *prompt, *promptFile, *batchFile)
	if err != nil {
		return fail("%v", err)
	}
	if set["extend-factor"] && !set["extend"] {
		return fail("--extend-factor needs --extend")
	}
	if set["extend-factor"] && !(*extendFactor >= 1 && !math.IsInf(*extendFactor, 1)) {
		return fail("--extend-factor must be at least 1 and finite, got %v", *extendFactor)
	}
	prec, err := layers.ParsePrecision(*precision)
	if err != nil {
		return fail("--precision: %v", err)
	}
	memLimit := osutil.AvailableMemory()
	if *maxMemory != "" {
		if memLimit, err = cli.ParseBytes(*maxMemory); err != nil {
			return fail("--max-memory: %v", err)
		}
	}
	var trained *eval.Trained
	if *ckpt != "" {
		if set["run"] {
			return fail("give --run or --checkpoint, not both")
		}
		trained, err = cli.OpenCheckpoint("generate", *ckpt)
	} else {
		trained, err = cli.OpenRun("generate", *runDir, stderr)
	}
	if err != nil {
		return fail("%v", err)
	}
	if *tokenizerPath != "" {
		t, err := data.LoadTokenizer(*tokenizerPath)
		if err != nil {
			return fail("--tokenizer: %v", err)
		}
		if err := trained.UseTokenizer(t, *tokenizerPath); err != nil {
			return fail("%v", err)
		}
	}
	if opt.Tokenizer, err = trained.RunTokenizer(); err != nil {
		return fail("%v", err)
	}
	promptLens := make([]int, len(prompts))
	for i, p := range prompts {
		promptLens[i] = len(opt.Tokenizer.Encode(p))
	}
	scheme := trained.Model.Config.Label()
	if prec == layers.BF16 { // the notice times the bf16 kernels once: not in fp32
		if n := layers.BF16Notice(); n != "" {
			fmt.Fprintf(stderr, "notice: --precision bf16 %s\n", n)
		}
	}
	trained.Model.Precision = prec
	if prec != layers.FP32 {
		scheme += " " + prec.String()
	}
	if *extend != "" {
		f := *extendFactor
		e, _ := position.LookupExtension(*extend) // an unknown name: Extend says so below
		_, dynamic := e.(position.DynamicExtension)
		if f == 0 && !dynamic { // the longest sequence's final length over the training length
			longest := 0
			for _, n := range promptLens {
				longest = max(longest, n)
			}
			f = max(1, float64(longest+opt.Tokens)/float64(trained.Model.Config.TrainLen))
		}
		if err := trained.Model.Extend(*extend, f); err != nil {
			return fail("%s: --extend: %v", trained.Name, err)
		}
		if scheme += "+" + *extend; !dynamic {
			scheme += fmt.Sprintf(" x%.4g", f)
		}
	}

	if err := checkMemory(trained.Model, promptLens, opt, memLimit); err != nil {
		return fail("%s: %v", trained.Name, err)
	}

	// One prompt streams its bytes as they come; a batch prints each
	// continuation, followed by a newline, once all are done.
	out := bufio.NewWriter(stdout)
	var emit func(int, []byte)
	if len(prompts) == 1 {
		emit = func(_ int, b []byte) { out.Write(b); out.Flush() }
	}
	gens, stats, err := trained.Model.Generate(prompts, opt, emit)
	if err != nil {
		return fail("%v", err)
	}
	if len(prompts) > 1 {
		for _, g := range gens {
			out.Write(g.Text)
			out.WriteByte('\n')
		}
	}
	if err := out.Flush(); err != nil {
		return fail("stdout: %v", err)
	}
	generated := 0
	var contexts []string
	recs := make([]record, len(gens))
	for i, g := range gens {
		contexts = append(contexts, fmt.Sprint(g.Context))
		generated += g.Tokens
		recs[i] = record{PromptTokens: g.PromptTokens, Tokens: g.Tokens, Context: g.Context,
			TokensPerSecond: float64(g.Tokens) / (stats.PrefillSeconds + stats.DecodeSeconds), Text: string(g.Text), Weights: trained.Weights}
	}
	fmt.Fprintf(stderr, "\nweights: %s\n", trained.Weights.Describe())
	fmt.Fprintf(stderr, "%s (%s): %d prompt tokens prefilled at %.0f tokens/s; %d tokens generated, decoding at %.0f tokens/s; final context %s; cache %s\n",
		trained.Label(), scheme, stats.PrefillTokens, float64(stats.PrefillTokens)/(stats.PrefillSeconds+1e-12),
		generated, float64(stats.DecodeTokens)/(stats.DecodeSeconds+1e-12), strings.Join(contexts, ", "), osutil.FormatBytes(int64(stats.CacheBytes)))
	if *jsonPath != "" {
		b, err := json.MarshalIndent(recs, "", "  ")
		if err != nil {
			return fail("%v", err)
		}
		if err := osutil.WriteFileAtomic(*jsonPath, append(b, '\n')); err != nil {
			return fail("write %s: %v", *jsonPath, err)
		}
	}
	return 0
}

// checkMemory refuses, before anything is allocated, a generation whose
// estimated memory (model.GenerateBytes: the key/value cache of every prompt
// plus opt.Tokens, and the largest graph) does not fit in limit
// (eval.FitsMemory).
func checkMemory(m *model.Model, lens []int, opt model.GenerateOptions, limit int64) error {
	longest := 0
	for _, n := range lens {
		longest = max(longest, n)
	}
	if need := m.GenerateBytes(lens, opt); !eval.FitsMemory(need, limit) {
		what := fmt.Sprintf("a prompt of %d tokens plus --tokens %d needs", longest, opt.Tokens)
		if len(lens) > 1 {
			what = fmt.Sprintf("%d prompts of up to %d tokens plus --tokens %d each need", len(lens), longest, opt.Tokens)
		}
		return fmt.Errorf("%s about %s (the key/value cache and the largest graph) but only %s is available, of which a generation may take %d%% (%s); lower --tokens, or raise --max-memory if the estimate is too cautious",
			what, osutil.FormatBytes(need), osutil.FormatBytes(limit), eval.MemoryPercent, osutil.FormatBytes(limit/100*eval.MemoryPercent))
	}
	return nil
}

// readPrompts returns the prompts of exactly one of --prompt, --prompt-file
// and --batch-file.
func readPrompts(set map[string]bool, prompt, promptFile, batchFile string) ([][]byte, error) {
	given := 0
	for _, f := range []string{"prompt", "prompt-file", "batch-file"} {
		if set[f] {
			given++
		}
	}
	if given != 1 {
		return nil, fmt.Errorf("give exactly one of --prompt, --prompt-file and --batch-file")
	}
	switch {
	case set["prompt"]:
		if prompt == "" {
			return nil, fmt.Errorf("the prompt is empty")
		}
		return [][]byte{[]byte(prompt)}, nil
	case set["prompt-file"]:
		b, err := os.ReadFile(promptFile)
		if err != nil {
			return nil, fmt.Errorf("--prompt-file: %w", err)
		}
		if len(b) == 0 {
			return nil, fmt.Errorf("the prompt file %s is empty", promptFile)
		}
		return [][]byte{b}, nil
	}
	b, err := os.ReadFile(batchFile)
	if err != nil {
		return nil, fmt.Errorf("--batch-file: %w", err)
	}
	var prompts [][]byte
	for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			return nil, fmt.Errorf("--batch-file %s: line %d is empty", batchFile, i+1)
		}
		prompts = append(prompts, line)
	}
	return prompts, nil
}
