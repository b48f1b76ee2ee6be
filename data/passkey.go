package data

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// PasskeyDigits is the number of decimal digits of a pass key, and so the
// length of [PasskeyEpisode.Answer].
const PasskeyDigits = 5

// PasskeyQuestion ends every passkey prompt; the model must continue it with
// the key's [PasskeyDigits] digits.
const PasskeyQuestion = "What is the pass key? The pass key is "

// MinPasskeyDistance is the shortest distance a passkey episode can have: the
// question alone, with no filler after the key statement.
const MinPasskeyDistance = len(PasskeyQuestion)

// PasskeyStatementLen is the length in bytes of the key statement
// "The pass key is KKKKK. Remember it. KKKKK is the pass key.".
const PasskeyStatementLen = len("The pass key is . Remember it.  is the pass key.") + 2*PasskeyDigits

// PasskeyAttentionLag is how much farther back than an episode's Distance
// the nearest copy of an answer digit lies, in tokens: the query that
// predicts answer digit i (at AnswerStart+i-1) finds digit i of the key's
// second mention Distance + PasskeyAttentionLag positions before it, that
// mention being followed by " is the pass key." (17 bytes). Copying the key
// thus needs attention at distances the training length L never showed from
// Distance = L - PasskeyAttentionLag on.
const PasskeyAttentionLag = len(" is the pass key.") + PasskeyDigits - 1

// PasskeyLag is [PasskeyAttentionLag] in the tokens of tok: the tokens of
// " is the pass key." plus PasskeyDigits - 1. It is exact when every digit
// of a key is a token of its own (the byte tokenizer: PasskeyAttentionLag),
// and an upper bound for a tokenizer that merges digits.
func PasskeyLag(tok Tokenizer) int {
	return len(tok.Encode([]byte(" is the pass key."))) + PasskeyDigits - 1
}

// maxKeyDraws bounds the keys drawn for one episode before giving up because
// every one of them occurs in the filler.
const maxKeyDraws = 1000

// passkeyStatement returns the key statement for key.
func passkeyStatement(key []byte) []byte {
	return fmt.Appendf(nil, "The pass key is %s. Remember it. %s is the pass key.", key, key)
}

// PasskeyEpisode is one retrieval-at-a-distance episode. Its prompt is laid
// out, with no separators, as
//
//	Prompt = before + statement + after + PasskeyQuestion
//
// where before and after are filler (contiguous slices of the generator's
// text) and statement is "The pass key is KKKKK. Remember it. KKKKK is the
// pass key." with KKKKK = Answer. The key occurs in Prompt exactly twice,
// both times inside the statement: never in the filler, and the question
// holds no digits.
//
// Distance is AnswerStart - StatementEnd = len(after) + len(PasskeyQuestion):
// the number of bytes between the last byte of the statement and the first
// byte of the answer, that is, how far past the statement the model must
// look back when it writes the first digit (the second mention of the key
// ends at StatementEnd-len(" is the pass key.")).
type PasskeyEpisode struct {
	// Prompt is the text the model reads; the answer follows it.
	Prompt []byte
	// Answer is the key: PasskeyDigits ASCII digits, the first not '0'.
	Answer []byte
	// StatementStart and StatementEnd delimit the key statement:
	// Prompt[StatementStart:StatementEnd] is the statement, and
	// StatementStart = len(before) is the filler before it.
	StatementStart, StatementEnd int
	// AnswerStart is the offset of the answer's first byte in the episode's
	// full text Prompt + Answer; it equals len(Prompt).
	AnswerStart int
}

// Distance returns AnswerStart - StatementEnd, the episode's distance as
// defined on [PasskeyEpisode].
func (e PasskeyEpisode) Distance() int { return e.AnswerStart - e.StatementEnd }

// Correct reports whether generated begins with the episode's answer: exact
// match of its first [PasskeyDigits] bytes. Bytes after them are ignored; a
// shorter generation is wrong.
func (e PasskeyEpisode) Correct(generated []byte) bool {
	return len(generated) >= PasskeyDigits && bytes.Equal(generated[:PasskeyDigits], e.Answer)
}

// Passkey generates passkey episodes from a filler text (for training runs,
// the run's own training split, so the filler reads like the text the model
// knows) with a PCG generator seeded from a seed. Two generators with the
// same text and seed return the same episodes for the same sequence of
// requests; a request that fails draws nothing, so it does not change the
// episodes that follow.
//
// A Passkey must be created with [NewPasskey] and is not safe for concurrent
// use. It keeps a reference to the text, which must not be modified while it
// is in use.
type Passkey struct {
	text []byte
	rng  *rand.Rand
}

// NewPasskey returns a generator that cuts filler from text, seeded from
// seed. It returns an error if text is empty.
func NewPasskey(text []byte, seed uint64) (*Passkey, error) {
	if len(text) == 0 {
		return nil, errors.New("passkey: empty filler text")
	}
	return &Passkey{text: text, rng: rand.New(rand.NewPCG(seed, seed^seedMix))}, nil
}

