package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alibi-go/alibi/train/mpi"
)

// A launch of several processes of a build without MPI is refused in one
// line, before anything is read or written: each would train a copy.
func TestLaunchedWithoutMPI(t *testing.T) {
	if mpi.Built {
		t.Skip("built with MPI: the test is of a build without it")
	}
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	t.Setenv("OMPI_COMM_WORLD_RANK", "0") // rank 0 prints it; the others, which have it too, do not
	var out, errb bytes.Buffer
	dir := filepath.Join(t.TempDir(), "run")
	code := command([]string{"--config", "../../configs/micro.yaml", "--out", dir}, &out, &errb)
	if code == 0 || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "built without MPI") || !strings.Contains(errb.String(), "-tags mpi") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if _, err := os.Stat(dir); err == nil {
		t.Fatal("the run directory was made")
	}
}

// mpiTools builds cmd/train with MPI into a temporary directory and returns
// it with mpirun's path, or skips (fails under CI, which installs Open MPI)
// when Open MPI is missing.
func mpiTools(t *testing.T) (bin, mpirun string) {
	t.Helper()
	mpirun, err := exec.LookPath("mpirun")
	if err == nil {
		err = exec.Command("pkg-config", "--exists", "ompi-c").Run()
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("Open MPI is missing (apt-get install libopenmpi-dev openmpi-bin): %v", err)
		}
		t.Skipf("Open MPI is missing (apt-get install libopenmpi-dev openmpi-bin): %v", err)
	}
	bin = filepath.Join(t.TempDir(), "train-mpi")
	if b, err := exec.Command("go", "build", "-tags", "mpi", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags mpi: %v\n%s", err, b)
	}
	return bin, mpirun
}

