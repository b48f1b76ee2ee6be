package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/alibi-go/alibi/cmd/internal/cli"
	"github.com/alibi-go/alibi/layers"
)

const summary = `bench: measure this processor's speed row (FMA peak, the tiny and small training steps' fraction of it, and with --torch the ratios to PyTorch), print it, and with --write store it in testdata/results/speed.json and speed.md.

example: go run ./cmd/bench --torch --write          (from the project's root, nothing else running; several minutes)`

// defaultOut is where --write stores the row.
const defaultOut = "testdata/results/speed.json"

func main() {
	cli.TuneGC()
	layers.UseFastBLAS()
	os.Exit(command(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command's flags.
type options struct {
	rounds                  int
	peakTime                time.Duration
	tinyConfig, smallConfig string
	tinySteps, smallSteps   int
	torch                   bool
	side                    sideBySide
	tinyBF16Config          string
	out, note               string
}

func command(args []string, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "bench: "+format+"\n", a...)
		return 1
	}
	flags := cli.NewFlagSet("bench", summary, stderr)
	var o options
	flags.IntVar(&o.rounds, "rounds", 5, "rounds of peak, tiny steps and small steps; the row holds their medians")
	flags.DurationVar(&o.peakTime, "peak-time", 2*time.Second, "how long each round measures the FMA peak")
	flags.StringVar(&o.tinyConfig, "tiny-config", "configs/tiny.yaml", "the tiny step's config")
	flags.IntVar(&o.tinySteps, "tiny-steps", 40, "tiny steps a round")
	flags.StringVar(&o.smallConfig, "small-config", "configs/small.yaml", "the small step's config (its corpus, the Go source tree, is read once: about 90 MB)")
	flags.IntVar(&o.smallSteps, "small-steps", 5, "small steps a round")
	flags.BoolVar(&o.torch, "torch", false, "also train side by side with PyTorch, fp32 and bf16 autocast: the ratios of this project's tokens/s to PyTorch's (needs testdata/torch/setup.sh first)")
	flags.StringVar(&o.side.script, "torch-script", "testdata/torch/lm.py", "the PyTorch script --torch runs")
	flags.StringVar(&o.side.python, "python", "/usr/bin/python3", "the Python that runs --torch-script")
	flags.IntVar(&o.side.steps, "torch-steps", 150, "training steps of each side in each side-by-side round, at least 6 (both sides leave the first 5 out of tokens/s)")
	flags.IntVar(&o.side.rounds, "torch-rounds", 5, "side-by-side rounds for each precision; the ratio is their median")
	flags.StringVar(&o.tinyBF16Config, "tiny-bf16-config", "configs/tiny-bf16.yaml", "this project's config against PyTorch's bf16 autocast (PyTorch trains --tiny-config with --precision bf16)")
	write := flags.Bool("write", false, "store the row in "+defaultOut+" (replacing the row of the same processor) and regenerate the table in speed.md")
	flags.StringVar(&o.out, "out", "", "store the row in this speed.json instead (implies --write); its table goes to the .md file of the same name")
	flags.StringVar(&o.note, "note", "", "a note stored with the row and shown under the table")
	if code, ok := cli.Parse(flags, args); !ok {
		return code
	}
	if *write && o.out == "" {
		o.out = defaultOut
	}
	if err := o.validate(); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}
	o.side.log = stderr

	var store *pageStore
	if o.out != "" { // read both files before measuring: a bad one stops it at once
		var err error
		if store, err = openPageStore(o.out); err != nil {
			return fail("%v", err)
		}
	}
	row, err := measure(o, stderr)
	if err != nil {
		return fail("%v", err)
	}
	if err := printRow(stdout, row); err != nil {
		return fail("%v", err)
	}
	if store != nil {
		n, err := store.write(row)
		if err != nil {
			return fail("%v", err)
		}
		fmt.Fprintf(stderr, "bench: wrote %s (rows: %d) and %s\n", store.jsonPath, n, store.pagePath)
	}
	return 0
}

// validate checks the flags' values.
func (o options) validate() error {
	for _, c := range []struct {
		name     string
		v, least int
	}{{"rounds", o.rounds, 1}, {"tiny-steps", o.tinySteps, 1}, {"small-steps", o.smallSteps, 1}, {"torch-steps", o.side.steps, 6}, {"torch-rounds", o.side.rounds, 1}} {
		if c.v < c.least {
			return fmt.Errorf("--%s must be at least %d, got %d", c.name, c.least, c.v)
		}
	}
	if o.peakTime <= 0 {
		return fmt.Errorf("--peak-time must be positive, got %v", o.peakTime)
	}
	if o.out != "" && !strings.HasSuffix(o.out, ".json") {
		return fmt.Errorf("--out %s: want a .json file (its table goes to the .md file beside it)", o.out)
	}
	return nil
}
