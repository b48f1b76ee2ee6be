package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"

	"github.com/alibi-go/alibi/cmd/internal/cli"
	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/osutil"
	"github.com/alibi-go/alibi/train"
	"github.com/alibi-go/alibi/train/mpi"
)

const summary = `train: train a language model from a YAML config into a run directory.

example: go run ./cmd/train --config configs/tiny.yaml`

func main() {
	cli.TuneGC()
	layers.UseFastBLAS()
	os.Exit(command(os.Args[1:], os.Stdout, os.Stderr))
}

func command(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("train", summary, stderr)
	configPath := fs.String("config", "configs/tiny.yaml", "run config (YAML)")
	out := fs.String("out", "", "run directory (default: runs/<config name>, or runs/<config name>-<pos> when --pos changes the scheme)")
	pos := fs.String("pos", "", "position scheme, overriding the config: "+model.SchemesText("or"))
	steps := fs.Int("steps", 0, "training steps, overriding the config (with --resume: continue a run to this many steps)")
	seed := fs.Int64("seed", -1, "random seed, overriding the config")
	resume := fs.Bool("resume", false, "continue the run in the run directory from its newest good checkpoint, with the settings it was started with")
	noLock := fs.Bool("no-lock", false, "write the run without locking its directory (only for file systems without locks: then no other process may write it)")
	if code, ok := cli.Parse(fs, args); !ok {
		return code
	}
	set := cli.Set(fs)
	comm, finalize, err := world()
	if err != nil {
		if _, rank := mpi.Launched(); rank == 0 { // every rank has it: print it once
			fmt.Fprintf(stderr, "train: %v\n", err)
		}
		return 1
	}
	defer finalize()
	stdout, quiet, report := rankOutput(comm, stdout, stderr)
	code, err := 0, error(nil)
	switch {
	case set["steps"] && *steps < 1:
		code, err = 2, fmt.Errorf("--steps must be positive, got %d", *steps)
	case set["seed"] && *seed < 0:
		code, err = 2, fmt.Errorf("--seed must not be negative, got %d", *seed)
	}
	var cfg train.Config
	if err == nil {
		code = 1
		if cfg, err = runConfig(flagValues{config: *configPath, out: *out, pos: *pos, steps: *steps, seed: uint64(*seed), resume: *resume, set: set}); err == nil {
			err = cfg.Validate()
		}
		if err == nil && comm != nil {
			err = train.CheckRanks(cfg, comm.Size())
		}
	}
	if comm != nil { // every rank's verdict, so that none waits for another
		err = train.Agree(comm, err)
	}
	if err != nil {
		return report(code, err, "")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var got os.Signal
	done := make(chan struct{})
	go func() {
		select {
		case got = <-sigs:
			fmt.Fprintf(quiet, "\ntrain: %v received: finishing the current step and saving a checkpoint\n", got)
			cancel()
		case <-done:
		}
	}()
	terminal := cli.IsTerminal(stderr) && quiet == stderr
	n := 1
	if comm != nil {
		n = comm.Size()
	}
	ranksNote := ""
	if n > 1 {
		ranksNote = fmt.Sprintf(" on %d ranks", n)
	}
	if *resume {
		fmt.Fprintf(quiet, "resuming %s (pos %s, seed %d, %d steps)\n", cfg.RunDir(), cfg.Model.Label(), cfg.Model.Seed, cfg.Train.Steps)
	} else {
		fmt.Fprintf(quiet, "training %s (pos %s, seed %d, %d steps%s) into %s\n", *configPath, cfg.Model.Label(), cfg.Model.Seed, cfg.Train.Steps, ranksNote, cfg.RunDir())
	}
	sum, err := train.Train(ctx, cfg, train.Options{Resume: *resume, Log: quiet, Terminal: terminal,
		CorpusProgress: cli.CorpusProgress(quiet, terminal), Unlocked: *noLock, Comm: comm})
	close(done)
	if err == nil && quiet != stderr {
		return 0 // another rank: rank 0 reports the run
	}
	switch {
	case errors.Is(err, train.ErrInterrupted):
		code := 128 + int(syscall.SIGINT)
		if got == syscall.SIGTERM {
			code = 128 + int(syscall.SIGTERM)
		}
		return report(code, err, "\nresume with: "+resumeCommand(cfg, *noLock, n))
	case errors.Is(err, train.ErrFinished):
		return report(0, err, "")
	case errors.Is(err, train.ErrRunLocked):
		return report(1, err, "; nothing was changed")
	case errors.Is(err, osutil.ErrLockUnsupported):
		return report(1, err, "; if no other process can write this run, run again with --no-lock")
	case errors.Is(err, train.ErrRunExists):
		return report(1, err, "; continue it with --resume, or train into another directory with --out DIR")
	case err != nil:
		return report(1, err, "")
	}
	fmt.Fprintf(stdout, "done: %d steps, %d tokens in %.1fs (%.0f tokens/s); final train loss %.4f; validation loss %.4f, perplexity %.3f, %.4f bits per byte\n",
		sum.Steps, sum.Tokens, sum.WallSeconds, sum.TokensPerSecond, sum.FinalTrainLoss, sum.ValLoss, sum.ValPPL, sum.ValBitsPerByte)
	fmt.Fprintf(stdout, "run directory: %s (checkpoint %s)\n", cfg.RunDir(), sum.Checkpoint)
	return 0
}

// flagValues are the command's flags that say which run to train.
type flagValues struct {
	config, out, pos string
	steps            int
	seed             uint64
	resume           bool
	set              map[string]bool // the flags given
}

// runConfig is the config of the run to train. A fresh run reads the config
// file and applies the flags (--pos also renames the run). A resumed run
// takes the settings it was started with from its run directory (--out, or
// the directory that the config file and --pos name): its newest checkpoint
// holds them, the flags and config file it was started with included.
// --seed and --pos given on resume must match them, and --steps changes
// them. A --config given on resume must describe the same run
// (train.CheckResume), and may change train.steps only together with
// --steps; with --config, a directory without a run yet is started from the
// beginning.
func runConfig(f flagValues) (train.Config, error) {
	var cfg train.Config
	if !f.resume || f.set["config"] || f.out == "" {
		var err error
		if cfg, err = train.LoadConfig(f.config); err != nil {
			return cfg, err
		}
		if f.pos != "" && f.pos != cfg.Model.Pos {
			// Another scheme is another run: keep it out of the config's
			// own run directory.
			cfg.Name += "-" + f.pos
			cfg.Model.Pos = f.pos
		}
		if f.set["seed"] {
			cfg.Model.Seed = f.seed
		}
	}
	if f.out != "" {
		cfg.Out = f.out
	}
	if !f.resume {
		return withSteps(cfg, f), nil
	}
	run, err := train.RunConfig(cfg.RunDir())
	switch {
	case errors.Is(err, fs.ErrNotExist) && f.set["config"]:
		return withSteps(cfg, f), nil // nothing to resume yet: train.Train starts the run
	case errors.Is(err, fs.ErrNotExist):
		return cfg, fmt.Errorf("%w; start it without --resume", err)
	case err != nil:
		return cfg, err
	}
	if f.set["config"] {
		if err := train.CheckResume(run, cfg); err != nil {
			return cfg, fmt.Errorf("resume %s: %w; resume without --config to continue the run as it was started", run.Out, err)
		}
		if cfg.Train.Steps != run.Train.Steps && !f.set["steps"] {
			return cfg, fmt.Errorf("%s says train.steps %d but the run in %s was started for %d steps: resume without --config to continue it as started, or give --steps",
				f.config, cfg.Train.Steps, run.Out, run.Train.Steps)
		}
		return withSteps(cfg, f), nil
	}
	if f.pos != "" && f.pos != run.Model.Pos {
		return cfg, fmt.Errorf("--pos %s: the run in %s trains %s, and a resumed run keeps its settings", f.pos, run.Out, run.Model.Pos)
	}
	if f.set["seed"] && f.seed != run.Model.Seed {
		return cfg, fmt.Errorf("--seed %d: the run in %s was started with seed %d, and a resumed run keeps its settings", f.seed, run.Out, run.Model.Seed)
	}
	return withSteps(run, f), nil
}

// withSteps applies --steps, if given.
func withSteps(cfg train.Config, f flagValues) train.Config {
	if f.set["steps"] {
		cfg.Train.Steps = f.steps
	}
	return cfg
}

// resumeCommand is the command that continues the run cfg describes: its
// run directory holds the settings it was started with.
func resumeCommand(cfg train.Config, noLock bool, ranks int) string {
	cmd := "go run ./cmd/train --out " + cfg.RunDir() + " --resume"
	if ranks > 1 {
		cmd = fmt.Sprintf("mpirun -np %d go run -tags mpi ./cmd/train --out %s --resume", ranks, cfg.RunDir())
	}
	if noLock {
		cmd += " --no-lock"
	}
	return cmd
}
