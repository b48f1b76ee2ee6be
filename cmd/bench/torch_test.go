package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stubScript stands for testdata/torch/lm.py, run by /bin/sh: it appends
// its arguments to the file calls beside it and writes a result whose
// tokens/s is 1000 times the number of the call.
const stubScript = `log="$(dirname "$0")/calls"
echo "$*" >> "$log"
n=$(wc -l < "$log")
out=""
while [ $# -gt 0 ]; do
  case "$1" in --json) out="$2"; shift ;; esac
  shift
done
printf '{"tokens_per_second": %d, "torch": "stub", "threads": 2, "blas_core": "Stub"}\n' $((n * 1000)) > "$out"
`

// writeStub writes a script into a new directory and returns its path.
func writeStub(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lm.py")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// --torch alternates the script with this project's training: each
// precision's rounds call the script with the config (and --precision bf16
// for bf16), the steps and a --json file, and the row holds each round's
// tokens/s of both sides, their ratios and the median ratio.
func TestTorchSideBySide(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	script := writeStub(t, stubScript)
	micro, err := os.ReadFile("../../configs/micro.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bf16 := filepath.Join(t.TempDir(), "micro-bf16.yaml")
	if err := os.WriteFile(bf16, append(micro, "  precision: bf16\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "speed.json")
	code, stdout, stderr := run(append(microFlags, "--rounds", "1", "--torch", "--python", "/bin/sh", "--torch-script", script,
		"--torch-steps", "6", "--torch-rounds", "3", "--tiny-bf16-config", bf16, "--out", out)...)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(script), "calls"))
	if err != nil {
		t.Fatal(err)
	}
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(calls) != 6 {
		t.Fatalf("%d calls of the script, want 6:\n%s", len(calls), b)
	}
	for i, c := range calls {
		want := "throughput --config ../../configs/micro.yaml --steps 6 --json "
		if i >= 3 {
			want = "throughput --config ../../configs/micro.yaml --precision bf16 --steps 6 --json "
		}
		if !strings.HasPrefix(c, want) {
			t.Errorf("call %d: %q, want %q...", i+1, c, want)
		}
	}
	rows, err := readRows(out)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	for k, v := range []*Versus{rows[0].TorchFP32, rows[0].TorchBF16} {
		if v == nil {
			t.Fatalf("comparison %d missing", k)
		}
		if v.Config != "micro" || v.Rounds != 3 || v.Steps != 6 || v.TorchVersion != "stub" || v.Threads != 2 || v.BLASCore != "Stub" {
			t.Errorf("comparison %d: %+v", k, v)
		}
		if len(v.Project) != 3 || len(v.Torch) != 3 || len(v.Ratios) != 3 {
			t.Fatalf("comparison %d: %+v", k, v)
		}
		var ratios []float64
		for i := range 3 {
			if want := float64(1000 * (3*k + i + 1)); v.Torch[i] != want {
				t.Errorf("comparison %d round %d: PyTorch %v tokens/s, want %v", k, i+1, v.Torch[i], want)
			}
			r := v.Project[i] / v.Torch[i]
			if !(v.Project[i] > 0) || math.Abs(v.Ratios[i]-r) > 1e-3 {
				t.Errorf("comparison %d round %d: ratio %v, want %v / %v", k, i+1, v.Ratios[i], v.Project[i], v.Torch[i])
			}
			ratios = append(ratios, r)
		}
		// The median of three is the one between the other two.
		mid := ratios[0] + ratios[1] + ratios[2] - math.Max(ratios[0], math.Max(ratios[1], ratios[2])) - math.Min(ratios[0], math.Min(ratios[1], ratios[2]))
		if math.Abs(v.Ratio-mid) > 1e-3 {
			t.Errorf("comparison %d: median ratio %v, want %v of %v", k, v.Ratio, mid, ratios)
		}
	}
	if !strings.Contains(stdout, "PyTorch stub, 2 threads, OpenBLAS core Stub") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if !strings.Contains(stderr, "bf16 side by side, round 3 of 3") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// A missing script, a missing interpreter, a script that fails (PyTorch
// not installed) and one that reports no tokens/s each stop the command
// with one line (saying how to install PyTorch where that is the cure),
// exit 1 and nothing measured.
func TestTorchFailures(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	noTorch := writeStub(t, "echo 'Traceback (most recent call last):' >&2\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n")
	zero := writeStub(t, `while [ $# -gt 0 ]; do case "$1" in --json) out="$2"; shift ;; esac; shift; done
echo '{"tokens_per_second": 0}' > "$out"
`)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--torch-script", filepath.Join(t.TempDir(), "lm.py")}, []string{"no such file", "testdata/torch/setup.sh"}},
		{[]string{"--python", filepath.Join(t.TempDir(), "python3"), "--torch-script", zero}, []string{"--python", "testdata/torch/setup.sh"}},
		{[]string{"--python", "/bin/sh", "--torch-script", noTorch}, []string{"No module named 'torch'", "testdata/torch/setup.sh"}},
		{[]string{"--python", "/bin/sh", "--torch-script", zero}, []string{"tokens_per_second 0"}},
	} {
		args := append(append(append([]string{}, microFlags...), "--torch", "--torch-steps", "6", "--tiny-bf16-config", "../../configs/tiny-bf16.yaml"), c.args...)
		code, stdout, stderr := run(args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		last := lines[len(lines)-1]
		if code != 1 || stdout != "" || strings.Contains(stderr, "round 1") || strings.Contains(stderr, "Traceback") {
			t.Errorf("%v: exit %d, stderr %q; want exit 1, nothing measured", c.args, code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(last, w) {
				t.Errorf("%v: last line %q does not say %q", c.args, last, w)
			}
		}
	}
}

// withOpenMPBLAS puts the OpenMP OpenBLAS first on LD_LIBRARY_PATH, keeping
// what was there after it, and adds the variable when it is missing.
func TestWithOpenMPBLAS(t *testing.T) {
	libs, _ := filepath.Glob("/usr/lib/*/openblas-openmp/libblas.so.3")
	if len(libs) == 0 {
		if got := withOpenMPBLAS([]string{"A=1"}); len(got) != 1 || got[0] != "A=1" {
			t.Fatalf("without the OpenMP OpenBLAS the environment changed: %v", got)
		}
		t.Skip("libopenblas0-openmp is not installed")
	}
	dir := filepath.Dir(libs[0])
	if got := withOpenMPBLAS([]string{"A=1", "LD_LIBRARY_PATH=/x"}); got[1] != "LD_LIBRARY_PATH="+dir+":/x" || len(got) != 2 {
		t.Errorf("got %v", got)
	}
	if got := withOpenMPBLAS([]string{"A=1"}); len(got) != 2 || got[1] != "LD_LIBRARY_PATH="+dir {
		t.Errorf("got %v", got)
	}
}
