// Package cli holds what the command-line front ends share: the garbage
// collector setting and flag parsing with a usage text that starts with what
// the command does.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/train"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// TuneGC makes the garbage collector run at 50% heap growth instead of Go's
// 100%, unless the GOGC environment variable says otherwise. The graphs
// allocate their buffers once and reuse them, so there is little garbage:
// collecting earlier costs no measurable speed and keeps peak memory lower.
func TuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
}

// NewFlagSet returns a flag set whose usage text prints summary (one line
// saying what the command does, then an example) before the flags.
func NewFlagSet(name, summary string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "%s\n\nflags:\n", summary)
		fs.PrintDefaults()
	}
	return fs
}

// Parse parses args. It returns ok = false with the exit code the command
// should end with: 0 after -h or --help (the usage went to stderr), 2 for a
// malformed command line (the flag package said why) or a stray argument.
func Parse(fs *flag.FlagSet, args []string) (code int, ok bool) {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0, false
	case err != nil:
		return 2, false
	case fs.NArg() > 0:
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q (flags start with --)\n", fs.Name(), fs.Arg(0))
		return 2, false
	}
	return 0, true
}

// Set reports which flags were given on the command line.
func Set(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// CorpusProgress returns a byte-count bar on w for reading a directory
// corpus when terminal is true, and nil (no display) otherwise.
func CorpusProgress(w io.Writer, terminal bool) data.Progress {
	if !terminal {
		return nil
	}
	var bar *progressbar.ProgressBar
	return func(read, total int64) {
		if bar == nil {
			bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("reading corpus"),
				progressbar.OptionShowBytes(true), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		}
		bar.Set64(read)
		if read == total {
			bar.Finish()
		}
	}
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// ParseBytes reads a memory size: a number of bytes, or one with a K, M, G
// or T suffix (powers of 1024; a trailing B or iB is allowed: 2G, 2GB, 2GiB).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "IB"), "B")
	shift := 0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			shift = 10
		case 'M':
			shift = 20
		case 'G':
			shift = 30
		case 'T':
			shift = 40
		}
		if shift > 0 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v > 0) || v*float64(int64(1)<<shift) > 1<<62 {
		return 0, fmt.Errorf("%q is not a memory size such as 2G or 512M", s)
	}
	return int64(v * float64(int64(1)<<shift)), nil
}

// OpenRun loads a run directory's model for the command name (eval.OpenRun),
// telling stderr about each newer checkpoint it had to skip. A directory
// without a trained run gives an error saying how to train one; a finished
// run whose final checkpoint cannot be read, one naming the newest good
// checkpoint and how to score it on purpose (--checkpoint); a run of a
// position scheme this program does not know, one saying how to evaluate
// it. A run that a process is still writing is read all the same (reading
// never waits for the writer): stderr is told, and its Weights say
// InProgress, so that its Label says "(in progress at step N of M)" and no
// report claims it finished.
func OpenRun(name, dir string, stderr io.Writer) (*eval.Trained, error) {
	r, err := eval.OpenRun(dir, func(err error) { fmt.Fprintf(stderr, "%s: skipping checkpoint: %v\n", name, err) })
	var fe *eval.FinalCheckpointError
	switch {
	case errors.As(err, &fe) && fe.Good != "":
		return nil, fmt.Errorf("%w; to use that one on purpose: --checkpoint %s", err, fe.Good)
	case err != nil:
		if _, statErr := os.Stat(dir); errors.Is(statErr, fs.ErrNotExist) || errors.Is(err, model.ErrNoCheckpoint) {
			return nil, fmt.Errorf("no trained run in %s; train one first: go run ./cmd/train --config configs/tiny.yaml --out %s", dir, dir)
		}
		return nil, unknownScheme(name, dir, err)
	}
	holder, writing, err := train.RunWriter(dir)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	if writing {
		fmt.Fprintf(stderr, "%s: %s %v (%s): reading its newest checkpoint, %s\n", name, dir, train.ErrRunLocked, holder, r.Weights.Checkpoint)
		r.Weights.InProgress = true
	}
	return r, nil
}

// OpenCheckpoint loads one checkpoint file for the command name
// (eval.OpenCheckpoint); a checkpoint of a position scheme this program
// does not know gives an error saying how to evaluate it.
func OpenCheckpoint(name, path string) (*eval.Trained, error) {
	r, err := eval.OpenCheckpoint(path)
	if err != nil {
		return nil, unknownScheme(name, path, err)
	}
	return r, nil
}

// unknownScheme rewrites err, from opening what (a run or a checkpoint)
// for the command name, when it says the checkpoint's position scheme is
// not registered: the scheme was added by the program that trained it, and
// only a program that registers it too can load it. Other errors are
// returned as they are.
func unknownScheme(name, what string, err error) error {
	var us *model.UnknownSchemeError
	if !errors.As(err, &us) {
		return err
	}
	return fmt.Errorf("%s is a model of position scheme %q, which cmd/%s does not know (a scheme a program added with position.Register); "+
		"evaluate it with a Go program that registers the scheme and calls eval.OpenRun (the README's \"Adding a position scheme\")", what, us.Scheme, name)
}
