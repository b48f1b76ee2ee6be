package data

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
)

// The retrieval tasks past L, besides the passkey: many keys in one
// context, one asked for at a time.
const (
	// TaskMQAR is multi-query associative recall (Zoology: Arora et al.,
	// "Zoology: Measuring and Improving Recall in Efficient Language
	// Models", 2023; github.com/HazyResearch/zoology,
	// zoology/data/multiquery_ar.py): key-value pairs, then keys asked
	// again in another order, each to be answered with its value.
	TaskMQAR = "mqar"
	// TaskMultiKey is RULER's multi-key needle in a haystack (Hsieh et
	// al., "RULER: What's the Real Context Size of Your Long-Context
	// Language Models?", 2024; github.com/NVIDIA/RULER, niah.py with
	// multikey_1's four keys): several needles of one form with different
	// keys in the filler, one of them asked for; the others are
	// distractors.
	TaskMultiKey = "multikey"
)

// RecallTasks are the task names a Recall generator takes.
var RecallTasks = []string{TaskMQAR, TaskMultiKey}

// The tasks' text. An MQAR episode is
//
//	[filler] "pairs:" (" " KEY "=" VALUE)... " ask:" (" " KEY "=" VALUE)...
//
// with KEY four lowercase letters and VALUE four digits, every key and
// value distinct within the episode (the filler may hold the same digits:
// the queries name their key, so an answer is never ambiguous), the keys asked again a random subset in a random order,
// each query's VALUE its answer. A multi-key episode is filler with
// MultiKeyNeedles needles " The code of KEY is VALUE." at random places,
// then the question " What is the code of KEY? The code of KEY is " and
// the asked needle's VALUE (five digits, found nowhere in the filler) as
// its answer. Each piece is encoded by the tokenizer on its own, so a
// value's tokens are the same wherever it stands.
const (
	mqarOpen, mqarAsk, mqarEq = "pairs:", " ask:", "="
	needleOpen, needleIs      = " The code of ", " is "
	questionOpen, questionMid = " What is the code of ", "? The code of "
	recallKeyLetters          = 4
	mqarValueDigits           = 4
	// MultiKeyNeedles is the number of needles of a multi-key episode that
	// has room for them (RULER's multikey_1: four); a training window too
	// short for them holds as many as fit, at least two.
	MultiKeyNeedles = 4
	// MQARQueries is the most keys an MQAR episode asks again.
	MQARQueries = 16
	// maxPairs bounds an MQAR episode's pairs: of the 9000 four-digit
	// values, each pair's distinct.
	maxPairs = 8000
)

// RecallEpisode is one episode of a retrieval task, in token ids: the
// whole text with every answer in place, and where each answer is.
type RecallEpisode struct {
	Tokens  []uint32
	Answers []RecallAnswer
}

// RecallAnswer is one answer of an episode: Tokens[Start:End] are its
// tokens (the value's), which the model must predict, each from the tokens
// before it. Distance is Start minus the end of the value's first mention
// (its pair, or its needle): how far back the model must look to copy it.
// Value is the value's text.
type RecallAnswer struct {
	Start, End, Distance int
	Value                []byte
}

// Recall generates the episodes of a retrieval task in a tokenizer's
// tokens, with filler cut from ids (a text's ids under tok), from a PCG
// generator seeded from seed: the same seed, ids and requests give the same
// episodes. It is not safe for concurrent use.
type Recall struct {
	task  string
	ids   []uint32
	tok   Tokenizer
	rng   *rand.Rand
	piece map[string][]uint32
}

// NewRecall returns a generator of task's episodes (TaskMQAR or
// TaskMultiKey).
func NewRecall(task string, ids []uint32, tok Tokenizer, seed uint64) (*Recall, error) {
	if !slices.Contains(RecallTasks, task) {
		return nil, fmt.Errorf("recall: unknown task %q; use one of %v", task, RecallTasks)
	}
	if len(ids) == 0 {
		return nil, errors.New("recall: empty filler text")
	}
	r := &Recall{task: task, ids: ids, tok: tok, rng: rand.New(rand.NewPCG(seed, seed^seedMix)), piece: map[string][]uint32{}}
	for _, p := range []string{mqarOpen, mqarAsk, mqarEq, needleOpen, needleIs, questionOpen, questionMid, ".", " "} {
		r.piece[p] = tok.Encode([]byte(p))
	}
	return r, nil
}

// Task is the generator's task.
func (r *Recall) Task() string { return r.task }

