package eval

import (
	"fmt"
	"strconv"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/model"
)

// Trained is a trained model ready to evaluate: a checkpoint and what is
// needed to rebuild the validation split of the corpus it was trained on.
type Trained struct {
	Name       string // the run directory or checkpoint path, as given
	Checkpoint string // the file loaded
	Model      *model.Model
	Corpus     string  // training corpus spec, from the checkpoint
	ValFrac    float64 // validation fraction, from the checkpoint
}

// OpenRun loads the newest good checkpoint of a run directory; skipped
// receives a message for each newer checkpoint that could not be loaded.
func OpenRun(dir string, skipped func(error)) (*Trained, error) {
	c, path, err := model.LatestCheckpoint(dir, skipped)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	return newTrained(dir, path, c)
}

// OpenCheckpoint loads one checkpoint file.
func OpenCheckpoint(path string) (*Trained, error) {
	c, err := model.LoadCheckpoint(path)
	if err != nil {
		return nil, err
	}
	return newTrained(path, path, c)
}

func newTrained(name, path string, c *model.Checkpoint) (*Trained, error) {
	m, err := c.Model()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r := &Trained{Name: name, Checkpoint: path, Model: m, Corpus: c.Meta[model.MetaCorpus], ValFrac: 0.1}
	if v, ok := c.Meta[model.MetaValFrac]; ok {
		if r.ValFrac, err = strconv.ParseFloat(v, 64); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, model.MetaValFrac, err)
		}
	}
	return r, nil
}

// ValidationTokens returns the validation split of the run's own corpus, one
// byte per token. progress (which may be nil) sees the corpus being read.
func (r *Trained) ValidationTokens(progress data.Progress) ([]byte, error) {
	_, val, err := r.splits(progress)
	return val, err
}

// TrainingTokens returns the training split of the run's own corpus, one
// byte per token: the filler of its passkey episodes. progress (which may be
// nil) sees the corpus being read.
func (r *Trained) TrainingTokens(progress data.Progress) ([]byte, error) {
	train, _, err := r.splits(progress)
	return train, err
}

func (r *Trained) splits(progress data.Progress) (train, val []byte, err error) {
	if r.Corpus == "" {
		return nil, nil, fmt.Errorf("%s records no training corpus; pass a data file", r.Checkpoint)
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

// FileTokens reads a text file, directory or corpus spec as one token stream.
func FileTokens(path string) ([]byte, error) {
	c, err := data.LoadCorpus(path)
	if err != nil {
		return nil, err
	}
	if len(c.Bytes) < 2 {
		return nil, fmt.Errorf("data %s: %d bytes are too few to score", path, len(c.Bytes))
	}
	return c.Bytes, nil
}
