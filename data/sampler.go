package data

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
)

// seedMix is XORed into the seed to form the second word of the PCG seed.
const seedMix = 0x9E3779B97F4A7C15

// samplerMagic starts the output of [Sampler.MarshalBinary].
const samplerMagic = "alibi.sampler.v1"

// samplerHeaderLen is the size of the encoded state before the PCG state:
// magic, token count, window length, batch size and batch counter.
const samplerHeaderLen = len(samplerMagic) + 4*8

// Sampler draws batches of random training windows from a token stream using
// a seeded random number generator. Its state can be saved with
// [Sampler.MarshalBinary] and restored with [Sampler.UnmarshalBinary], after
// which it produces exactly the batches the uninterrupted sampler would have.
//
// A Sampler must be created with [NewSampler] and is not safe for concurrent
// use.
type Sampler struct {
	tokens []uint32
	// The passkey mix (MixPasskey): the tokens as bytes under the byte
	// tokenizer (text), or another tokenizer (tok) and the shortest window
	// of an episode in its tokens (minWindow).
	text      []byte
	tok       Tokenizer
	minWindow int
	length    int
	batch     int
	src       *rand.PCG
	rng       *rand.Rand
	batches   int64
	passkey   float64 // the fraction of rows that are passkey episodes (MixPasskey)
	recall    []recallMix
}

// recallMix is a retrieval task mixed into the rows (MixRecall).
type recallMix struct {
	task string
	frac float64
	tok  Tokenizer
}

// NewSampler returns a sampler of batch windows of length tokens each, drawn
// from tokens (the ids of a [Tokenizer]) with a PCG
// generator seeded from seed. The sampler keeps a
// reference to tokens, which must not be modified while it is in use.
//
// It returns an error if length or batch is less than 1 or if tokens is
// shorter than length+1 (one window plus its shifted target).
func NewSampler(tokens []uint32, length, batch int, seed uint64) (*Sampler, error) {
	if length < 1 {
		return nil, fmt.Errorf("sampler: window length %d must be at least 1", length)
	}
	if batch < 1 {
		return nil, fmt.Errorf("sampler: batch size %d must be at least 1", batch)
	}
	if len(tokens) < length+1 {
		return nil, fmt.Errorf("sampler: corpus of %d tokens is shorter than one window of %d+1", len(tokens), length)
	}
	src := rand.NewPCG(seed, seed^seedMix)
	return &Sampler{
		tokens: tokens,
		length: length,
		batch:  batch,
		src:    src,
		rng:    rand.New(src),
	}, nil
}

// Next fills x and y with the next batch. Both must have length
// batch*length and are laid out row-major as batch rows of length tokens.
// A row may be a passkey episode (see [Sampler.MixPasskey]); for every other
// row a start is drawn uniformly from [0, len(tokens)-length-1];
// the row of x is tokens[start:start+length] and the row of y is
// tokens[start+1:start+length+1].
//
// Next panics if x or y has the wrong length, which is a programming error.
func (s *Sampler) Next(x, y []int) {
	want := s.batch * s.length
	if len(x) != want || len(y) != want {
		panic(fmt.Sprintf("data: Sampler.Next: got len(x)=%d, len(y)=%d, want %d (batch %d x length %d)",
			len(x), len(y), want, s.batch, s.length))
	}
	starts := len(s.tokens) - s.length
	for r := range s.batch {
		row := r * s.length
		if s.passkey > 0 && s.rng.Float64() < s.passkey && s.episodeRow(x[row:row+s.length], y[row:row+s.length]) {
			continue
		}
		if len(s.recall) > 0 && s.recallRow(x[row:row+s.length], y[row:row+s.length]) {
			continue
		}
		start := s.rng.IntN(starts)
		for i, tok := range s.tokens[start : start+s.length+1] {
			if i < s.length {
				x[row+i] = int(tok)
			}
			if i > 0 {
				y[row+i-1] = int(tok)
			}
		}
	}
	s.batches++
}

// Batch allocates x and y and fills them with the next batch, as [Sampler.Next].
func (s *Sampler) Batch() (x, y []int) {
	x = make([]int, s.batch*s.length)
	y = make([]int, s.batch*s.length)
	s.Next(x, y)
	return x, y
}

// Batches returns the number of batches drawn so far, including those drawn
// before the state was saved when the sampler was restored with
// [Sampler.UnmarshalBinary].
func (s *Sampler) Batches() int64 {
	return s.batches
}

