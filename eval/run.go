package eval

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/model"
)

// Trained is a trained model ready to evaluate: a checkpoint and what is
// needed to rebuild the validation split of the corpus it was trained on.
type Trained struct {
	Name string // the run directory or checkpoint path, as given
	// Weights say which weights these are: the checkpoint file loaded, its
	// step, its run's steps and whether the run finished.
	Weights Weights
	Model   *model.Model
	Corpus  string  // training corpus spec, from the checkpoint
	ValFrac float64 // validation fraction, from the checkpoint
	// Tokenizer is the run's tokenizer: the byte tokenizer for a checkpoint
	// that names none (model.MetaTokenizer) or names the byte tokenizer's
	// hash, else the run directory's tokenizer.json (model.TokenizerFile),
	// whose hash must be the one the checkpoint names. Nil when the
	// checkpoint names a tokenizer that was not found: UseTokenizer gives it.
	Tokenizer data.Tokenizer
	// TokenizerHash is the hash the checkpoint names (the byte tokenizer's
	// for a checkpoint that names none).
	TokenizerHash string
	// Meta is the checkpoint's metadata (model.Checkpoint Meta): the run's
	// config, its corpus and the corpus's fingerprint, the training state.
	Meta map[string]string
}

// Label is Name, followed by the weights' Status when they are not the
// final model of a finished run: "runs/tiny (unfinished at step 755 of
// 800)". Reports name runs by it, so that none passes for a finished one.
func (r *Trained) Label() string {
	if s := r.Weights.Status(); s != "" && !r.Weights.Final() {
		return fmt.Sprintf("%s (%s)", r.Name, s)
	}
	return r.Name
}

// OpenRun loads a run directory's model. A run that finished (it has a
// summary, and no checkpoint newer than the step it names) is its final
// checkpoint or nothing: if that file cannot be loaded, the error is a
// *FinalCheckpointError naming the newest one that can, which
// OpenCheckpoint opens on purpose. A run that has not finished is its
// newest checkpoint that loads; skipped receives a message for each newer
// one that could not be. Either way Weights says which checkpoint it is,
// and Label says so unless it is a finished run's final one. A checkpoint
// of a position scheme this program has not registered gives an error
// wrapping a *model.UnknownSchemeError: register the scheme
// (position.Register) before calling OpenRun.
func OpenRun(dir string, skipped func(error)) (*Trained, error) {
	s, err := readRunState(dir)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	if !s.finished {
		c, path, err := model.LatestCheckpoint(dir, skipped)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", dir, err)
		}
		return newTrained(dir, c, weightsOf(c, path, s))
	}
	c, err := model.LoadCheckpoint(s.finalPath)
	if err == nil {
		return newTrained(dir, c, weightsOf(c, s.finalPath, s))
	}
	if errors.As(err, new(*model.UnknownSchemeError)) {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	fe := &FinalCheckpointError{Run: dir, FinalStep: s.finalStep, Final: s.finalPath, Err: err}
	for i := len(s.checkpoints) - 1; i >= 0 && fe.Good == ""; i-- {
		if p := s.checkpoints[i]; p != s.finalPath {
			if c, err := model.LoadCheckpoint(p); err == nil {
				fe.Good = p
				if fe.GoodStep, _, _ = c.TrainingStep(); fe.GoodStep == 0 {
					fe.GoodStep, _ = model.CheckpointStep(p)
				}
			}
		}
	}
	return nil, fe
}

// OpenCheckpoint loads one checkpoint file. Its Weights say how far its run
// had got, and whether the run finished when the file is in a run
// directory's checkpoints folder.
func OpenCheckpoint(path string) (*Trained, error) {
	c, err := model.LoadCheckpoint(path)
	if err != nil {
		return nil, err
	}
	var s runState
	if dir := runOf(path); dir != "" {
		if s, err = readRunState(dir); err != nil {
			return nil, fmt.Errorf("run %s: %w", dir, err)
		}
	}
	return newTrained(path, c, weightsOf(c, path, s))
}

func newTrained(name string, c *model.Checkpoint, w Weights) (*Trained, error) {
	path := w.Checkpoint
	m, err := c.Model()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r := &Trained{Name: name, Weights: w, Model: m, Corpus: c.Meta[model.MetaCorpus], ValFrac: 0.1, Meta: c.Meta}
	if err := r.findTokenizer(c); err != nil {
		return nil, err
	}
	if v, ok := c.Meta[model.MetaValFrac]; ok {
		if r.ValFrac, err = strconv.ParseFloat(v, 64); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, model.MetaValFrac, err)
		}
	}
	return r, nil
}

