package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/alibi-go/alibi/train"
)

// setupHint says how to install what the PyTorch script needs.
const setupHint = "install PyTorch and what the script needs with: sudo bash testdata/torch/setup.sh"

// sideBySide is how cmd/bench compares this project's training with
// PyTorch's: python runs script, and both train steps steps, rounds times
// in alternation (PyTorch first in each round).
type sideBySide struct {
	python, script string
	steps, rounds  int
	log            io.Writer // progress
}

// torchThroughput is what the PyTorch script writes to its --json file.
type torchThroughput struct {
	TokensPerSecond float64 `json:"tokens_per_second"`
	Torch           string  `json:"torch"`
	Threads         int     `json:"threads"`
	BLASCore        string  `json:"blas_core"`
}

// check says, before anything is measured, whether the script and the
// interpreter are there.
func (s sideBySide) check() error {
	if _, err := os.Stat(s.script); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--torch-script %s: no such file (run from the project's root, where testdata/torch/lm.py is; %s)", s.script, setupHint)
		}
		return fmt.Errorf("--torch-script: %w", err)
	}
	if _, err := exec.LookPath(s.python); err != nil {
		return fmt.Errorf("--python %s: %v (%s)", s.python, err, setupHint)
	}
	return nil
}

// compare alternates the PyTorch script, run with torchArgs (its --config
// and, for bf16, --precision), with this project's training of the config
// at projectConfig, and returns the comparison. label names it in the
// progress lines ("fp32", "bf16").
func (s sideBySide) compare(label, projectConfig string, torchArgs []string) (*Versus, error) {
	cfg, err := train.LoadConfig(projectConfig)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "alibi-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	v := &Versus{Config: cfg.Name, Rounds: s.rounds, Steps: s.steps}
	var ratios []float64
	for r := 1; r <= s.rounds; r++ {
		t, err := s.runTorch(filepath.Join(tmp, fmt.Sprintf("torch-%d.json", r)), torchArgs)
		if err != nil {
			return nil, err
		}
		c := cfg
		c.Train.Steps, c.Out = s.steps, filepath.Join(tmp, fmt.Sprintf("run-%d", r))
		sum, err := train.Train(context.Background(), c, train.Options{})
		if err != nil {
			return nil, fmt.Errorf("training %s for the side-by-side: %w", projectConfig, err)
		}
		v.TorchVersion, v.Threads, v.BLASCore = t.Torch, t.Threads, t.BLASCore
		ratio := sum.TokensPerSecond / t.TokensPerSecond
		ratios = append(ratios, ratio)
		v.Project, v.Torch = append(v.Project, round(sum.TokensPerSecond, 0)), append(v.Torch, round(t.TokensPerSecond, 0))
		v.Ratios = append(v.Ratios, round(ratio, 3))
		fmt.Fprintf(s.log, "bench: %s side by side, round %d of %d: this project %s tokens/s, PyTorch %s tokens/s, ratio %.2f\n",
			label, r, s.rounds, count(sum.TokensPerSecond), count(t.TokensPerSecond), ratio)
	}
	v.Ratio = round(median(ratios), 3)
	return v, nil
}

// runTorch runs the script's throughput measurement, writing its result to
// out, and reads it.
func (s sideBySide) runTorch(out string, torchArgs []string) (torchThroughput, error) {
	args := append([]string{s.script, "throughput"}, torchArgs...)
	args = append(args, "--steps", fmt.Sprint(s.steps), "--json", out)
	cmd := exec.Command(s.python, args...)
	cmd.Env = withOpenMPBLAS(os.Environ())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var t torchThroughput
	if err := cmd.Run(); err != nil {
		msg := lastLine(stderr.String())
		if strings.Contains(msg, "No module named") {
			msg += "; " + setupHint
		}
		return t, fmt.Errorf("%s %s: %v: %s", s.python, strings.Join(args, " "), err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return t, fmt.Errorf("%s wrote no result: %w", s.script, err)
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("%s's result %s: %w", s.script, out, err)
	}
	if !(t.TokensPerSecond > 0) {
		return t, fmt.Errorf("%s's result: tokens_per_second %v, want a positive number", s.script, t.TokensPerSecond)
	}
	return t, nil
}

// lastLine is the last non-empty line of text, or "(nothing on stderr)".
func lastLine(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return "(nothing on stderr)"
}

// median is the median of xs (the mean of the middle two for an even
// count), without reordering xs.
func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// withOpenMPBLAS puts the directory of Debian's OpenMP build of OpenBLAS
// (package libopenblas0-openmp, which testdata/torch/setup.sh installs)
// first on env's LD_LIBRARY_PATH, so that PyTorch multiplies with it on
// every core whatever libblas.so.3 the system's alternatives point to, as
// testdata/torch/crosscheck.sh does. env is returned unchanged where that
// build is not installed.
func withOpenMPBLAS(env []string) []string {
	libs, _ := filepath.Glob("/usr/lib/*/openblas-openmp/libblas.so.3")
	if len(libs) == 0 {
		return env
	}
	dir := filepath.Dir(libs[0])
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "LD_LIBRARY_PATH="); ok {
			env[i] = "LD_LIBRARY_PATH=" + dir + ":" + v
			return env
		}
	}
	return append(env, "LD_LIBRARY_PATH="+dir)
}
