package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/alibi-go/alibi/cmd/internal/cli"
	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/data/bpe"
)

const summary = `tokenizer: train a byte-level BPE on a corpus into a tokenizer.json, encode a text to ids, decode ids to bytes.

example: go run ./cmd/tokenizer --train builtin:opticks --vocab 4096 --out tokenizer.json
         go run ./cmd/tokenizer --tokenizer tokenizer.json --encode text.txt > ids.txt
         go run ./cmd/tokenizer --tokenizer tokenizer.json --decode ids.txt`

func main() {
	cli.TuneGC()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// command is the command as its documentation test calls it, with the
// process's standard input.
func command(args []string, stdout, stderr io.Writer) int {
	return run(args, os.Stdin, stdout, stderr)
}

// options are the command's flags.
type options struct {
	train, encode, decode string
	info                  bool
	tokenizer             string
	vocab                 int
	valFrac               float64
	pattern               string
	out                   string
	force                 bool
	set                   map[string]bool
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := cli.NewFlagSet("tokenizer", summary, stderr)
	var o options
	flags.StringVar(&o.train, "train", "", "train a BPE on this corpus: a file, a directory, goroot:src or builtin:opticks (its training split only)")
	flags.StringVar(&o.encode, "encode", "", "encode this file (- for standard input) to ids, written as decimal numbers")
	flags.StringVar(&o.decode, "decode", "", "decode the ids in this file (- for standard input) to bytes")
	flags.BoolVar(&o.info, "info", false, "describe the tokenizer: kind, tokens, merges, pattern, hash")
	flags.StringVar(&o.tokenizer, "tokenizer", "tokenizer.json", "the tokenizer of --encode, --decode and --info: a tokenizer.json, or bytes")
	flags.IntVar(&o.vocab, "vocab", 4096, "--train: the vocabulary size, at least 256")
	flags.Float64Var(&o.valFrac, "val-frac", 0.1, "--train: the corpus's validation fraction, left out of training as cmd/train leaves it out")
	flags.StringVar(&o.pattern, "pattern", "gpt2", "--train: the pre-tokenizer pattern, gpt2 or llama3")
	flags.StringVar(&o.out, "out", "", "--train: the tokenizer.json to write (default tokenizer.json); --encode, --decode: the file to write (default standard output)")
	flags.BoolVar(&o.force, "force", false, "replace an existing --out file")
	if code, ok := cli.Parse(flags, args); !ok {
		return code
	}
	o.set = cli.Set(flags)
	if err := o.check(); err != nil {
		fmt.Fprintf(stderr, "tokenizer: %v\n", err)
		return 2
	}
	var err error
	switch {
	case o.set["train"]:
		err = trainCommand(o, stderr)
	case o.set["encode"]:
		err = encodeCommand(o, stdin, stdout, stderr)
	case o.set["decode"]:
		err = decodeCommand(o, stdin, stdout)
	default:
		err = infoCommand(o, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tokenizer: %v\n", err)
		return 1
	}
	return 0
}

// check refuses flags that do not go together.
func (o *options) check() error {
	modes := 0
	for _, m := range []string{"train", "encode", "decode", "info"} {
		if o.set[m] {
			modes++
		}
	}
	switch {
	case modes != 1:
		return errors.New("give exactly one of --train CORPUS, --encode FILE, --decode FILE and --info (--help lists the flags)")
	case o.set["train"] && o.set["tokenizer"]:
		return errors.New("--tokenizer is for --encode, --decode and --info; --train writes --out")
	case !o.set["train"]:
		for _, f := range []string{"vocab", "val-frac", "pattern"} {
			if o.set[f] {
				return fmt.Errorf("--%s is for --train", f)
			}
		}
	}
	if o.set["info"] && o.set["out"] {
		return errors.New("--info writes to standard output; --out is for --train, --encode and --decode")
	}
	if o.set["force"] && !o.set["out"] && !o.set["train"] {
		return errors.New("--force needs --out")
	}
	return nil
}

// loadTokenizer loads --tokenizer.
func loadTokenizer(o options) (data.Tokenizer, error) {
	return data.LoadTokenizer(o.tokenizer)
}

// infoCommand describes --tokenizer.
func infoCommand(o options, stdout io.Writer) error {
	tok, err := loadTokenizer(o)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "kind:    %s\ntokens:  %d\n", tok.Kind(), tok.VocabSize())
	if b, ok := tok.(*bpe.Tokenizer); ok {
		fmt.Fprintf(stdout, "merges:  %d\npattern: %s\nadded:   %d\n", len(b.Merges()), b.Pattern(), len(b.AddedTokens()))
	}
	fmt.Fprintf(stdout, "hash:    %s\n", tok.Hash())
	return nil
}
