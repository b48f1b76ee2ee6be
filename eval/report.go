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
}

// RunReport holds one run's results, one per (length, protocol).
type RunReport struct {
	Run      string   `json:"run"`
	Pos      string   `json:"pos"`
	TrainLen int      `json:"train_len"`
	Results  []Result `json:"results"`
}

// WriteJSON writes the report, indented. NaN values (positions no window
// scored) are written as null.
func (r Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(jsonSafe(r), "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// jsonSafe turns the report into plain values with NaN as nil.
func jsonSafe(r Report) any {
	runs := make([]map[string]any, len(r.Runs))
	for i, run := range r.Runs {
		res := make([]map[string]any, len(run.Results))
		for j, x := range run.Results {
			pl := make([]any, len(x.PositionLoss))
			for k, v := range x.PositionLoss {
				if !math.IsNaN(v) {
					pl[k] = v
				}
			}
			res[j] = map[string]any{"len": x.Len, "protocol": x.Protocol, "stride": x.Stride, "ppl": x.PPL,
				"nats_per_token": x.NatsPerToken, "bits_per_byte": x.BitsPerByte, "tokens": x.Tokens,
				"windows": x.Windows, "wall_seconds": x.WallSeconds, "tokens_per_second": x.TokensPerSecond,
				"peak_rss_bytes": x.PeakRSSBytes, "position_loss": pl}
		}
		runs[i] = map[string]any{"run": run.Run, "pos": run.Pos, "train_len": run.TrainLen, "results": res}
	}
	return map[string]any{"runs": runs}
}

// Markdown writes the perplexity table: one row per evaluation length (and
// protocol), one column per run, named by its position scheme and directory.
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
	b.WriteString("| eval length |")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, " %s (%s, L=%d) |", run.Pos, run.Run, run.TrainLen)
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
			cell := " – |"
			for _, x := range run.Results {
				if (key{x.Len, x.Protocol, x.Stride}) == k {
					cell = fmt.Sprintf(" %.3f |", x.PPL)
				}
			}
			b.WriteString(cell)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
