// Command train trains a model from a YAML config and writes its run
// directory: config.yaml, checkpoints/, metrics.jsonl and summary.json.
//
//	go run ./cmd/train --config configs/tiny.yaml
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/alibi-go/alibi/cmd/internal/cli"
	"github.com/alibi-go/alibi/train"
)

const summary = `train: train a language model from a YAML config into a run directory.

example: go run ./cmd/train --config configs/tiny.yaml`

func main() {
	cli.TuneGC()
	os.Exit(command(os.Args[1:], os.Stdout, os.Stderr))
}

func command(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("train", summary, stderr)
	configPath := fs.String("config", "configs/tiny.yaml", "run config (YAML)")
	out := fs.String("out", "", "run directory (default: runs/<config name>, or runs/<config name>-<pos> when --pos changes the scheme)")
	pos := fs.String("pos", "", "position scheme, overriding the config: alibi, sinusoidal, none, rope, t5, kerple or fire")
	steps := fs.Int("steps", 0, "training steps, overriding the config (with --resume: continue a run to this many steps)")
	seed := fs.Int64("seed", -1, "random seed, overriding the config")
	resume := fs.Bool("resume", false, "continue from the newest good checkpoint in the run directory")
	if code, ok := cli.Parse(fs, args); !ok {
		return code
	}
	cfg, err := train.LoadConfig(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "train: %v\n", err)
		return 1
	}
	set := cli.Set(fs)
	if *pos != "" && *pos != cfg.Model.Pos {
		// Another scheme is another run: keep it out of the config's own
		// run directory.
		cfg.Name += "-" + *pos
		cfg.Model.Pos = *pos
	}
	if *out != "" {
		cfg.Out = *out
	}
	if set["steps"] {
		if *steps < 1 {
			fmt.Fprintf(stderr, "train: --steps must be positive, got %d\n", *steps)
			return 2
		}
		cfg.Train.Steps = *steps
	}
	if set["seed"] {
		if *seed < 0 {
			fmt.Fprintf(stderr, "train: --seed must not be negative, got %d\n", *seed)
			return 2
		}
		cfg.Model.Seed = uint64(*seed)
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "train: %v\n", err)
		return 1
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
			fmt.Fprintf(stderr, "\ntrain: %v received: finishing the current step and saving a checkpoint\n", got)
			cancel()
		case <-done:
		}
	}()
	terminal := cli.IsTerminal(stderr)
	fmt.Fprintf(stderr, "training %s (pos %s, %d steps) into %s\n", *configPath, cfg.Model.Pos, cfg.Train.Steps, cfg.RunDir())
	sum, err := train.Train(ctx, cfg, train.Options{Resume: *resume, Log: stderr, Terminal: terminal,
		CorpusProgress: cli.CorpusProgress(stderr, terminal)})
	close(done)
	switch {
	case errors.Is(err, train.ErrInterrupted):
		fmt.Fprintf(stderr, "train: %v\nresume with: go run ./cmd/train --config %s --out %s --resume\n", err, *configPath, cfg.RunDir())
		if got == syscall.SIGTERM {
			return 128 + int(syscall.SIGTERM)
		}
		return 128 + int(syscall.SIGINT)
	case errors.Is(err, train.ErrFinished):
		fmt.Fprintf(stderr, "train: %v\n", err)
		return 0
	case errors.Is(err, train.ErrRunExists):
		fmt.Fprintf(stderr, "train: %v; continue it with --resume, or train into another directory with --out DIR\n", err)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "train: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "done: %d steps, %d tokens in %.1fs (%.0f tokens/s); final train loss %.4f; validation loss %.4f, perplexity %.3f\n",
		sum.Steps, sum.Tokens, sum.WallSeconds, sum.TokensPerSecond, sum.FinalTrainLoss, sum.ValLoss, sum.ValPPL)
	fmt.Fprintf(stdout, "run directory: %s (checkpoint %s)\n", cfg.RunDir(), sum.Checkpoint)
	return 0
}
