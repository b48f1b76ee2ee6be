package data

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// TokenPasskey generates passkey episodes in a tokenizer's tokens: the
// episodes of [Passkey], laid out as the same pieces (filler, key
// statement, filler, [PasskeyQuestion]) and drawn with the same random
// numbers, but with every length and distance counted in tokens. The filler
// pieces are runs of the filler's token ids; the statement, the question
// and the key are each encoded by the tokenizer on their own, so the key's
// digits are split as the tokenizer splits them. With the byte tokenizer,
// an episode is exactly [Passkey]'s with the same text and seed, one token
// a byte.
//
// A TokenPasskey must be created with [NewTokenPasskey] and is not safe for
// concurrent use.
type TokenPasskey struct {
	ids      []uint32
	tok      Tokenizer
	question []uint32
	rng      *rand.Rand
}

// TokenEpisode is one episode of a [TokenPasskey], in token ids:
//
//	Prompt = before + statement + after + question
//
// Distance() = AnswerStart - StatementEnd = len(after) + len(question), in
// tokens.
type TokenEpisode struct {
	// Prompt is the ids the model reads; Answer, the ids of Key, follow it.
	Prompt, Answer []uint32
	// Key is the pass key's PasskeyDigits ASCII digits.
	Key []byte
	// StatementStart and StatementEnd delimit the key statement's tokens in
	// Prompt; AnswerStart is len(Prompt).
	StatementStart, StatementEnd, AnswerStart int
}

// Distance returns AnswerStart - StatementEnd, in tokens.
func (e TokenEpisode) Distance() int { return e.AnswerStart - e.StatementEnd }

// Correct reports whether generated, the bytes a model wrote after the
// prompt, begins with the key: an exact match of its first PasskeyDigits
// bytes, however the tokens split them.
func (e TokenEpisode) Correct(generated []byte) bool {
	return len(generated) >= PasskeyDigits && bytes.Equal(generated[:PasskeyDigits], e.Key)
}

// NewTokenPasskey returns a generator that cuts filler from ids (a text's
// ids under tok), seeded from seed. It returns an error if ids is empty.
func NewTokenPasskey(ids []uint32, tok Tokenizer, seed uint64) (*TokenPasskey, error) {
	if len(ids) == 0 {
		return nil, errors.New("passkey: empty filler text")
	}
	return &TokenPasskey{ids: ids, tok: tok, question: tok.Encode([]byte(PasskeyQuestion)),
		rng: rand.New(rand.NewPCG(seed, seed^seedMix))}, nil
}

// MinDistance is the shortest distance an episode can have: the question's
// tokens alone, with no filler after the statement.
func (p *TokenPasskey) MinDistance() int { return len(p.question) }

// Episode returns an episode with the given distance and depth, as
// [Passkey.Episode] does, in tokens: the filler before the statement is
// round(depth * (distance - MinDistance)) tokens.
func (p *TokenPasskey) Episode(distance int, depth float64) (TokenEpisode, error) {
	if distance < p.MinDistance() {
		return TokenEpisode{}, fmt.Errorf("passkey: distance %d is shorter than the question (%d tokens)", distance, p.MinDistance())
	}
	if !(depth >= 0 && depth <= 1) {
		return TokenEpisode{}, fmt.Errorf("passkey: depth %v is outside [0, 1]", depth)
	}
	before := int(math.Round(depth * float64(distance-p.MinDistance())))
	return p.EpisodeAt(before, distance)
}

// EpisodeAt returns an episode with before tokens of filler before the
// statement and the given distance, as [Passkey.EpisodeAt] does, in
// tokens. A key is redrawn while its digits occur in the bytes of either
// filler piece.
func (p *TokenPasskey) EpisodeAt(before, distance int) (TokenEpisode, error) {
	if distance < p.MinDistance() {
		return TokenEpisode{}, fmt.Errorf("passkey: distance %d is shorter than the question (%d tokens)", distance, p.MinDistance())
	}
	if before < 0 {
		return TokenEpisode{}, fmt.Errorf("passkey: negative filler before the statement (%d tokens)", before)
	}
	after := distance - p.MinDistance()
	if n := max(before, after); n > len(p.ids) {
		return TokenEpisode{}, fmt.Errorf("passkey: filler pieces of %d and %d tokens (distance %d), the filler has %d tokens", before, after, distance, len(p.ids))
	}
	pre, post := p.slice(before), p.slice(after)
	preText, err := p.tok.Decode(pre)
	if err != nil {
		return TokenEpisode{}, fmt.Errorf("passkey: filler: %w", err)
	}
	postText, err := p.tok.Decode(post)
	if err != nil {
		return TokenEpisode{}, fmt.Errorf("passkey: filler: %w", err)
	}
	var key []byte
	for range maxKeyDraws {
		key = fmt.Appendf(key[:0], "%d", 10000+p.rng.IntN(90000))
		if !bytes.Contains(preText, key) && !bytes.Contains(postText, key) {
			return p.assemble(pre, post, key), nil
		}
	}
	return TokenEpisode{}, fmt.Errorf("passkey: %d keys drawn in a row all occur in the filler (before %d, distance %d)", maxKeyDraws, before, distance)
}

// slice returns n contiguous filler tokens at a uniformly drawn start.
func (p *TokenPasskey) slice(n int) []uint32 {
	start := p.rng.IntN(len(p.ids) - n + 1)
	return p.ids[start : start+n]
}

// assemble lays out an episode as documented on [TokenEpisode].
func (p *TokenPasskey) assemble(pre, post []uint32, key []byte) TokenEpisode {
	stmt := p.tok.Encode(passkeyStatement(key))
	prompt := make([]uint32, 0, len(pre)+len(stmt)+len(post)+len(p.question))
	prompt = append(prompt, pre...)
	prompt = append(prompt, stmt...)
	prompt = append(prompt, post...)
	prompt = append(prompt, p.question...)
	return TokenEpisode{
		Prompt:         prompt,
		Answer:         p.tok.Encode(key),
		Key:            bytes.Clone(key),
		StatementStart: len(pre),
		StatementEnd:   len(pre) + len(stmt),
		AnswerStart:    len(prompt),
	}
}
