package bpe

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// mergeNames lists a tokenizer's merges as "left+right" of their bytes.
func mergeNames(tok *Tokenizer) []string {
	var out []string
	for _, m := range tok.Merges() {
		l, _ := tok.Token(m.Left)
		r, _ := tok.Token(m.Right)
		out = append(out, fmt.Sprintf("%s+%s", l, r))
	}
	return out
}

// Merges worked out by hand.
//
// "abab abab ab" splits into "abab", " abab" and " ab". Pairs: a b 5 times,
// b a 2, space a 2: merge a+b (256). Then the words are [ab ab], [_ ab ab],
// [_ ab]: ab ab 2, _ ab 2; equal counts, and the space (32) has the smaller
// left id: merge _+ab (257). Then [ab ab] and [_ab ab]: ab ab 1, _ab ab 1;
// ab (256) is the smaller left id: ab+ab (258); then _ab+ab (259); then no
// pair is left, and training stops at 260 tokens though 300 were asked.
//
// "aaaa bb bb" splits into "aaaa", " bb", " bb". Adjacent pairs counted
// overlapping: a a 3, space b 2, b b 2: a+a (256), which leaves [aa aa].
// Then space b 2, b b 2, aa aa 1: _+b (257) by the smaller left id; then
// [_b b] twice: _b+b (258); then aa+aa (259). Counting without overlaps
// (a a twice) would merge _+b first.
func TestTrainByHand(t *testing.T) {
	tests := []struct {
		text  string
		want  []string
		ids   []Merge
		vocab int
	}{
		{"abab abab ab", []string{"a+b", " +ab", "ab+ab", " ab+ab"},
			[]Merge{{'a', 'b', 256}, {' ', 256, 257}, {256, 256, 258}, {257, 256, 259}}, 260},
		{"aaaa bb bb", []string{"a+a", " +b", " b+b", "aa+aa"},
			[]Merge{{'a', 'a', 256}, {' ', 'b', 257}, {257, 'b', 258}, {256, 256, 259}}, 260},
	}
	for _, tt := range tests {
		tok, err := Train([]byte(tt.text), 300, TrainOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := mergeNames(tok); !slices.Equal(got, tt.want) {
			t.Errorf("Train(%q) merges %q, want %q", tt.text, got, tt.want)
		}
		if got := tok.Merges(); !slices.Equal(got, tt.ids) {
			t.Errorf("Train(%q) merge ids %v, want %v", tt.text, got, tt.ids)
		}
		if tok.VocabSize() != tt.vocab {
			t.Errorf("Train(%q) has %d tokens, want %d", tt.text, tok.VocabSize(), tt.vocab)
		}
		// Encoding the training text gives one token per piece.
		if got, want := len(tok.Encode([]byte(tt.text))), 3; got != want {
			t.Errorf("Encode(%q) has %d tokens, want %d", tt.text, got, want)
		}
	}
	// Asked for fewer tokens, training stops there.
	tok, err := Train([]byte("abab abab ab"), 258, TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mergeNames(tok); !slices.Equal(got, []string{"a+b", " +ab"}) {
		t.Errorf("Train(258) merges %q", got)
	}
}

// Merges never cross pieces: "ab" then " ab" (a space-word) never merge the
// b with the space.
func TestTrainRespectsPieces(t *testing.T) {
	tok, err := Train([]byte(strings.Repeat("ab ab ", 50)), 1000, TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range mergeNames(tok) {
		if strings.Contains(name, "b+ ") || strings.HasPrefix(name, "b ") {
			t.Errorf("merge %q crosses a piece boundary", name)
		}
	}
}

// The same text and size give the same tokenizer, whatever the number of
// processors.
func TestTrainDeterministic(t *testing.T) {
	// Long enough to be counted in parallel chunks.
	text := []byte(strings.Repeat("The light of the sun, refracted 1704 times; it's 'twas so.\n\tIndented  twice\r\n", 8000) + opticsSample)
	if len(text) < 4*chunkLen {
		t.Fatalf("text of %d bytes is too short for parallel counting", len(text))
	}
	a, err := Train(text, 600, TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prev := runtime.GOMAXPROCS(1)
	b, err := Train(text, 600, TrainOptions{})
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Train(text, 600, TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash() != b.Hash() || a.Hash() != c.Hash() {
		t.Errorf("hashes differ: %s, %s (one processor), %s", a.Hash(), b.Hash(), c.Hash())
	}
	if !slices.Equal(a.Merges(), b.Merges()) {
		t.Error("merges differ with one processor")
	}
	d, err := Train(text, 600, TrainOptions{Pattern: Llama3})
	if err != nil {
		t.Fatal(err)
	}
	if d.Hash() == a.Hash() {
		t.Error("the Llama 3 pattern trained the same tokenizer as GPT-2's")
	}
}

// Training reports its progress: pieces up to the text's length, merges up
// to the tokens asked for.
func TestTrainProgress(t *testing.T) {
	last := map[string][2]int64{}
	_, err := Train([]byte(opticsSample), 300, TrainOptions{Progress: func(stage string, done, total int64) {
		if done > total || done < last[stage][0] {
			t.Errorf("%s: %d of %d after %d", stage, done, total, last[stage][0])
		}
		last[stage] = [2]int64{done, total}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := last["pieces"]; got != [2]int64{int64(len(opticsSample)), int64(len(opticsSample))} {
		t.Errorf("pieces progress ended at %v", got)
	}
	if got := last["merges"]; got != [2]int64{44, 44} {
		t.Errorf("merges progress ended at %v", got)
	}
}

func TestTrainErrors(t *testing.T) {
	for _, tt := range []struct {
		text  string
		vocab int
		opt   TrainOptions
		want  string
	}{
		{"abc", 255, TrainOptions{}, "vocabulary size 255 is outside 256.."},
		{"abc", MaxVocab + 1, TrainOptions{}, "outside"},
		{"", 300, TrainOptions{}, "no text"},
		{"abc", 300, TrainOptions{Pattern: 9}, "unknown pattern"},
	} {
		_, err := Train([]byte(tt.text), tt.vocab, tt.opt)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Train(%q, %d) error %v, want %q", tt.text, tt.vocab, err, tt.want)
		}
	}
}

// opticsSample is a paragraph of Newton's Opticks.
const opticsSample = `My Design in this Book is not to explain the Properties of Light by
Hypotheses, but to propose and prove them by Reason and Experiments: In
order to which I shall premise the following Definitions and Axioms.
`

// Counting pieces in parallel chunks gives the counts of one pass: a chunk's
// last piece is split with the text after it in view.
func TestCountPiecesMatchesOnePass(t *testing.T) {
	text := []byte(strings.Repeat("light\n\r\nprism  \ncolours\t\n\n1704 \n", 30000))
	for _, p := range []Pattern{GPT2, Llama3} {
		want := map[string]int64{}
		for _, piece := range p.Split(text) {
			want[string(piece)]++
		}
		got := countPieces(text, p, func(string, int64, int64) {})
		if !maps.Equal(got, want) {
			t.Errorf("%s: parallel counts differ from one pass", p)
		}
	}
}
