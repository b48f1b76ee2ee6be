package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alibi-go/alibi/layers/layerstest/longtest"
	"github.com/alibi-go/alibi/train"
)

// The config file says 20 steps; the runs below are started with --steps,
// --pos and --seed, which the resume command must not forget.
const resumeYAML = `name: resume
model: {vocab: 256, d_model: 32, n_layers: 2, n_heads: 4, d_ff: 64, pos: alibi, train_len: 32, seed: 5}
data: {corpus: CORPUS, val_frac: 0.1}
train: {batch: 8, steps: 20, lr: 3.0e-3, min_lr: 3.0e-4, warmup: 10, log_every: 1, eval_every: 60, eval_tokens: 512, checkpoint_every: 25, keep_checkpoints: 2}
`

var startFlags = []string{"--steps", "150", "--pos", "rope", "--seed", "9"}

func resumeSetup(t *testing.T) (root, cfgPath string) {
	t.Helper()
	root = t.TempDir()
	corpus := writeFile(t, root, "corpus.txt", strings.Repeat("It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife. ", 60))
	return root, writeFile(t, root, "resume.yaml", strings.Replace(resumeYAML, "CORPUS", corpus, 1))
}

// loggedStep is the last step metrics.jsonl has a complete line of (0 if none).
func loggedStep(dir string) int {
	b, _ := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
	lines := strings.Split(string(b), "\n")
	for i := len(lines) - 2; i >= 0; i-- { // the last element follows the last newline
		var rec struct{ Step int }
		if json.Unmarshal([]byte(lines[i]), &rec) == nil {
			return rec.Step
		}
	}
	return 0
}

// lockNamed reports whether a process has taken the run's lock and named
// itself in the lock file.
func lockNamed(dir string) bool {
	_, writing, _ := train.RunWriter(dir)
	b, _ := os.ReadFile(filepath.Join(dir, train.LockFile))
	return writing && bytes.HasPrefix(b, []byte("pid "))
}

// terminate starts the train command with args, sends it SIGTERM once ready
// holds, and returns the resume command it printed (its arguments after
// "go run ./cmd/train").
func terminate(t *testing.T, args []string, ready func() bool) []string {
	t.Helper()
	cmd := trainCmd(t, nil, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !ready(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("timed out waiting for the moment to stop the run; its output:\n%s", out.String())
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Fatalf("want exit %d after SIGTERM, got %v; output:\n%s", 128+int(syscall.SIGTERM), err, out.String())
	}
	_, printed, ok := strings.Cut(out.String(), "resume with: go run ./cmd/train ")
	if !ok {
		t.Fatalf("no resume command printed:\n%s", out.String())
	}
	line, _, _ := strings.Cut(printed, "\n")
	return strings.Fields(line)
}

// comparable is a summary without the fields that measure time and memory,
// and with the checkpoint's file name instead of its path.
func comparable(t *testing.T, dir string) train.Summary {
	t.Helper()
	s, err := train.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.WallSeconds, s.TokensPerSecond, s.PeakRSSBytes = 0, 0, 0
	s.Checkpoint = filepath.Base(s.Checkpoint)
	return *s
}

// A run started with --steps, --pos and --seed (none of them the config
// file's), stopped by SIGTERM at random moments (once before any step, once
// before its first checkpoint, once after) and each time continued with the
// exact command it printed, ends as the same run left alone: the same
// summary (its timings aside), bit-identical weights and optimizer state,
// and the same metrics. The printed command used to drop the flags: the
// resumed run then took the file's 20 steps and "finished" at the step it
// was stopped at, with exit 0.
func TestSigtermResumeWithPrintedCommand(t *testing.T) {
	longtest.Only(t)
	if testing.Short() {
		t.Skip("trains runs in subprocesses")
	}
	root, cfgPath := resumeSetup(t)
	whole, split := filepath.Join(root, "whole"), filepath.Join(root, "split")
	if err := trainCmd(t, nil, append([]string{"--config", cfgPath, "--out", whole}, startFlags...)...).Run(); err != nil {
		t.Fatalf("uninterrupted run: %v", err)
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	before := 1 + rng.IntN(20) // before the first checkpoint, at step 25
	after := 40 + rng.IntN(80) // after it
	t.Logf("SIGTERM at the start, after step %d, then after step %d (seed %d)", before, after, seed)

	// 1. Stopped as soon as it holds the run's lock, before any step.
	args := terminate(t, append([]string{"--config", cfgPath, "--out", split}, startFlags...), func() bool { return lockNamed(split) })
	if want := []string{"--out", split, "--resume"}; strings.Join(args, " ") != strings.Join(want, " ") {
		t.Fatalf("printed resume command %q, want %q", args, want)
	}
	// 2. and 3. Resumed with that command, stopped again at random steps.
	// Each resumed process is stopped once it holds the lock (so it has set
	// up its signal handling) and the run has logged the step.
	args = terminate(t, args, func() bool { return lockNamed(split) && loggedStep(split) >= before })
	args = terminate(t, args, func() bool { return lockNamed(split) && loggedStep(split) >= after })
	if err := trainCmd(t, nil, args...).Run(); err != nil {
		t.Fatalf("final segment: %v", err)
	}

	if got, want := comparable(t, split), comparable(t, whole); got != want {
		t.Fatalf("resumed run's summary:\n%+v\nuninterrupted:\n%+v", got, want)
	}
	if s := comparable(t, split); s.Steps != 150 || s.Pos != "rope" {
		t.Fatalf("the run did not keep its flags: %+v", s)
	}
	sameRunState(t, whole, split, "step-00000150.safetensors")
}

// Flags given on resume either match the run or are the documented change
// (--steps); a config file whose train.steps differs is not taken as one;
// a resume that asks for fewer steps than the run has done is refused. Each
// refusal is one line, exit 1, and leaves the run as it was.
func TestResumeFlags(t *testing.T) {
	root, cfgPath := resumeSetup(t)
	out := filepath.Join(root, "run")
	var o, e bytes.Buffer
	if code := command(append([]string{"--config", cfgPath, "--out", out}, "--steps", "30", "--pos", "rope", "--seed", "9"), &o, &e); code != 0 {
		t.Fatalf("first run: %s", e.String())
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"another seed", []string{"--seed", "10"}, "--seed 10: the run in " + out + " was started with seed 9"},
		{"another scheme", []string{"--pos", "alibi"}, "--pos alibi: the run in " + out + " trains rope"},
		{"fewer steps", []string{"--steps", "25"}, out + " has trained past the steps asked for: it is at step 30 of the 30 steps"},
		{"config file's steps", []string{"--config", cfgPath, "--pos", "rope", "--seed", "9"}, cfgPath + " says train.steps 20 but the run in " + out + " was started for 30 steps"},
		{"config file of another scheme", []string{"--config", cfgPath}, "model.pos is rope in the checkpoint but alibi now"},
		{"no run", []string{"--out", filepath.Join(root, "empty")}, "no run in " + filepath.Join(root, "empty")},
	}
	// A run stopped after its last step, before its summary: "fewer steps"
	// must not finish it at step 30 when 25 are asked for.
	if err := os.Remove(filepath.Join(out, "summary.json")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--resume"}, tc.args...)
			if !strings.Contains(strings.Join(args, " "), "--out") {
				args = append(args, "--out", out)
			}
			var o, e bytes.Buffer
			code := command(args, &o, &e)
			if code != 1 || !strings.Contains(e.String(), tc.want) || strings.Count(e.String(), "train: ") != 1 {
				t.Fatalf("exit %d, stderr %q; want exit 1 and one line with %q", code, e.String(), tc.want)
			}
			if _, err := os.Stat(filepath.Join(out, "summary.json")); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("a refused resume wrote a summary")
			}
		})
	}
	// The same seed and scheme as the run, and more steps: continued.
	e.Reset()
	if code := command([]string{"--out", out, "--resume", "--seed", "9", "--pos", "rope", "--steps", "34"}, &o, &e); code != 0 {
		t.Fatalf("continuing to 34 steps: exit %d, %s", code, e.String())
	}
	if s := comparable(t, out); s.Steps != 34 {
		t.Fatalf("continued to %d steps, want 34", s.Steps)
	}
}

