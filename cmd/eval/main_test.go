package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/cmd/internal/clitest"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/train"
)

// trainedRun trains a micro model once for the tests of this package.
func trainedRun(t *testing.T) (dir, corpus string) {
	return clitest.MicroRun(t, "a small corpus for evaluation. ", 50, func(c *train.Config) {
		c.Train.Batch, c.Train.Steps, c.Train.LR, c.Train.MinLR, c.Train.Warmup = 2, 4, 1e-3, 1e-4, 1
	})
}

func TestEvalCommand(t *testing.T) {
	dir, _ := trainedRun(t)
	tmp := t.TempDir()
	jsonPath, plotPath := filepath.Join(tmp, "r.json"), filepath.Join(tmp, "r.png")
	var out, errb bytes.Buffer
	code := command([]string{"--run", dir, "--len", "40", "--json", jsonPath, "--plot", plotPath}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, row := range []string{"| 16 |", "| 32 |", "| 40 |", "| 64 |"} {
		if !strings.Contains(out.String(), row) {
			t.Errorf("table lacks row %q:\n%s", row, out.String())
		}
	}
	var rep struct {
		Runs []struct {
			Run      string `json:"run"`
			Pos      string `json:"pos"`
			TrainLen int    `json:"train_len"`
			Results  []struct {
				Len          int     `json:"len"`
				Protocol     string  `json:"protocol"`
				PPL          float64 `json:"ppl"`
				Tokens       int     `json:"tokens"`
				BitsPerByte  float64 `json:"bits_per_byte"`
				PeakRSSBytes int64   `json:"peak_rss_bytes"`
			} `json:"results"`
		} `json:"runs"`
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Pos != "alibi" || rep.Runs[0].TrainLen != 16 || len(rep.Runs[0].Results) != 4 {
		t.Fatalf("report %+v", rep)
	}
	val := len(strings.Repeat("a small corpus for evaluation. ", 50)) - int(float64(len(strings.Repeat("a small corpus for evaluation. ", 50)))*0.9)
	for _, r := range rep.Runs[0].Results {
		if r.Protocol != "nonoverlap" || r.Tokens != val-1 || !(r.PPL > 1) || r.PeakRSSBytes <= 0 {
			t.Errorf("result %+v (validation split of %d bytes)", r, val)
		}
	}
	if st, err := os.Stat(plotPath); err != nil || st.Size() < 1000 {
		t.Errorf("plot not written: %v", err)
	}
}

func TestEvalBadInput(t *testing.T) {
	dir, _ := trainedRun(t)
	missing := filepath.Join(t.TempDir(), "none")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing run", []string{"--run", missing}, "train one first: go run ./cmd/train"},
		{"unreadable data", []string{"--run", dir, "--data", missing}, "no such file"},
		{"len 0", []string{"--run", dir, "--len", "0"}, "--len must be positive"},
		{"negative stride", []string{"--run", dir, "--stride", "-2"}, "--stride must not be negative"},
		{"stride longer than len", []string{"--run", dir, "--lens", "8", "--stride", "9"}, "longer than the window length"},
		{"bad lens", []string{"--run", dir, "--lens", "8,x"}, "--lens"},
		{"corrupt checkpoint", []string{"--checkpoint", writeGarbage(t)}, "load checkpoint"},
		{"bad memory size", []string{"--run", dir, "--max-memory", "lots"}, "--max-memory"},
		{"over the memory limit, batch of windows", []string{"--run", dir, "--lens", "16", "--max-memory", "100K"}, "lower --batch-tokens (now 4096) or the length"},
		{"over the memory limit, one window", []string{"--run", dir, "--lens", "16", "--batch-tokens", "16", "--max-memory", "10K"}, "(one window of 16 tokens per forward pass) but only 10 KB is available, of which an evaluation may take 80% (8 KB); evaluate shorter lengths"},
		// The validation split has 155 tokens; no length is evaluated
		// (the one line is the error) when one of them does not fit.
		{"length past the data", []string{"--run", dir, "--lens", "16,1000000"}, "length 1000000 needs 1000001 tokens but the data has 155; the longest length that fits is 154"},
		{"one token past the data", []string{"--run", dir, "--len", "155"}, "length 155 needs 156 tokens but the data has 155; the longest length that fits is 154"},
		{"extension of another scheme", []string{"--run", dir, "--extend", "yarn"}, "extension yarn applies to rope runs, not alibi; for alibi use interp"},
		{"unknown extension", []string{"--run", dir, "--extend", "stretch"}, `unknown extension method "stretch"`},
		{"extension factor without extension", []string{"--run", dir, "--extend-factor", "2"}, "--extend-factor needs --extend"},
		{"extension factor below 1", []string{"--run", dir, "--extend", "interp", "--extend-factor", "0.5"}, "--extend-factor must be at least 1"},
		{"infinite extension factor", []string{"--run", dir, "--extend", "interp", "--extend-factor", "Inf"}, "--extend-factor must be at least 1 and finite, got +Inf"},
		{"extension factor past the arithmetic", []string{"--run", dir, "--extend", "interp", "--extend-factor", "1e300"}, "--extend: extension factor 1e+300 is too large for interp on this model: the slope of head 0 would be 0, outside float32's normal range; the factor can be at most"},
		{"passkey with dynamic-ntk", []string{"--run", dir, "--task", "passkey", "--extend", "dynamic-ntk"}, "--task passkey cannot use dynamic-ntk"},
		{"passkey extension without a factor", []string{"--run", dir, "--task", "passkey", "--extend", "interp"}, "give --extend-factor"},
		{"unknown precision", []string{"--run", dir, "--precision", "fp16"}, `--precision: precision "fp16": want fp32 or bf16`},
		// A flag's error comes before any run is looked for or loaded.
		{"unknown precision, missing run", []string{"--run", missing, "--precision", "fp16"}, `--precision: precision "fp16"`},
		{"length past --max-tokens", []string{"--run", dir, "--lens", "16,50", "--max-tokens", "40"}, "length 50 needs 51 tokens but only the first 41 of the data's 155 are scored (max tokens 40); the longest length that fits is 40"},
		// The largest int as a length or a limit: no overflow, no panic.
		{"largest int length", []string{"--run", dir, "--len", "9223372036854775807"}, "length 9223372036854775807 needs 9223372036854775808 tokens but the data has 155"},
		{"largest int lens", []string{"--run", dir, "--lens", "9223372036854775807"}, "length 9223372036854775807 needs 9223372036854775808 tokens but the data has 155"},
		{"largest int max tokens", []string{"--run", dir, "--lens", "200", "--max-tokens", "9223372036854775807"}, "length 200 needs 201 tokens but the data has 155"},
		{"empty lens", []string{"--run", dir, "--lens", ""}, "--lens is empty"},
		{"a tokenizer.json as the checkpoint", []string{"--checkpoint", filepath.Join(dir, "tokenizer.json")}, "not a checkpoint: the file is JSON"},
		// Outputs are checked before the runs are read.
		{"json under /proc", []string{"--run", missing, "--json", "/proc/x.json"}, "--json: /proc/x.json cannot be written"},
		{"json a directory", []string{"--run", missing, "--json", t.TempDir()}, "is a directory"},
		{"json under a file", []string{"--run", missing, "--json", filepath.Join(writeGarbage(t), "x.json")}, "not a directory"},
		{"plot under /proc", []string{"--run", missing, "--plot", "/proc/x.png"}, "--plot: /proc/x.png cannot be written"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := command(tc.args, &out, &errb)
			msg := errb.String()
			if code == 0 || !strings.Contains(msg, tc.want) || strings.Count(strings.TrimSpace(msg), "\n") != 0 || strings.Contains(msg, "goroutine") {
				t.Fatalf("exit %d, stderr %q; want one line containing %q", code, msg, tc.want)
			}
		})
	}
}

