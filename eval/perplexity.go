// Package eval measures a trained model: perplexity over a token stream at
// any window length, with non-overlapping or sliding windows, loss by
// position inside the window, and reports as JSON, Markdown and PNG plots.
//
// # Scoring a text
//
// OpenRun (or OpenCheckpoint) loads a trained model with its tokenizer
// (Trained.Tokenizer: the byte tokenizer, one token a byte, or the run's
// BPE), which turns a text into the model's ids: FileTokens for a file,
// ValidationTokens for the run's own held-out split. Perplexity scores the
// ids: with Options{Len: len(ids) - 1} in one window, every token after the
// first predicted from all the tokens before it; with a shorter Len, in
// windows of that many tokens. Give it the run's tokenizer
// (Options.Tokenizer; nil is the byte tokenizer, refused for a model of
// another vocabulary): bits per byte count the bytes each scored token
// stands for. The Result holds the mean negative log-likelihood per token
// (NatsPerToken), its exponential (PPL, per token), bits per byte and the
// tokens scored. For the loss of one batch of your own ids and targets, run
// a model.Graph and read its LossValue.
package eval

import (
	"fmt"
	"math"
	"runtime/debug"
	"time"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/layers/position"
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
	// whose estimated memory (EstimateBytes) does not fit in it (FitsMemory:
	// at most MemoryPercent of it).
	MemoryLimit int64
	// Tokenizer made the tokens: bits per byte count the bytes of each
	// scored token by it. Nil: the byte tokenizer, one byte a token. A
	// tokenizer of another size than the model's vocabulary (nil for a
	// model of more than 256 tokens) is refused, as is an id outside the
	// vocabulary: give the run's (Trained.Tokenizer).
	Tokenizer data.Tokenizer
}

// defaultBatchTokens is the tokens of one forward pass, as in the PyTorch
// reference.
const defaultBatchTokens = 4096

// Result is the measurement at one length.
type Result struct {
	Len          int     `json:"len"`
	Protocol     string  `json:"protocol"`
	Stride       int     `json:"stride"`
	PPL          float64 `json:"ppl"`
	NatsPerToken float64 `json:"nats_per_token"`
	// BitsPerByte is the total negative log-likelihood of the scored
	// tokens over ln 2 times Bytes: the same scale for every tokenizer;
	// log2(PPL) for the byte tokenizer.
	BitsPerByte float64 `json:"bits_per_byte"`
	// Bytes is the number of bytes the scored tokens stand for.
	Bytes           int64     `json:"bytes"`
	Tokens          int       `json:"tokens"`
	Windows         int       `json:"windows"`
	WallSeconds     float64   `json:"wall_seconds"`
	TokensPerSecond float64   `json:"tokens_per_second"`
	PeakRSSBytes    int64     `json:"peak_rss_bytes"`
	PositionLoss    []float64 `json:"position_loss"` // mean nats at each position inside the window
	// PositionBuckets, in a Compact result, replace PositionLoss with its
	// log-spaced buckets.
	PositionBuckets []PositionBucket `json:"position_buckets,omitempty"`
}

// BytesPerToken is the bytes of text a scored token stood for: Bytes over
// Tokens, or 1 for a result without Bytes (written before results counted
// them, by a byte-level run).
func (r Result) BytesPerToken() float64 {
	if r.Bytes == 0 || r.Tokens == 0 {
		return 1
	}
	return float64(r.Bytes) / float64(r.Tokens)
}