// mpiConfig writes the micro config with steps steps and a checkpoint
// every every steps.
func mpiConfig(t *testing.T, steps, every int) string {
	t.Helper()
	b, err := os.ReadFile("../../configs/micro.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "steps: 20", "steps: "+strconv.Itoa(steps), 1)
	text = strings.Replace(text, "checkpoint_every: 10", "checkpoint_every: "+strconv.Itoa(every), 1)
	text = strings.Replace(text, "eval_every: 10", "eval_every: 100", 1)
	return writeFile(t, t.TempDir(), "micro.yaml", text)
}

// mpiRun runs cmd/train under mpirun with np ranks (np 0: alone).
func mpiRun(t *testing.T, bin, mpirun string, np int, args ...string) (string, error) {
	t.Helper()
	var cmd *exec.Cmd
	if np == 0 {
		cmd = exec.Command(bin, args...)
	} else {
		cmd = exec.Command(mpirun, append([]string{"--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(np), bin}, args...)...)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// losses reads a run's training losses by step.
func losses(t *testing.T, dir string) map[int]float64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if l, ok := m["loss"].(float64); ok {
			out[int(m["step"].(float64))] = l
		}
	}
	return out
}

func summaryOf(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// closeLosses fails unless two runs logged the same steps with losses
// within rel.
func closeLosses(t *testing.T, name string, a, b map[int]float64, rel float64) {
	t.Helper()
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("%s: %d and %d logged steps", name, len(a), len(b))
	}
	for s, l := range a {
		if d := math.Abs(l - b[s]); d > rel*math.Abs(l) {
			t.Fatalf("%s: step %d loss %.9g and %.9g", name, s, l, b[s])
		}
	}
}

// Two ranks train the micro run as one process does: the same windows,
// losses equal to float rounding after 200 steps, the final validation
// perplexity too; two 2-rank runs are bit-identical; 3 ranks, which do not
// divide the batch of 4, are refused in one line; a rank with another
// config is refused, naming it.
func TestMPIEqualsOneProcess(t *testing.T) {
	bin, mpirun := mpiTools(t)
	cfg := mpiConfig(t, 200, 100)
	dir := t.TempDir()
	runs := map[string]int{"one": 0, "two": 2, "two-again": 2}
	for name, np := range runs {
		if out, err := mpiRun(t, bin, mpirun, np, "--config", cfg, "--out", filepath.Join(dir, name)); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
	one, two, again := losses(t, filepath.Join(dir, "one")), losses(t, filepath.Join(dir, "two")), losses(t, filepath.Join(dir, "two-again"))
	closeLosses(t, "one process and two ranks", one, two, 1e-5)
	closeLosses(t, "two 2-rank runs", two, again, 0)
	s1, s2, s3 := summaryOf(t, filepath.Join(dir, "one")), summaryOf(t, filepath.Join(dir, "two")), summaryOf(t, filepath.Join(dir, "two-again"))
	p1, p2 := s1["val_ppl"].(float64), s2["val_ppl"].(float64)
	if math.Abs(p1-p2) > 1e-5*p1 || s2["val_ppl"] != s3["val_ppl"] || s2["ranks"] != 2.0 || s1["ranks"] != nil {
		t.Fatalf("validation perplexity %v, %v and %v; ranks %v and %v", p1, p2, s3["val_ppl"], s1["ranks"], s2["ranks"])
	}
	if share, ok := s2["allreduce_share"].(float64); !ok || !(share > 0 && share < 1) {
		t.Fatalf("all-reduce share %v", s2["allreduce_share"])
	}

	out, err := mpiRun(t, bin, mpirun, 3, "--config", cfg, "--out", filepath.Join(dir, "three"))
	if err == nil || strings.Count(out, "divisible by the 3 ranks") != 1 {
		t.Fatalf("3 ranks: %v\n%s", err, out)
	}
	// DroPE rebuilds the graph of each rank's share at its step.
	drope := strings.Replace(readFile(t, cfg), "pos: alibi", "pos: rope\n  drope_step: 50", 1)
	dropeCfg := writeFile(t, t.TempDir(), "drope.yaml", drope)
	for name, np := range map[string]int{"drope-one": 0, "drope-two": 2} {
		if out, err := mpiRun(t, bin, mpirun, np, "--config", dropeCfg, "--out", filepath.Join(dir, name)); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
	closeLosses(t, "DroPE, one process and two ranks", losses(t, filepath.Join(dir, "drope-one")), losses(t, filepath.Join(dir, "drope-two")), 1e-5)

	other := strings.Replace(readFile(t, cfg), "lr: 3.0e-3", "lr: 2.0e-3", 1)
	otherCfg := writeFile(t, t.TempDir(), "micro.yaml", other)
	cmd := exec.Command(mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "1", bin, "--config", cfg, "--out", filepath.Join(dir, "mixed"),
		":", "-np", "1", bin, "--config", otherCfg, "--out", filepath.Join(dir, "mixed"))
	b, err := cmd.CombinedOutput()
	if err == nil || strings.Count(string(b), "rank 1 of 2 has another config than rank 0") != 1 {
		t.Fatalf("another config on rank 1: %v\n%s", err, b)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A rank killed mid-run ends the job within seconds with a line naming it,
// the last checkpoint intact; resumed with two ranks, and with one, the run
// ends with the uninterrupted 2-rank run's losses (exactly with two, to
// float rounding with one).
func TestMPIKilledRankResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: kills a rank and resumes twice")
	}
	bin, mpirun := mpiTools(t)
	cfg := mpiConfig(t, 400, 20)
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole")
	if out, err := mpiRun(t, bin, mpirun, 2, "--config", cfg, "--out", whole); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := losses(t, whole)
	for _, np := range []int{2, 0} {
		run := filepath.Join(dir, "killed-"+strconv.Itoa(np))
		cmd := exec.Command(mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2", bin, "--config", cfg, "--out", run)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Once a checkpoint is written, kill rank 1.
		deadline := time.Now().Add(60 * time.Second)
		for {
			if m, _ := filepath.Glob(filepath.Join(run, "checkpoints", "*.safetensors")); len(m) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no checkpoint after 60 s\n%s", out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		pid := rankPID(t, cmd.Process.Pid, 1)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(out.String(), "rank 1") {
				t.Fatalf("after rank 1 was killed: %v\n%s", err, out.String())
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("the job did not end within 30 s of rank 1's death\n%s", out.String())
		}
		if o, err := mpiRun(t, bin, mpirun, np, "--out", run, "--resume"); err != nil {
			t.Fatalf("resume with %d ranks: %v\n%s", np, err, o)
		}
		rel := 0.0
		if np == 0 {
			rel = 1e-5
		}
		closeLosses(t, "resumed with "+strconv.Itoa(max(np, 1))+" rank(s)", want, losses(t, run), rel)
	}
}

// rankPID returns the PID of the child of mpirun (pid) that is rank r.
func rankPID(t *testing.T, pid, r int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		procs, _ := filepath.Glob("/proc/[0-9]*/environ")
		for _, p := range procs {
			env, err := os.ReadFile(p)
			if err != nil || !bytes.Contains(env, []byte("OMPI_COMM_WORLD_RANK="+strconv.Itoa(r)+"\x00")) {
				continue
			}
			stat, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
			if err != nil {
				continue
			}
			fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
			if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
				n, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
				return n
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no rank %d under mpirun %d", r, pid)
	return 0
}
