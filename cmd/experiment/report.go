package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/osutil"
	"github.com/alibi-go/alibi/train"
)

// evaluations is a run's eval.json: its results at each length, with the
// token budget they were scored on and the weights that made them (nil in
// files of an older version).
type evaluations struct {
	MaxTokens int           `json:"max_tokens"`
	Weights   *eval.Weights `json:"weights,omitempty"`
	Results   []eval.Result `json:"results"`
}

// evalKey names one evaluation of a run: a length and a stride (0:
// non-overlapping windows).
type evalKey struct{ Len, Stride int }

// haveKey reports whether have holds the evaluation k.
func haveKey(have map[evalKey]eval.Result, k evalKey) bool {
	_, ok := have[k]
	return ok
}

// readEvaluations returns the results a run already has for this
// experiment's token budget, by length and stride: those of the trained
// model in eval.json, if made reuses them, and the weights that made them.
func readEvaluations(dir string, o options, made madeBy) (map[evalKey]eval.Result, *eval.Weights, error) {
	return readEvaluationsFile(dir, "eval.json", o, made)
}

// readEvaluationsFile is readEvaluations from the run's file name: eval.json,
// or an extension's file (extensionFile).
func readEvaluationsFile(dir, name string, o options, made madeBy) (map[evalKey]eval.Result, *eval.Weights, error) {
	have := map[evalKey]eval.Result{}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return have, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var e evaluations
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
	}
	if e.MaxTokens != o.maxTokens || !made.reuses(e.Weights) {
		return have, nil, nil // scored on other tokens, or by other weights: evaluate again
	}
	if name != "eval.json" && e.Weights == nil {
		// An extension's file that names no weights was written before every
		// window of a length took that length's factor: its last, shorter
		// window was scored at its own. Evaluate again.
		return have, nil, nil
	}
	for _, r := range e.Results {
		have[evalKey{r.Len, r.Stride}] = r
	}
	return have, e.Weights, nil
}

// writeEvaluations saves a run's results, made by the weights w, in its
// file name (eval.json, or an extension's file), by ascending length.
func writeEvaluations(dir, name string, o options, w *eval.Weights, have map[evalKey]eval.Result) error {
	e := evaluations{MaxTokens: o.maxTokens, Weights: w}
	for _, r := range have {
		e.Results = append(e.Results, r)
	}
	sort.Slice(e.Results, func(i, j int) bool {
		a, b := e.Results[i], e.Results[j]
		if a.Len != b.Len {
			return a.Len < b.Len
		}
		return a.Stride < b.Stride
	})
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	return osutil.WriteFileAtomic(filepath.Join(dir, name), append(b, '\n'))
}

