package eval

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
)

// TrainedRun is one run of a comparison as its report needs it: the
// scheme and seed it was trained with, what training measured, and its
// evaluation at each length.
type TrainedRun struct {
	Run string `json:"run"`
	Pos string `json:"pos"`
	// Group, in a grid of several configs, is what the run is grouped and
	// shown by: its scheme and training length, "alibi L=256"; empty when
	// one config's runs group by Pos alone.
	Group    string `json:"group,omitempty"`
	Seed     uint64 `json:"seed"`
	TrainLen int    `json:"train_len"`
	Params   int    `json:"params"`
	Steps    int    `json:"steps"`
	// TrainTokens is the training budget: steps x batch x train_len.
	TrainTokens     int64   `json:"train_tokens"`
	TokensPerSecond float64 `json:"train_tokens_per_second"`
	WallSeconds     float64 `json:"train_wall_seconds"`
	FinalTrainLoss  float64 `json:"final_train_loss"`
	PeakRSSBytes    int64   `json:"train_peak_rss_bytes"`
	// Processor is the machine the run trained on, as its summary names it
	// (empty for runs trained before summaries named it).
	Processor string `json:"processor,omitempty"`
	// Kernels names the instruction sets the run trained with, as its
	// summary names them (empty for runs trained before summaries did).
	Kernels string `json:"kernels,omitempty"`
	// Tokenizer describes the run's tokenizer, as its summary does (empty
	// for runs trained before runs had one: byte-level runs).
	Tokenizer string      `json:"tokenizer,omitempty"`
	Corpus    CorpusID    `json:"corpus"`
	Loss      []LossPoint `json:"loss"` // training loss by step
	// Validation is the periodic validation of training (train.eval_every),
	// in order: what time-to-perplexity is read from.
	Validation []ValPoint `json:"validation,omitempty"`
	// Weights names the checkpoint the results were scored from (nil in
	// reports written before reports named it).
	Weights *Weights `json:"weights,omitempty"`
	Results []Result `json:"results"` // non-overlapping, one per length
}

// Label is what the run is grouped and shown by: Group, or Pos.
func (r TrainedRun) Label() string {
	if r.Group != "" {
		return r.Group
	}
	return r.Pos
}

// ValPoint is one periodic validation during training: the step, the
// training tokens and wall seconds so far, the validation perplexity, and
// the window length it was scored at (train.eval_lens adds lengths beside
// the training length; 0 stands for the run's training length).
type ValPoint struct {
	Step    int     `json:"step"`
	Tokens  int64   `json:"tokens"`
	Seconds float64 `json:"seconds"`
	PPL     float64 `json:"ppl"`
	Len     int     `json:"len,omitempty"`
}

// ValidationAt is the run's periodic validations at window length n (0:
// its training length), in order.
func (r TrainedRun) ValidationAt(n int) []ValPoint {
	if n == 0 {
		n = r.TrainLen
	}
	var out []ValPoint
	for _, v := range r.Validation {
		if v.Len == n || (v.Len == 0 && n == r.TrainLen) {
			out = append(out, v)
		}
	}
	return out
}

// CorpusID names exactly what a run trained on: the corpus spec, its size,
// the SHA-256 of its bytes and, for a goroot: corpus, the Go version.
type CorpusID struct {
	Spec      string `json:"spec"`
	Bytes     int    `json:"bytes"`
	SHA256    string `json:"sha256"`
	GoVersion string `json:"go_version,omitempty"`
}

// String is the corpus in one line.
func (c CorpusID) String() string {
	s := fmt.Sprintf("%s, %d bytes, SHA-256 %s", c.Spec, c.Bytes, c.SHA256)
	if c.GoVersion != "" {
		s += ", " + c.GoVersion
	}
	return s
}

// LossPoint is the training loss logged at a step.
type LossPoint struct {
	Step int     `json:"step"`
	Loss float64 `json:"loss"`
}

// Comparison is the report of an experiment: every run, and for each
// position scheme the mean and spread of its runs (one per seed).
type Comparison struct {
	Runs    []TrainedRun `json:"runs"`
	Schemes []Scheme     `json:"schemes"`
	// noTimings (WithoutTimings) leaves the training throughput out of
	// Markdown.
	noTimings bool
}

