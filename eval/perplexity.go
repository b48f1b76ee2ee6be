// Package eval measures a trained model: perplexity over a token stream at
// any window length, with non-overlapping or sliding windows, loss by
// position inside the window, and reports as JSON, Markdown and PNG plots.
package eval

import (
	"fmt"
	"math"
	"runtime/debug"
	"time"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/osutil"
)

// Protocols.
const (
	NonOverlap = "nonoverlap" // every token scored once, with the context inside its window
	Sliding    = "sliding"    // windows advance by Stride and score only their last Stride tokens
)

// Options select how a stream is scored.
type Options struct {
	Len int // window length
	// Stride > 0 selects the sliding protocol; 0 the non-overlapping one.
	Stride int
	// BatchTokens bounds the tokens per forward pass (default 4096, as in
	// the PyTorch reference): the batch is BatchTokens/Len windows, at least
	// one, so memory stays bounded at long lengths.
	BatchTokens int
	// MaxTokens > 0 scores only the first MaxTokens+1 tokens of the stream.
	MaxTokens int
	// Progress, when not nil, is told after each forward pass how many
	// tokens have been scored, out of how many.
	Progress func(scored, total int)
	// MemoryLimit > 0 makes Perplexity refuse, before allocating, a call
	// whose estimated memory (EstimateBytes) exceeds it.
	MemoryLimit int64
}

// EstimateBytes estimates the memory that Perplexity allocates for a stream
// of n tokens: the largest evaluation graph it builds (see
// model.EvalGraphBytes) plus the harness's own per-token buffers (40 bytes:
// ids, targets and losses) and its per-position sums.
func EstimateBytes(m *model.Model, n int, o Options) int64 {
	l, batch := largestPass(n, o)
	return m.EvalGraphBytes(batch, l) + int64(batch*l)*40 + int64(o.Len)*16
}

// largestPass returns the window length and batch of the largest forward
// pass Perplexity makes over n tokens.
func largestPass(n int, o Options) (l, batch int) {
	if o.MaxTokens > 0 && o.MaxTokens+1 < n {
		n = o.MaxTokens + 1
	}
	if o.BatchTokens < 1 {
		o.BatchTokens = defaultBatchTokens
	}
	l = max(1, min(o.Len, n-1))
	windows := max(1, (n-1+o.Len-1)/o.Len)
	if o.Stride > 0 {
		windows = max(1, (n-1-o.Len+o.Stride-1)/o.Stride+1)
	}
	return l, min(windows, max(1, o.BatchTokens/l))
}

// MemoryError says that an evaluation would need more memory than allowed.
type MemoryError struct {
	Len, Batch  int   // the window length and the windows per forward pass
	Need, Limit int64 // bytes
}

func (e *MemoryError) Error() string {
	what := fmt.Sprintf("%d windows of %d tokens", e.Batch, e.Len)
	if e.Batch == 1 {
		what = fmt.Sprintf("one window of %d tokens", e.Len)
	}
	return fmt.Sprintf("length %d needs about %s (%s per forward pass) but only %s is available",
		e.Len, osutil.FormatBytes(e.Need), what, osutil.FormatBytes(e.Limit))
}

// CheckMemory makes, on its own, the check that Perplexity makes before it
// allocates: with o.MemoryLimit > 0, scoring a stream of n tokens with o
// must not need more than that (EstimateBytes), or the error is a
// *MemoryError. It allocates nothing, so a caller can check every
// evaluation it plans before running the first.
func CheckMemory(m *model.Model, n int, o Options) error {
	if o.Len < 1 {
		return fmt.Errorf("eval: length must be positive, got %d", o.Len)
	}
	if o.MemoryLimit <= 0 {
		return nil
	}
	if need := EstimateBytes(m, n, o); need > o.MemoryLimit {
		l, batch := largestPass(n, o)
		return &MemoryError{Len: l, Batch: batch, Need: need, Limit: o.MemoryLimit}
	}
	return nil
}

// defaultBatchTokens is the tokens of one forward pass, as in the PyTorch
// reference.
const defaultBatchTokens = 4096

// Result is the measurement at one length.
type Result struct {
	Len             int       `json:"len"`
	Protocol        string    `json:"protocol"`
	Stride          int       `json:"stride"`
	PPL             float64   `json:"ppl"`
	NatsPerToken    float64   `json:"nats_per_token"`
	BitsPerByte     float64   `json:"bits_per_byte"`
	Tokens          int       `json:"tokens"`
	Windows         int       `json:"windows"`
	WallSeconds     float64   `json:"wall_seconds"`
	TokensPerSecond float64   `json:"tokens_per_second"`
	PeakRSSBytes    int64     `json:"peak_rss_bytes"`
	PositionLoss    []float64 `json:"position_loss"` // mean nats at each position inside the window
}

