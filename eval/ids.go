package eval

import (
	"fmt"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/model"
)

// checkTokens refuses what the model cannot have been trained on: a
// tokenizer (nil: the byte tokenizer) of another size than the model's
// vocabulary, and an id outside the vocabulary. The model does not record
// its tokenizer; eval.Trained's Tokenizer is the run's.
func checkTokens(m *model.Model, tokens []uint32, tok data.Tokenizer) error {
	v := m.Config.Vocab
	if tok == nil {
		if v != data.VocabSize {
			return fmt.Errorf("eval: the model has a vocabulary of %d tokens, and no tokenizer was given (nil is the byte tokenizer, of %d): give the run's (eval.Trained's Tokenizer)", v, data.VocabSize)
		}
	} else if n := tok.VocabSize(); n != v {
		return fmt.Errorf("eval: the model has a vocabulary of %d tokens but the tokenizer, %v, has %d: its ids are not the model's", v, tok, n)
	}
	for i, id := range tokens {
		if int64(id) >= int64(v) {
			return fmt.Errorf("eval: token %d at position %d is outside the model's vocabulary of %d: the ids were made by another tokenizer", id, i, v)
		}
	}
	return nil
}