// Perplexity scores tokens (a stream of ids of o.Tokenizer; token t+1 is predicted from the tokens before it inside its
// window) with m. Every predictable token is
// scored exactly once. With the non-overlapping protocol, a tail shorter than
// one window is scored as one shorter window at its own length, and counted.
// An extension whose factor follows the length (model.Model.Extend with
// factor 0) scores every window at the factor of o.Len: o.Len over the
// training length, at least 1, the shorter tail too.
// A length whose one window does not fit in the tokens is refused with a
// *LengthError (CheckLength), and one whose estimate does not fit in
// o.MemoryLimit with a *MemoryError (CheckMemory), before anything is
// allocated.
func Perplexity(m *model.Model, tokens []uint32, o Options) (Result, error) {
	if o.Len < 1 {
		return Result{}, fmt.Errorf("eval: length must be positive, got %d", o.Len)
	}
	if o.Stride < 0 {
		return Result{}, fmt.Errorf("eval: stride must not be negative, got %d", o.Stride)
	}
	if err := CheckLength(len(tokens), o); err != nil {
		return Result{}, err
	}
	if err := CheckMemory(m, len(tokens), o); err != nil {
		return Result{}, err
	}
	tokens = tokens[:available(len(tokens), o)]
	if err := checkTokens(m, tokens, o.Tokenizer); err != nil {
		return Result{}, err
	}
	if o.BatchTokens < 1 {
		o.BatchTokens = defaultBatchTokens
	}
	restore, err := rowFactor(m, o.Len)
	if err != nil {
		return Result{}, err
	}
	defer restore()
	var ws []data.Window
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
	t := &tally{posSum: make([]float64, o.Len), posCount: make([]int, o.Len), progress: o.Progress, tok: o.Tokenizer}
	for _, w := range ws {
		t.toScore += w.Score
	}
	// Windows of equal length and scored tokens are batched through one
	// graph per (batch, length, scored).
	for i := 0; i < len(ws); {
		l, sc := ws[i].Len, ws[i].Score
		j := i
		for j < len(ws) && ws[j].Len == l && ws[j].Score == sc {
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
	res.Bytes = t.bytes
	res.BitsPerByte = t.total / (math.Ln2 * float64(t.bytes))
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

// rowFactor fixes the factor of m's extension, when it follows each
// graph's length (model.Model.Extend's factor 0, not a dynamic extension),
// at the factor of a row of windows of the given length: the length over
// the training length, at least 1. Every window of the row, the shorter
// last one included, is then scored at the factor the row's label implies,
// not at its own. It returns the function that puts back factor 0.
func rowFactor(m *model.Model, length int) (restore func(), err error) {
	e, f := m.Extension()
	if e == nil || f != 0 {
		return func() {}, nil
	}
	if _, dynamic := e.(position.DynamicExtension); dynamic {
		return func() {}, nil
	}
	if err := m.Extend(e.Name(), max(1, float64(length)/float64(m.Config.TrainLen))); err != nil {
		return nil, err
	}
	return func() { m.Extend(e.Name(), 0) }, nil
}

// tally accumulates the scored tokens' losses, by position in the window.
type tally struct {
	posSum          []float64
	posCount        []int
	total           float64
	scored, toScore int
	bytes           int64          // the bytes the scored tokens stand for
	tok             data.Tokenizer // counts them (nil: one a token)
	progress        func(scored, total int)
}

// scoreWindows runs windows of one length and one number of scored tokens
// in batches and adds the scored tokens' losses to t. Windows that score
// fewer tokens than their length (sliding windows) run through a scoring
// graph (model.NewScoringGraph), which spends the last layer and the head on
// the scored rows alone.
func scoreWindows(m *model.Model, tokens []uint32, ws []data.Window, batch int, t *tally) error {
	l, sc := ws[0].Len, ws[0].Score
	if batch > len(ws) {
		batch = len(ws)
	}
	var g *model.Graph
	var err error
	if sc < l {
		g, err = m.NewScoringGraph(batch, l, sc)
	} else {
		g, err = m.NewGraph(batch, l, false)
	}
	if err != nil {
		return err
	}
	defer g.Close()
	ids := make([]int, batch*l)
	tg := make([]int, batch*sc) // the targets of the scored rows
	nll := make([]float64, batch*sc)
	v := m.Config.Vocab
	for i := 0; i < len(ws); i += batch {
		chunk := ws[i:min(i+batch, len(ws))]
		for r := 0; r < batch; r++ {
			w := chunk[min(r, len(chunk)-1)] // pad a short last batch by repeating a window
			for p := 0; p < l; p++ {
				ids[r*l+p] = int(tokens[w.Start+p])
			}
			for p := 0; p < sc; p++ {
				tg[r*sc+p] = int(tokens[w.Start+l-sc+p+1])
			}
		}
		if err := g.Execute(ids, nil); err != nil {
			return err
		}
		layers.TokenNLL(g.LogitsData(), v, tg, nll)
		for r := range chunk {
			for p := 0; p < sc; p++ {
				x := nll[r*sc+p]
				t.posSum[l-sc+p] += x
				t.posCount[l-sc+p]++
				t.total += x
			}
			t.scored += sc
			t.bytes += data.CoveredBytes(t.tok, tokens[chunk[r].Start+l-sc+1:chunk[r].Start+l+1])
		}
		if t.progress != nil {
			t.progress(t.scored, t.toScore)
		}
	}
	return nil
}