// MarshalBinary implements [encoding.BinaryMarshaler]. It encodes the random
// generator state and the batch counter, together with the token count,
// window length and batch size, which [Sampler.UnmarshalBinary] checks.
func (s *Sampler) MarshalBinary() ([]byte, error) {
	if s.src == nil {
		return nil, fmt.Errorf("sampler: marshal: sampler was not created by NewSampler")
	}
	pcg, err := s.src.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("sampler: marshal generator state: %w", err)
	}
	out := make([]byte, 0, samplerHeaderLen+len(pcg))
	out = append(out, samplerMagic...)
	out = binary.BigEndian.AppendUint64(out, uint64(len(s.tokens)))
	out = binary.BigEndian.AppendUint64(out, uint64(s.length))
	out = binary.BigEndian.AppendUint64(out, uint64(s.batch))
	out = binary.BigEndian.AppendUint64(out, uint64(s.batches))
	out = append(out, pcg...)
	return out, nil
}

// UnmarshalBinary implements [encoding.BinaryUnmarshaler]. It restores state
// saved by [Sampler.MarshalBinary] into a sampler created by [NewSampler] over
// the same number of tokens with the same window length and batch size. On
// error the sampler is left unchanged.
func (s *Sampler) UnmarshalBinary(data []byte) error {
	if s.src == nil {
		return fmt.Errorf("sampler: unmarshal: sampler was not created by NewSampler")
	}
	if len(data) < samplerHeaderLen || string(data[:len(samplerMagic)]) != samplerMagic {
		return fmt.Errorf("sampler: unmarshal: %d bytes are not a saved sampler state", len(data))
	}
	p := data[len(samplerMagic):]
	n := binary.BigEndian.Uint64(p[0:])
	length := binary.BigEndian.Uint64(p[8:])
	batch := binary.BigEndian.Uint64(p[16:])
	batches := int64(binary.BigEndian.Uint64(p[24:]))
	if n != uint64(len(s.tokens)) || length != uint64(s.length) || batch != uint64(s.batch) {
		return fmt.Errorf("sampler: unmarshal: state is for %d tokens, length %d, batch %d; sampler has %d tokens, length %d, batch %d",
			n, length, batch, len(s.tokens), s.length, s.batch)
	}
	if batches < 0 {
		return fmt.Errorf("sampler: unmarshal: negative batch count %d", batches)
	}
	var src rand.PCG
	if err := src.UnmarshalBinary(p[32:]); err != nil {
		return fmt.Errorf("sampler: unmarshal generator state: %w", err)
	}
	*s.src = src
	s.batches = batches
	return nil
}

// PasskeyWindowMin is the shortest window (tokens + 1 for the shifted
// target) that holds a passkey episode: the key statement, the question at
// [MinPasskeyDistance] and the answer's digits, with no filler.
const PasskeyWindowMin = PasskeyStatementLen + MinPasskeyDistance + PasskeyDigits

// MixPasskey makes a fraction frac of the rows that [Sampler.Next] draws
// passkey episodes instead of plain windows: for each row, with probability
// frac, the row's length+1 tokens (inputs and shifted targets) are one
// episode's prompt and answer followed by plain text. The episode's length
// is drawn uniformly from [PasskeyWindowMin, length+1], so that its answer
// ends anywhere from PasskeyWindowMin bytes into the window to its end (a
// model with absolute positions must not learn one place for it); within
// it, the key statement starts at a uniformly drawn offset (a uniformly
// random depth), the rest is the distance ([Passkey.EpisodeAt], filler cut
// from the sampler's own tokens); the plain text after the answer is a
// slice of the tokens at a uniformly drawn start. Every draw comes from the
// sampler's generator, so a saved state resumes the same mix. With frac 0
// (the default) the sampler draws exactly what it drew before mixing
// existed. A row whose episode cannot be made (every key drawn occurs in its
// filler, possible only in a text dense in 5-digit numbers) stays a plain
// window.
//
// tok is the tokenizer of the sampler's tokens. With the byte tokenizer,
// episodes are [Passkey]'s, in bytes, as described. With another, they are
// [TokenPasskey]'s, in its tokens: the shortest episode is then
// PasskeyStatementLen + the question's tokens + PasskeyDigits tokens (the
// statement and the key counted at their bytes, which bound their
// tokens), the sizes are drawn as above from that shortest one, and the
// plain text after the answer fills the row to its end from the drawn
// start (moved back where it would run past the tokens).
//
// It returns an error if frac is not in [0, 1) or if the window is shorter
// than the shortest episode.
func (s *Sampler) MixPasskey(frac float64, tok Tokenizer) error {
	if !(frac >= 0 && frac < 1) {
		return fmt.Errorf("sampler: passkey fraction %v is not in [0, 1)", frac)
	}
	minWindow := PasskeyWindowMin
	if tok.Kind() != ByteTokenizerName {
		minWindow = PasskeyStatementLen + len(tok.Encode([]byte(PasskeyQuestion))) + PasskeyDigits
	}
	if frac > 0 && s.length+1 < minWindow {
		return fmt.Errorf("sampler: a passkey episode needs windows of at least %d tokens, the window is %d", minWindow-1, s.length)
	}
	if frac > 0 {
		if tok.Kind() == ByteTokenizerName {
			s.text = make([]byte, len(s.tokens))
			for i, id := range s.tokens {
				s.text[i] = byte(id)
			}
		} else {
			s.tok, s.minWindow = tok, minWindow
		}
	}
	s.passkey = frac
	return nil
}

