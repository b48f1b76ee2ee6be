// Package cli holds what the command-line front ends share: the garbage
// collector setting and flag parsing with a usage text that starts with what
// the command does.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
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
