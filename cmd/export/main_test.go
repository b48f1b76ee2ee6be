package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/cmd/internal/clitest"
	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/gguf"
	"github.com/alibi-go/alibi/train"
)

// microRun trains a micro model of the scheme for a few steps.
func microRun(t *testing.T, pos string) string {
	dir, _ := clitest.MicroRun(t, "Light is refracted by the prism. ", 40, func(c *train.Config) {
		c.Model.Pos = pos
		c.Train.Batch, c.Train.Steps, c.Train.LR, c.Train.MinLR, c.Train.Warmup, c.Train.CheckpointEvery = 4, 20, 1e-2, 1e-3, 2, 10
	})
	return dir
}

// run runs the command and returns its exit code, stdout and stderr.
func run(args ...string) (int, string, string) {
	var o, e bytes.Buffer
	code := command(args, &o, &e)
	return code, o.String(), e.String()
}

// readFile parses a written GGUF file.
func readFile(t *testing.T, path string) *gguf.File {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// oneLine fails unless the command failed with exit 1 and one line on
// stderr that contains every part of want.
func oneLine(t *testing.T, code int, stderr string, want ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "export: ") {
		t.Fatalf("exit %d, stderr %q: want exit 1 and one line", code, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q does not say %q", stderr, w)
		}
	}
}

// A finished run's export names its final checkpoint, says what made it in
// its metadata, and is the file gguf.Build makes of the same model.
func TestExport(t *testing.T) {
	runDir := microRun(t, model.PosALiBi)
	out := filepath.Join(t.TempDir(), "micro.gguf")
	code, stdout, stderr := run("--run", runDir, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "step-00000020.safetensors (step 20 of 20, finished)") || !strings.Contains(stderr, "max_alibi_bias 8") {
		t.Errorf("stderr %q", stderr)
	}
	if !strings.HasPrefix(stdout, out+": "+runDir+" as llama.cpp's mpt, f32, 16 tensors") {
		t.Errorf("stdout %q", stdout)
	}
	f := readFile(t, out)
	want := map[string]any{
		"general.architecture": "mpt", "general.name": runDir, "mpt.attention.max_alibi_bias": float32(8),
		"mpt.context_length": uint32(16), "alibi_go.scheme": "alibi", "alibi_go.train_len": uint32(16),
		"alibi_go.step": uint32(20), "alibi_go.steps": uint32(20), "alibi_go.finished": true,
		"alibi_go.tokenizer_hash": data.ByteTokenizer{}.Hash(), "alibi_go.data.bytes": uint64(33 * 40),
		"alibi_go.checkpoint": model.CheckpointPath(runDir, 20), "tokenizer.ggml.pre": "gpt-2",
	}
	for k, v := range want {
		if got, ok := f.Lookup(k); !ok || got != v {
			t.Errorf("%s = %v (%v), want %v", k, got, ok, v)
		}
	}
	for _, k := range []string{"alibi_go.train_config", "alibi_go.data.sha256", "alibi_go.model_config", "general.description"} {
		if v, ok := f.Lookup(k); !ok || v == "" {
			t.Errorf("%s missing", k)
		}
	}
	if toks, _ := f.Lookup("tokenizer.ggml.tokens"); len(toks.([]string)) != 256 || toks.([]string)[32] != "Ġ" {
		t.Errorf("tokens: %d, space %q", len(toks.([]string)), toks.([]string)[32])
	}
}

// A q8_0 export of a model whose rows are not blocks of 32 keeps those
// matrices in f16 and says so.
func TestExportQ8Fallback(t *testing.T) {
	out := filepath.Join(t.TempDir(), "q8.gguf")
	code, _, stderr := run("--run", microRun(t, model.PosRoPE), "--out", out, "--type", "q8_0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "are f16, not q8_0") {
		t.Errorf("stderr %q", stderr)
	}
	f := readFile(t, out)
	if v, _ := f.Lookup("general.file_type"); v != uint32(7) {
		t.Errorf("file type %v", v)
	}
	if tn, _ := f.Tensor("blk.0.ffn_down.weight"); tn.Type != gguf.Q8_0 { // rows of d_ff 32
		t.Errorf("ffn_down is %v", tn.Type)
	}
	if tn, _ := f.Tensor("blk.0.attn_qkv.weight"); tn.Type != gguf.F16 { // rows of d_model 16
		t.Errorf("attn_qkv is %v", tn.Type)
	}
}