// report gathers every run of the grid (each must have finished training
// and its evaluations, and no process may be writing it) and writes
// report.md, report.json and report.png.
func report(o options, cells []cell, stdout, stderr io.Writer) int {
	var runs []eval.TrainedRun
	var passkey eval.PasskeyReport
	var strides eval.Report
	var attention eval.AttentionReport
	var recall eval.RecallReport
	var missing, writing []string
	for _, c := range cells {
		holder, busy, err := train.RunWriter(c.cfg.Out)
		if err != nil {
			fmt.Fprintf(stderr, "experiment: %s: %v\n", c.cfg.Out, err)
			return 1
		}
		if busy {
			writing = append(writing, fmt.Sprintf("%s (by %s)", c.cfg.Out, holder))
			continue
		}
		r, made, err := trainedRun(c, o)
		if err != nil {
			missing = append(missing, fmt.Sprintf("%s (%v)", c.cfg.Out, err))
			continue
		}
		if o.sliding() {
			rr, err := strideResults(c, o, made)
			if err != nil {
				missing = append(missing, fmt.Sprintf("%s (%v)", c.cfg.Out, err))
				continue
			}
			strides.Runs = append(strides.Runs, rr)
		}
		if o.attention {
			ar, err := attentionResults(c, o, made)
			if err != nil {
				missing = append(missing, fmt.Sprintf("%s (%v)", c.cfg.Out, err))
				continue
			}
			attention.Runs = append(attention.Runs, ar)
		}
		if o.distances != nil {
			pk, err := readPasskey(c.cfg.Out, o, made)
			if err != nil || pk == nil {
				missing = append(missing, fmt.Sprintf("%s (no passkey evaluation at these distances%s)", c.cfg.Out, errSuffix(err)))
				continue
			}
			passkey.Runs = append(passkey.Runs, *pk)
		}
		ready := true
		for _, task := range o.recall {
			rr, err := readRecall(c.cfg.Out, task, o.lengths(c.cfg), o, made)
			if err != nil || rr == nil {
				missing = append(missing, fmt.Sprintf("%s (no %s evaluation at these lengths%s)", c.cfg.Out, task, errSuffix(err)))
				ready = false
				break
			}
			recall.Runs = append(recall.Runs, *rr)
		}
		if !ready {
			continue
		}
		runs = append(runs, r)
		for _, method := range o.extends[c.label] {
			v, err := extendedRun(r, c, method, o, made)
			if err != nil {
				missing = append(missing, fmt.Sprintf("%s (%v)", c.cfg.Out, err))
				continue
			}
			runs = append(runs, v)
		}
	}
	if len(writing) > 0 || len(missing) > 0 {
		var parts []string
		if len(writing) > 0 {
			parts = append(parts, fmt.Sprintf("%d in progress: %s", len(writing), strings.Join(writing, "; ")))
		}
		if len(missing) > 0 {
			parts = append(parts, fmt.Sprintf("%d not finished: %s", len(missing), strings.Join(missing, "; ")))
		}
		fmt.Fprintf(stderr, "experiment: %d of %d runs are not ready, so no report was written; %s\n",
			len(writing)+len(missing), len(cells), strings.Join(parts, "; "))
		return 1
	}
	cmp := eval.Compare(runs)
	if o.noTimings {
		cmp = cmp.WithoutTimings()
	}
	var js bytes.Buffer
	// report.json holds the losses by position in log-spaced buckets; the
	// full arrays stay in each run's eval.json. The figure is drawn from
	// what report.json holds, so that --redraw draws it again from the file.
	compact := cmp.Compact()
	if err := compact.WriteJSON(&js); err != nil {
		fmt.Fprintf(stderr, "experiment: %v\n", err)
		return 1
	}
	ctx := contextReport{Strides: strides, Passkey: passkey, Attention: attention, Recall: recall}
	md := markdown(cmp, ctx, o)
	for _, w := range []struct {
		name string
		data []byte
	}{{"report.json", js.Bytes()}, {"report.md", []byte(md)}} {
		if err := osutil.WriteFileAtomic(filepath.Join(o.out, w.name), w.data); err != nil {
			fmt.Fprintf(stderr, "experiment: %v\n", err)
			return 1
		}
	}
	if err := compact.Plot(filepath.Join(o.out, "report.png")); err != nil {
		fmt.Fprintf(stderr, "experiment: %v\n", err)
		return 1
	}
	if o.lenses() {
		if err := ctx.write(o.out); err != nil {
			fmt.Fprintf(stderr, "experiment: %v\n", err)
			return 1
		}
	}
	fmt.Fprint(stdout, md)
	return 0
}