// MinLength is the shortest episode the task can make: two pairs and two
// queries (MQAR) or two needles and the question (multi-key), with the
// longest keys and values the tokenizer can make of them (one token a
// byte at most).
func (r *Recall) MinLength() int {
	if r.task == TaskMQAR {
		pair := len(r.piece[" "]) + recallKeyLetters + len(r.piece[mqarEq]) + mqarValueDigits
		return len(r.piece[mqarOpen]) + 4*pair + len(r.piece[mqarAsk])
	}
	needle := len(r.piece[needleOpen]) + recallKeyLetters + len(r.piece[needleIs]) + PasskeyDigits + len(r.piece["."])
	return 2*needle + len(r.piece[questionOpen]) + 2*recallKeyLetters + len(r.piece[questionMid]) + len(r.piece[needleIs]) + PasskeyDigits
}

// Episode returns an episode of exactly length tokens, the filler before
// it (MQAR) or around its needles (multi-key) making up the difference. It
// returns an error if length is below MinLength or the filler is shorter
// than the episode.
func (r *Recall) Episode(length int) (RecallEpisode, error) {
	if length < r.MinLength() {
		return RecallEpisode{}, fmt.Errorf("recall: an episode of %s needs at least %d tokens, not %d", r.task, r.MinLength(), length)
	}
	if length > len(r.ids) {
		return RecallEpisode{}, fmt.Errorf("recall: an episode of %d tokens, the filler has %d", length, len(r.ids))
	}
	if r.task == TaskMQAR {
		return r.mqar(length), nil
	}
	return r.multiKey(length)
}

// keys draws n distinct keys of recallKeyLetters lowercase letters.
func (r *Recall) keys(n int) [][]byte {
	seen := map[string]bool{}
	var out [][]byte
	for len(out) < n {
		k := make([]byte, recallKeyLetters)
		for i := range k {
			k[i] = byte('a' + r.rng.IntN(26))
		}
		if !seen[string(k)] {
			seen[string(k)] = true
			out = append(out, k)
		}
	}
	return out
}

// values draws n distinct values of digits digits, the first not 0, none
// in avoid.
func (r *Recall) values(n, digits int, avoid func([]byte) bool) [][]byte {
	lo, span := 1, 9
	for range digits - 1 {
		lo, span = lo*10, span*10
	}
	seen := map[string]bool{}
	var out [][]byte
	for tries := 0; len(out) < n; tries++ {
		v := fmt.Appendf(nil, "%d", lo+r.rng.IntN(span))
		if !seen[string(v)] && (avoid == nil || tries > 1000 || !avoid(v)) {
			seen[string(v)] = true
			out = append(out, v)
		}
	}
	return out
}

// filler returns n contiguous filler tokens at a uniformly drawn start.
func (r *Recall) filler(n int) []uint32 {
	start := r.rng.IntN(len(r.ids) - n + 1)
	return r.ids[start : start+n]
}

// decode is the bytes of ids the generator made (they are in the
// vocabulary).
func (r *Recall) decode(ids []uint32) []byte {
	b, _ := r.tok.Decode(ids)
	return b
}

// mqar lays out an MQAR episode of length tokens: as many pairs as fit
// with their queries (at most MQARQueries of them asked), the filler before
// them.
func (r *Recall) mqar(length int) RecallEpisode {
	type pair struct{ key, value []uint32 }
	size := func(p pair) int { return len(r.piece[" "]) + len(p.key) + len(r.piece[mqarEq]) + len(p.value) }
	var pairs []pair
	used, asked := len(r.piece[mqarOpen])+len(r.piece[mqarAsk]), 0 // tokens of the pairs and of the queries
	seen := map[string]bool{}
	for {
		k, v := r.keys(1)[0], r.values(1, mqarValueDigits, nil)[0]
		if seen["k"+string(k)] || seen["v"+string(v)] {
			continue
		}
		p := pair{r.tok.Encode(k), r.tok.Encode(v)}
		add := size(p)
		if len(pairs) < MQARQueries {
			add *= 2 // and its query
		}
		if used+asked+add > length || len(pairs) == maxPairs {
			break
		}
		seen["k"+string(k)], seen["v"+string(v)] = true, true
		pairs = append(pairs, p)
		used += size(p)
		if len(pairs) <= MQARQueries {
			asked += size(p)
		}
	}
	// The keys asked again, a random subset in a random order; the pairs
	// asked may be longer in tokens than the first ones the budget counted:
	// drop the last pairs until the queries fit.
	var ask []int
	for {
		ask = r.rng.Perm(len(pairs))[:min(len(pairs), MQARQueries)]
		asked = 0
		for _, i := range ask {
			asked += size(pairs[i])
		}
		if used+asked <= length || len(pairs) <= 2 {
			break
		}
		used -= size(pairs[len(pairs)-1])
		pairs = pairs[:len(pairs)-1]
	}
	var e RecallEpisode
	e.Tokens = append(e.Tokens, r.filler(length-used-asked)...)
	e.Tokens = append(e.Tokens, r.piece[mqarOpen]...)
	ends := make([]int, len(pairs))
	for i, p := range pairs {
		e.Tokens = append(append(append(append(e.Tokens, r.piece[" "]...), p.key...), r.piece[mqarEq]...), p.value...)
		ends[i] = len(e.Tokens)
	}
	e.Tokens = append(e.Tokens, r.piece[mqarAsk]...)
	for _, i := range ask {
		p := pairs[i]
		e.Tokens = append(append(append(e.Tokens, r.piece[" "]...), p.key...), r.piece[mqarEq]...)
		start := len(e.Tokens)
		e.Tokens = append(e.Tokens, p.value...)
		e.Answers = append(e.Answers, RecallAnswer{Start: start, End: len(e.Tokens), Distance: start - ends[i], Value: r.decode(p.value)})
	}
	return e
}

