package eval

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/data/bpe"
	"github.com/alibi-go/alibi/model"
)

// For the byte tokenizer, a token is a byte: bits per byte is log2 of the
// perplexity, and the bytes scored are the tokens scored.
func TestBitsPerByteOfBytesIsLog2PPL(t *testing.T) {
	m := testModel(t, model.PosALiBi)
	toks := stream(70)
	for _, o := range []Options{{Len: 8}, {Len: 16, Stride: 5}, {Len: 8, Tokenizer: data.ByteTokenizer{}}} {
		r, err := Perplexity(m, toks, o)
		if err != nil {
			t.Fatal(err)
		}
		if want := math.Log2(r.PPL); math.Abs(r.BitsPerByte-want) > 1e-12*want {
			t.Errorf("%+v: %.15g bits per byte, want log2(ppl %.15g) = %.15g", o, r.BitsPerByte, r.PPL, want)
		}
		if r.Bytes != int64(r.Tokens) {
			t.Errorf("%+v: %d bytes for %d byte tokens", o, r.Bytes, r.Tokens)
		}
	}
}

// For a BPE, bits per byte is the total negative log-likelihood of the
// scored tokens over ln 2 times the bytes those tokens stand for, worked
// out here token by token from the model's logits and each token's bytes;
// it is not nats per token over ln 2.
func TestBitsPerByteOfBPE(t *testing.T) {
	text := []byte("the cat sat on the mat; the cat ate the rat. the mat is flat, the rat is fat. ")
	for range 3 {
		text = append(text, text...)
	}
	tok, err := bpe.Train(text, 300, bpe.TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New(model.Config{Vocab: tok.VocabSize(), DModel: 16, NLayers: 2, NHeads: 2, DFF: 32, Pos: model.PosALiBi, TrainLen: 8, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, name := range m.Weights.Names {
		for i, v := range m.Weights.Data(name) {
			m.Weights.Data(name)[i] = v + float32(rng.NormFloat64()*0.3)
		}
	}
	ids := tok.Encode(text[:200])
	if len(ids) >= 150 {
		t.Fatalf("200 bytes gave %d tokens: the BPE merged too little for this test", len(ids))
	}
	const L = 8
	r, err := Perplexity(m, ids, Options{Len: L, Tokenizer: tok})
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	var bytes int64
	for s := 0; s < len(ids)-1; s += L {
		e := min(s+L, len(ids)-1)
		lg := logitsOf(t, m, ints(ids[s:e]))
		v := tok.VocabSize()
		for p := 0; p < e-s; p++ {
			target := ids[s+p+1]
			total += nll(lg[p*v:(p+1)*v], int(target))
			b, ok := tok.Token(target)
			if !ok {
				t.Fatalf("id %d has no token", target)
			}
			bytes += int64(len(b))
		}
	}
	if bytes != int64(len(text[:200]))-int64(len(tokBytes(t, tok, ids[0]))) {
		t.Fatalf("the targets stand for %d bytes, want every byte but the first token's", bytes)
	}
	if r.Bytes != bytes {
		t.Errorf("Bytes = %d, want %d", r.Bytes, bytes)
	}
	want := total / (math.Ln2 * float64(bytes))
	if math.Abs(r.BitsPerByte-want) > 1e-5*want {
		t.Errorf("bits per byte %.9g, want %.9g", r.BitsPerByte, want)
	}
	if perToken := r.NatsPerToken / math.Ln2; math.Abs(r.BitsPerByte-perToken) < 0.1*perToken {
		t.Errorf("bits per byte %.6g is bits per token %.6g: a token here stands for %.2f bytes", r.BitsPerByte, perToken, float64(bytes)/float64(r.Tokens))
	}
}

func tokBytes(t *testing.T, tok data.Tokenizer, id uint32) []byte {
	t.Helper()
	b, ok := tok.Token(id)
	if !ok {
		t.Fatalf("id %d has no token", id)
	}
	return b
}