// trainedRun reads one finished run: its summary, training loss and
// evaluations at every length of the experiment, which must be of its final
// checkpoint. It returns what the run's other evaluations must be made by
// too.
func trainedRun(c cell, o options) (eval.TrainedRun, madeBy, error) {
	s, err := train.ReadSummary(c.cfg.Out)
	if err != nil {
		return eval.TrainedRun{}, madeBy{}, unfinished(c)
	}
	if s.Steps != c.cfg.Train.Steps {
		return eval.TrainedRun{}, madeBy{}, fmt.Errorf("trained for %d steps, not %d", s.Steps, c.cfg.Train.Steps)
	}
	loss, err := train.ReadLoss(c.cfg.Out)
	if err != nil {
		return eval.TrainedRun{}, madeBy{}, err
	}
	val, err := train.ReadValidation(c.cfg.Out, c.cfg.Train.Batch*c.cfg.Model.TrainLen, c.cfg.Model.TrainLen)
	if err != nil {
		return eval.TrainedRun{}, madeBy{}, err
	}
	made := madeBy{final: finalWeights(s)}
	have, weights, err := readEvaluations(c.cfg.Out, o, made)
	if err != nil {
		return eval.TrainedRun{}, madeBy{}, err
	}
	r := eval.TrainedRun{Run: c.cfg.Out, Pos: c.cfg.Model.Label(), Group: c.group, Seed: c.seed, TrainLen: c.cfg.Model.TrainLen, Params: s.Params,
		Steps: s.Steps, TrainTokens: int64(s.Steps) * int64(c.cfg.Train.Batch*c.cfg.Model.TrainLen), TokensPerSecond: s.TokensPerSecond, WallSeconds: s.WallSeconds, FinalTrainLoss: s.FinalTrainLoss,
		PeakRSSBytes: s.PeakRSSBytes, Processor: s.Processor, Kernels: s.Kernels, Tokenizer: s.Tokenizer, Loss: loss, Validation: val,
		Corpus: eval.CorpusID{Spec: s.Corpus, Bytes: s.CorpusBytes, SHA256: s.CorpusSHA256, GoVersion: s.GoVersion}, Weights: weights}
	for _, l := range o.lengths(c.cfg) {
		res, ok := have[evalKey{l, 0}]
		if !ok {
			return eval.TrainedRun{}, madeBy{}, fmt.Errorf("not evaluated at length %d", l)
		}
		r.Results = append(r.Results, res)
	}
	return r, made, nil
}

// unfinished says how far a run without a summary got: "unfinished at step
// 755 of 800" by its newest checkpoint's name, or "not trained" if it has
// none.
func unfinished(c cell) error {
	cs, err := model.Checkpoints(c.cfg.Out)
	if err == nil && len(cs) > 0 {
		if step, ok := model.CheckpointStep(cs[len(cs)-1]); ok {
			return fmt.Errorf("unfinished at step %d of %d", step, c.cfg.Train.Steps)
		}
	}
	return errors.New("not trained")
}

