package eval

import (
	"fmt"
	"slices"
	"time"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/model"
)

// DefaultPasskeyDistances are the distances PasskeyOptions evaluates when
// it names none: two inside half the tiny model's training length (128),
// then doubling to 16384.
var DefaultPasskeyDistances = []int{48, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}

// DefaultPasskeyDepths are the depths (data.Passkey Episode) the episodes of
// each distance cycle through when PasskeyOptions names none: the statement
// opening the prompt, a third of the way in, and in the middle.
var DefaultPasskeyDepths = []float64{0, 0.5, 1}

// PasskeyOptions select a passkey evaluation.
type PasskeyOptions struct {
	// Distances between the key statement and the answer (data.PasskeyEpisode
	// Distance), each at least data.MinPasskeyDistance. Default
	// DefaultPasskeyDistances.
	Distances []int
	// Depths in [0, 1] (data.Passkey Episode): episode k of a distance has
	// depth Depths[k % len(Depths)]. Default DefaultPasskeyDepths.
	Depths []float64
	// Episodes per distance (default 50).
	Episodes int
	// Seed makes the episodes: a distance's episodes depend only on the
	// seed, the distance, the depths and the filler, so adding a distance
	// does not change the others'.
	Seed uint64
	// Chunk is the number of prompt tokens run per forward pass against the
	// key/value cache (default 1024).
	Chunk int
	// Progress, when not nil, is told after each episode how many prompt
	// tokens have been run, out of how many.
	Progress func(done, total int)
	// MemoryLimit > 0 refuses, before anything is allocated, an evaluation
	// whose estimate (PasskeyBytes) does not fit in it (FitsMemory).
	MemoryLimit int64
}

func (o *PasskeyOptions) defaults() {
	if len(o.Distances) == 0 {
		o.Distances = DefaultPasskeyDistances
	}
	if len(o.Depths) == 0 {
		o.Depths = DefaultPasskeyDepths
	}
	if o.Episodes == 0 {
		o.Episodes = 50
	}
	if o.Chunk == 0 {
		o.Chunk = 1024
	}
}

func (o PasskeyOptions) check() error {
	for _, d := range o.Distances {
		if d < data.MinPasskeyDistance {
			return fmt.Errorf("passkey: distance %d is shorter than the question (%d bytes), the shortest distance", d, data.MinPasskeyDistance)
		}
	}
	for _, d := range o.Depths {
		if !(d >= 0 && d <= 1) {
			return fmt.Errorf("passkey: depth %v is outside [0, 1]", d)
		}
	}
	if o.Episodes < 1 {
		return fmt.Errorf("passkey: episodes must be positive, got %d", o.Episodes)
	}
	if o.Chunk < 1 {
		return fmt.Errorf("passkey: chunk must be positive, got %d", o.Chunk)
	}
	return nil
}

// PasskeyPoint is the score at one distance.
type PasskeyPoint struct {
	Distance int `json:"distance"`
	Episodes int `json:"episodes"`
	// Correct counts the episodes whose greedy continuation of the prompt
	// begins with the key; Accuracy is Correct / Episodes.
	Correct  int     `json:"correct"`
	Accuracy float64 `json:"accuracy"`
	// DigitAccuracy is the share of the key's digits that greedy decoding
	// gets right given the digits before them (teacher-forced).
	DigitAccuracy float64 `json:"digit_accuracy"`
	// LogProb is the mean, over episodes, of the mean log-probability
	// (nats) of the key's digits given the prompt and the digits before
	// them: a smooth measure, log(1/10) = -2.30 for a uniform guess among
	// digits.
	LogProb float64 `json:"mean_logprob"`
	// ByDepth splits the episodes by depth.
	ByDepth []PasskeyDepth `json:"by_depth"`
	// PromptTokens is the longest prompt of the distance's episodes.
	PromptTokens int     `json:"max_prompt_tokens"`
	WallSeconds  float64 `json:"wall_seconds"`
}

