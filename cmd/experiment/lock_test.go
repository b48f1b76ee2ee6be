package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alibi-go/alibi/train"
)

// Two experiment shards whose grids overlap, started at the same instant:
// exactly one trains the run they share, and the other exits non-zero at
// once with one line naming the run directory and the holder's PID and host;
// the run logs no step twice. While the run trains, --report-only lists it
// as in progress and writes no report. Without the lock both trained the
// shared run into one directory, and the report claimed it.
func TestOverlappingShards(t *testing.T) {
	if testing.Short() {
		t.Skip("trains in subprocesses")
	}
	cfg, out := setup(t)
	common := []string{"--config", cfg, "--out", out, "--mults", "1", "--max-tokens", "60", "--steps", "5000"}
	var procs [2]*exec.Cmd
	var logs [2]bytes.Buffer
	for i, pos := range []string{"alibi,none", "alibi"} {
		procs[i] = exec.Command(os.Args[0], append(common, "--pos", pos)...)
		procs[i].Env = append(os.Environ(), "ALIBI_EXPERIMENT_MAIN=1")
		procs[i].Stdout, procs[i].Stderr = &logs[i], &logs[i]
	}
	exited := make(chan int, 2)
	for i, p := range procs {
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { p.Wait(); exited <- i }()
	}
	defer func() {
		for _, p := range procs {
			p.Process.Kill()
		}
	}()
	var loser int
	select {
	case loser = <-exited:
	case <-time.After(time.Minute):
		t.Fatalf("neither shard was refused:\n%s\n%s", logs[0].String(), logs[1].String())
	}
	winner := 1 - loser
	if code := procs[loser].ProcessState.ExitCode(); code != 1 {
		t.Fatalf("the first shard to exit exited %d:\n%s", code, logs[loser].String())
	}
	run := filepath.Join(out, "alibi")
	host, _ := os.Hostname()
	lockLine := fmt.Sprintf("experiment: %s: %s is being written by another process (PID %d on host %s, since ", run, run, procs[winner].Process.Pid, host)
	if msg := logs[loser].String(); !strings.Contains(msg, lockLine) || strings.Count(msg, "experiment: ") != 1 {
		t.Fatalf("the refused shard said %q, want one line with %q", msg, lockLine)
	}

	// Once the winner has logged a few steps (it is still training, for
	// thousands more): a report now would claim its run.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(run, "metrics.jsonl"))
		if bytes.Count(b, []byte("\n")) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the training shard logged no steps:\n%s", logs[winner].String())
		}
	}
	var o, e bytes.Buffer
	code := command(append(common, "--pos", "alibi", "--report-only"), &o, &e)
	want := fmt.Sprintf("1 of 1 runs are not ready, so no report was written; 1 in progress: %s (by PID %d on host %s, since ", run, procs[winner].Process.Pid, host)
	if code != 1 || !strings.Contains(e.String(), want) {
		t.Fatalf("--report-only during training: exit %d, stderr %q, want it to contain %q", code, e.String(), want)
	}
	if _, err := os.Stat(filepath.Join(out, "report.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("--report-only wrote a report while a run was training")
	}

	procs[winner].Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(time.Minute):
		t.Fatal("the training shard did not stop after SIGTERM")
	}
	if n := strings.Count(logs[0].String()+logs[1].String(), "alibi: training into"); n != 1 {
		t.Fatalf("the shared run was trained %d times", n)
	}
	seen := map[string]bool{}
	b, err := os.ReadFile(filepath.Join(run, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		_, val := rec["val_loss"]
		key := fmt.Sprint(rec["step"], val)
		if seen[key] {
			t.Fatalf("step %v logged twice", rec["step"])
		}
		seen[key] = true
	}
}

// A finished run that a process is writing again (continuing it, evaluating
// it anew) is in progress: --report-only names it and writes no report,
// although every file a report needs is there.
func TestReportOnlyWaitsForWriters(t *testing.T) {
	cfg, out := setup(t)
	args := []string{"--config", cfg, "--pos", "alibi", "--out", out, "--mults", "1", "--max-tokens", "60"}
	var o, e bytes.Buffer
	if code := command(args, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	if err := os.Remove(filepath.Join(out, "report.md")); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(out, "alibi")
	lock, err := train.LockRun(run)
	if err != nil {
		t.Fatal(err)
	}
	e.Reset()
	code := command(append(args, "--report-only"), &o, &e)
	want := fmt.Sprintf("1 in progress: %s (by PID %d on host ", run, os.Getpid())
	if code != 1 || !strings.Contains(e.String(), want) {
		t.Fatalf("exit %d, stderr %q, want it to contain %q", code, e.String(), want)
	}
	if _, err := os.Stat(filepath.Join(out, "report.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a report was written while a run was being written")
	}
	lock.Unlock()
	if code := command(append(args, "--report-only"), &o, &e); code != 0 {
		t.Fatalf("after the writer finished: exit %d: %s", code, e.String())
	}
}
