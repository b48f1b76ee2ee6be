package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// Report is the stable JSON shape written by cmd/eval --json and by the
// experiment: {"runs": [{"run", "pos", "train_len", "results": [Result...]}]}.
type Report struct {
	Runs []RunReport `json:"runs"`
	// Attention holds the attention statistics, when they were asked for
	// (cmd/eval --attention-stats).
	Attention *AttentionReport `json:"attention,omitempty"`
}

// RunReport holds one run's results, one per (length, protocol).
type RunReport struct {
	Run      string `json:"run"`
	Pos      string `json:"pos"`
	TrainLen int    `json:"train_len"`
	// Extend names the evaluation-time extension the run was evaluated
	// with (model.Model.Extend), empty for none, at ExtendFactor (0: each
	// length over TrainLen).
	Extend       string  `json:"extend,omitempty"`
	ExtendFactor float64 `json:"extend_factor,omitempty"`
	// Precision is the arithmetic of the linear layers' products in the
	// evaluation ("bf16"; empty for float32, layers.Precision).
	Precision string `json:"precision,omitempty"`
	// Weights names the checkpoint that made the results (nil in reports
	// written before reports named it).
	Weights *Weights `json:"weights,omitempty"`
	// Tokenizer describes the run's tokenizer (data.Tokenizer String),
	// TokenizerHash names it; empty in reports written before runs had one
	// (byte runs).
	Tokenizer     string   `json:"tokenizer,omitempty"`
	TokenizerHash string   `json:"tokenizer_hash,omitempty"`
	Results       []Result `json:"results"`
}

// Scheme names the run's position scheme with its extension, if any:
// "rope", "rope+yarn" (the factor following the length) or "rope+yarn x4".
// A bfloat16 evaluation adds " bf16".
func (r RunReport) Scheme() string {
	s := r.Pos
	switch {
	case r.Extend == "":
	case r.ExtendFactor == 0:
		s += "+" + r.Extend
	default:
		s = fmt.Sprintf("%s+%s x%g", r.Pos, r.Extend, r.ExtendFactor)
	}
	if r.Precision != "" && r.Precision != "fp32" {
		s += " " + r.Precision
	}
	return s
}

// WriteJSON writes the report, indented. NaN values (positions no window
// scored) are written as null.
func (r Report) WriteJSON(w io.Writer) error { return writeIndented(w, r) }

// writeIndented writes v as indented JSON and a newline.
func writeIndented(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// MarshalJSON writes the result with the losses by position that no window
// scored (NaN) as null.
func (x Result) MarshalJSON() ([]byte, error) {
	type plain Result
	pl := make([]*float64, len(x.PositionLoss))
	for i := range x.PositionLoss {
		if !math.IsNaN(x.PositionLoss[i]) {
			pl[i] = &x.PositionLoss[i]
		}
	}
	if x.PositionLoss == nil && x.PositionBuckets != nil { // Compact
		return json.Marshal(struct {
			plain
			PositionLoss []*float64 `json:"position_loss,omitempty"`
		}{plain(x), nil})
	}
	return json.Marshal(struct {
		plain
		PositionLoss []*float64 `json:"position_loss"`
	}{plain(x), pl})
}

// UnmarshalJSON reads a result as MarshalJSON writes it, null as NaN.
func (x *Result) UnmarshalJSON(b []byte) error {
	type plain Result
	var aux struct {
		plain
		PositionLoss []*float64 `json:"position_loss"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*x = Result(aux.plain)
	if aux.PositionLoss == nil && x.PositionBuckets != nil { // Compact
		return nil
	}
	x.PositionLoss = make([]float64, len(aux.PositionLoss))
	for i, v := range aux.PositionLoss {
		x.PositionLoss[i] = math.NaN()
		if v != nil {
			x.PositionLoss[i] = *v
		}
	}
	return nil
}

// Markdown writes the perplexity table: one row per evaluation length (and
// protocol), one column per run, named by its position scheme and directory;
// then the same table in bits per byte (Result.BitsPerByte), the column
// that compares runs of different tokenizers. Lengths are in tokens; where
// the runs' tokenizers differ, each perplexity gives the bytes its window
// length stands for on average. Above them, a line per run
// that names its Weights says which checkpoint made the column.
func (r Report) Markdown(w io.Writer) error {
	type key struct {
		len      int
		protocol string
		stride   int
	}
	var keys []key
	seen := map[key]bool{}
	for _, run := range r.Runs {
		for _, x := range run.Results {
			k := key{x.Len, x.Protocol, x.Stride}
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].protocol != keys[j].protocol {
			return keys[i].protocol < keys[j].protocol
		}
		if keys[i].len != keys[j].len {
			return keys[i].len < keys[j].len
		}
		return keys[i].stride < keys[j].stride
	})
	var b strings.Builder
	writeWeights(&b, r.Runs, func(run RunReport) *Weights { return run.Weights })
	writeTable := func(cell func(Result) string) {
		b.WriteString("| eval length (tokens) |")
		for _, run := range r.Runs {
			fmt.Fprintf(&b, " %s (%s, L=%d) |", run.Scheme(), run.Run, run.TrainLen)
		}
		b.WriteString("\n|---|")
		for range r.Runs {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		for _, k := range keys {
			label := fmt.Sprintf("%d", k.len)
			if k.protocol == Sliding {
				label += fmt.Sprintf(" (sliding, stride %d)", k.stride)
			}
			fmt.Fprintf(&b, "| %s |", label)
			for _, run := range r.Runs {
				c := " – |"
				for _, x := range run.Results {
					if (key{x.Len, x.Protocol, x.Stride}) == k {
						c = " " + cell(x) + " |"
					}
				}
				b.WriteString(c)
			}
			b.WriteString("\n")
		}
	}
	mixed := false // runs of different tokenizers: a length in tokens is not the same text
	for _, run := range r.Runs {
		mixed = mixed || run.Tokenizer != r.Runs[0].Tokenizer
	}
	writeTable(func(x Result) string {
		if mixed && x.Tokens > 0 {
			return fmt.Sprintf("%.3f (%d bytes)", x.PPL, int64(math.Round(float64(x.Len)*float64(x.Bytes)/float64(x.Tokens))))
		}
		return fmt.Sprintf("%.3f", x.PPL)
	})
	b.WriteString("\nbits per byte (the same scale for every tokenizer):\n\n")
	writeTable(func(x Result) string { return fmt.Sprintf("%.4f", x.BitsPerByte) })
	_, err := io.WriteString(w, b.String())
	return err
}

// writeWeights writes "weights: <checkpoint> (<status>)" for each run that
// names its weights, in order, and a blank line after them; nothing if none
// does.
func writeWeights[R any](b *strings.Builder, runs []R, weights func(R) *Weights) {
	named := false
	for _, r := range runs {
		if w := weights(r); w != nil {
			fmt.Fprintf(b, "weights: %s\n", w.Describe())
			named = true
		}
	}
	if named {
		b.WriteString("\n")
	}
}
