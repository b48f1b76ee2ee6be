package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/layers/layerstest/longtest"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/safetensors"
)

// TestMain lets the test binary act as the train command in a subprocess,
// and removes the fault-injection build of the command after the tests.
func TestMain(m *testing.M) {
	layers.UseFastBLAS() // as main does
	if os.Getenv("ALIBI_TRAIN_MAIN") == "1" {
		os.Exit(command(os.Args[1:], os.Stdout, os.Stderr))
	}
	code := m.Run()
	if faultBuild.dir != "" {
		os.RemoveAll(faultBuild.dir)
	}
	os.Exit(code)
}

// faultEnv is the environment variable through which a fault-injection
// build of the command (see faultTrainCmd) injects a fault:
// "kill-in-checkpoint:N" or "nan-loss:N" (train/faultinject.go).
const faultEnv = "ALIBI_FAULT"

// faultBuild is the train command built with -tags faultinject, once per
// test binary, in a temporary directory.
var faultBuild struct {
	once      sync.Once
	dir, path string
	err       error
}

// faultTrainCmd starts, as a subprocess, the train command built with
// -tags faultinject: the only build that honours faultEnv. Normal builds
// (this test binary included) carry no fault injection.
func faultTrainCmd(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	faultBuild.once.Do(func() {
		gotool, err := exec.LookPath("go")
		if err != nil {
			faultBuild.err = fmt.Errorf("the fault tests build the command: %w", err)
			return
		}
		if faultBuild.dir, err = os.MkdirTemp("", "alibi-faultinject-"); err != nil {
			faultBuild.err = err
			return
		}
		faultBuild.path = filepath.Join(faultBuild.dir, "train")
		if out, err := exec.Command(gotool, "build", "-tags", "faultinject", "-o", faultBuild.path, ".").CombinedOutput(); err != nil {
			faultBuild.err = fmt.Errorf("go build -tags faultinject: %w\n%s", err, out)
		}
	})
	if faultBuild.err != nil {
		t.Fatal(faultBuild.err)
	}
	cmd := exec.Command(faultBuild.path, args...)
	cmd.Env = append(os.Environ(), env...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	t.Cleanup(func() {
		if t.Failed() && buf.Len() > 0 {
			t.Logf("subprocess %v output:\n%s", args, buf.String())
		}
	})
	return cmd
}

const killYAML = `name: kill
model: {vocab: 256, d_model: 32, n_layers: 2, n_heads: 4, d_ff: 64, pos: alibi, train_len: 32, seed: 5}
data: {corpus: CORPUS, val_frac: 0.1}
train: {batch: 8, steps: 240, lr: 3.0e-3, min_lr: 3.0e-4, warmup: 10, log_every: 5, eval_every: 60, eval_tokens: 512, checkpoint_every: 10, keep_checkpoints: 3}
`

// trainCmd starts the train command as a subprocess.
func trainCmd(t *testing.T, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "ALIBI_TRAIN_MAIN=1"), env...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	t.Cleanup(func() {
		if t.Failed() && buf.Len() > 0 {
			t.Logf("subprocess %v output:\n%s", args, buf.String())
		}
	})
	return cmd
}