// WithoutTimings returns the comparison without what depends on the
// machine and the moment: every wall time, tokens/s and peak memory is 0,
// and Markdown leaves the throughput column out. Two runs of one grid, on
// any machines, then give the same report bytes.
func (c Comparison) WithoutTimings() Comparison {
	runs := make([]TrainedRun, len(c.Runs))
	for i, r := range c.Runs {
		r.TokensPerSecond, r.WallSeconds, r.PeakRSSBytes, r.Processor, r.Kernels = 0, 0, 0, "", ""
		r.Validation = append([]ValPoint(nil), r.Validation...)
		for j := range r.Validation {
			r.Validation[j].Seconds = 0
		}
		r.Results = append([]Result(nil), r.Results...)
		for j := range r.Results {
			r.Results[j].WallSeconds, r.Results[j].TokensPerSecond, r.Results[j].PeakRSSBytes = 0, 0, 0
		}
		runs[i] = r
	}
	schemes := append([]Scheme(nil), c.Schemes...)
	for i := range schemes {
		schemes[i].TokensPerSecond = 0
	}
	return Comparison{Runs: runs, Schemes: schemes, noTimings: true}
}

// Scheme summarises the runs of one position scheme.
type Scheme struct {
	Pos             string        `json:"pos"`
	Group           string        `json:"group,omitempty"` // as the runs' (TrainedRun.Group)
	TrainLen        int           `json:"train_len"`
	Seeds           []uint64      `json:"seeds"`
	Params          int           `json:"params"`
	TokensPerSecond float64       `json:"train_tokens_per_second"` // mean over seeds
	Lengths         []LengthStats `json:"lengths"`
}

// Label is what the scheme's runs are shown by: Group, or Pos.
func (s Scheme) Label() string {
	if s.Group != "" {
		return s.Group
	}
	return s.Pos
}

// LengthStats is a scheme's perplexity at one length over its seeds: the
// mean, the smallest and largest, the sample standard deviation (0 for one
// seed), and the mean relative to the mean at the first (training) length.
type LengthStats struct {
	Len      int     `json:"len"`
	Mean     float64 `json:"mean_ppl"`
	Min      float64 `json:"min_ppl"`
	Max      float64 `json:"max_ppl"`
	Std      float64 `json:"std_ppl"`
	Relative float64 `json:"relative_to_first"`
	// MeanBPB, MinBPB and MaxBPB are the bits per byte (Result.BitsPerByte)
	// over the seeds: the scale on which runs of different tokenizers
	// compare.
	MeanBPB float64 `json:"mean_bits_per_byte"`
	MinBPB  float64 `json:"min_bits_per_byte"`
	MaxBPB  float64 `json:"max_bits_per_byte"`
	// ContextBytes is the window length in bytes of text: Len times the
	// bytes a scored token stands for, over the seeds (Len for a byte-level
	// run).
	ContextBytes float64 `json:"context_bytes"`
}