// multiKey lays out a multi-key episode of length tokens: as many needles
// as fit, up to MultiKeyNeedles, at uniformly drawn places in the filler.
func (r *Recall) multiKey(length int) (RecallEpisode, error) {
	enc := func(b []byte) []uint32 { return r.tok.Encode(b) }
	needle := func(k, v []byte) []uint32 {
		n := append(append(slices.Clone(r.piece[needleOpen]), enc(k)...), r.piece[needleIs]...)
		return append(append(n, enc(v)...), r.piece["."]...)
	}
	keys := r.keys(MultiKeyNeedles)
	vals := r.values(MultiKeyNeedles, PasskeyDigits, nil)
	ask := r.rng.IntN(MultiKeyNeedles)
	n := MultiKeyNeedles
	var needles [][]uint32
	var question []uint32
	fill := -1
	for ; n >= 2 && fill < 0; n-- {
		ask = min(ask, n-1)
		question = append(append(slices.Clone(r.piece[questionOpen]), enc(keys[ask])...), r.piece[questionMid]...)
		question = append(append(question, enc(keys[ask])...), r.piece[needleIs]...)
		needles = needles[:0]
		fill = length - len(question) - len(enc(vals[ask]))
		for i := range n {
			needles = append(needles, needle(keys[i], vals[i]))
			fill -= len(needles[i])
		}
	}
	if fill < 0 {
		return RecallEpisode{}, fmt.Errorf("recall: %d tokens hold fewer than two needles", length)
	}
	n = len(needles)
	hay := r.filler(fill)
	text := r.decode(hay)
	for i := range n { // a value the filler holds would be a second answer: redraw it, keeping its tokens' count
		for tries := 0; bytes.Contains(text, vals[i]); tries++ {
			if tries == maxKeyDraws {
				return RecallEpisode{}, fmt.Errorf("recall: %d values drawn in a row all occur in the filler (%d tokens)", maxKeyDraws, fill)
			}
			v := r.values(1, PasskeyDigits, nil)[0]
			if len(enc(v)) == len(enc(vals[i])) && !slices.ContainsFunc(vals, func(o []byte) bool { return bytes.Equal(o, v) }) {
				vals[i], needles[i] = v, needle(keys[i], v)
			}
		}
	}
	at := make([]int, n) // the needles' places, as offsets into the filler
	for i := range at {
		at[i] = r.rng.IntN(fill + 1)
	}
	slices.Sort(at)
	order := r.rng.Perm(n) // which needle stands at each place
	var e RecallEpisode
	askedEnd, prev := 0, 0
	for i, off := range at {
		e.Tokens = append(append(e.Tokens, hay[prev:off]...), needles[order[i]]...)
		if order[i] == ask {
			askedEnd = len(e.Tokens) - len(r.piece["."])
		}
		prev = off
	}
	e.Tokens = append(append(e.Tokens, hay[prev:]...), question...)
	start := len(e.Tokens)
	e.Tokens = append(e.Tokens, enc(vals[ask])...)
	e.Answers = []RecallAnswer{{Start: start, End: len(e.Tokens), Distance: start - askedEnd, Value: vals[ask]}}
	return e, nil
}