// markdown is the report: what was compared, the comparison's tables, the
// settings, every run's and every evaluation's timings, and how to
// reproduce it.
func markdown(cmp eval.Comparison, ctx contextReport, o options) string {
	var b strings.Builder
	cfg := o.entries[0].cfg
	scored := "the whole validation split"
	if o.maxTokens > 0 {
		scored = fmt.Sprintf("the first %d tokens (or all, if fewer) of the validation split", o.maxTokens)
	}
	if o.isGrid() {
		fmt.Fprintf(&b, "# Grid: %s\n\n", strings.Join(o.schemes(), ", "))
		fmt.Fprintf(&b, "Every scheme at each training length L of its configs. Validation perplexity per %s, non-overlapping windows over %s, "+
			"the last %g of %s, at multiples of each run's own L.\n\n", perWhat(cfg), scored, cfg.Data.ValFrac, cfg.Data.Corpus)
		if len(cmp.Schemes) <= 8 {
			cmp.Markdown(&b)
			b.WriteString("\n")
		}
		cmp.GridMarkdown(&b)
		b.WriteString("\n![perplexity vs length by training length, validation vs tokens and seconds](report.png)\n\n")
	} else {
		fmt.Fprintf(&b, "# Extrapolation: %s\n\n", strings.Join(o.schemes(), " vs "))
		fmt.Fprintf(&b, "Validation perplexity per %s, non-overlapping windows over %s, the last %g of %s, "+
			"at multiples of the training length L = %d.\n\n", perWhat(cfg), scored, cfg.Data.ValFrac, cfg.Data.Corpus, cfg.Model.TrainLen)
		cmp.Markdown(&b)
		b.WriteString("\n![perplexity vs length, loss by position, training loss](report.png)\n\n")
	}
	bitsPerByte(&b, cmp, o)
	if o.lenses() {
		ctx.markdown(&b, cfg, o)
	}
	b.WriteString("## Settings\n\n")
	for _, e := range o.entries {
		m, t := e.cfg.Model, e.cfg.Train
		if o.isGrid() {
			fmt.Fprintf(&b, "%s (%s): ", e.cfg.Name, e.path)
		}
		vocab := strconv.Itoa(m.Vocab)
		if m.Vocab == 0 { // a tokenizer.json's: known once a run has loaded it
			vocab = "that of " + e.cfg.Data.Tokenizer
		}
		fmt.Fprintf(&b, "Model: vocab %s, d_model %d, %d layers, %d heads, d_ff %d. Training: %d steps of %d x %d tokens, "+
			"AdamW lr %g (warm-up %d, cosine to %g), betas %g/%g, weight decay %g, clip %g.\n\n",
			vocab, m.DModel, m.NLayers, m.NHeads, m.DFF, t.Steps, t.Batch, m.TrainLen, t.LR, t.Warmup, t.MinLR, t.Beta1, t.Beta2, t.WeightDecay, t.Clip)
	}
	var tokenizers []string
	for _, r := range cmp.Runs {
		if t := r.Tokenizer; t != "" && !slices.Contains(tokenizers, t) {
			tokenizers = append(tokenizers, t)
		}
	}
	if len(tokenizers) > 0 {
		fmt.Fprintf(&b, "Tokenizer: %s (data.tokenizer %s); every length is in its tokens.\n\n", strings.Join(tokenizers, "; "), cfg.Data.Tokenizer)
	}
	// Every run of an experiment reads the config's corpus; name it once,
	// or per run if it changed between runs (another Go version, say).
	var corpora []eval.CorpusID
	for _, r := range cmp.Runs {
		if !slices.Contains(corpora, r.Corpus) {
			corpora = append(corpora, r.Corpus)
		}
	}
	if len(corpora) == 1 {
		fmt.Fprintf(&b, "Corpus: %s.\n\n", corpora[0])
	} else {
		for _, r := range cmp.Runs {
			fmt.Fprintf(&b, "Corpus of %s: %s.\n\n", r.Run, r.Corpus)
		}
	}
	b.WriteString(scoredFrom(cmp.Runs))
	if o.noTimings {
		b.WriteString("| run | seed | parameters | final train loss |\n|---|---|---|---|\n")
		for _, r := range cmp.Runs {
			fmt.Fprintf(&b, "| %s | %d | %d | %.4f |\n", r.Run, r.Seed, r.Params, r.FinalTrainLoss)
		}
		b.WriteString("\n| run | eval length (tokens) | tokens | windows |\n|---|---|---|---|\n")
		for _, r := range cmp.Runs {
			for _, x := range r.Results {
				fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", r.Run, x.Len, x.Tokens, x.Windows)
			}
		}
	} else {
		timings(&b, cmp)
	}
	fmt.Fprintf(&b, "\n## Reproduce\n\n```sh\n%s\n```\n", reproduce(o))
	if !o.noTimings {
		fmt.Fprintf(&b, "\nGenerated %s.\n", time.Now().UTC().Format("2006-01-02"))
	}
	return b.String()
}

// timings writes the table of every run's training figures and the table
// of every evaluation's.
func timings(b *strings.Builder, cmp eval.Comparison) {
	b.WriteString("| run | seed | parameters | train wall (s) | train tokens/s | final train loss | peak RSS (MiB) |\n|---|---|---|---|---|---|---|\n")
	for _, r := range cmp.Runs {
		fmt.Fprintf(b, "| %s | %d | %d | %.0f | %.0f | %.4f | %.0f |\n", r.Run, r.Seed, r.Params, r.WallSeconds, r.TokensPerSecond,
			r.FinalTrainLoss, float64(r.PeakRSSBytes)/(1<<20))
	}
	b.WriteString("\n| run | eval length (tokens) | tokens | windows | wall (s) | tokens/s | peak RSS (MiB) |\n|---|---|---|---|---|---|---|\n")
	for _, r := range cmp.Runs {
		for _, x := range r.Results {
			fmt.Fprintf(b, "| %s | %d | %d | %d | %.1f | %.0f | %.0f |\n", r.Run, x.Len, x.Tokens, x.Windows, x.WallSeconds,
				x.TokensPerSecond, float64(x.PeakRSSBytes)/(1<<20))
		}
	}
}