// Compare groups runs by scheme (by Label: scheme and training length in a
// grid of several configs), in the order they first appear, and
// computes each scheme's statistics at every length its runs share.
func Compare(runs []TrainedRun) Comparison {
	c := Comparison{Runs: runs}
	index := map[string]int{}
	var groups [][]TrainedRun
	for _, r := range runs {
		i, ok := index[r.Label()]
		if !ok {
			i = len(groups)
			index[r.Label()] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	for _, g := range groups {
		s := Scheme{Pos: g[0].Pos, Group: g[0].Group, TrainLen: g[0].TrainLen, Params: g[0].Params}
		for _, r := range g {
			s.Seeds = append(s.Seeds, r.Seed)
			s.TokensPerSecond += r.TokensPerSecond / float64(len(g))
		}
		for _, x := range g[0].Results {
			ppls := make([]float64, 0, len(g))
			var bpbs []float64
			var perToken float64
			for _, r := range g {
				for _, y := range r.Results {
					if y.Len == x.Len {
						ppls = append(ppls, y.PPL)
						bpbs = append(bpbs, y.BitsPerByte)
						perToken += y.BytesPerToken() / float64(len(g))
					}
				}
			}
			if len(ppls) != len(g) {
				continue // not every seed was evaluated at this length
			}
			st := lengthStats(x.Len, ppls)
			b := lengthStats(x.Len, bpbs)
			st.MeanBPB, st.MinBPB, st.MaxBPB = b.Mean, b.Min, b.Max
			st.ContextBytes = float64(x.Len) * perToken
			if len(s.Lengths) > 0 {
				st.Relative = st.Mean / s.Lengths[0].Mean
			} else {
				st.Relative = 1
			}
			s.Lengths = append(s.Lengths, st)
		}
		c.Schemes = append(c.Schemes, s)
	}
	return c
}

func lengthStats(l int, v []float64) LengthStats {
	s := LengthStats{Len: l, Min: math.Inf(1), Max: math.Inf(-1)}
	for _, x := range v {
		s.Mean += x / float64(len(v))
		s.Min, s.Max = math.Min(s.Min, x), math.Max(s.Max, x)
	}
	if len(v) > 1 {
		var ss float64
		for _, x := range v {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.Std = math.Sqrt(ss / float64(len(v)-1))
	}
	return s
}

// WriteJSON writes the comparison, indented; NaN losses by position are
// written as null.
func (c Comparison) WriteJSON(w io.Writer) error { return writeIndented(w, c) }

// Markdown writes the comparison's tables: perplexity at each length
// (mean, and the min-max range over seeds when there are several), the
// same relative to the first length, and per scheme the parameters and the
// training throughput.
func (c Comparison) Markdown(w io.Writer) error {
	if len(c.Schemes) == 0 {
		_, err := io.WriteString(w, "(no runs)\n")
		return err
	}
	var b strings.Builder
	lengths := c.lengths()
	header := func(first string) {
		fmt.Fprintf(&b, "| %s |", first)
		for _, s := range c.Schemes {
			fmt.Fprintf(&b, " %s |", s.Label())
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(c.Schemes)) + "\n")
	}
	seeds := len(c.Schemes[0].Seeds)
	title := "perplexity"
	if seeds > 1 {
		title = fmt.Sprintf("perplexity, mean of %d seeds (min–max)", seeds)
	}
	header("eval length: " + title)
	for _, l := range lengths {
		fmt.Fprintf(&b, "| %d |", l)
		for _, s := range c.Schemes {
			fmt.Fprintf(&b, " %s |", s.cell(l))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if len(lengths) > 0 {
		header(fmt.Sprintf("relative to %d", lengths[0]))
	}
	for _, l := range lengths {
		fmt.Fprintf(&b, "| %d |", l)
		for _, s := range c.Schemes {
			if st, ok := s.at(l); ok {
				fmt.Fprintf(&b, " %.3f |", st.Relative)
			} else {
				b.WriteString(" – |")
			}
		}
		b.WriteString("\n")
	}
	if c.noTimings {
		b.WriteString("\n| scheme | parameters | seeds |\n|---|---|---|\n")
	} else {
		b.WriteString("\n| scheme | parameters | training tokens/s (mean) | seeds |\n|---|---|---|---|\n")
	}
	for _, s := range c.Schemes {
		var seedList []string
		for _, x := range s.Seeds {
			seedList = append(seedList, fmt.Sprint(x))
		}
		if c.noTimings {
			fmt.Fprintf(&b, "| %s | %d | %s |\n", s.Label(), s.Params, strings.Join(seedList, ", "))
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %.0f | %s |\n", s.Label(), s.Params, s.TokensPerSecond, strings.Join(seedList, ", "))
	}
	if p := c.processors(); p != "" {
		fmt.Fprintf(&b, "\nTrained on: %s.\n", p)
	}
	if !c.IsGrid() {
		// A grid's runs validate at different lengths: GridMarkdown
		// compares them at the lengths they share.
		c.reachMarkdown(&b, 0)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// lengths are every evaluated length, ascending.
func (c Comparison) lengths() []int {
	seen := map[int]bool{}
	var out []int
	for _, s := range c.Schemes {
		for _, st := range s.Lengths {
			if !seen[st.Len] {
				seen[st.Len] = true
				out = append(out, st.Len)
			}
		}
	}
	sort.Ints(out)
	return out
}

// cell is the scheme's perplexity at length l as a table shows it: the mean,
// with the lowest and highest seed when there are several, or "–" when l
// was not evaluated.
func (s Scheme) cell(l int) string {
	st, ok := s.at(l)
	switch {
	case !ok:
		return "–"
	case len(s.Seeds) > 1:
		return fmt.Sprintf("%.3f (%.3f–%.3f)", st.Mean, st.Min, st.Max)
	default:
		return fmt.Sprintf("%.3f", st.Mean)
	}
}

func (s Scheme) at(l int) (LengthStats, bool) {
	for _, st := range s.Lengths {
		if st.Len == l {
			return st, true
		}
	}
	return LengthStats{}, false
}

// processors lists the machines the runs trained on, each with the
// kernels they ran in parentheses where the summaries name them, each once
// in the order of the runs ("; " between them), or "" when no run names
// its machine.
func (c Comparison) processors() string {
	var out []string
	for _, r := range c.Runs {
		if r.Processor == "" {
			continue
		}
		p := r.Processor
		if r.Kernels != "" {
			p += " (" + r.Kernels + ")"
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}
