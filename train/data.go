package train

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/model"
)

// Data is what a run trains and validates on: its corpus, its tokenizer,
// and the two splits as token ids.
type Data struct {
	Corpus    *data.Corpus
	Tokenizer data.Tokenizer
	// TrainText is the training split's text: the corpus's first bytes, as
	// data.Split cuts them.
	TrainText []byte
	// Train and Val are the ids of the training and validation splits,
	// each encoded on its own.
	Train, Val []uint32
}

// LoadData reads the configured corpus, splits its text into a training and
// a validation part (data.Split on the bytes, so every tokenizer splits the
// corpus at the same byte) and encodes each with the run's tokenizer. The
// tokenizer is the run directory dir's tokenizer.json when dir is not empty
// and holds one (a resumed run keeps its own), else the one data.tokenizer
// makes: a BPE of bpe:N is trained on the training split only. progress,
// which may be nil, sees a directory corpus being read; log, which may be
// nil, gets a line naming the corpus and one when a BPE is trained. A split shorter than one window of
// train_len (plus the one token it predicts last) is an error, and so is a
// tokenizer whose size is not model.vocab (when the config gives one).
func LoadData(cfg Config, progress data.Progress, dir string, log io.Writer) (*Data, error) {
	spec, err := data.ParseTokenizerSpec(cfg.Data.Tokenizer)
	if err != nil {
		return nil, fmt.Errorf("data.tokenizer: %w", err)
	}
	corpus, err := data.LoadCorpusProgress(cfg.Data.Corpus, progress)
	if err != nil {
		return nil, err
	}
	if log != nil {
		fmt.Fprintf(log, "corpus %s: %d bytes in %d files, SHA-256 %.12s…\n", corpus.Spec, len(corpus.Bytes), corpus.Files, corpus.SHA256)
	}
	trainText, valText, err := data.Split(corpus.Bytes, cfg.Data.ValFrac)
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", cfg.Data.Corpus, err)
	}
	tok, fromRun, err := runTokenizer(spec, cfg.Data.Tokenizer, trainText, dir, log)
	if err != nil {
		return nil, err
	}
	if spec.Kind == "bpe" && tok.VocabSize() < spec.Vocab && fromRun {
		// A run is never started with a BPE that stopped short of bpe:N.
		return nil, fmt.Errorf("%s is %v, not the tokenizer of %d tokens the run was trained with (data.tokenizer bpe:%d): it was replaced; put back the run's own",
			filepath.Join(dir, model.TokenizerFile), tok, spec.Vocab, spec.Vocab)
	}
	if spec.Kind == "bpe" && tok.VocabSize() < spec.Vocab {
		return nil, fmt.Errorf("data.tokenizer bpe:%d: the training split has no pair left to merge at %d tokens; use bpe:%d", spec.Vocab, tok.VocabSize(), tok.VocabSize())
	}
	if v := cfg.Model.Vocab; v != 0 && v != tok.VocabSize() {
		return nil, fmt.Errorf("model.vocab is %d but the tokenizer (data.tokenizer %s) has %d tokens: leave model.vocab out, it is the tokenizer's",
			v, cfg.Data.Tokenizer, tok.VocabSize())
	}
	d := &Data{Corpus: corpus, Tokenizer: tok, TrainText: trainText, Train: tok.Encode(trainText), Val: tok.Encode(valText)}
	if len(d.Train) < cfg.Model.TrainLen+1 {
		return nil, fmt.Errorf("corpus %s: its training split of %d tokens is shorter than one window of train_len %d + 1",
			cfg.Data.Corpus, len(d.Train), cfg.Model.TrainLen)
	}
	if len(d.Val) < cfg.Model.TrainLen+1 {
		return nil, fmt.Errorf("corpus %s: its validation split of %d tokens is shorter than one window of train_len %d + 1",
			cfg.Data.Corpus, len(d.Val), cfg.Model.TrainLen)
	}
	return d, nil
}

// runTokenizer is the run directory's tokenizer.json if dir holds one that
// spec accepts (fromRun), else the tokenizer spec makes.
func runTokenizer(spec data.TokenizerSpec, name string, trainText []byte, dir string, log io.Writer) (t data.Tokenizer, fromRun bool, err error) {
	if log == nil {
		log = io.Discard
	}
	if dir != "" {
		path := filepath.Join(dir, model.TokenizerFile)
		t, err = data.LoadTokenizer(path)
		switch {
		case err == nil && !spec.Accepts(t):
			return nil, false, fmt.Errorf("%s is %v, not the tokenizer data.tokenizer %s makes", path, t, name)
		case err == nil && spec.Kind == "file":
			if f, err := data.LoadTokenizer(spec.Path); err == nil && f.Hash() != t.Hash() {
				return nil, false, fmt.Errorf("%s (hash %.12s…) is not data.tokenizer %s (hash %.12s…)", path, t.Hash(), name, f.Hash())
			}
			return t, true, nil
		case err == nil:
			return t, true, nil
		case !errors.Is(err, os.ErrNotExist):
			return nil, false, fmt.Errorf("run %s: %w", dir, err)
		}
	}
	if spec.Kind == "bpe" {
		fmt.Fprintf(log, "tokenizer: training a byte-level BPE of %d tokens on the training split (%d bytes)...\n", spec.Vocab, len(trainText))
	}
	if t, err = spec.Make(trainText, nil); err != nil {
		return nil, false, fmt.Errorf("data.tokenizer: %w", err)
	}
	return t, false, nil
}

// saveTokenizer writes t to the run directory's tokenizer.json unless the
// file there already holds it.
func saveTokenizer(dir string, t data.Tokenizer) error {
	path := filepath.Join(dir, model.TokenizerFile)
	if old, err := data.LoadTokenizer(path); err == nil && old.Hash() == t.Hash() {
		return nil
	}
	if err := t.Save(path); err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	return nil
}