// findTokenizer sets Tokenizer and TokenizerHash from the checkpoint c: the
// byte tokenizer for a byte run, else the tokenizer.json of the run
// directory the checkpoint is in, refused if its hash differs.
func (r *Trained) findTokenizer(c *model.Checkpoint) error {
	bytesHash := data.ByteTokenizer{}.Hash()
	r.TokenizerHash = c.Meta[model.MetaTokenizer]
	if r.TokenizerHash == "" || r.TokenizerHash == bytesHash {
		r.TokenizerHash, r.Tokenizer = bytesHash, data.ByteTokenizer{}
		return r.checkVocab()
	}
	dir := runOf(r.Weights.Checkpoint)
	if dir == "" {
		return nil
	}
	path := filepath.Join(dir, model.TokenizerFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	t, err := data.LoadTokenizer(path)
	if err != nil {
		return fmt.Errorf("run %s: %w", dir, err)
	}
	return r.UseTokenizer(t, path)
}

// UseTokenizer makes t, read from source (a path, for messages), the
// tokenizer of r, after checking that its hash is the one the checkpoint
// names: a checkpoint scored with the ids of another tokenizer is refused.
func (r *Trained) UseTokenizer(t data.Tokenizer, source string) error {
	if h := t.Hash(); h != r.TokenizerHash {
		return fmt.Errorf("%s was trained with tokenizer %.12s…, but %s is %v with hash %.12s…: its ids are not the ones the model learned",
			r.Weights.Checkpoint, r.TokenizerHash, source, t, h)
	}
	r.Tokenizer = t
	return r.checkVocab()
}

// checkVocab refuses a tokenizer of another size than the model's vocabulary.
func (r *Trained) checkVocab() error {
	if v := r.Tokenizer.VocabSize(); v != r.Model.Config.Vocab {
		return fmt.Errorf("%s: its vocabulary has %d tokens but its tokenizer, %v, has %d", r.Weights.Checkpoint, r.Model.Config.Vocab, r.Tokenizer, v)
	}
	return nil
}

// RunTokenizer returns Tokenizer, or an error saying that the checkpoint's
// tokenizer was not found and how to give it.
func (r *Trained) RunTokenizer() (data.Tokenizer, error) {
	if r.Tokenizer == nil {
		return nil, fmt.Errorf("%s was trained with tokenizer %.12s…, and no %s beside its run holds it: give the run's tokenizer.json with --tokenizer",
			r.Weights.Checkpoint, r.TokenizerHash, model.TokenizerFile)
	}
	return r.Tokenizer, nil
}

// ValidationTokens returns the validation split of the run's own corpus,
// encoded by the run's tokenizer. progress (which may be nil) sees the corpus being read.
func (r *Trained) ValidationTokens(progress data.Progress) ([]uint32, error) {
	t, err := r.RunTokenizer()
	if err != nil {
		return nil, err
	}
	_, val, err := r.splits(progress)
	if err != nil {
		return nil, err
	}
	return t.Encode(val), nil
}

// TrainingTokens returns the training split of the run's own corpus,
// encoded by the run's tokenizer. progress (which may be nil) sees the
// corpus being read.
func (r *Trained) TrainingTokens(progress data.Progress) ([]uint32, error) {
	t, err := r.RunTokenizer()
	if err != nil {
		return nil, err
	}
	train, _, err := r.splits(progress)
	if err != nil {
		return nil, err
	}
	return t.Encode(train), nil
}

func (r *Trained) splits(progress data.Progress) (train, val []byte, err error) {
	if r.Corpus == "" {
		return nil, nil, fmt.Errorf("%s records no training corpus; pass a data file", r.Weights.Checkpoint)
	}
	c, err := data.LoadCorpusProgress(r.Corpus, progress)
	if err != nil {
		return nil, nil, err
	}
	if train, val, err = data.Split(c.Bytes, r.ValFrac); err != nil {
		return nil, nil, fmt.Errorf("corpus %s: %w", r.Corpus, err)
	}
	return train, val, nil
}

// FileTokens reads a text file, directory or corpus spec as one token
// stream, encoded by t.
func FileTokens(path string, t data.Tokenizer) ([]uint32, error) {
	c, err := data.LoadCorpus(path)
	if err != nil {
		return nil, err
	}
	ids := t.Encode(c.Bytes)
	if len(ids) < 2 {
		return nil, fmt.Errorf("data %s: %d tokens are too few to score", path, len(ids))
	}
	return ids, nil
}
