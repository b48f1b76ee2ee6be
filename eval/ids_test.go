package eval

import (
	"strings"
	"testing"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/model"
)

// Ids the model cannot have been trained on are refused at the entry, in
// the user's terms: a model of a BPE's vocabulary scored without its
// tokenizer (which would count a byte a token), a tokenizer of another
// size, and ids past the vocabulary (which failed deep in the graph).
func TestTokensMustBeTheModels(t *testing.T) {
	bpeModel, err := model.New(model.Config{Vocab: 300, DModel: 16, NLayers: 1, NHeads: 2, DFF: 32, Pos: model.PosALiBi, TrainLen: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	byteModel := testModel(t, model.PosALiBi)
	ids := make([]uint32, 40)
	for i := range ids {
		ids[i] = uint32(i * 7 % 256)
	}
	bad := append([]uint32(nil), ids...)
	bad[5] = 322
	for _, c := range []struct {
		name string
		m    *model.Model
		ids  []uint32
		tok  data.Tokenizer
		want string
	}{
		{"BPE model, no tokenizer", bpeModel, ids, nil, "the model has a vocabulary of 300 tokens, and no tokenizer was given"},
		{"BPE model, the byte tokenizer", bpeModel, ids, data.ByteTokenizer{}, "the tokenizer, bytes (256 tokens), has 256"},
		{"byte model, a BPE's ids", byteModel, bad, nil, "token 322 at position 5 is outside the model's vocabulary of 256"},
	} {
		o := Options{Len: 8, Tokenizer: c.tok}
		_, err := Perplexity(c.m, c.ids, o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Perplexity: %v, want %q", c.name, err, c.want)
		}
		if _, err := AttentionStats(c.m, c.ids, o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: AttentionStats: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := Perplexity(byteModel, ids, Options{Len: 8}); err != nil {
		t.Errorf("a byte model's ids: %v", err)
	}
}