// episodeRow fills one row with a passkey episode of s.length+1 tokens and
// reports whether it could.
func (s *Sampler) episodeRow(x, y []int) bool {
	if s.tok != nil {
		return s.tokenEpisodeRow(x, y)
	}
	n := s.length + 1
	size := PasskeyWindowMin + s.rng.IntN(n-PasskeyWindowMin+1)
	before := s.rng.IntN(size - PasskeyWindowMin + 1)
	distance := size - before - PasskeyStatementLen - PasskeyDigits
	tail := s.rng.IntN(len(s.tokens) - (n - size) + 1)
	p, err := NewPasskey(s.text, s.rng.Uint64())
	if err != nil {
		return false
	}
	e, err := p.EpisodeAt(before, distance)
	if err != nil {
		return false
	}
	text := append(append(e.Prompt, e.Answer...), s.text[tail:tail+n-size]...)
	for i := 0; i < s.length; i++ {
		x[i] = int(text[i])
		y[i] = int(text[i+1])
	}
	return true
}

// tokenEpisodeRow is episodeRow in the tokens of s.tok (MixPasskey).
func (s *Sampler) tokenEpisodeRow(x, y []int) bool {
	n := s.length + 1
	size := s.minWindow + s.rng.IntN(n-s.minWindow+1)
	before := s.rng.IntN(size - s.minWindow + 1)
	distance := size - before - PasskeyStatementLen - PasskeyDigits
	tail := s.rng.IntN(len(s.tokens) - (n - size) + 1)
	p, err := NewTokenPasskey(s.tokens, s.tok, s.rng.Uint64())
	if err != nil {
		return false
	}
	e, err := p.EpisodeAt(before, distance)
	if err != nil {
		return false
	}
	row := append(append(make([]uint32, 0, n), e.Prompt...), e.Answer...)
	rest := n - len(row) // at least n - size: the statement and the key take at most their bytes in tokens
	tail = min(tail, len(s.tokens)-rest)
	row = append(row, s.tokens[tail:tail+rest]...)
	for i := 0; i < s.length; i++ {
		x[i] = int(row[i])
		y[i] = int(row[i+1])
	}
	return true
}

// MixRecall makes a fraction frac of the rows that [Sampler.Next] draws
// (of those that are not passkey episodes) episodes of a retrieval task
// ([Recall], TaskMQAR or TaskMultiKey) in the tokens of tok: for each row,
// with probability frac, an episode whose length is drawn uniformly from
// the task's shortest (Recall.MinLength) to the window's length + 1, its
// filler from the sampler's tokens, followed by a plain run of tokens to
// fill the row; the model learns the task as text, every token a target.
// Tasks mix one after another: a row is the first task's with its
// probability, else the next's with its own. It returns an error for an
// unknown task, a fraction outside [0, 1) or a window shorter than the
// task's shortest episode (which a score at the window's length must hold).
func (s *Sampler) MixRecall(task string, frac float64, tok Tokenizer) error {
	if !(frac >= 0 && frac < 1) {
		return fmt.Errorf("the fraction of %s episodes, %v, is not in [0, 1)", task, frac)
	}
	r, err := NewRecall(task, s.tokens, tok, 0)
	if err != nil {
		return err
	}
	if frac > 0 && s.length < r.MinLength() {
		return fmt.Errorf("an episode of %s needs windows of at least %d tokens (so that the run can be scored at its own length), the window is %d", task, r.MinLength(), s.length)
	}
	if frac > 0 {
		s.recall = append(s.recall, recallMix{task: task, frac: frac, tok: tok})
	}
	return nil
}

// recallRow fills one row with an episode of the first mixed task whose
// draw takes the row, and reports whether one did.
func (s *Sampler) recallRow(x, y []int) bool {
	for _, m := range s.recall {
		if s.rng.Float64() >= m.frac {
			continue
		}
		r, err := NewRecall(m.task, s.tokens, m.tok, s.rng.Uint64())
		if err != nil {
			return false
		}
		n := s.length + 1
		size := r.MinLength() + s.rng.IntN(n-r.MinLength()+1)
		tail := s.rng.IntN(len(s.tokens) - (n - size) + 1)
		e, err := r.Episode(size)
		if err != nil {
			return false
		}
		row := append(slices.Clone(e.Tokens), s.tokens[tail:tail+n-size]...)
		for i := 0; i < s.length; i++ {
			x[i] = int(row[i])
			y[i] = int(row[i+1])
		}
		return true
	}
	return false
}
