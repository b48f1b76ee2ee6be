package eval

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/model"
)

// HeadStats are one attention head's statistics, averaged over the queries
// past the training length (layers.AttentionStats).
type HeadStats struct {
	// Distance is the mean attended distance, sum_j p_ij (i - j), in tokens.
	Distance float64 `json:"mean_distance"`
	// Entropy is the attention entropy, -sum_j p_ij ln p_ij, in nats (ln
	// of the number of keys for uniform attention).
	Entropy float64 `json:"entropy"`
	// PastL is the share of attention on keys at distance >= the training
	// length L, which training never showed.
	PastL float64 `json:"share_past_l"`
}

// AttentionResult is a run's attention statistics at one evaluation
// length, over non-overlapping windows.
type AttentionResult struct {
	Len      int `json:"len"`
	TrainLen int `json:"train_len"`
	Windows  int `json:"windows"`
	// Queries is the number of queries averaged over, per head: those at
	// positions >= TrainLen inside their window. 0 when Len <= TrainLen,
	// and then Layers is empty.
	Queries int `json:"queries"`
	// Layers[l][h] is head h of layer l.
	Layers      [][]HeadStats `json:"layers"`
	WallSeconds float64       `json:"wall_seconds"`
}

// AttentionStats runs m over tokens in non-overlapping windows of o.Len (as
// Perplexity does, with its MaxTokens, BatchTokens, MemoryLimit and
// Progress) and returns, for every layer and head, the mean attended
// distance, entropy and share of attention past the training length L,
// averaged over the queries at positions >= L inside their windows:
// whether a head looks past what it was trained on. The statistics come
// from the tiled kernel's online softmax (layers.AttentionStats).
func AttentionStats(m *model.Model, tokens []uint32, o Options) (AttentionResult, error) {
	if o.Len < 1 {
		return AttentionResult{}, fmt.Errorf("eval: length must be positive, got %d", o.Len)
	}
	o.Stride = 0
	if err := CheckLength(len(tokens), o); err != nil {
		return AttentionResult{}, err
	}
	if err := CheckMemory(m, len(tokens), o); err != nil {
		return AttentionResult{}, err
	}
	tokens = tokens[:available(len(tokens), o)]
	if err := checkTokens(m, tokens, o.Tokenizer); err != nil {
		return AttentionResult{}, err
	}
	if o.BatchTokens < 1 {
		o.BatchTokens = defaultBatchTokens
	}
	ws, err := data.NonOverlapWindows(len(tokens), o.Len)
	if err != nil {
		return AttentionResult{}, fmt.Errorf("eval: %w", err)
	}
	restore, err := rowFactor(m, o.Len)
	if err != nil {
		return AttentionResult{}, err
	}
	defer restore()
	cfg := m.Config
	start := time.Now()
	res := AttentionResult{Len: o.Len, TrainLen: cfg.TrainLen, Windows: len(ws)}
	sums := make([][]float64, cfg.NLayers) // per layer: distance, entropy, share, by head
	for l := range sums {
		sums[l] = make([]float64, 3*cfg.NHeads)
	}
	// collect adds a graph's statistics, gathered over its runs, to sums.
	collect := func(stats []*layers.AttentionStats) {
		for l, st := range stats {
			for h := range cfg.NHeads {
				sums[l][3*h] += st.Distance[h]
				sums[l][3*h+1] += st.Entropy[h]
				sums[l][3*h+2] += st.FarMass[h]
			}
		}
		res.Queries += stats[0].Queries[0]
	}
	total := len(tokens) - 1
	done := 0
	for i := 0; i < len(ws); {
		l := ws[i].Len
		j := i
		for j < len(ws) && ws[j].Len == l {
			j++
		}
		// Full batches share one graph; the rest, if any, gets its own, so
		// that no padding window is counted.
		for k := i; k < j; {
			batch := min(j-k, max(1, o.BatchTokens/l))
			n := (j - k) / batch * batch
			if err := statsPass(m, tokens, ws[k:k+n], batch, collect); err != nil {
				return AttentionResult{}, err
			}
			k += n
			done += n * l
			if o.Progress != nil {
				o.Progress(min(done, total), total)
			}
		}
		i = j
	}
	if res.Queries > 0 {
		n := float64(res.Queries)
		for _, s := range sums {
			heads := make([]HeadStats, cfg.NHeads)
			for h := range heads {
				heads[h] = HeadStats{Distance: s[3*h] / n, Entropy: s[3*h+1] / n, PastL: s[3*h+2] / n}
			}
			res.Layers = append(res.Layers, heads)
		}
	}
	res.WallSeconds = time.Since(start).Seconds()
	return res, nil
}

