package data

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/alibi-go/alibi/data/bpe"
)

// With a BPE, MixPasskey's episodes are in its tokens: a row that holds
// the question is an episode whose decoded bytes state a key and ask for
// it, and the key's tokens follow the question (in the inputs or, for the
// last, the targets); the mix resumes from a saved state.
func TestMixPasskeyBPE(t *testing.T) {
	text := opticksFiller(t)
	tok, err := bpe.Train(text[:200000], 1024, bpe.TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids := tok.Encode(text[200000:])
	const length = 120
	s, err := NewSampler(ids, length, 8, 5)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MixPasskey(0.9, tok); err != nil {
		t.Fatal(err)
	}
	saved, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	stmt := regexp.MustCompile(`The pass key is (\d{5})\. Remember it\. (\d{5}) is the pass key\.`)
	episodes := 0
	var first [][]int
	for range 5 {
		x, y := s.Batch()
		first = append(first, x, y)
		for r := range 8 {
			row := make([]uint32, 0, length+1)
			for _, id := range x[r*length : (r+1)*length] {
				row = append(row, uint32(id))
			}
			row = append(row, uint32(y[(r+1)*length-1]))
			q := indexIDs(row, tok.Encode([]byte(PasskeyQuestion)))
			if q < 0 {
				continue
			}
			episodes++
			prompt, err := tok.Decode(row[:q])
			if err != nil {
				t.Fatal(err)
			}
			m := stmt.FindSubmatch(prompt)
			if m == nil || !bytes.Equal(m[1], m[2]) {
				t.Fatalf("an episode's prompt states no key: %q", prompt)
			}
			answer := tok.Encode(m[1])
			after := row[q+len(tok.Encode([]byte(PasskeyQuestion))):]
			if len(after) < len(answer) || !equalIDs(after[:len(answer)], answer) {
				t.Fatalf("the question is not followed by the key %s's tokens", m[1])
			}
		}
	}
	if episodes < 25 {
		t.Errorf("%d of 40 rows are episodes at a fraction of 0.9", episodes)
	}
	r, _ := NewSampler(ids, length, 8, 99)
	if err := r.MixPasskey(0.9, tok); err != nil {
		t.Fatal(err)
	}
	if err := r.UnmarshalBinary(saved); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		x, y := r.Batch()
		if !equalInts(x, first[2*i]) || !equalInts(y, first[2*i+1]) {
			t.Fatalf("batch %d differs after restoring the state", i)
		}
	}
	short, _ := NewSampler(ids, 40, 1, 1)
	if err := short.MixPasskey(0.5, tok); err == nil {
		t.Error("a window shorter than an episode was accepted")
	}
}

func indexIDs(s, sub []uint32) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if equalIDs(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
