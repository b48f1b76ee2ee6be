package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/train"
)

// measure measures the row: with --torch the side-by-side rounds first
// (so that a missing PyTorch stops it at once), then the rounds of peak and
// steps.
func measure(o options, stderr io.Writer) (Row, error) {
	row := Row{Processor: readProcessor(), Kernels: layers.Kernels(layers.FP32), MeasuredBy: measuredByBench,
		GoVersion: runtime.Version(), Rounds: o.rounds, PeakSeconds: o.peakTime.Seconds(), Note: o.note}
	for _, path := range []string{o.tinyConfig, o.smallConfig, o.tinyBF16Config} { // a wrong path stops it before anything is measured
		cfg, err := train.LoadConfig(path)
		if err != nil {
			return row, configError(path, err)
		}
		if err := cfg.CheckTokenizerFile(); err != nil {
			return row, fmt.Errorf("config %s: %w", path, err)
		}
	}
	fmt.Fprintf(stderr, "bench: %s, kernels %s\n", row.Processor, row.Kernels)
	if o.torch {
		if err := o.side.check(); err != nil {
			return row, err
		}
		var err error
		if row.TorchFP32, err = o.side.compare("fp32", o.tinyConfig, []string{"--config", o.tinyConfig}); err != nil {
			return row, err
		}
		if row.TorchBF16, err = o.side.compare("bf16", o.tinyBF16Config, []string{"--config", o.tinyConfig, "--precision", "bf16"}); err != nil {
			return row, err
		}
	}
	row.BF16Kernels = layers.Kernels(layers.BF16) // after the bf16 runs, which time the bf16 kernels anyway
	var sets []train.StepSet
	defer func() {
		for _, s := range sets {
			s.Bench.Close()
		}
	}()
	for _, c := range []struct {
		path  string
		steps int
	}{{o.tinyConfig, o.tinySteps}, {o.smallConfig, o.smallSteps}, {o.tinyBF16Config, o.tinySteps}} {
		fmt.Fprintf(stderr, "bench: setting up %s (reading its corpus, one step)\n", c.path)
		sb, err := train.LoadStepBench(c.path, "")
		if err != nil {
			return row, configError(c.path, err)
		}
		sets = append(sets, train.StepSet{Name: sb.Config().Name, Bench: sb, Steps: c.steps})
	}
	rounds, err := train.StepRounds(sets, o.rounds, o.peakTime, func(i int, r train.Round) {
		fmt.Fprintf(stderr, "bench: %s\n", train.FormatRound(sets, i, o.rounds, r))
	})
	if err != nil {
		return row, err
	}
	sum := train.SummarizeRounds(sets, rounds)
	row.PeakGFLOPs, row.AMXPeakGFLOPs = round(sum.Peak, 1), round(sum.AMXPeak, 1)
	row.TinyBF16 = &Step{}
	steps := []*Step{&row.Tiny, &row.Small, row.TinyBF16}
	for k, s := range sum.Sets {
		*steps[k] = Step{Config: s.Name, StepsPerRound: sets[k].Steps, PercentOfPeak: round(100*s.Fraction, 2),
			GFLOPs: round(s.GFLOPs, 1), TokensPerSecond: round(s.TokensPerSecond, 0)}
	}
	row.TinyBF16.PercentOfAMXPeak = round(100*sum.Sets[2].AMXFraction, 2) // the fp32 steps' peak is the FMA one
	row.Date = time.Now().UTC().Format("2006-01-02")
	for _, x := range []float64{row.PeakGFLOPs, row.Tiny.PercentOfPeak, row.Small.PercentOfPeak, row.TinyBF16.PercentOfPeak} {
		if !(x > 0) || math.IsInf(x, 0) {
			return row, fmt.Errorf("a figure came out %v: the clock or the peak measurement failed", x)
		}
	}
	return row, nil
}

// bf16Step is the bf16 step's line of printRow.
func bf16Step(r Row) string {
	if r.TinyBF16 == nil {
		return "not measured"
	}
	s := *r.TinyBF16
	line := fmt.Sprintf("%.1f%% of the FMA peak, %.1f GFLOP/s, %s tokens/s (%s, %s a round)", s.PercentOfPeak, s.GFLOPs, count(s.TokensPerSecond), s.Config, plural(s.StepsPerRound, "step"))
	if s.PercentOfAMXPeak > 0 {
		line += fmt.Sprintf("; %.1f%% of the AMX peak", s.PercentOfAMXPeak)
	}
	return line
}

// amxPeak is the AMX peak's line of printRow.
func amxPeak(r Row) string {
	if r.AMXPeakGFLOPs == 0 {
		return "none (bf16 products do not run on AMX tiles here)"
	}
	return fmt.Sprintf("%.1f GFLOP/s (bfloat16 on the tiles, the median of %s)", r.AMXPeakGFLOPs, plural(r.Rounds, "round"))
}

// round rounds x to digits decimals: the figures are stored as precise
// as they are meaningful.
func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// plural is n and the word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// configError is err, from loading the config at path, with a hint when
// that file does not exist (not a file it names, such as its tokenizer).
func configError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path && errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w (run cmd/bench from the project's root, or give the config's path)", err)
	}
	return err
}

// printRow prints row as a table of two columns.
func printRow(w io.Writer, r Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	step := func(s Step) string {
		return fmt.Sprintf("%.1f%% of peak, %.1f GFLOP/s, %s tokens/s (%s, %s a round)", s.PercentOfPeak, s.GFLOPs, count(s.TokensPerSecond), s.Config, plural(s.StepsPerRound, "step"))
	}
	versus := func(v *Versus) string {
		if v == nil {
			return "not measured (--torch)"
		}
		return fmt.Sprintf("%.2fx (the median of %s of %d steps; PyTorch %s, %d threads, OpenBLAS core %s)", v.Ratio, plural(v.Rounds, "round"), v.Steps, v.TorchVersion, v.Threads, v.BLASCore)
	}
	lines := [][2]string{
		{"processor", r.Processor.String()},
		{"avx512_bf16 shown", fmt.Sprint(r.Processor.AVX512BF16)},
		{"kernels", r.BF16Kernels},
		{"FMA peak", fmt.Sprintf("%.1f GFLOP/s (the median of %s of %v)", r.PeakGFLOPs, plural(r.Rounds, "round"), time.Duration(r.PeakSeconds*float64(time.Second)))},
		{"tiny step", step(r.Tiny)},
		{"small step", step(r.Small)},
		{"tiny bf16 step", bf16Step(r)},
		{"AMX peak", amxPeak(r)},
		{"vs PyTorch fp32", versus(r.TorchFP32)},
		{"vs PyTorch bf16 autocast", versus(r.TorchBF16)},
		{"date (UTC)", r.Date},
	}
	for _, l := range lines {
		fmt.Fprintf(tw, "%s\t%s\n", l[0], l[1])
	}
	return tw.Flush()
}
