package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/alibi-go/alibi/cmd/internal/cli"
	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/data/bpe"
	"github.com/alibi-go/alibi/model/osutil"
	"github.com/schollz/progressbar/v3"
)

// trainCommand trains a BPE on the training split of --train and writes
// it to --out.
func trainCommand(o options, stderr io.Writer) error {
	out := o.out
	if out == "" {
		out = "tokenizer.json"
	}
	var pattern bpe.Pattern
	switch o.pattern {
	case "gpt2":
		pattern = bpe.GPT2
	case "llama3":
		pattern = bpe.Llama3
	default:
		return fmt.Errorf("--pattern %q: want gpt2 or llama3", o.pattern)
	}
	if o.vocab < bpe.MinVocab || o.vocab > bpe.MaxVocab {
		return fmt.Errorf("--vocab %d: want %d..%d", o.vocab, bpe.MinVocab, bpe.MaxVocab)
	}
	if !(o.valFrac >= 0 && o.valFrac < 1) {
		return fmt.Errorf("--val-frac %v: want a fraction in [0, 1)", o.valFrac)
	}
	if err := checkOut(out, o.force); err != nil {
		return err
	}
	terminal := cli.IsTerminal(stderr)
	start := time.Now()
	corpus, err := data.LoadCorpusProgress(o.train, cli.CorpusProgress(stderr, terminal))
	if err != nil {
		return err
	}
	text, _, err := data.Split(corpus.Bytes, o.valFrac)
	if err != nil {
		return fmt.Errorf("corpus %s: %w", o.train, err)
	}
	files := ""
	if corpus.Files > 1 {
		files = fmt.Sprintf(" in %d files", corpus.Files)
	}
	fmt.Fprintf(stderr, "tokenizer: corpus %s: %s%s, read in %.1fs; training on its first %s (--val-frac %g)\n",
		o.train, megabytes(len(corpus.Bytes)), files, time.Since(start).Seconds(), megabytes(len(text)), o.valFrac)
	start = time.Now()
	tok, err := bpe.Train(text, o.vocab, bpe.TrainOptions{Pattern: pattern, Progress: trainProgress(stderr, terminal)})
	if err != nil {
		return err
	}
	if tok.VocabSize() < o.vocab {
		fmt.Fprintf(stderr, "tokenizer: no adjacent pair left to merge at %d tokens, fewer than --vocab %d\n", tok.VocabSize(), o.vocab)
	}
	if err := tok.Save(out); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "tokenizer: wrote %s: %v, hash %s; trained in %.1fs\n", out, tok, tok.Hash(), time.Since(start).Seconds())
	return nil
}

// checkOut refuses to replace an existing file without --force, and a file
// in a directory that does not exist, before any work.
func checkOut(path string, force bool) error {
	if info, err := os.Stat(path); err == nil {
		if info.IsDir() {
			return fmt.Errorf("--out %s is a directory", path)
		}
		if !force {
			return fmt.Errorf("--out %s exists; give --force to replace it", path)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if info, err := os.Stat(filepath.Dir(path)); err != nil || !info.IsDir() {
		return fmt.Errorf("--out %s: the directory %s does not exist", path, filepath.Dir(path))
	}
	if err := osutil.CheckOutput(path); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}

// trainProgress reports training's stages: a bar each on a terminal, and a
// line as each stage ends.
func trainProgress(w io.Writer, terminal bool) func(stage string, done, total int64) {
	var bar *progressbar.ProgressBar
	current := ""
	start := time.Now()
	names := map[string]string{"pieces": "splitting into pieces", "merges": "merging pairs"}
	return func(stage string, done, total int64) {
		if stage != current {
			current, start, bar = stage, time.Now(), nil
			if terminal {
				opts := []progressbar.Option{progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(names[stage]),
					progressbar.OptionThrottle(100 * time.Millisecond), progressbar.OptionClearOnFinish()}
				if stage == "pieces" {
					opts = append(opts, progressbar.OptionShowBytes(true))
				}
				bar = progressbar.NewOptions64(total, opts...)
			}
		}
		if bar != nil {
			bar.Set64(done)
		}
		if done == total {
			if bar != nil {
				bar.Finish()
			}
			switch stage {
			case "pieces":
				fmt.Fprintf(w, "tokenizer: split %s into pieces and counted them in %.1fs\n", megabytes(int(total)), time.Since(start).Seconds())
			case "merges":
				fmt.Fprintf(w, "tokenizer: merged pairs into %d new tokens in %.1fs\n", total, time.Since(start).Seconds())
			}
		}
	}
}

// megabytes writes a byte count in MB (10^6 bytes), or kB below one MB.
func megabytes(n int) string {
	if n < 1e6 {
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