// --len adds its length to --lens rather than being ignored.
func TestEvalLenAddsToLens(t *testing.T) {
	dir, _ := trainedRun(t)
	var out, errb bytes.Buffer
	if code := command([]string{"--run", dir, "--lens", "8,24", "--len", "20"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, row := range []string{"| 8 |", "| 20 |", "| 24 |"} {
		if !strings.Contains(out.String(), row) {
			t.Errorf("table lacks row %q:\n%s", row, out.String())
		}
	}
	if strings.Contains(out.String(), "| 16 |") {
		t.Errorf("--lens replaces the default lengths, but 16 (1x) is in the table:\n%s", out.String())
	}
}

// --help prints the usage, starting with what the command does and an
// example, and exits 0.
func TestEvalHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := command([]string{"--help"}, &out, &errb); code != 0 {
		t.Fatalf("--help exits %d", code)
	}
	lines := strings.Split(errb.String(), "\n")
	if !strings.HasPrefix(lines[0], "eval: report the perplexity") || !strings.Contains(errb.String(), "example: go run ./cmd/eval") || !strings.Contains(errb.String(), "-max-tokens") {
		t.Fatalf("usage:\n%s", errb.String())
	}
}

func writeGarbage(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "garbage.safetensors")
	if err := os.WriteFile(p, []byte("\x10\x00\x00\x00\x00\x00\x00\x00not json at all!"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAttentionStatsFlag(t *testing.T) {
	dir, _ := trainedRun(t)
	jsonPath := filepath.Join(t.TempDir(), "a.json")
	var out, errb bytes.Buffer
	if code := command([]string{"--run", dir, "--lens", "16,32", "--attention-stats", "--json", jsonPath}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"at length 32, over the", "| layer | head | mean distance | entropy (nats) | share past L |", "| 0 | 1 |", "(no query stands past L at this length)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	var rep struct {
		Attention struct {
			Runs []struct {
				Weights *struct {
					Checkpoint string
					Step       int
				} `json:"weights"`
				Results []struct {
					Len, Queries int
					Layers       [][]struct {
						Share float64 `json:"share_past_l"`
					} `json:"layers"`
				} `json:"results"`
			} `json:"runs"`
		} `json:"attention"`
	}
	b, _ := os.ReadFile(jsonPath)
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if r := rep.Attention.Runs; len(r) != 1 || len(r[0].Results) != 2 || r[0].Results[0].Queries != 0 || r[0].Results[1].Queries == 0 || len(r[0].Results[1].Layers) != 1 {
		t.Errorf("json: %s", b)
	}
	if r := rep.Attention.Runs; len(r) == 1 && (r[0].Weights == nil || !strings.HasPrefix(filepath.Base(r[0].Weights.Checkpoint), "step-") || r[0].Weights.Step == 0) {
		t.Errorf("the attention statistics do not name the weights that made them: %s", b)
	}
}

// --extend evaluates every length under the extension, labelled as such;
// at factor 1 it is the plain model to the last digit, and with the factor
// following the length it changes the lengths past L only.
func TestEvalExtend(t *testing.T) {
	dir, _ := trainedRun(t)
	ppl := func(args ...string) (string, map[int]float64) {
		t.Helper()
		tmp := filepath.Join(t.TempDir(), "r.json")
		var out, errb bytes.Buffer
		if code := command(append([]string{"--run", dir, "--lens", "16,64", "--json", tmp}, args...), &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		var rep struct {
			Runs []struct {
				Extend  string `json:"extend"`
				Results []struct {
					Len int     `json:"len"`
					PPL float64 `json:"ppl"`
				} `json:"results"`
			} `json:"runs"`
		}
		b, err := os.ReadFile(tmp)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		m := map[int]float64{}
		for _, r := range rep.Runs[0].Results {
			m[r.Len] = r.PPL
		}
		return out.String(), m
	}
	_, plain := ppl()
	table, one := ppl("--extend", "interp", "--extend-factor", "1")
	if !strings.Contains(table, "alibi+interp x1 (") {
		t.Errorf("table does not name the extension:\n%s", table)
	}
	if one[16] != plain[16] || one[64] != plain[64] {
		t.Errorf("interp at factor 1: %v, plain %v", one, plain)
	}
	table, auto := ppl("--extend", "interp")
	if !strings.Contains(table, "alibi+interp (") {
		t.Errorf("table does not name the extension:\n%s", table)
	}
	if auto[16] != plain[16] || auto[64] == plain[64] {
		t.Errorf("interp following the length: %v, plain %v; want the same at L = 16 only", auto, plain)
	}
}

// --json to a pipe or a device (/dev/stdout) writes through it: the reader
// gets the report, and the path is not replaced by a regular file.
func TestEvalJSONThroughPipe(t *testing.T) {
	dir, _ := trainedRun(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); got <- b }()
	path := fmt.Sprintf("/proc/self/fd/%d", w.Fd())
	var out, errb bytes.Buffer
	code := command([]string{"--run", dir, "--lens", "16", "--json", path}, &out, &errb)
	w.Close()
	b := <-got
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep eval.Report
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Runs) != 1 {
		t.Fatalf("the pipe got %.200q: %v", b, err)
	}
	if fi, err := os.Lstat("/dev/stdout"); err == nil && fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("/dev/stdout is a %v, not a link", fi.Mode())
	}
}
