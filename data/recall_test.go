package data

import (
	"bytes"
	"slices"
	"testing"

	"github.com/alibi-go/alibi/data/bpe"
)

// trainedBPE is a BPE of 1024 tokens trained on the book.
func trainedBPE(t *testing.T) Tokenizer {
	t.Helper()
	tok, err := bpe.Train(opticksFiller(t)[:200000], 1024, bpe.TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// recallFiller is a text of words without digits, as ids of tok.
func recallFiller(tok Tokenizer) []uint32 {
	return tok.Encode(bytes.Repeat([]byte("light falls on a prism and parts into colours; the rays bend as they pass. "), 400))
}

// The episodes are exactly as long as asked, each answer's tokens are its
// value's and stand where the generator says, its value's mention is
// Distance tokens before it (in its pair, or its needle), keys and values
// are distinct, and the same seed gives the same episodes.
func TestRecallEpisodes(t *testing.T) {
	for _, tok := range []Tokenizer{ByteTokenizer{}, trainedBPE(t)} {
		filler := recallFiller(tok)
		for _, task := range RecallTasks {
			r, err := NewRecall(task, filler, tok, 7)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := NewRecall(task, filler, tok, 7)
			for _, length := range []int{r.MinLength(), r.MinLength() + 5, 129, 600, 3000} {
				e, err := r.Episode(length)
				if err != nil {
					t.Fatalf("%s %s length %d: %v", tok, task, length, err)
				}
				if e2, _ := again.Episode(length); !slices.Equal(e.Tokens, e2.Tokens) {
					t.Fatalf("%s %s length %d: another episode from the same seed", tok, task, length)
				}
				if len(e.Tokens) != length || len(e.Answers) == 0 {
					t.Fatalf("%s %s: %d tokens and %d answers for length %d", tok, task, len(e.Tokens), len(e.Answers), length)
				}
				if task == TaskMultiKey && len(e.Answers) != 1 {
					t.Fatalf("multikey: %d answers", len(e.Answers))
				}
				seen := map[string]bool{}
				for _, a := range e.Answers {
					ans := e.Tokens[a.Start:a.End]
					if got, _ := tok.Decode(ans); !bytes.Equal(got, a.Value) || seen[string(a.Value)] {
						t.Fatalf("%s %s length %d: answer tokens %q, value %q (or asked twice)", tok, task, length, got, a.Value)
					}
					seen[string(a.Value)] = true
					mention := e.Tokens[a.Start-a.Distance-len(ans) : a.Start-a.Distance]
					if !slices.Equal(mention, ans) {
						t.Fatalf("%s %s length %d: %d tokens before the answer %v stands %v, not the value", tok, task, length, a.Distance, ans, mention)
					}
				}
				text, _ := tok.Decode(e.Tokens)
				for _, a := range e.Answers {
					// The value is in the episode twice: its mention and its answer.
					if n := bytes.Count(text, a.Value); n != 2 {
						t.Fatalf("%s %s length %d: value %s occurs %d times in %q", tok, task, length, a.Value, n, text)
					}
				}
			}
			if _, err := r.Episode(r.MinLength() - 1); err == nil {
				t.Fatalf("%s: an episode shorter than the shortest", task)
			}
		}
	}
	if _, err := NewRecall("passkey", []uint32{1}, ByteTokenizer{}, 1); err == nil {
		t.Fatal("an unknown task was taken")
	}
}

// A multi-key episode long enough for them has MultiKeyNeedles needles of
// different keys, one of them asked for; MQAR asks MQARQueries keys of
// many pairs.
func TestRecallLayout(t *testing.T) {
	tok := ByteTokenizer{}
	r, _ := NewRecall(TaskMultiKey, recallFiller(tok), tok, 3)
	e, _ := r.Episode(2000)
	text, _ := tok.Decode(e.Tokens)
	if n := bytes.Count(text, []byte(needleOpen)) - 1; n != MultiKeyNeedles { // the question holds it once
		t.Fatalf("%d needles in %q", n, text)
	}
	q, _ := NewRecall(TaskMQAR, recallFiller(tok), tok, 3)
	e, _ = q.Episode(2000)
	if len(e.Answers) != MQARQueries {
		t.Fatalf("%d queries", len(e.Answers))
	}
	text, _ = tok.Decode(e.Tokens)
	if !bytes.Contains(text, []byte(mqarAsk)) || bytes.Count(text, []byte(mqarEq)) < 2*MQARQueries+40 {
		t.Fatalf("an MQAR episode of 2000 bytes: %q", text)
	}
}

// MixRecall's rows are episodes: with every row an episode (fractions
// near 1), each row holds the task's text; a window too short is refused;
// the mix follows the sampler's seed.
func TestMixRecall(t *testing.T) {
	tok := ByteTokenizer{}
	filler := recallFiller(tok)
	for _, task := range RecallTasks {
		s, _ := NewSampler(filler, 128, 8, 1)
		if err := s.MixRecall(task, 0.999, tok); err != nil {
			t.Fatal(err)
		}
		x, y := s.Batch()
		marker := map[string]string{TaskMQAR: mqarOpen, TaskMultiKey: needleOpen}[task]
		for r := range 8 {
			row := bytesOfInts(x[r*128 : (r+1)*128])
			if !bytes.Contains(row, []byte(marker)) || x[r*128+1] != y[r*128] {
				t.Fatalf("%s row %d: %q", task, r, row)
			}
		}
		again, _ := NewSampler(filler, 128, 8, 1)
		_ = again.MixRecall(task, 0.999, tok)
		if x2, _ := again.Batch(); !slices.Equal(x, x2) {
			t.Fatalf("%s: the same seed mixed other rows", task)
		}
		short, _ := NewSampler(filler, 40, 8, 1)
		if err := short.MixRecall(task, 0.5, tok); err == nil {
			t.Fatalf("%s: a window of 40 took episodes", task)
		}
	}
}

func bytesOfInts(ids []int) []byte {
	b := make([]byte, len(ids))
	for i, id := range ids {
		b[i] = byte(id)
	}
	return b
}