// PasskeyDepth is the score of a distance's episodes at one depth.
type PasskeyDepth struct {
	Depth    float64 `json:"depth"`
	Episodes int     `json:"episodes"`
	Correct  int     `json:"correct"`
}

// Scheme names the run's position scheme with its extension, as
// RunReport.Scheme.
func (r PasskeyResult) Scheme() string {
	return RunReport{Pos: r.Pos, Extend: r.Extend, ExtendFactor: r.ExtendFactor}.Scheme()
}

// PasskeyResult is one run's passkey evaluation.
type PasskeyResult struct {
	Run      string `json:"run"`
	Pos      string `json:"pos"`
	TrainLen int    `json:"train_len"`
	// Extend and ExtendFactor are the model's evaluation-time extension
	// (model.Model.Extend), if any.
	Extend       string  `json:"extend,omitempty"`
	ExtendFactor float64 `json:"extend_factor,omitempty"`
	// Weights names the checkpoint that was scored (nil in reports written
	// before reports named it).
	Weights *Weights       `json:"weights,omitempty"`
	Seed    uint64         `json:"seed"`
	Depths  []float64      `json:"depths"`
	Points  []PasskeyPoint `json:"points"`
	// ShortAccuracy is the accuracy pooled over the distances up to
	// TrainLen/2: the run's own retrieval where it was trained.
	ShortAccuracy float64 `json:"short_accuracy"`
	// EffectiveContext is the largest distance whose accuracy is at least
	// half of ShortAccuracy; 0 when it is undefined, and then
	// EffectiveNote says why.
	EffectiveContext int     `json:"effective_context"`
	EffectiveNote    string  `json:"effective_note,omitempty"`
	WallSeconds      float64 `json:"wall_seconds"`
	TokensPerSecond  float64 `json:"prompt_tokens_per_second"`
}

// answerScorer gives the logits that predict each byte of an answer after a
// prompt: len(answer) rows of the vocabulary, row k predicting answer[k]
// from the prompt and answer[:k].
type answerScorer interface {
	answerLogits(prompt, answer []byte) ([]float32, error)
}

// Passkey scores m on passkey episodes (data.Passkey) cut from filler, for
// each distance of o, and returns the accuracy curve and the effective
// context length (see PasskeyResult). For the filler, pass the run's own
// training split (Trained.TrainingTokens), the text the model knows.
//
// Each episode is run once, through the key/value cache (model.Cache): its
// prompt and the key's first four digits, o.Chunk tokens per forward pass;
// the logits at the prompt's last byte and at each digit give, for every
// digit, its log-probability and the greedy choice given the true digits
// before it. Greedy decoding writes the key exactly when every one of those
// choices is the true digit (by induction: while it has been right, the
// digits before are the true ones), so Correct is the exact-match accuracy of
// greedy decoding, as model.Generate with model.Greedy would decode.
func Passkey(m *model.Model, filler []byte, o PasskeyOptions) (PasskeyResult, error) {
	o.defaults()
	if err := o.check(); err != nil {
		return PasskeyResult{}, err
	}
	longest := 0
	for _, d := range o.Distances {
		longest = max(longest, longestPrompt(d, o.Depths))
		if piece := d - data.MinPasskeyDistance; piece > len(filler) {
			return PasskeyResult{}, fmt.Errorf("passkey: distance %d needs %d bytes of filler in one piece, the filler has %d", d, piece, len(filler))
		}
	}
	if need := PasskeyBytes(m, longest, o.Chunk); !FitsMemory(need, o.MemoryLimit) {
		return PasskeyResult{}, &MemoryError{Len: longest, Batch: 1, Need: need, Limit: o.MemoryLimit}
	}
	s := &cachedScorer{m: m, cache: m.NewCache(1), chunk: o.Chunk}
	defer s.close()
	res, err := scorePasskey(s, m.Config.Vocab, m.Config.TrainLen, filler, o)
	res.Pos = m.Config.Label()
	if e, f := m.Extension(); e != nil {
		res.Extend, res.ExtendFactor = e.Name(), f
	}
	return res, err
}