// An unfinished run exports its newest checkpoint, and the file says that
// it is unfinished.
func TestExportUnfinished(t *testing.T) {
	runDir := microRun(t, model.PosALiBi)
	if err := os.Remove(filepath.Join(runDir, model.SummaryFile)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "u.gguf")
	if code, _, stderr := run("--run", runDir, "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f := readFile(t, out)
	if v, _ := f.Lookup("alibi_go.finished"); v != false {
		t.Errorf("finished = %v", v)
	}
	if v, _ := f.Lookup("general.name"); !strings.Contains(v.(string), "(step 20 of 20)") && !strings.Contains(v.(string), "unfinished") {
		t.Errorf("general.name %q does not say the run is unfinished", v)
	}
}

// Outputs are checked before the model is read, an existing one is kept
// unless --force, and nothing that is not a regular file is replaced.
func TestOutputs(t *testing.T) {
	tmp := t.TempDir()
	missing := filepath.Join(tmp, "no-run")
	existing := filepath.Join(tmp, "old.gguf")
	os.WriteFile(existing, []byte("old"), 0o644)
	file := filepath.Join(tmp, "file")
	os.WriteFile(file, nil, 0o644)
	link := filepath.Join(tmp, "link.gguf")
	os.Symlink(existing, link)
	for _, c := range []struct {
		out  string
		want string
	}{
		{existing, "exists; give --force"},
		{tmp, "is a directory, not a regular file"},
		{link, "is a symbolic link, not a regular file"},
		{"/dev/stdout", "is a symbolic link, not a regular file"},
		{filepath.Join(file, "x.gguf"), "not a directory"},
		{filepath.Join(tmp, "none", "x.gguf"), "no such file or directory"},
		{"/proc/x.gguf", "cannot be written"},
	} {
		code, _, stderr := run("--run", missing, "--out", c.out)
		oneLine(t, code, stderr, c.want)
		if strings.Contains(stderr, "no trained run") {
			t.Errorf("--out %s was checked after the run: %s", c.out, stderr)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "old" {
		t.Errorf("the existing file was changed")
	}
	runDir := microRun(t, model.PosNone)
	if code, _, stderr := run("--run", runDir, "--out", existing, "--force"); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, stderr)
	}
	if v, _ := readFile(t, existing).Lookup("mpt.attention.max_alibi_bias"); v != float32(0) {
		t.Errorf("none: max_alibi_bias %v", v)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 3 {
		t.Errorf("%d files in the output directory, want 3 (no temporary file left)", len(entries))
	}
	// Not even --force replaces the checkpoint being read, or a file of
	// its run.
	ckpt := model.CheckpointPath(runDir, 20)
	before, _ := os.ReadFile(ckpt)
	for _, args := range [][]string{
		{"--checkpoint", ckpt, "--out", ckpt, "--force"},
		{"--run", runDir, "--out", ckpt, "--force"},
		{"--run", runDir, "--out", filepath.Join(runDir, model.TokenizerFile), "--force"},
	} {
		code, _, stderr := run(args...)
		oneLine(t, code, stderr, "write the GGUF file elsewhere")
	}
	if after, _ := os.ReadFile(ckpt); !bytes.Equal(before, after) {
		t.Errorf("the checkpoint was changed")
	}
	if _, err := model.LoadCheckpoint(ckpt); err != nil {
		t.Errorf("the checkpoint no longer loads: %v", err)
	}
}

// Bad flags, a corrupt checkpoint, and the schemes and extensions llama.cpp
// has no counterpart for are refused in one line, writing nothing.
func TestRefusals(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "x.gguf")
	alibi := microRun(t, model.PosALiBi)
	rope := microRun(t, model.PosRoPE)
	t5 := microRun(t, model.PosT5)
	sinusoidal := microRun(t, model.PosSinusoidal)
	corrupt := filepath.Join(tmp, "corrupt.safetensors")
	b, _ := os.ReadFile(model.CheckpointPath(alibi, 20))
	os.WriteFile(corrupt, b, 0o644)
	clitest.FlipByte(t, corrupt)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--run", alibi}, []string{"--out is required"}},
		{[]string{"--run", alibi, "--out", out, "--type", "q4_0"}, []string{"--type", "not f32, f16 or q8_0"}},
		{[]string{"--run", alibi, "--out", out, "--context", "-1"}, []string{"--context must be positive"}},
		{[]string{"--run", rope, "--out", out, "--extend", "pi"}, []string{"--extend and --extend-factor go together"}},
		{[]string{"--run", rope, "--out", out, "--extend", "pi", "--extend-factor", "0.5"}, []string{"at least 1"}},
		{[]string{"--checkpoint", corrupt, "--out", out}, []string{corrupt}},
		{[]string{"--run", t5, "--out", out}, []string{"scheme t5 has no counterpart in llama.cpp", "bucketed"}},
		{[]string{"--run", rope, "--out", out, "--extend", "yarn", "--extend-factor", "4"}, []string{"YaRN", "llama.cpp's ramps"}},
		{[]string{"--run", rope, "--out", out, "--extend", "dynamic-ntk"}, []string{"dynamic-ntk has no counterpart", "follows the length"}},
		{[]string{"--run", alibi, "--out", out, "--extend", "interp", "--extend-factor", "4"}, []string{"not llama.cpp's for any max bias"}},
		{[]string{"--run", alibi, "--out", out, "--extend", "pi", "--extend-factor", "4"}, []string{"applies to rope runs"}},
		{[]string{"--run", rope, "--out", out, "--extend", "stretch", "--extend-factor", "4"}, []string{`--extend "stretch" is not an extension llama.cpp has: it has pi (linear rope scaling) and ntk`}},
		{[]string{"--run", rope, "--out", out, "--extend", "interp", "--extend-factor", "4"}, []string{"--extend interp has no counterpart in llama.cpp"}},
		{[]string{"--run", sinusoidal, "--out", out, "--context", "1000000000"}, []string{"a sinusoidal table of 1000000000 positions takes", "give a smaller --context"}},
	} {
		code, _, stderr := run(c.args...)
		oneLine(t, code, stderr, c.want...)
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v wrote %s", c.args, out)
		}
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
		t.Errorf("%d files in the output directory, want only the corrupt checkpoint", len(entries))
	}
}