// AttentionRun is one run's attention statistics at every length.
type AttentionRun struct {
	Run      string `json:"run"`
	Pos      string `json:"pos"`
	TrainLen int    `json:"train_len"`
	// Weights names the checkpoint that was measured (nil in reports
	// written before reports named it).
	Weights *Weights          `json:"weights,omitempty"`
	Results []AttentionResult `json:"results"`
}

// AttentionReport is the JSON shape of attention statistics:
// {"runs": [AttentionRun...]}.
type AttentionReport struct {
	Runs []AttentionRun `json:"runs"`
}

// WriteJSON writes the report, indented.
func (r AttentionReport) WriteJSON(w io.Writer) error { return writeIndented(w, r) }

// Markdown writes, for every run and length with queries past L, a table of
// its layers and heads: mean distance, entropy and share past L.
func (r AttentionReport) Markdown(w io.Writer) error {
	var b strings.Builder
	for _, run := range r.Runs {
		for _, x := range run.Results {
			fmt.Fprintf(&b, "Attention of %s (%s, L=%d) at length %d, over the %d queries per head at positions >= L:\n\n", run.Pos, run.Run, run.TrainLen, x.Len, x.Queries)
			if x.Queries == 0 {
				b.WriteString("(no query stands past L at this length)\n\n")
				continue
			}
			b.WriteString("| layer | head | mean distance | entropy (nats) | share past L |\n|---|---|---|---|---|\n")
			for l, heads := range x.Layers {
				for h, s := range heads {
					fmt.Fprintf(&b, "| %d | %d | %.1f | %.3f | %.4f |\n", l, h, s.Distance, s.Entropy, s.PastL)
				}
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// statsPass runs windows of one length, batch at a time (len(ws) is a
// multiple of batch), through one statistics graph and hands its statistics
// to collect.
func statsPass(m *model.Model, tokens []uint32, ws []data.Window, batch int, collect func([]*layers.AttentionStats)) error {
	l := ws[0].Len
	g, stats, err := m.NewStatsGraph(batch, l, m.Config.TrainLen)
	if err != nil {
		return err
	}
	defer g.Close()
	ids := make([]int, batch*l)
	for k := 0; k < len(ws); k += batch {
		for r, w := range ws[k : k+batch] {
			for p := 0; p < l; p++ {
				ids[r*l+p] = int(tokens[w.Start+p])
			}
		}
		if err := g.Execute(ids, nil); err != nil {
			return err
		}
	}
	collect(stats)
	return nil
}

// LayerMarkdown writes a table of the share of attention past L per layer:
// one row per length (with queries past L) and layer, one column per run,
// each cell the mean over the layer's heads and, in brackets, the largest
// head's share.
func (r AttentionReport) LayerMarkdown(w io.Writer) error {
	type key struct{ len, layer int }
	var keys []key
	seen := map[key]bool{}
	for _, run := range r.Runs {
		for _, x := range run.Results {
			for l := range x.Layers {
				if k := (key{x.Len, l}); !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].len != keys[j].len {
			return keys[i].len < keys[j].len
		}
		return keys[i].layer < keys[j].layer
	})
	var b strings.Builder
	b.WriteString("| eval length (tokens) | layer |")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, " %s |", run.Pos)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(r.Runs)) + "\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "| %d | %d |", k.len, k.layer)
		for _, run := range r.Runs {
			cell := " – |"
			for _, x := range run.Results {
				if x.Len == k.len && k.layer < len(x.Layers) {
					var sum, most float64
					for _, h := range x.Layers[k.layer] {
						sum += h.PastL
						most = max(most, h.PastL)
					}
					cell = fmt.Sprintf(" %.3f (%.3f) |", sum/float64(len(x.Layers[k.layer])), most)
				}
			}
			b.WriteString(cell)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