// PasskeyBytes estimates the memory of a passkey evaluation whose longest
// prompt has n tokens, run chunk tokens at a time: the evaluation graph of
// one chunk (model.EvalGraphBytes) and a key/value cache grown by doubling
// to hold n tokens (twice n in the worst case).
func PasskeyBytes(m *model.Model, n, chunk int) int64 {
	c := m.Config
	cache := int64(2*n) * int64(c.NLayers) * int64(2*c.DModel) * 4
	return m.EvalGraphBytes(1, min(chunk, n)) + cache
}

// longestPrompt is the longest prompt among episodes of a distance at the
// given depths (data.Passkey Episode).
func longestPrompt(distance int, depths []float64) int {
	deepest := 0.0
	for _, d := range depths {
		deepest = max(deepest, d)
	}
	before := int(deepest*float64(distance-data.MinPasskeyDistance) + 0.5)
	return before + data.PasskeyStatementLen + distance
}

// scorePasskey runs the episodes through s; vocab is the logits' width and
// trainLen the run's training length.
func scorePasskey(s answerScorer, vocab, trainLen int, filler []byte, o PasskeyOptions) (PasskeyResult, error) {
	res := PasskeyResult{TrainLen: trainLen, Seed: o.Seed, Depths: o.Depths}
	total, done := 0, 0
	for _, d := range o.Distances {
		total += o.Episodes * longestPrompt(d, o.Depths)
	}
	start := time.Now()
	greedy := model.NewSampler(model.Greedy, 0)
	nll := make([]float64, data.PasskeyDigits)
	targets := make([]int, data.PasskeyDigits)
	for _, d := range o.Distances {
		t0 := time.Now()
		gen, err := data.NewPasskey(filler, o.Seed^uint64(d)*0x9E3779B97F4A7C15)
		if err != nil {
			return res, err
		}
		p := PasskeyPoint{Distance: d, Episodes: o.Episodes}
		for _, depth := range o.Depths {
			p.ByDepth = append(p.ByDepth, PasskeyDepth{Depth: depth})
		}
		var logProb float64
		digits := 0
		for k := range o.Episodes {
			e, err := gen.Episode(d, o.Depths[k%len(o.Depths)])
			if err != nil {
				return res, err
			}
			logits, err := s.answerLogits(e.Prompt, e.Answer)
			if err != nil {
				return res, fmt.Errorf("passkey distance %d: %w", d, err)
			}
			right := true
			for i, b := range e.Answer {
				targets[i] = int(b)
				row := logits[i*vocab : (i+1)*vocab]
				if greedy.Next(row) == int(b) {
					digits++
				} else {
					right = false
				}
			}
			layers.TokenNLL(logits, vocab, targets, nll)
			var sum float64
			for _, x := range nll {
				sum -= x
			}
			logProb += sum / data.PasskeyDigits
			dp := &p.ByDepth[k%len(o.Depths)]
			dp.Episodes++
			if right {
				p.Correct++
				dp.Correct++
			}
			p.PromptTokens = max(p.PromptTokens, len(e.Prompt))
			done += longestPrompt(d, o.Depths)
			if o.Progress != nil {
				o.Progress(done, total)
			}
		}
		p.Accuracy = float64(p.Correct) / float64(p.Episodes)
		p.DigitAccuracy = float64(digits) / float64(p.Episodes*data.PasskeyDigits)
		p.LogProb = logProb / float64(p.Episodes)
		p.WallSeconds = time.Since(t0).Seconds()
		res.Points = append(res.Points, p)
	}
	res.WallSeconds = time.Since(start).Seconds()
	res.TokensPerSecond = float64(total) / res.WallSeconds
	res.ShortAccuracy, res.EffectiveContext, res.EffectiveNote = EffectiveContext(res.Points, trainLen)
	return res, nil
}

