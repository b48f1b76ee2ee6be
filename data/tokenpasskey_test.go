package data

import (
	"bytes"
	"testing"

	"github.com/alibi-go/alibi/data/bpe"
)

// With the byte tokenizer, a TokenPasskey's episodes are Passkey's with the
// same text and seed, one token a byte, request after request.
func TestTokenPasskeyOfBytesIsPasskey(t *testing.T) {
	text := opticksFiller(t)[:60000]
	byteGen, err := NewPasskey(text, 42)
	if err != nil {
		t.Fatal(err)
	}
	tokGen, err := NewTokenPasskey(ByteTokenizer{}.Encode(text), ByteTokenizer{}, 42)
	if err != nil {
		t.Fatal(err)
	}
	if tokGen.MinDistance() != MinPasskeyDistance {
		t.Fatalf("MinDistance %d, want %d", tokGen.MinDistance(), MinPasskeyDistance)
	}
	for i, c := range []struct {
		distance int
		depth    float64
	}{{38, 0}, {100, 0.5}, {1000, 1}, {37, 0}, {5000, 0.25}} {
		want, errB := byteGen.Episode(c.distance, c.depth)
		got, errT := tokGen.Episode(c.distance, c.depth)
		if (errB == nil) != (errT == nil) {
			t.Fatalf("request %d: errors %v and %v", i, errB, errT)
		}
		if errB != nil {
			continue
		}
		if !bytes.Equal(ids8(got.Prompt), want.Prompt) || !bytes.Equal(ids8(got.Answer), want.Answer) || !bytes.Equal(got.Key, want.Answer) ||
			got.StatementStart != want.StatementStart || got.StatementEnd != want.StatementEnd || got.AnswerStart != want.AnswerStart {
			t.Fatalf("request %d (distance %d, depth %g): the token episode differs from the byte episode", i, c.distance, c.depth)
		}
	}
}

// With a BPE, distances are in tokens, the pieces are the filler's ids and
// the tokenizer's encodings of the statement, the question and the key, and
// the key never occurs in the filler's bytes.
func TestTokenPasskeyOfBPE(t *testing.T) {
	text := opticksFiller(t)
	tok, err := bpe.Train(text[:200000], 1024, bpe.TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids := tok.Encode(text[200000:300000])
	gen, err := NewTokenPasskey(ids, tok, 7)
	if err != nil {
		t.Fatal(err)
	}
	question := tok.Encode([]byte(PasskeyQuestion))
	if gen.MinDistance() != len(question) || len(question) >= MinPasskeyDistance {
		t.Fatalf("MinDistance %d: the question is %d tokens", gen.MinDistance(), len(question))
	}
	for _, d := range []int{gen.MinDistance(), 64, 500, 3000} {
		for _, depth := range []float64{0, 0.5, 1} {
			e, err := gen.Episode(d, depth)
			if err != nil {
				t.Fatal(err)
			}
			after := d - len(question)
			before := int(depth*float64(after) + 0.5)
			stmt := tok.Encode(passkeyStatement(e.Key))
			if e.Distance() != d || e.StatementStart != before || e.StatementEnd-e.StatementStart != len(stmt) || e.AnswerStart != len(e.Prompt) ||
				len(e.Prompt) != before+len(stmt)+d {
				t.Fatalf("distance %d depth %g: statement %d..%d, answer at %d, prompt %d tokens", d, depth, e.StatementStart, e.StatementEnd, e.AnswerStart, len(e.Prompt))
			}
			if !equalIDs(e.Prompt[e.StatementStart:e.StatementEnd], stmt) || !equalIDs(e.Prompt[len(e.Prompt)-len(question):], question) ||
				!equalIDs(e.Answer, tok.Encode(e.Key)) {
				t.Fatalf("distance %d: the statement, question or answer is not the tokenizer's encoding", d)
			}
			if len(e.Key) != PasskeyDigits || e.Key[0] == '0' {
				t.Fatalf("key %q", e.Key)
			}
			pre, _ := tok.Decode(e.Prompt[:e.StatementStart])
			post, _ := tok.Decode(e.Prompt[e.StatementEnd : len(e.Prompt)-len(question)])
			if bytes.Contains(pre, e.Key) || bytes.Contains(post, e.Key) {
				t.Fatalf("key %s occurs in the filler", e.Key)
			}
			answer, _ := tok.Decode(e.Answer)
			if !e.Correct(append(answer, " and more"...)) || e.Correct(answer[:PasskeyDigits-1]) {
				t.Fatalf("Correct does not match the key's decoded digits")
			}
		}
	}
	if _, err := gen.Episode(gen.MinDistance()-1, 0); err == nil {
		t.Error("a distance shorter than the question was accepted")
	}
}

func ids8(ids []uint32) []byte {
	out := make([]byte, len(ids))
	for i, id := range ids {
		out[i] = byte(id)
	}
	return out
}

func equalIDs(a, b []uint32) bool {
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