// reproduce is the command that makes the report.
func reproduce(o options) string {
	cmd := fmt.Sprintf("go run ./cmd/experiment --config %s --pos %s --out %s --mults %s", o.configList, o.posList, o.out, o.mults)
	if o.gridPath != "" {
		cmd = fmt.Sprintf("go run ./cmd/experiment --grid %s --out %s --mults %s", o.gridPath, o.out, o.mults)
	}
	if o.costSteps > 0 {
		cmd = fmt.Sprintf("go run ./cmd/experiment --config %s --pos %s --out %s", o.configList, o.posList, o.out)
		if o.gridPath != "" {
			cmd = fmt.Sprintf("go run ./cmd/experiment --grid %s --out %s", o.gridPath, o.out)
		}
		return cmd + fmt.Sprintf(" --cost-steps %d --cost-rounds %d", o.costSteps, o.costRounds)
	}
	if o.seedList != "" {
		cmd += " --seeds " + o.seedList
	}
	if o.maxTokens > 0 {
		cmd += fmt.Sprintf(" --max-tokens %d", o.maxTokens)
	}
	if o.steps != 0 {
		cmd += fmt.Sprintf(" --steps %d", o.steps)
	}
	if o.evalEvery != 0 {
		cmd += fmt.Sprintf(" --eval-every %d", o.evalEvery)
	}
	if o.sliding() {
		cmd += " --strides " + o.strideList
	}
	if o.attention {
		cmd += " --attention-stats"
	}
	if o.distances != nil {
		cmd += fmt.Sprintf(" --passkey %s --passkey-episodes %d", o.passkeyList, o.episodes)
	}
	if o.recall != nil {
		cmd += fmt.Sprintf(" --recall %s --recall-episodes %d", strings.Join(o.recall, ","), o.recallEpisodes)
	}
	if o.besidePath != "" {
		cmd += " --beside " + o.besidePath
	}
	if o.extendList != "" {
		cmd += " --extend " + o.extendList
	}
	if o.noTimings {
		cmd += " --no-timings"
	}
	return cmd
}

// errSuffix is ": err" for a non-nil err, and "" for nil.
func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}

// bitsPerByte writes the bits-per-byte table, with the schemes of --beside
// at equal bytes of context when it was given.
func bitsPerByte(b *strings.Builder, cmp eval.Comparison, o options) {
	b.WriteString("## Bits per byte\n\n")
	b.WriteString("The negative log-likelihood of the scored tokens over ln 2 times the bytes of text they stand for: " +
		"the scale on which runs of different tokenizers compare (log2 of the perplexity for a byte-level run). " +
		"Each length is also given in bytes of context: the length in tokens times the bytes a scored token stands for.")
	if o.beside != nil {
		fmt.Fprintf(b, " Beside each scheme, the same scheme in %s at the same bytes of context, interpolated linearly in the logarithm "+
			"of the context between the two lengths it was evaluated at around it.", o.besidePath)
	}
	b.WriteString("\n\n")
	cmp.BitsPerByteMarkdown(b, o.beside, filepath.Base(o.besidePath))
	b.WriteString("\n")
}

// perWhat is what the report's perplexity is per: "byte" for a byte-level
// config, "token (data.tokenizer bpe:1024)" for another.
func perWhat(cfg train.Config) string {
	if spec, err := data.ParseTokenizerSpec(cfg.Data.Tokenizer); err == nil && spec.Kind == data.ByteTokenizerName {
		return "byte"
	}
	return fmt.Sprintf("token (data.tokenizer %s)", cfg.Data.Tokenizer)
}
