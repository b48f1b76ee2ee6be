package bpe

import "testing"

// A trained tokenizer's merges make each of its tokens from the token's
// bytes, for either pattern; a merge list in which a pair of lower rank
// breaks a token up does not.
func TestMergesMakeEveryToken(t *testing.T) {
	for _, p := range []Pattern{GPT2, Llama3} {
		if tok := trained(t, opticsSample, 400, p); !tok.MergesMakeEveryToken() {
			t.Errorf("%v: a trained tokenizer's merges do not make its tokens", p)
		}
	}
	if !Bytes().MergesMakeEveryToken() {
		t.Errorf("the byte tokenizer")
	}
	// "abc" is made from "ab" and "c", but "bc" (rank 0) is merged first, so
	// the merges make "a" "bc" of its bytes.
	tokens := make([][]byte, 256, 259)
	inModel := make([]bool, 256, 259)
	for b := range tokens {
		tokens[b], inModel[b] = []byte{byte(b)}, true
	}
	tokens = append(tokens, []byte("bc"), []byte("ab"), []byte("abc"))
	inModel = append(inModel, true, true, true)
	merges := []Merge{{'b', 'c', 256}, {'a', 'b', 257}, {257, 'c', 258}}
	tok, err := newTokenizer(GPT2, tokens, inModel, merges, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tok.MergesMakeEveryToken() {
		t.Errorf("merges that break \"abc\" up make every token")
	}
	if got := tok.Encode([]byte("abc")); len(got) != 2 {
		t.Errorf("\"abc\" encodes to %v: the case is not the one described", got)
	}
}