// Perplexity scores tokens (a stream, one byte per token; token t+1 is predicted from the
// tokens before it inside its window) with m. Every predictable token is
// scored exactly once. With the non-overlapping protocol, a tail shorter than
// one window is scored as one shorter window at its own length, and counted.
func Perplexity(m *model.Model, tokens []byte, o Options) (Result, error) {
	if o.Len < 1 {
		return Result{}, fmt.Errorf("eval: length must be positive, got %d", o.Len)
	}
	if o.Stride < 0 {
		return Result{}, fmt.Errorf("eval: stride must not be negative, got %d", o.Stride)
	}
	if o.MaxTokens > 0 && o.MaxTokens+1 < len(tokens) {
		tokens = tokens[:o.MaxTokens+1]
	}
	if o.BatchTokens < 1 {
		o.BatchTokens = defaultBatchTokens
	}
	if err := CheckMemory(m, len(tokens), o); err != nil {
		return Result{}, err
	}
	var ws []data.Window
	var err error
	res := Result{Len: o.Len, Protocol: NonOverlap, Stride: o.Stride}
	if o.Stride > 0 {
		res.Protocol = Sliding
		ws, err = data.SlidingWindows(len(tokens), o.Len, o.Stride)
	} else {
		ws, err = data.NonOverlapWindows(len(tokens), o.Len)
	}
	if err != nil {
		return Result{}, fmt.Errorf("eval: %w", err)
	}
	rss := osutil.StartRSS()
	start := time.Now()
	t := &tally{posSum: make([]float64, o.Len), posCount: make([]int, o.Len), progress: o.Progress}
	for _, w := range ws {
		t.toScore += w.Score
	}
	// Windows of equal length are batched through one graph per (batch, length).
	for i := 0; i < len(ws); {
		l := ws[i].Len
		j := i
		for j < len(ws) && ws[j].Len == l {
			j++
		}
		if err := scoreWindows(m, tokens, ws[i:j], max(1, o.BatchTokens/l), t); err != nil {
			rss.Stop()
			return Result{}, err
		}
		if i = j; i < len(ws) {
			// The next length's graph must not be built while this one's
			// buffers wait for the collector: the peak would be both.
			debug.FreeOSMemory()
		}
	}
	res.WallSeconds = time.Since(start).Seconds()
	res.PeakRSSBytes = rss.Stop()
	res.Windows = len(ws)
	res.Tokens = t.scored
	posSum, posCount := t.posSum, t.posCount
	res.NatsPerToken = t.total / float64(res.Tokens)
	res.PPL = math.Exp(res.NatsPerToken)
	res.BitsPerByte = res.NatsPerToken / math.Ln2
	res.TokensPerSecond = float64(res.Tokens) / res.WallSeconds
	res.PositionLoss = make([]float64, o.Len)
	for p := range posSum {
		res.PositionLoss[p] = math.NaN()
		if posCount[p] > 0 {
			res.PositionLoss[p] = posSum[p] / float64(posCount[p])
		}
	}
	return res, nil
}

// tally accumulates the scored tokens' losses, by position in the window.
type tally struct {
	posSum          []float64
	posCount        []int
	total           float64
	scored, toScore int
	progress        func(scored, total int)
}

// scoreWindows runs windows of one length in batches and adds the scored
// tokens' losses to t.
func scoreWindows(m *model.Model, tokens []byte, ws []data.Window, batch int, t *tally) error {
	l := ws[0].Len
	if batch > len(ws) {
		batch = len(ws)
	}
	g, err := m.NewGraph(batch, l, false)
	if err != nil {
		return err
	}
	defer g.Close()
	ids := make([]int, batch*l)
	tg := make([]int, batch*l)
	nll := make([]float64, batch*l)
	v := m.Config.Vocab
	for i := 0; i < len(ws); i += batch {
		chunk := ws[i:min(i+batch, len(ws))]
		for r := 0; r < batch; r++ {
			w := chunk[min(r, len(chunk)-1)] // pad a short last batch by repeating a window
			for p := 0; p < l; p++ {
				ids[r*l+p] = int(tokens[w.Start+p])
				tg[r*l+p] = int(tokens[w.Start+p+1])
			}
		}
		if err := g.Execute(ids, nil); err != nil {
			return err
		}
		layers.TokenNLL(g.LogitsData(), v, tg, nll)
		for r, w := range chunk {
			for p := l - w.Score; p < l; p++ {
				x := nll[r*l+p]
				t.posSum[p] += x
				t.posCount[p]++
				t.total += x
			}
			t.scored += w.Score
		}
		if t.progress != nil {
			t.progress(t.scored, t.toScore)
		}
	}
	return nil
}
