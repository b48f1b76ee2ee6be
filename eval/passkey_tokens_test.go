package eval

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/data/bpe"
)

// digitOracle reads the key from the prompt's statement and, after any
// tokens that decode to the key's first bytes, puts the token of the next
// key byte alone first (or, with wrong, the digit after it): its greedy
// decoding writes the key one byte a token, another split than the BPE's.
type digitOracle struct {
	tok   data.Tokenizer
	vocab int
	wrong bool
}

func (o digitOracle) answerLogits(prompt, answer []uint32) ([]float32, error) {
	text, err := o.tok.Decode(prompt)
	if err != nil {
		return nil, err
	}
	_, rest, _ := bytes.Cut(text, []byte("The pass key is "))
	key := rest[:data.PasskeyDigits]
	out := make([]float32, len(answer)*o.vocab)
	for k := range answer {
		done, err := o.tok.Decode(answer[:k])
		if err != nil {
			return nil, err
		}
		next := byte('0')
		if len(done) < len(key) {
			next = key[len(done)]
		}
		if o.wrong {
			next = '0' + (next-'0'+1)%10
		}
		out[k*o.vocab+int(next)] = 10
	}
	return out, nil
}

// With a BPE, an episode's distance is in tokens and Correct is the exact
// match of the decoded digits: a model that writes the key one digit a
// token, while the BPE encodes it in fewer tokens, is right although its
// first teacher-forced choice is not the key's first token; one that
// writes other digits is wrong.
func TestPasskeyDecodedDigitsWithBPE(t *testing.T) {
	text, err := data.DefaultCorpus()
	if err != nil {
		t.Fatal(err)
	}
	// Numbers in the training text make the BPE merge digits.
	train := append([]byte(nil), text[:300000]...)
	for i := range 20000 {
		train = fmt.Appendf(train, " %d", (i*7919)%100000)
	}
	tok, err := bpe.Train(train, 2048, bpe.TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids := tok.Encode(text[300000:400000])
	o := PasskeyOptions{Distances: []int{20, 100}, Depths: []float64{0, 1}, Episodes: 12, Seed: 4, Tokenizer: tok}
	o.defaults()
	v := tok.VocabSize()
	res, err := scorePasskey(digitOracle{tok: tok, vocab: v}, v, 128, ids, o)
	if err != nil {
		t.Fatal(err)
	}
	merged := 0
	d := uint64(20)
	gen, _ := data.NewTokenPasskey(ids, tok, o.Seed^d*0x9E3779B97F4A7C15)
	for k := range o.Episodes {
		e, err := gen.Episode(20, o.Depths[k%2])
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Answer) < data.PasskeyDigits {
			merged++
		}
	}
	if merged == 0 {
		t.Fatal("the BPE splits every key into single digits: the test needs keys of merged digits")
	}
	for _, p := range res.Points {
		if p.Correct != p.Episodes || p.DigitAccuracy == 1 {
			t.Errorf("digit oracle at %d tokens: %d of %d correct, token accuracy %v; want every one correct, not every token", p.Distance, p.Correct, p.Episodes, p.DigitAccuracy)
		}
	}
	res, err = scorePasskey(digitOracle{tok: tok, vocab: v, wrong: true}, v, 128, ids, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Points {
		if p.Correct != 0 {
			t.Errorf("wrong-digit oracle at %d tokens: %d correct", p.Distance, p.Correct)
		}
	}
	if _, err := Passkey(testModel(t, "alibi"), ids, PasskeyOptions{Distances: []int{5}, Tokenizer: tok}); err == nil {
		t.Error("a distance shorter than the question's tokens was accepted")
	}
}