// Two trainers started at the same instant on one fresh directory, with
// different seeds: exactly one trains; the other exits 1 at once with one
// line naming the directory and the holder's PID and host; the directory
// holds one run (config, checkpoints and summary of one seed) with no step
// logged twice. Without the lock both trained and exited 0, and the
// directory mixed one seed's config with the other's checkpoints.
func TestTwoTrainersOneDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("trains in subprocesses")
	}
	root, cfgPath := resumeSetup(t)
	out := filepath.Join(root, "run")
	var cmds [2]*exec.Cmd
	var outs [2]bytes.Buffer
	for i := range cmds {
		cmds[i] = trainCmd(t, nil, "--config", cfgPath, "--out", out, "--steps", "400", "--seed", strconv.Itoa(i+1))
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	winner := -1
	for i, c := range cmds {
		err := c.Wait()
		switch {
		case err == nil && winner == -1:
			winner = i
		case err == nil:
			t.Fatalf("both trainers exited 0:\n%s\n%s", outs[0].String(), outs[1].String())
		default:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("trainer %d: %v\n%s", i, err, outs[i].String())
			}
			host, _ := os.Hostname()
			msg := outs[i].String()
			want := fmt.Sprintf("train: %s is being written by another process (PID %d on host %s, since ", out, cmds[1-i].Process.Pid, host)
			if !strings.Contains(msg, want) || strings.Count(msg, "train: ") != 1 {
				t.Fatalf("the refused trainer said %q, want one line with %q", msg, want)
			}
		}
	}
	if winner == -1 {
		t.Fatalf("neither trainer trained:\n%s\n%s", outs[0].String(), outs[1].String())
	}
	seen := map[string]bool{}
	b, _ := os.ReadFile(filepath.Join(out, "metrics.jsonl"))
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct {
			Step int
			Loss *float64
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("%d/%v", rec.Step, rec.Loss != nil)
		if seen[key] {
			t.Fatalf("step %d logged twice", rec.Step)
		}
		seen[key] = true
	}
	cfg, err := train.RunConfig(out)
	if err != nil {
		t.Fatal(err)
	}
	yaml, _ := os.ReadFile(filepath.Join(out, "config.yaml"))
	if want := fmt.Sprintf("seed: %d\n", winner+1); cfg.Model.Seed != uint64(winner+1) || !strings.Contains(string(yaml), want) {
		t.Fatalf("the winner trained seed %d; checkpoint seed %d, config.yaml:\n%s", winner+1, cfg.Model.Seed, yaml)
	}
}