func killedBySignal(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// finalState returns the weights and optimizer moments of a run's newest
// checkpoint, as raw bytes by tensor name.
func finalState(t *testing.T, dir string) (map[string][]byte, string) {
	t.Helper()
	c, path, err := model.LatestCheckpoint(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, name := range c.Weights.Names {
		out[name] = safetensors.F32(name, nil, c.Weights.Data(name)).Data
	}
	for _, x := range c.Extra {
		out[x.Name] = x.Data
	}
	return out, path
}

// A run killed with SIGKILL, once in the middle of a checkpoint write and
// once at an arbitrary step, then resumed, ends bit-identical to the same
// run left alone. Every segment runs the fault-injection build, so that the
// runs compared come from one binary.
func TestKillAndResumeIsBitIdentical(t *testing.T) {
	longtest.Only(t)
	if testing.Short() {
		t.Skip("trains three runs in subprocesses")
	}
	// The umask is process-wide: this test does not run in parallel.
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	root := t.TempDir()
	corpus := filepath.Join(root, "corpus.txt")
	text := strings.Repeat("It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife. ", 60)
	if err := os.WriteFile(corpus, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(root, "kill.yaml")
	if err := os.WriteFile(cfgPath, []byte(strings.Replace(killYAML, "CORPUS", corpus, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	whole, split := filepath.Join(root, "whole"), filepath.Join(root, "split")
	if err := faultTrainCmd(t, nil, "--config", cfgPath, "--out", whole).Run(); err != nil {
		t.Fatalf("uninterrupted run: %v", err)
	}

	// 1. Killed half way through writing the step-70 checkpoint.
	err := faultTrainCmd(t, []string{faultEnv + "=kill-in-checkpoint:70"}, "--config", cfgPath, "--out", split).Run()
	if !killedBySignal(err) {
		t.Fatalf("first segment: want death by SIGKILL, got %v", err)
	}
	ckdir := filepath.Join(split, model.CheckpointDir)
	if _, err := os.Stat(filepath.Join(ckdir, "step-00000070.safetensors")); !os.IsNotExist(err) {
		t.Fatalf("the half-written checkpoint replaced a real one: %v", err)
	}
	temps, _ := filepath.Glob(filepath.Join(ckdir, ".*.tmp-*"))
	if len(temps) != 1 {
		t.Fatalf("want the half-written temporary file, found %v", temps)
	}
	// Created as every file of the run is: 0666 less the umask (022, set
	// above and inherited by the subprocess), not os.CreateTemp's 0600.
	fi, err := os.Stat(temps[0])
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Fatalf("the half-written temporary file has mode %v, want 0644", fi.Mode().Perm())
	}

	// 2. Resumed, then killed at an arbitrary step once step 150 is saved.
	killAfter(t, faultTrainCmd(t, nil, "--config", cfgPath, "--out", split, "--resume"), filepath.Join(ckdir, "step-00000150.safetensors"))

	// 3. Resumed to the end.
	if err := faultTrainCmd(t, nil, "--config", cfgPath, "--out", split, "--resume").Run(); err != nil {
		t.Fatalf("final segment: %v", err)
	}
	sameRunState(t, whole, split, "step-00000240.safetensors")
}

// killAfter starts cmd, a training run, waits until the checkpoint file
// ckpt exists and kills the run with SIGKILL at whatever step it has
// reached; it fails unless the run died of that signal (not finished
// before it, nor failed).
func killAfter(t *testing.T, cmd *exec.Cmd, ckpt string) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(ckpt); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the run never wrote %s", filepath.Base(ckpt))
		}
		time.Sleep(time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	if err := cmd.Wait(); !killedBySignal(err) {
		t.Fatalf("want death by SIGKILL, got %v (the run finished before the kill?)", err)
	}
}

// sameRunState checks that the interrupted and resumed run in split ended as
// the uninterrupted one in whole: the same newest checkpoint (named last),
// every tensor bit-identical, and the same steps and losses in the metrics.
func sameRunState(t *testing.T, whole, split, last string) {
	t.Helper()
	a, pa := finalState(t, whole)
	b, pb := finalState(t, split)
	if filepath.Base(pa) != last || filepath.Base(pb) != filepath.Base(pa) {
		t.Fatalf("final checkpoints %s and %s", pa, pb)
	}
	if len(a) != len(b) {
		t.Fatalf("%d tensors uninterrupted, %d resumed", len(a), len(b))
	}
	for name, x := range a {
		if !bytes.Equal(x, b[name]) {
			t.Fatalf("tensor %s differs after the interruption and resume", name)
		}
	}
	ma, _ := os.ReadFile(filepath.Join(whole, "metrics.jsonl"))
	mb, _ := os.ReadFile(filepath.Join(split, "metrics.jsonl"))
	if got, want := stepsAndLosses(mb), stepsAndLosses(ma); got != want {
		t.Fatalf("metrics differ:\nresumed:\n%s\nuninterrupted:\n%s", got, want)
	}
}

// stepsAndLosses drops the timing fields of metrics.jsonl lines.
func stepsAndLosses(b []byte) string {
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var keep []string
		for _, f := range strings.Split(strings.Trim(line, "{}"), ",") {
			if !strings.Contains(f, "elapsed") && !strings.Contains(f, "per_second") {
				keep = append(keep, f)
			}
		}
		out.WriteString(strings.Join(keep, ",") + "\n")
	}
	return out.String()
}