// EffectiveContext returns the accuracy pooled over the points at distances
// up to trainLen/2 and the largest distance whose accuracy is at least half
// of it. The length is 0, with a note saying why, when no point is at a
// distance up to trainLen/2 or their accuracy is 0.
func EffectiveContext(points []PasskeyPoint, trainLen int) (short float64, length int, note string) {
	correct, episodes := 0, 0
	for _, p := range points {
		if 2*p.Distance <= trainLen {
			correct += p.Correct
			episodes += p.Episodes
		}
	}
	if episodes == 0 {
		return 0, 0, fmt.Sprintf("no distance up to L/2 = %d was evaluated", trainLen/2)
	}
	short = float64(correct) / float64(episodes)
	if correct == 0 {
		return 0, 0, fmt.Sprintf("no episode at distances up to L/2 = %d was answered: the run does not retrieve the key", trainLen/2)
	}
	for _, p := range points {
		if p.Accuracy >= short/2 {
			length = max(length, p.Distance)
		}
	}
	return short, length, ""
}

// ContiguousContext is EffectiveContext's length without gaps: the
// largest distance up to which every evaluated distance has an accuracy of
// at least half the accuracy pooled over the distances up to trainLen/2
// (0 when that is undefined or the shortest distance already falls short).
// Where the two differ, the effective context rests on a far distance past
// a failing one: a few episodes that retrieved by chance or by depth.
func ContiguousContext(points []PasskeyPoint, trainLen int) int {
	short, length, _ := EffectiveContext(points, trainLen)
	if length == 0 {
		return 0
	}
	sorted := slices.Clone(points)
	slices.SortFunc(sorted, func(a, b PasskeyPoint) int { return a.Distance - b.Distance })
	contiguous := 0
	for _, p := range sorted {
		if p.Accuracy < short/2 {
			break
		}
		contiguous = p.Distance
	}
	return contiguous
}

// cachedScorer runs episodes through a model's key/value cache, one at a
// time, reusing the cache's storage and the graph of a full chunk. A chunk
// whose logits are not needed runs its last layer and the head on one row
// alone (model.NewScoringDecodeGraph); the chunk that ends the episode on
// the rows that predict the answer.
type cachedScorer struct {
	m      *model.Model
	cache  *model.Cache
	chunk  int
	full   *model.Graph // the graph of a chunk of chunk tokens scoring one row
	logits []float32
}

func (s *cachedScorer) answerLogits(prompt, answer []byte) ([]float32, error) {
	v := s.m.Config.Vocab
	ids := data.Encode(append(append([]byte(nil), prompt...), answer[:len(answer)-1]...))
	first := len(prompt) - 1 // the row predicting answer[0]
	s.logits = resize(s.logits, len(answer)*v)
	s.cache.Reset()
	for at := 0; at < len(ids); at += s.chunk {
		q := min(s.chunk, len(ids)-at)
		scored := max(1, at+q-max(at, first)) // the last rows, from first on
		g := s.full
		if q != s.chunk || scored != 1 || g == nil {
			var err error
			if g, err = s.m.NewScoringDecodeGraph(s.cache, q, scored); err != nil {
				return nil, err
			}
			if q == s.chunk && scored == 1 {
				s.full = g
			} else {
				defer g.Close()
			}
		}
		if err := g.Execute(ids[at:at+q], nil); err != nil {
			return nil, err
		}
		out := g.LogitsData() // rows at+q-scored .. at+q-1
		for i := max(at+q-scored, first); i < at+q; i++ {
			r := i - (at + q - scored)
			copy(s.logits[(i-first)*v:(i-first+1)*v], out[r*v:(r+1)*v])
		}
	}
	return s.logits, nil
}

func (s *cachedScorer) close() {
	if s.full != nil {
		s.full.Close()
	}
}

// resize returns s with length n, reallocated only when too short.
func resize[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	return s[:n]
}
