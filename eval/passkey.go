package eval

import (
	"bytes"
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
	// Distances between the key statement and the answer in tokens
	// (data.TokenEpisode Distance), each at least the question's tokens
	// (data.MinPasskeyDistance for the byte tokenizer). Default
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
	// Tokenizer is the model's (nil: the byte tokenizer): episodes are laid
	// out in its tokens (data.TokenPasskey).
	Tokenizer data.Tokenizer
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
	if o.Tokenizer == nil {
		o.Tokenizer = data.ByteTokenizer{}
	}
}

func (o PasskeyOptions) check(minDistance int) error {
	for _, d := range o.Distances {
		if d < minDistance {
			return fmt.Errorf("passkey: distance %d is shorter than the question (%d %s), the shortest distance", d, minDistance, unit(o.Tokenizer))
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
	// Correct counts the episodes whose greedy continuation of the prompt,
	// decoded, begins with the key's digits; Accuracy is Correct /
	// Episodes.
	Correct  int     `json:"correct"`
	Accuracy float64 `json:"accuracy"`
	// DigitAccuracy is the share of the key's tokens (its digits, for the
	// byte tokenizer) that greedy decoding gets right given the tokens
	// before them (teacher-forced).
	DigitAccuracy float64 `json:"digit_accuracy"`
	// LogProb is the mean, over episodes, of the log-probability (nats) of
	// the key's tokens given the prompt and the tokens before them, per
	// digit (the total over the key's PasskeyDigits digits): a smooth
	// measure, log(1/10) = -2.30 for a uniform guess among digits.
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
	return RunReport{Pos: r.Pos, Extend: r.Extend, ExtendFactor: r.ExtendFactor, Precision: r.Precision}.Scheme()
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
	// Precision is the arithmetic of the model's linear layers when it is
	// not fp32 (model.Model.Precision: "bf16"), as RunReport's.
	Precision string `json:"precision,omitempty"`
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
	EffectiveContext int    `json:"effective_context"`
	EffectiveNote    string `json:"effective_note,omitempty"`
	// AttentionLag is how much farther back than an episode's distance the
	// nearest copy of an answer digit lies, in the run's tokens
	// (data.PasskeyLag; 0 in reports written before it was recorded, which
	// were all byte runs: data.PasskeyAttentionLag).
	AttentionLag    int     `json:"attention_lag,omitempty"`
	WallSeconds     float64 `json:"wall_seconds"`
	TokensPerSecond float64 `json:"prompt_tokens_per_second"`
}

// answerScorer gives the logits that predict each byte of an answer after a
// prompt: len(answer) rows of the vocabulary, row k predicting answer[k]
// from the prompt and answer[:k].
type answerScorer interface {
	answerLogits(prompt, answer []uint32) ([]float32, error)
}

// Passkey scores m on passkey episodes (data.TokenPasskey, in the tokens of
// o.Tokenizer) cut from filler, the ids of a text under that tokenizer, for
// each distance of o, and returns the accuracy curve and the effective
// context length (see PasskeyResult). For the filler, pass the run's own
// training split (Trained.TrainingTokens), the text the model knows.
//
// Each episode is run once, through the key/value cache (model.Cache): its
// prompt and the key's tokens but the last, o.Chunk tokens per forward
// pass; the logits at the prompt's last token and at each of the key's give,
// for every token of the key, its log-probability and the greedy choice
// given the true tokens before it. Greedy decoding writes the key's tokens
// exactly when every one of those choices is the true token (by induction:
// while it has been right, the tokens before are the true ones). Where a
// choice is not, greedy decoding is continued from it until it has written
// as many bytes as the key has digits (another split of the same digits is
// right too; with the byte tokenizer a wrong choice is a wrong digit, and
// nothing is run). So Correct is the exact match of the decoded digits of
// greedy decoding, as model.Generate with model.Greedy would decode.
func Passkey(m *model.Model, filler []uint32, o PasskeyOptions) (PasskeyResult, error) {
	o.defaults()
	if err := checkTokens(m, filler, o.Tokenizer); err != nil {
		return PasskeyResult{}, err
	}
	minDistance := len(o.Tokenizer.Encode([]byte(data.PasskeyQuestion)))
	if err := o.check(minDistance); err != nil {
		return PasskeyResult{}, err
	}
	longest := 0
	for _, d := range o.Distances {
		longest = max(longest, longestPrompt(d, minDistance, o.Depths))
		if piece := d - minDistance; piece > len(filler) {
			return PasskeyResult{}, fmt.Errorf("passkey: distance %d needs %d %s of filler in one piece, the filler has %d", d, piece, unit(o.Tokenizer), len(filler))
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
	if m.Precision != layers.FP32 {
		res.Precision = m.Precision.String()
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

// longestPrompt bounds the prompts of episodes of a distance at the given
// depths (data.TokenPasskey Episode), minDistance being the question's
// tokens: the statement counts its bytes, which no tokenizer exceeds in
// tokens (exact for the byte tokenizer).
func longestPrompt(distance, minDistance int, depths []float64) int {
	deepest := 0.0
	for _, d := range depths {
		deepest = max(deepest, d)
	}
	before := int(deepest*float64(distance-minDistance) + 0.5)
	return before + data.PasskeyStatementLen + distance
}

// scorePasskey runs the episodes through s; vocab is the logits' width and
// trainLen the run's training length.
func scorePasskey(s answerScorer, vocab, trainLen int, filler []uint32, o PasskeyOptions) (PasskeyResult, error) {
	tok := o.Tokenizer
	res := PasskeyResult{TrainLen: trainLen, Seed: o.Seed, Depths: o.Depths, AttentionLag: data.PasskeyLag(tok)}
	minDistance := len(tok.Encode([]byte(data.PasskeyQuestion)))
	total, done := 0, 0
	for _, d := range o.Distances {
		total += o.Episodes * longestPrompt(d, minDistance, o.Depths)
	}
	start := time.Now()
	greedy := model.NewSampler(model.Greedy, 0)
	var nll []float64
	var targets []int
	for _, d := range o.Distances {
		t0 := time.Now()
		gen, err := data.NewTokenPasskey(filler, tok, o.Seed^uint64(d)*0x9E3779B97F4A7C15)
		if err != nil {
			return res, err
		}
		answerTokens := 0
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
			right, miss, choice := true, 0, 0
			nll, targets = resize(nll, len(e.Answer)), resize(targets, len(e.Answer))
			for i, id := range e.Answer {
				targets[i] = int(id)
				row := logits[i*vocab : (i+1)*vocab]
				if c := greedy.Next(row); c == int(id) {
					digits++
				} else if right {
					right, miss, choice = false, i, c
				}
			}
			answerTokens += len(e.Answer)
			layers.TokenNLL(logits, vocab, targets, nll)
			if !right && tok.Kind() != data.ByteTokenizerName {
				if right, err = greedyMatches(s, vocab, tok, e, miss, choice, greedy); err != nil {
					return res, fmt.Errorf("passkey distance %d: %w", d, err)
				}
			}
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
			done += longestPrompt(d, minDistance, o.Depths)
			if o.Progress != nil {
				o.Progress(done, total)
			}
		}
		p.Accuracy = float64(p.Correct) / float64(p.Episodes)
		p.DigitAccuracy = float64(digits) / float64(answerTokens)
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

// Lag is r.AttentionLag, or data.PasskeyAttentionLag for a result that
// does not record it (written before it was recorded, by a byte run).
func (r PasskeyResult) Lag() int {
	if r.AttentionLag > 0 {
		return r.AttentionLag
	}
	return data.PasskeyAttentionLag
}

// unit is what a tokenizer's tokens are called in messages: bytes for the
// byte tokenizer, tokens for any other.
func unit(t data.Tokenizer) string {
	if t.Kind() == data.ByteTokenizerName {
		return "bytes"
	}
	return "tokens"
}

// greedyMatches continues greedy decoding of episode e past its first
// teacher-forced miss, at answer token miss where greedy chose choice, and
// reports whether the decoded bytes begin with the key's digits: they may,
// when the tokens split the digits otherwise than the key's encoding.
func greedyMatches(s answerScorer, vocab int, tok data.Tokenizer, e data.TokenEpisode, miss, choice int, greedy *model.Sampler) (bool, error) {
	gen := append(append([]uint32(nil), e.Answer[:miss]...), uint32(choice))
	for {
		text, err := tok.Decode(gen)
		if err != nil {
			return false, nil // an id of no token writes no digit
		}
		n := min(len(text), data.PasskeyDigits)
		switch {
		case !bytes.Equal(text[:n], e.Key[:n]):
			return false, nil
		case n == data.PasskeyDigits:
			return true, nil
		case len(gen) > data.PasskeyDigits:
			return false, nil // tokens without bytes: no end in sight
		}
		logits, err := s.answerLogits(e.Prompt, append(gen, 0)) // the last row predicts the token after gen
		if err != nil {
			return false, err
		}
		gen = append(gen, uint32(greedy.Next(logits[len(gen)*vocab:(len(gen)+1)*vocab])))
	}
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

func (s *cachedScorer) answerLogits(prompt, answer []uint32) ([]float32, error) {
	v := s.m.Config.Vocab
	ids := make([]int, 0, len(prompt)+len(answer)-1)
	for _, id := range prompt {
		ids = append(ids, int(id))
	}
	for _, id := range answer[:len(answer)-1] {
		ids = append(ids, int(id))
	}
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