// Episode returns an episode with the given distance and depth, exactly:
//
//   - distance is AnswerStart - StatementEnd (see [PasskeyEpisode]), so the
//     filler after the statement is after = distance - MinPasskeyDistance
//     bytes;
//   - depth in [0, 1] places the statement within that reach: the filler
//     before it is before = round(depth * after) bytes (math.Round, halves
//     away from zero). Depth is the filler before the statement as a
//     fraction of the filler after it: at depth 0 the prompt opens with the
//     statement, at depth 1 the statement sits in the middle of the filler
//     (before == after). The prompt is before + PasskeyStatementLen +
//     distance bytes long.
//
// It is [Passkey.EpisodeAt] with that before, and returns its errors, and an
// error if distance < MinPasskeyDistance or depth is not in [0, 1] (NaN
// included).
func (p *Passkey) Episode(distance int, depth float64) (PasskeyEpisode, error) {
	if distance < MinPasskeyDistance {
		return PasskeyEpisode{}, fmt.Errorf("passkey: distance %d is shorter than the question (%d bytes)", distance, MinPasskeyDistance)
	}
	if !(depth >= 0 && depth <= 1) {
		return PasskeyEpisode{}, fmt.Errorf("passkey: depth %v is outside [0, 1]", depth)
	}
	before := int(math.Round(depth * float64(distance-MinPasskeyDistance)))
	return p.EpisodeAt(before, distance)
}

// EpisodeAt returns an episode with before bytes of filler before the
// statement (StatementStart == before) and the given distance (so
// distance - MinPasskeyDistance bytes of filler after it): the byte-exact
// form of [Passkey.Episode], for callers that lay out episodes by length (an
// episode fills before + PasskeyStatementLen + distance + PasskeyDigits bytes
// with its answer). Any before >= 0 is allowed, also one larger than the
// filler after the statement.
//
// The two filler pieces are contiguous slices of the text, each starting at
// an offset drawn uniformly from [0, len(text)-n] for a piece of n bytes
// (before first, then after). The key is then drawn uniformly from
// 10000..99999 and redrawn while it occurs in either piece; the statement and
// the question begin and end with non-digits, so no occurrence can straddle
// a boundary and the key occurs in the prompt only in the statement.
//
// It returns an error if distance < MinPasskeyDistance, if before < 0, if the
// text is shorter than a filler piece, or if maxKeyDraws (1000) keys in a
// row all occur in the filler (a text dense in 5-digit numbers).
func (p *Passkey) EpisodeAt(before, distance int) (PasskeyEpisode, error) {
	if distance < MinPasskeyDistance {
		return PasskeyEpisode{}, fmt.Errorf("passkey: distance %d is shorter than the question (%d bytes)", distance, MinPasskeyDistance)
	}
	if before < 0 {
		return PasskeyEpisode{}, fmt.Errorf("passkey: negative filler before the statement (%d bytes)", before)
	}
	after := distance - MinPasskeyDistance
	if n := max(before, after); n > len(p.text) {
		return PasskeyEpisode{}, fmt.Errorf("passkey: filler pieces of %d and %d bytes (distance %d), text has %d bytes of filler", before, after, distance, len(p.text))
	}
	pre := p.slice(before)
	post := p.slice(after)
	var key []byte
	for range maxKeyDraws {
		key = fmt.Appendf(key[:0], "%d", 10000+p.rng.IntN(90000))
		if !bytes.Contains(pre, key) && !bytes.Contains(post, key) {
			return assemble(pre, post, key), nil
		}
	}
	return PasskeyEpisode{}, fmt.Errorf("passkey: %d keys drawn in a row all occur in the filler (before %d, distance %d)", maxKeyDraws, before, distance)
}

// slice returns n contiguous bytes of the text at a uniformly drawn start;
// the caller has checked n <= len(p.text).
func (p *Passkey) slice(n int) []byte {
	start := p.rng.IntN(len(p.text) - n + 1)
	return p.text[start : start+n]
}

// assemble lays out an episode as documented on [PasskeyEpisode].
func assemble(pre, post, key []byte) PasskeyEpisode {
	stmt := passkeyStatement(key)
	prompt := make([]byte, 0, len(pre)+len(stmt)+len(post)+len(PasskeyQuestion))
	prompt = append(prompt, pre...)
	prompt = append(prompt, stmt...)
	prompt = append(prompt, post...)
	prompt = append(prompt, PasskeyQuestion...)
	return PasskeyEpisode{
		Prompt:         prompt,
		Answer:         bytes.Clone(key),
		StatementStart: len(pre),
		StatementEnd:   len(pre) + len(stmt),
		AnswerStart:    len(prompt),
	}
}
